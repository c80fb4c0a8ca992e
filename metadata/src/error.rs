//! The crate's one public error type.
use std::path::PathBuf;

use strata_storage::TopicIdPartition;

use crate::{RemoteLogSegmentId, RemoteLogSegmentState, RemotePartitionDeleteState};

/// Everything that can go wrong in the metadata plane.
///
/// A rejected write (`InvalidMetadata`, `InvalidStateTransition`, `InvalidPartitionDeleteTransition`,
/// `UnknownSegment`) leaves the cache and the metadata log untouched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The metadata violates a KIP-405 invariant (Kafka's `IllegalArgumentException`).
    #[error("invalid remote log segment metadata for {id}: {reason}")]
    InvalidMetadata {
        /// The segment the metadata describes.
        id: RemoteLogSegmentId,
        /// What is wrong with it.
        reason: String,
    },
    /// The segment state transition is not one of Kafka's legal transitions (Kafka's `IllegalStateException`).
    #[error("illegal state transition of remote log segment {id}: {} -> {to}", display_opt(.from))]
    InvalidStateTransition {
        /// The segment.
        id: RemoteLogSegmentId,
        /// Its current state, `None` when it is not known.
        from: Option<RemoteLogSegmentState>,
        /// The requested state.
        to: RemoteLogSegmentState,
    },
    /// The partition-delete state transition is not legal.
    #[error("illegal partition delete state transition of {tp}: {} -> {to}", display_opt(.from))]
    InvalidPartitionDeleteTransition {
        /// The user partition.
        tp: TopicIdPartition,
        /// Its current delete state, `None` when no delete was recorded.
        from: Option<RemotePartitionDeleteState>,
        /// The requested state.
        to: RemotePartitionDeleteState,
    },
    /// An update names a segment the cache does not know (Kafka's `RemoteResourceNotFoundException`).
    #[error("no remote log segment metadata found for {id}")]
    UnknownSegment {
        /// The unknown segment.
        id: RemoteLogSegmentId,
    },
    /// A read names a partition that `on_stop_partitions` stopped and no later leadership change resumed.
    #[error("remote log metadata of {tp} is not served: the partition was stopped")]
    PartitionStopped {
        /// The stopped user partition.
        tp: TopicIdPartition,
    },
    /// A configuration value is out of range.
    #[error("invalid value {value} for configuration {key}: {reason}")]
    InvalidConfig {
        /// The full property name, e.g. `rlmm.config.remote.log.metadata.topic.num.partitions`.
        key: &'static str,
        /// The rejected value.
        value: String,
        /// Why it is rejected.
        reason: String,
    },
    /// A metadata record or snapshot could not be encoded or decoded.
    #[error("corrupt remote log metadata {what}: {reason}")]
    Corrupt {
        /// What was being decoded, e.g. `record at offset 17 of __remote_log_metadata-3`.
        what: String,
        /// Why it is rejected.
        reason: String,
    },
    /// The metadata log (a `strata-storage` log) failed.
    #[error("remote log metadata log {context}: {source}")]
    Storage {
        /// The operation and partition, e.g. `append to __remote_log_metadata-3`.
        context: String,
        /// The storage error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file outside the log (the snapshot, the topic-id file) could not be read or written.
    #[error("remote log metadata i/o on {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An earlier failed write left the metadata log in an unknown state; this manager accepts no more writes.
    #[error("remote log metadata manager is poisoned by an earlier failed write: {reason}")]
    Poisoned {
        /// The first failure.
        reason: String,
    },
    /// The manager was closed.
    #[error("remote log metadata manager is closed")]
    Closed,
}

fn display_opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    match v {
        Some(v) => v.to_string(),
        None => "none".to_owned(),
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
