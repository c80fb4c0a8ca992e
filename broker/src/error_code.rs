//! The one place where errors become Kafka error codes: handlers and the group coordinator return typed errors
//! ([`Error`], [`GroupError`]) and answer with [`code`] / [`of`] (and [`message`] where the response has an error
//! message). Outside this module only [`NONE`] (success) is named.

use strata_storage::Error as StorageError;

use crate::error::{Error, GroupError, RemoteReadError, TxnError};

/// No error.
pub const NONE: i16 = 0;
/// UNKNOWN_SERVER_ERROR.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
/// OFFSET_OUT_OF_RANGE.
pub const OFFSET_OUT_OF_RANGE: i16 = 1;
/// CORRUPT_MESSAGE (bad CRC, truncated batch).
pub const CORRUPT_MESSAGE: i16 = 2;
/// INVALID_TIMESTAMP: a CreateTime record outside `message.timestamp.before.max.ms` / `.after.max.ms`.
pub const INVALID_TIMESTAMP: i16 = 32;
/// UNKNOWN_TOPIC_OR_PARTITION.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// MESSAGE_TOO_LARGE.
pub const MESSAGE_TOO_LARGE: i16 = 10;
/// OFFSET_METADATA_TOO_LARGE.
pub const OFFSET_METADATA_TOO_LARGE: i16 = 12;
/// NOT_COORDINATOR.
pub const NOT_COORDINATOR: i16 = 16;
/// COORDINATOR_NOT_AVAILABLE.
pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
/// INVALID_FETCH_SIZE.
pub const INVALID_FETCH_SIZE: i16 = 4;
/// NOT_LEADER_OR_FOLLOWER.
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
/// REQUEST_TIMED_OUT.
pub const REQUEST_TIMED_OUT: i16 = 7;
/// RECORD_LIST_TOO_LARGE.
pub const RECORD_LIST_TOO_LARGE: i16 = 18;
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
/// UNSUPPORTED_SASL_MECHANISM.
pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
/// ILLEGAL_SASL_STATE.
pub const ILLEGAL_SASL_STATE: i16 = 34;
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
/// INVALID_REQUIRED_ACKS: Produce with acks other than 0, 1, -1.
pub const INVALID_REQUIRED_ACKS: i16 = 21;
/// INVALID_REQUEST.
pub const INVALID_REQUEST: i16 = 42;
/// POLICY_VIOLATION: a topic or partition creation over a partition limit (Kafka answers "excessively large
/// number of partitions per request" so).
pub const POLICY_VIOLATION: i16 = 44;
/// OUT_OF_ORDER_SEQUENCE_NUMBER.
pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
/// INVALID_PRODUCER_EPOCH.
pub const INVALID_PRODUCER_EPOCH: i16 = 47;
/// INVALID_TXN_STATE: the request does not fit the transaction's state.
pub const INVALID_TXN_STATE: i16 = 48;
/// The transaction must be aborted (KIP-890: a transactional write the partition verification refused).
pub const TRANSACTION_ABORTABLE: i16 = 120;
/// INVALID_PRODUCER_ID_MAPPING: the producer id is not the transactional id's.
pub const INVALID_PRODUCER_ID_MAPPING: i16 = 49;
/// INVALID_TRANSACTION_TIMEOUT: `transaction.timeout.ms` above `transaction.max.timeout.ms`.
pub const INVALID_TRANSACTION_TIMEOUT: i16 = 50;
/// CONCURRENT_TRANSACTIONS: the previous transaction is completing; retriable.
pub const CONCURRENT_TRANSACTIONS: i16 = 51;
/// PRODUCER_FENCED: a newer producer holds the transactional id (older request versions get
/// INVALID_PRODUCER_EPOCH instead, see [`txn_code`]).
pub const PRODUCER_FENCED: i16 = 90;
/// TRANSACTIONAL_ID_NOT_FOUND: the coordinator does not know the id.
pub const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;
/// TRANSACTIONAL_ID_AUTHORIZATION_FAILED: transactional batches in a produce request without a transactional id
/// (Kafka authorizes the id, and a missing one fails).
pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
/// UNSTABLE_OFFSET_COMMIT: offsets wait for a transaction to end (OffsetFetch `require_stable`); retriable.
pub const UNSTABLE_OFFSET_COMMIT: i16 = 88;
/// OPERATION_NOT_ATTEMPTED: another part of the request failed, so this part was not tried.
pub const OPERATION_NOT_ATTEMPTED: i16 = 55;
/// KAFKA_STORAGE_ERROR.
pub const KAFKA_STORAGE_ERROR: i16 = 56;
/// SASL_AUTHENTICATION_FAILED.
pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// NON_EMPTY_GROUP.
pub const NON_EMPTY_GROUP: i16 = 68;
/// GROUP_ID_NOT_FOUND.
pub const GROUP_ID_NOT_FOUND: i16 = 69;
/// FETCH_SESSION_ID_NOT_FOUND: an incremental fetch names a session this broker does not hold (it holds none).
pub const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
/// MEMBER_ID_REQUIRED: a new member joins again with the member id it is given (KIP-394).
pub const MEMBER_ID_REQUIRED: i16 = 79;
/// FENCED_MEMBER_EPOCH (KIP-848).
pub const FENCED_MEMBER_EPOCH: i16 = 110;
/// UNRELEASED_INSTANCE_ID (KIP-848).
pub const UNRELEASED_INSTANCE_ID: i16 = 111;
/// UNSUPPORTED_ASSIGNOR (KIP-848).
pub const UNSUPPORTED_ASSIGNOR: i16 = 112;
/// STALE_MEMBER_EPOCH (KIP-848).
pub const STALE_MEMBER_EPOCH: i16 = 113;
/// GROUP_MAX_SIZE_REACHED.
pub const GROUP_MAX_SIZE_REACHED: i16 = 81;
/// FENCED_INSTANCE_ID: a newer member holds this static member's `group.instance.id` (KIP-345).
pub const FENCED_INSTANCE_ID: i16 = 82;
/// UNSUPPORTED_COMPRESSION_TYPE: a Fetch older than v10 of a `compression.type=zstd` topic.
pub const UNSUPPORTED_COMPRESSION_TYPE: i16 = 76;
/// GROUP_SUBSCRIBED_TO_TOPIC: OffsetDelete of a topic a member of the (non-empty) group subscribes to.
pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;
/// INVALID_RECORD.
pub const INVALID_RECORD: i16 = 87;
/// RESOURCE_NOT_FOUND.
pub const RESOURCE_NOT_FOUND: i16 = 91;
/// DUPLICATE_RESOURCE.
pub const DUPLICATE_RESOURCE: i16 = 92;
/// UNACCEPTABLE_CREDENTIAL.
pub const UNACCEPTABLE_CREDENTIAL: i16 = 93;
/// UNKNOWN_TOPIC_ID.
pub const UNKNOWN_TOPIC_ID: i16 = 100;
/// SECURITY_DISABLED: an ACL request to a broker without an authorizer.
pub const SECURITY_DISABLED: i16 = 54;
/// TOPIC_AUTHORIZATION_FAILED.
pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
/// GROUP_AUTHORIZATION_FAILED.
pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
/// CLUSTER_AUTHORIZATION_FAILED.
pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
/// ELECTION_NOT_NEEDED: the preferred leader already leads.
pub const ELECTION_NOT_NEEDED: i16 = 84;
/// NO_REASSIGNMENT_IN_PROGRESS: a reassignment cancelled where none runs.
pub const NO_REASSIGNMENT_IN_PROGRESS: i16 = 85;

