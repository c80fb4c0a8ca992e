//! The one place where errors become Kafka error codes.

use strata_storage::Error as StorageError;

use crate::error::Error;

/// No error.
pub const NONE: i16 = 0;
/// UNKNOWN_SERVER_ERROR.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
/// OFFSET_OUT_OF_RANGE.
pub const OFFSET_OUT_OF_RANGE: i16 = 1;
/// CORRUPT_MESSAGE (bad CRC, truncated batch).
pub const CORRUPT_MESSAGE: i16 = 2;
/// UNKNOWN_TOPIC_OR_PARTITION.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// MESSAGE_TOO_LARGE.
pub const MESSAGE_TOO_LARGE: i16 = 10;
/// OFFSET_METADATA_TOO_LARGE.
pub const OFFSET_METADATA_TOO_LARGE: i16 = 12;
/// NOT_COORDINATOR.
pub const NOT_COORDINATOR: i16 = 16;
/// INVALID_TOPIC_EXCEPTION.
pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
/// NOT_ENOUGH_REPLICAS: acks=all to a partition whose min.insync.replicas exceeds its one in-sync replica.
pub const NOT_ENOUGH_REPLICAS: i16 = 19;
/// ILLEGAL_GENERATION.
pub const ILLEGAL_GENERATION: i16 = 22;
/// INCONSISTENT_GROUP_PROTOCOL.
pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
/// INVALID_GROUP_ID.
pub const INVALID_GROUP_ID: i16 = 24;
/// UNKNOWN_MEMBER_ID.
pub const UNKNOWN_MEMBER_ID: i16 = 25;
/// INVALID_SESSION_TIMEOUT.
pub const INVALID_SESSION_TIMEOUT: i16 = 26;
/// REBALANCE_IN_PROGRESS.
pub const REBALANCE_IN_PROGRESS: i16 = 27;
/// UNSUPPORTED_VERSION.
pub const UNSUPPORTED_VERSION: i16 = 35;
/// TOPIC_ALREADY_EXISTS.
pub const TOPIC_ALREADY_EXISTS: i16 = 36;
/// INVALID_PARTITIONS.
pub const INVALID_PARTITIONS: i16 = 37;
/// INVALID_REPLICATION_FACTOR.
pub const INVALID_REPLICATION_FACTOR: i16 = 38;
/// INVALID_REPLICA_ASSIGNMENT.
pub const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
/// INVALID_CONFIG.
pub const INVALID_CONFIG: i16 = 40;
/// INVALID_REQUEST.
pub const INVALID_REQUEST: i16 = 42;
/// POLICY_VIOLATION: a topic or partition creation over a partition limit (Kafka answers "excessively large
/// number of partitions per request" so).
pub const POLICY_VIOLATION: i16 = 44;
/// OUT_OF_ORDER_SEQUENCE_NUMBER.
pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
/// INVALID_PRODUCER_EPOCH.
pub const INVALID_PRODUCER_EPOCH: i16 = 47;
/// TRANSACTIONAL_ID_AUTHORIZATION_FAILED: the answer to every transactional request (transactions are not
/// supported); librdkafka treats it as fatal at once instead of retrying until its timeout.
pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
/// The error message sent with [`TRANSACTIONAL_ID_AUTHORIZATION_FAILED`].
pub const TRANSACTIONS_UNSUPPORTED: &str = "transactions are not supported by strata";
/// KAFKA_STORAGE_ERROR.
pub const KAFKA_STORAGE_ERROR: i16 = 56;
/// NON_EMPTY_GROUP.
pub const NON_EMPTY_GROUP: i16 = 68;
/// GROUP_ID_NOT_FOUND.
pub const GROUP_ID_NOT_FOUND: i16 = 69;
/// FETCH_SESSION_ID_NOT_FOUND: an incremental fetch names a session this broker does not hold (it holds none).
pub const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
/// GROUP_MAX_SIZE_REACHED.
pub const GROUP_MAX_SIZE_REACHED: i16 = 81;
/// FENCED_INSTANCE_ID: a newer member holds this static member's `group.instance.id` (KIP-345).
pub const FENCED_INSTANCE_ID: i16 = 82;
/// GROUP_SUBSCRIBED_TO_TOPIC: OffsetDelete of a topic a member of the (non-empty) group subscribes to.
pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;
/// INVALID_RECORD.
pub const INVALID_RECORD: i16 = 87;
/// UNKNOWN_TOPIC_ID.
pub const UNKNOWN_TOPIC_ID: i16 = 100;

