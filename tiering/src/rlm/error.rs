//! The RemoteLogManager's error: what the broker maps to Kafka error codes for remote reads, deletes and config
//! checks. Storage, metadata and remote-storage errors are carried with their context.
use strata_storage::TopicPartition;

/// Errors of the [`RemoteLogManager`](super::RemoteLogManager). Messages are lowercase and name what failed.
///
/// Broker mapping: `OffsetOutOfRange` → OFFSET_OUT_OF_RANGE; `InvalidConfig` / `PolicyViolation` →
/// INVALID_CONFIG; `UnknownPartition` → UNKNOWN_TOPIC_OR_PARTITION; `NotReady` → REPLICA_NOT_AVAILABLE;
/// `Timeout` / `ReaderQueueFull` → REQUEST_TIMED_OUT (or an empty fetch); anything else → KAFKA_STORAGE_ERROR.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `remote.log.*` property had a bad value.
    #[error("invalid {key}={value}: {reason}")]
    InvalidConfig {
        /// The Kafka property.
        key: String,
        /// The bad value.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// A topic config change Kafka forbids (tiering a compacted topic, turning tiering off without
    /// `remote.log.delete.on.disable=true`, tiering while the system flag is off).
    #[error("invalid config for topic {topic}: {reason}")]
    PolicyViolation {
        /// The topic.
        topic: String,
        /// Which rule.
        reason: String,
    },
    /// No remote segment (and no local data) holds the offset.
    #[error("offset {offset} of {tp} is not in remote storage (remote segments cover {range})")]
    OffsetOutOfRange {
        /// The partition.
        tp: TopicPartition,
        /// The asked-for offset.
        offset: i64,
        /// The offsets the remote segments cover, e.g. `0..=499` or `none`.
        range: String,
    },
    /// The partition has no local log in this broker.
    #[error("unknown partition {tp}")]
    UnknownPartition {
        /// The partition.
        tp: TopicPartition,
    },
    /// The remote log metadata of the partition is not loaded (or the partition was stopped).
    #[error("remote log metadata of {tp} is not ready")]
    NotReady {
        /// The partition.
        tp: TopicPartition,
    },
    /// A remote read did not finish within `remote.fetch.max.wait.ms`.
    #[error("remote read of {tp} did not finish within {wait_ms} ms")]
    Timeout {
        /// The partition.
        tp: TopicPartition,
        /// The deadline.
        wait_ms: u64,
    },
    /// `remote.log.manager.fetch.max.bytes.per.second` is used up: no remote read starts now (Kafka answers the
    /// fetch without remote data and the client fetches again).
    #[error("remote read of {tp} deferred: the remote fetch quota is used up")]
    QuotaExceeded {
        /// The partition.
        tp: TopicPartition,
    },
    /// `remote.log.reader.max.pending.tasks` reads are already waiting.
    #[error("remote read of {tp} rejected: {pending} reads are already pending")]
    ReaderQueueFull {
        /// The partition.
        tp: TopicPartition,
        /// The queue bound.
        pending: usize,
    },
    /// A remote object did not hold what its metadata says (bad batch framing, short index).
    #[error("remote segment {segment} of {tp} is corrupt: {reason}")]
    Corrupt {
        /// The partition.
        tp: TopicPartition,
        /// The segment id.
        segment: String,
        /// What is wrong.
        reason: String,
    },
    /// Deleting what a failed or abandoned upload left (a `COPY_SEGMENT_STARTED` attempt) failed; retried.
    #[error("cleaning up the unfinished upload of segment {segment} failed: {source}")]
    Cleanup {
        /// The attempt's segment id.
        segment: String,
        /// Why.
        #[source]
        source: Box<Error>,
    },
    /// The manager was stopped.
    #[error("the remote log manager is stopped")]
    Stopped,
    /// A local log call failed.
    #[error("local log of {tp}: {source}")]
    Storage {
        /// The partition.
        tp: TopicPartition,
        /// The storage error.
        #[source]
        source: Box<strata_storage::Error>,
    },
    /// A remote log metadata call failed.
    #[error("remote log metadata {operation} failed: {source}")]
    Metadata {
        /// What was being done.
        operation: &'static str,
        /// The RLMM's error.
        #[source]
        source: Box<strata_metadata::Error>,
    },
    /// A remote storage call failed.
    #[error("remote storage {operation} failed: {source}")]
    Remote {
        /// What was being done.
        operation: &'static str,
        /// The RSM's error.
        #[source]
        source: Box<crate::Error>,
    },
}

/// The RemoteLogManager's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn meta(operation: &'static str) -> impl FnOnce(strata_metadata::Error) -> Error {
        move |source| Error::Metadata {
            operation,
            source: Box::new(source),
        }
    }

    pub(crate) fn remote(operation: &'static str) -> impl FnOnce(crate::Error) -> Error {
        move |source| Error::Remote {
            operation,
            source: Box::new(source),
        }
    }

    pub(crate) fn storage(tp: &TopicPartition) -> impl FnOnce(strata_storage::Error) -> Error + '_ {
        move |source| Error::Storage {
            tp: tp.clone(),
            source: Box::new(source),
        }
    }
}