/// Kafka's name of `code` (`UNKNOWN_TOPIC_OR_PARTITION`), as the `error` label of
/// `kafka_network_requestmetrics_errors_total`; codes strata never sends are `UNKNOWN`.
pub fn name(code: i16) -> &'static str {
    match code {
        NONE => "NONE",
        UNKNOWN_SERVER_ERROR => "UNKNOWN_SERVER_ERROR",
        OFFSET_OUT_OF_RANGE => "OFFSET_OUT_OF_RANGE",
        CORRUPT_MESSAGE => "CORRUPT_MESSAGE",
        INVALID_TIMESTAMP => "INVALID_TIMESTAMP",
        UNKNOWN_TOPIC_OR_PARTITION => "UNKNOWN_TOPIC_OR_PARTITION",
        MESSAGE_TOO_LARGE => "MESSAGE_TOO_LARGE",
        OFFSET_METADATA_TOO_LARGE => "OFFSET_METADATA_TOO_LARGE",
        NOT_COORDINATOR => "NOT_COORDINATOR",
        COORDINATOR_NOT_AVAILABLE => "COORDINATOR_NOT_AVAILABLE",
        INVALID_FETCH_SIZE => "INVALID_FETCH_SIZE",
        NOT_LEADER_OR_FOLLOWER => "NOT_LEADER_OR_FOLLOWER",
        REQUEST_TIMED_OUT => "REQUEST_TIMED_OUT",
        RECORD_LIST_TOO_LARGE => "RECORD_LIST_TOO_LARGE",
        INVALID_TOPIC_EXCEPTION => "INVALID_TOPIC_EXCEPTION",
        NOT_ENOUGH_REPLICAS => "NOT_ENOUGH_REPLICAS",
        ILLEGAL_GENERATION => "ILLEGAL_GENERATION",
        INCONSISTENT_GROUP_PROTOCOL => "INCONSISTENT_GROUP_PROTOCOL",
        INVALID_GROUP_ID => "INVALID_GROUP_ID",
        UNKNOWN_MEMBER_ID => "UNKNOWN_MEMBER_ID",
        INVALID_SESSION_TIMEOUT => "INVALID_SESSION_TIMEOUT",
        REBALANCE_IN_PROGRESS => "REBALANCE_IN_PROGRESS",
        UNSUPPORTED_SASL_MECHANISM => "UNSUPPORTED_SASL_MECHANISM",
        ILLEGAL_SASL_STATE => "ILLEGAL_SASL_STATE",
        UNSUPPORTED_VERSION => "UNSUPPORTED_VERSION",
        TOPIC_ALREADY_EXISTS => "TOPIC_ALREADY_EXISTS",
        INVALID_PARTITIONS => "INVALID_PARTITIONS",
        INVALID_REPLICATION_FACTOR => "INVALID_REPLICATION_FACTOR",
        INVALID_REPLICA_ASSIGNMENT => "INVALID_REPLICA_ASSIGNMENT",
        INVALID_CONFIG => "INVALID_CONFIG",
        INVALID_REQUEST => "INVALID_REQUEST",
        POLICY_VIOLATION => "POLICY_VIOLATION",
        OUT_OF_ORDER_SEQUENCE_NUMBER => "OUT_OF_ORDER_SEQUENCE_NUMBER",
        INVALID_PRODUCER_EPOCH => "INVALID_PRODUCER_EPOCH",
        INVALID_TXN_STATE => "INVALID_TXN_STATE",
        INVALID_PRODUCER_ID_MAPPING => "INVALID_PRODUCER_ID_MAPPING",
        INVALID_TRANSACTION_TIMEOUT => "INVALID_TRANSACTION_TIMEOUT",
        CONCURRENT_TRANSACTIONS => "CONCURRENT_TRANSACTIONS",
        PRODUCER_FENCED => "PRODUCER_FENCED",
        TRANSACTIONAL_ID_NOT_FOUND => "TRANSACTIONAL_ID_NOT_FOUND",
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED => "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        KAFKA_STORAGE_ERROR => "KAFKA_STORAGE_ERROR",
        SASL_AUTHENTICATION_FAILED => "SASL_AUTHENTICATION_FAILED",
        NON_EMPTY_GROUP => "NON_EMPTY_GROUP",
        GROUP_ID_NOT_FOUND => "GROUP_ID_NOT_FOUND",
        FETCH_SESSION_ID_NOT_FOUND => "FETCH_SESSION_ID_NOT_FOUND",
        GROUP_MAX_SIZE_REACHED => "GROUP_MAX_SIZE_REACHED",
        FENCED_INSTANCE_ID => "FENCED_INSTANCE_ID",
        UNSUPPORTED_COMPRESSION_TYPE => "UNSUPPORTED_COMPRESSION_TYPE",
        GROUP_SUBSCRIBED_TO_TOPIC => "GROUP_SUBSCRIBED_TO_TOPIC",
        INVALID_RECORD => "INVALID_RECORD",
        RESOURCE_NOT_FOUND => "RESOURCE_NOT_FOUND",
        DUPLICATE_RESOURCE => "DUPLICATE_RESOURCE",
        UNACCEPTABLE_CREDENTIAL => "UNACCEPTABLE_CREDENTIAL",
        UNKNOWN_TOPIC_ID => "UNKNOWN_TOPIC_ID",
        SECURITY_DISABLED => "SECURITY_DISABLED",
        TOPIC_AUTHORIZATION_FAILED => "TOPIC_AUTHORIZATION_FAILED",
        GROUP_AUTHORIZATION_FAILED => "GROUP_AUTHORIZATION_FAILED",
        CLUSTER_AUTHORIZATION_FAILED => "CLUSTER_AUTHORIZATION_FAILED",
        ELECTION_NOT_NEEDED => "ELECTION_NOT_NEEDED",
        NO_REASSIGNMENT_IN_PROGRESS => "NO_REASSIGNMENT_IN_PROGRESS",
        _ => "UNKNOWN",
    }
}