/// The Kafka error code for a broker error.
pub fn code(err: &Error) -> i16 {
    match err {
        Error::Storage(e) => storage_code(e),
        Error::UnknownTopicOrPartition(_) => UNKNOWN_TOPIC_OR_PARTITION,
        Error::TopicExists(_) => TOPIC_ALREADY_EXISTS,
        Error::InvalidTopic(..) | Error::InternalTopic(_) | Error::TopicCollision { .. } => {
            INVALID_TOPIC_EXCEPTION
        }
        Error::InvalidConfig { .. } | Error::Config { .. } | Error::ConfigRule { .. } => {
            INVALID_CONFIG
        }
        Error::InvalidPartitions(_) => INVALID_PARTITIONS,
        Error::PartitionLimit(_) => POLICY_VIOLATION,
        Error::InvalidReplicationFactor(_) => INVALID_REPLICATION_FACTOR,
        Error::InvalidReplicaAssignment(_) => INVALID_REPLICA_ASSIGNMENT,
        Error::Io { .. } => KAFKA_STORAGE_ERROR,
        Error::Protocol { .. } => INVALID_REQUEST,
        Error::ShuttingDown => UNKNOWN_SERVER_ERROR,
    }
}

/// The Kafka error code of a failed read from the remote tier (a Fetch of `offset`, below the local log start), given
/// the partition's log start offset *after* the failure ([`crate::remote::RemoteLogReader`] errors).
///
/// Remote retention may have moved the log start past `offset` between the fetch's range check and the read (the
/// read then finds no remote segment holding it, or its objects already deleted): that is OFFSET_OUT_OF_RANGE, as
/// Kafka answers a fetch below the log start, so the consumer resets instead of retrying forever. A failure for an
/// offset still inside the log is the tier's: data missing or unreadable (`ErrorKind::InvalidData`) is
/// UNKNOWN_SERVER_ERROR, as Kafka answers a `RemoteStorageException` (clients report it); anything else, e.g. an
/// unavailable store, is KAFKA_STORAGE_ERROR, which clients retry.
pub fn remote_read_code(err: &std::io::Error, offset: i64, log_start_now: i64) -> i16 {
    if offset < log_start_now {
        OFFSET_OUT_OF_RANGE
    } else if err.kind() == std::io::ErrorKind::InvalidData {
        UNKNOWN_SERVER_ERROR
    } else {
        KAFKA_STORAGE_ERROR
    }
}

/// The Kafka error code for a local-log error.
pub fn storage_code(err: &StorageError) -> i16 {
    match err {
        StorageError::OffsetOutOfRange { .. } => OFFSET_OUT_OF_RANGE,
        StorageError::CorruptRecord { .. } => CORRUPT_MESSAGE,
        StorageError::InvalidRecord { .. } => INVALID_RECORD,
        StorageError::RecordTooLarge { .. } | StorageError::DecompressedTooLarge { .. } => {
            MESSAGE_TOO_LARGE
        }
        StorageError::OutOfOrderSequence { .. } => OUT_OF_ORDER_SEQUENCE_NUMBER,
        StorageError::InvalidProducerEpoch { .. } => INVALID_PRODUCER_EPOCH,
        StorageError::InvalidConfig { .. } => INVALID_CONFIG,
        _ => KAFKA_STORAGE_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_read_below_the_moved_log_start_is_offset_out_of_range() {
        let gone = std::io::Error::other(
            "offset 450 is not in remote storage (remote segments cover 600..)",
        );
        assert_eq!(remote_read_code(&gone, 450, 600), OFFSET_OUT_OF_RANGE);
        let missing = std::io::Error::new(std::io::ErrorKind::InvalidData, "no such object");
        assert_eq!(remote_read_code(&missing, 450, 600), OFFSET_OUT_OF_RANGE);
        // Inside the log range the tier's own failure stands.
        assert_eq!(remote_read_code(&gone, 650, 600), KAFKA_STORAGE_ERROR);
        assert_eq!(remote_read_code(&missing, 650, 600), UNKNOWN_SERVER_ERROR);
    }
}