/// Every Kafka error code the protocol defines (kafka-protocol's `ResponseError`), with its Kafka name
/// (`NOT_LEADER_OR_FOLLOWER`): what a fault may answer with (`/api/v1/faults`).
pub fn defined() -> impl Iterator<Item = (i16, String)> {
    (-1..=i16::from(u8::MAX)).filter_map(|code| {
        let e = kafka_protocol::ResponseError::try_from_code(code)?;
        if matches!(e, kafka_protocol::ResponseError::Unknown(_)) {
            return None;
        }
        Some((code, screaming_snake(&format!("{e:?}"))))
    })
}

/// The code of a Kafka error named `name` (`NOT_LEADER_OR_FOLLOWER`, any case) or given as a number, if the
/// protocol defines it (0, no error, is not one).
pub fn by_name_or_number(name: &str) -> Option<(i16, String)> {
    let name = name.trim();
    match name.parse::<i16>() {
        Ok(n) => defined().find(|(c, _)| *c == n),
        Err(_) => {
            let upper = name.to_ascii_uppercase();
            defined().find(|(_, n)| *n == upper)
        }
    }
}

/// `NotLeaderOrFollower` -> `NOT_LEADER_OR_FOLLOWER`.
fn screaming_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The Kafka error code for a broker error.
pub fn code(err: &Error) -> i16 {
    match err {
        Error::Storage(e) => storage_code(e),
        Error::UnknownTopicOrPartition(_) => UNKNOWN_TOPIC_OR_PARTITION,
        Error::TopicExists(_) => TOPIC_ALREADY_EXISTS,
        Error::InvalidTopic(..) | Error::InternalTopic(_) | Error::TopicCollision { .. } => {
            INVALID_TOPIC_EXCEPTION
        }
        Error::Config { .. } => INVALID_CONFIG,
        Error::InvalidPartitions(_) => INVALID_PARTITIONS,
        Error::PartitionLimit(_) => POLICY_VIOLATION,
        Error::InvalidReplicationFactor(_) => INVALID_REPLICATION_FACTOR,
        Error::InvalidReplicaAssignment(_) => INVALID_REPLICA_ASSIGNMENT,
        Error::Io { .. } => KAFKA_STORAGE_ERROR,
        Error::Protocol { .. } => INVALID_REQUEST,
        Error::ShuttingDown | Error::Internal(_) => UNKNOWN_SERVER_ERROR,
        Error::UnknownTopic(_) => UNKNOWN_TOPIC_OR_PARTITION,
        Error::UnknownTopicId(_) => UNKNOWN_TOPIC_ID,
        Error::ProduceWithoutRecords | Error::InvalidProduceRecords { .. } => INVALID_RECORD,
        Error::InvalidRequiredAcks(_) => INVALID_REQUIRED_ACKS,
        Error::NotEnoughReplicas { .. } => NOT_ENOUGH_REPLICAS,
        Error::OffsetMetadataTooLarge { .. } => OFFSET_METADATA_TOO_LARGE,
        Error::NotThisBroker { .. }
        | Error::NoConfigs(_)
        | Error::NotDynamicConfigs(_)
        | Error::PerBrokerConfigs(_) => INVALID_REQUEST,
        Error::ControlBatchFromClient { .. } => INVALID_RECORD,
        Error::UnknownCoordinatorType(_) => INVALID_REQUEST,
        Error::OperationNotAttempted => OPERATION_NOT_ATTEMPTED,
        Error::UnstableOffsetCommit { .. } => UNSTABLE_OFFSET_COMMIT,
        Error::FetchSessionIdNotFound { .. } => FETCH_SESSION_ID_NOT_FOUND,
        Error::UnsupportedVersion { .. } | Error::UnknownOffsetSpec { .. } => UNSUPPORTED_VERSION,
        Error::ZstdBeforeFetchV10 { .. } => UNSUPPORTED_COMPRESSION_TYPE,
        Error::SaslAuthenticationFailed(_) => SASL_AUTHENTICATION_FAILED,
        Error::UnsupportedSaslMechanism { .. } => UNSUPPORTED_SASL_MECHANISM,
        Error::IllegalSaslState(_) => ILLEGAL_SASL_STATE,
        Error::ScramUserNotFound(_) => RESOURCE_NOT_FOUND,
        Error::DuplicateScramUser(_) => DUPLICATE_RESOURCE,
        Error::UnacceptableCredential(_) => UNACCEPTABLE_CREDENTIAL,
        Error::LogDirOffline(_) => KAFKA_STORAGE_ERROR,
        Error::RemoteRead {
            offset,
            log_start,
            source,
        } => remote_read_code(source, *offset, *log_start),
        Error::Tiering { .. } => KAFKA_STORAGE_ERROR,
        Error::SecurityDisabled => SECURITY_DISABLED,
        Error::TopicAuthorizationFailed(_) => TOPIC_AUTHORIZATION_FAILED,
        Error::GroupAuthorizationFailed(_) => GROUP_AUTHORIZATION_FAILED,
        Error::ClusterAuthorizationFailed(_) => CLUSTER_AUTHORIZATION_FAILED,
        Error::TransactionalIdAuthorizationFailed(_) => TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        Error::InvalidAcl(_) => INVALID_REQUEST,
        Error::ElectionNotNeeded => ELECTION_NOT_NEEDED,
        Error::NoReassignmentInProgress(_) => NO_REASSIGNMENT_IN_PROGRESS,
        Error::UnknownElectionType(_) => INVALID_REQUEST,
        Error::EmptyGroupName => INVALID_REQUEST,
        Error::DefaultGroupResource => INVALID_REQUEST,
        Error::InvalidGroupConfig(_) => INVALID_CONFIG,
        Error::Group(e) => group_code(e),
        Error::Txn(e) => txn_code(e, true),
    }
}

/// The Kafka error code for a transaction coordinator refusal. `producer_fenced_supported` is false for request
/// versions older than PRODUCER_FENCED (KIP-588): those clients get INVALID_PRODUCER_EPOCH, as Kafka answers them.
pub fn txn_code(err: &TxnError, producer_fenced_supported: bool) -> i16 {
    match err {
        TxnError::ProducerFenced { .. } if producer_fenced_supported => PRODUCER_FENCED,
        TxnError::ProducerFenced { .. } => INVALID_PRODUCER_EPOCH,
        TxnError::InvalidProducerIdMapping { .. } => INVALID_PRODUCER_ID_MAPPING,
        TxnError::InvalidTxnState { .. } => INVALID_TXN_STATE,
        TxnError::ConcurrentTransactions { .. } => CONCURRENT_TRANSACTIONS,
        TxnError::TransactionalIdNotFound { .. } => TRANSACTIONAL_ID_NOT_FOUND,
        TxnError::InvalidTransactionTimeout { .. } => INVALID_TRANSACTION_TIMEOUT,
        TxnError::PartitionNotInTransaction { .. } => INVALID_TXN_STATE,
        TxnError::MissingTransactionalId => TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        TxnError::CorruptStateRecord { .. } => UNKNOWN_SERVER_ERROR,
    }
}

/// [`code`] for a transactional request of a version that may predate PRODUCER_FENCED (KIP-588): older versions
/// get INVALID_PRODUCER_EPOCH for a fenced producer.
pub fn versioned_txn_code(err: &Error, producer_fenced_supported: bool) -> i16 {
    match err {
        Error::Txn(e) => txn_code(e, producer_fenced_supported),
        e => code(e),
    }
}

/// [`versioned_txn_code`] for a transactional write (Produce, TxnOffsetCommit) refused by Kafka's partition
/// verification (KIP-890): a partition not in the transaction is TRANSACTION_ABORTABLE for a client that knows
/// that code (Produce v11+, TxnOffsetCommit v4+), INVALID_TXN_STATE for older ones.
pub fn verified_write_code(
    err: &Error,
    producer_fenced_supported: bool,
    abortable_supported: bool,
) -> i16 {
    match err {
        Error::Txn(TxnError::PartitionNotInTransaction { .. }) if abortable_supported => {
            TRANSACTION_ABORTABLE
        }
        e => versioned_txn_code(e, producer_fenced_supported),
    }
}

impl Error {
    /// Whether the error is answered OFFSET_OUT_OF_RANGE (a Fetch answer then carries the log start offset).
    pub fn is_offset_out_of_range(&self) -> bool {
        code(self) == OFFSET_OUT_OF_RANGE
    }
}

/// The Kafka error code for a group coordinator refusal.
pub fn group_code(err: &GroupError) -> i16 {
    match err {
        GroupError::InvalidGroupId(_) => INVALID_GROUP_ID,
        GroupError::InvalidSessionTimeout { .. } => INVALID_SESSION_TIMEOUT,
        GroupError::InconsistentGroupProtocol { .. } => INCONSISTENT_GROUP_PROTOCOL,
        GroupError::FencedInstanceId { .. } => FENCED_INSTANCE_ID,
        GroupError::GroupMaxSizeReached { .. } => GROUP_MAX_SIZE_REACHED,
        GroupError::UnknownMemberId { .. } => UNKNOWN_MEMBER_ID,
        GroupError::IllegalGeneration { .. } => ILLEGAL_GENERATION,
        GroupError::RebalanceInProgress => REBALANCE_IN_PROGRESS,
        GroupError::MemberIdRequired { .. } => MEMBER_ID_REQUIRED,
        GroupError::FencedMemberEpoch { .. } => FENCED_MEMBER_EPOCH,
        GroupError::StaleMemberEpoch { .. } => STALE_MEMBER_EPOCH,
        GroupError::UnreleasedInstanceId { .. } => UNRELEASED_INSTANCE_ID,
        GroupError::UnsupportedAssignor { .. } => UNSUPPORTED_ASSIGNOR,
        GroupError::InvalidHeartbeat(_) => INVALID_REQUEST,
        GroupError::ConsumerProtocolDisabled => UNSUPPORTED_VERSION,
        GroupError::WrongGroupType {
            wanted: "consumer", ..
        } => GROUP_ID_NOT_FOUND,
        GroupError::WrongGroupType { .. } => INCONSISTENT_GROUP_PROTOCOL,
        GroupError::GroupNotEmpty { .. } => NON_EMPTY_GROUP,
        GroupError::GroupIdNotFound { .. } => GROUP_ID_NOT_FOUND,
        GroupError::GroupSubscribedToTopic { .. } => GROUP_SUBSCRIBED_TO_TOPIC,
        GroupError::StoreFailed { append_code, .. } => append_error_to_group_error(*append_code),
    }
}

/// Kafka's `appendGroupMetadataErrorToResponseError` (the group coordinator's answer when writing a group's
/// records fails): a missing or under-replicated partition or a timeout is COORDINATOR_NOT_AVAILABLE, a partition
/// not led here or a storage error NOT_COORDINATOR (the client looks the coordinator up again), a batch too large
/// UNKNOWN_SERVER_ERROR; any other error is answered as it is.
pub fn append_error_to_group_error(append_code: i16) -> i16 {
    match append_code {
        UNKNOWN_TOPIC_OR_PARTITION | NOT_ENOUGH_REPLICAS | REQUEST_TIMED_OUT => {
            COORDINATOR_NOT_AVAILABLE
        }
        NOT_LEADER_OR_FOLLOWER | KAFKA_STORAGE_ERROR => NOT_COORDINATOR,
        MESSAGE_TOO_LARGE | RECORD_LIST_TOO_LARGE | INVALID_FETCH_SIZE => UNKNOWN_SERVER_ERROR,
        other => other,
    }
}

/// The refusal of a group request whose records could not be written to `__consumer_offsets` (`err`: the append's
/// error).
pub fn group_store_failed(group: &str, err: &Error) -> GroupError {
    GroupError::StoreFailed {
        group: group.to_string(),
        append_code: code(err),
        reason: err.to_string(),
    }
}

/// An error that has a Kafka error code.
pub trait KafkaCode {
    /// Its Kafka error code.
    fn kafka_code(&self) -> i16;
}

impl KafkaCode for Error {
    fn kafka_code(&self) -> i16 {
        code(self)
    }
}

impl KafkaCode for GroupError {
    fn kafka_code(&self) -> i16 {
        group_code(self)
    }
}

impl KafkaCode for StorageError {
    fn kafka_code(&self) -> i16 {
        storage_code(self)
    }
}

/// The Kafka error code of an outcome: [`NONE`] for success, else the error's code.
pub fn of<T, E: KafkaCode>(result: &Result<T, E>) -> i16 {
    match result {
        Ok(_) => NONE,
        Err(e) => e.kafka_code(),
    }
}

/// The Kafka error code of an optional error: [`NONE`] for none.
pub fn of_error<E: KafkaCode>(error: Option<&E>) -> i16 {
    error.map_or(NONE, KafkaCode::kafka_code)
}

/// The error message sent with the code where the response has an error message field.
pub fn message(err: &Error) -> String {
    err.to_string()
}

/// The Kafka error code of a failed read from the remote tier (a Fetch of `offset`, below the local log start), given
/// the partition's log start offset *after* the failure ([`crate::remote::RemoteLogReader`] errors).
///
/// Remote retention may have moved the log start past `offset` between the fetch's range check and the read (the
/// read then finds no remote segment holding it, or its objects already deleted): that is OFFSET_OUT_OF_RANGE, as
/// Kafka answers a fetch below the log start, so the consumer resets instead of retrying forever. A failure for an
/// offset still inside the log is the tier's: an offset no finished remote segment holds (e.g. a segment whose
/// metadata was lost after its local copy was deleted) is OFFSET_OUT_OF_RANGE too, as Kafka's RemoteLogManager
/// answers it; data missing or unreadable is UNKNOWN_SERVER_ERROR, as Kafka answers a `RemoteStorageException`
/// (clients report it); an unavailable tier is KAFKA_STORAGE_ERROR, which clients retry.
pub fn remote_read_code(err: &RemoteReadError, offset: i64, log_start_now: i64) -> i16 {
    if offset < log_start_now {
        return OFFSET_OUT_OF_RANGE;
    }
    match err {
        RemoteReadError::OffsetOutOfRange(_) => OFFSET_OUT_OF_RANGE,
        RemoteReadError::Missing(_) | RemoteReadError::Unreadable(_) => UNKNOWN_SERVER_ERROR,
        RemoteReadError::Unavailable(_) => KAFKA_STORAGE_ERROR,
    }
}

/// The Kafka error code for a local-log error.
pub fn storage_code(err: &StorageError) -> i16 {
    match err {
        StorageError::OffsetOutOfRange { .. } => OFFSET_OUT_OF_RANGE,
        StorageError::CorruptRecord { .. } => CORRUPT_MESSAGE,
        StorageError::InvalidRecord { .. } => INVALID_RECORD,
        StorageError::RecordValidation {
            timestamp: true, ..
        } => INVALID_TIMESTAMP,
        StorageError::RecordValidation {
            timestamp: false, ..
        } => INVALID_RECORD,
        StorageError::RecordTooLarge { .. } | StorageError::DecompressedTooLarge { .. } => {
            MESSAGE_TOO_LARGE
        }
        StorageError::OutOfOrderSequence { .. } => OUT_OF_ORDER_SEQUENCE_NUMBER,
        StorageError::InvalidProducerEpoch { .. } => INVALID_PRODUCER_EPOCH,
        StorageError::InvalidConfig { .. } => INVALID_CONFIG,
        StorageError::UnknownTopicOrPartition { .. } => UNKNOWN_TOPIC_OR_PARTITION,
        // The log dir failed (an I/O error, a file that cannot be read back, a topic id that does not match the
        // dir's): Kafka's KafkaStorageException.
        StorageError::Storage { .. }
        | StorageError::Io { .. }
        | StorageError::CorruptFile { .. }
        | StorageError::InconsistentTopicId { .. } => KAFKA_STORAGE_ERROR,
    }
}

#[cfg(test)]
mod tests;
