//! The crate's one public error type.
use std::path::PathBuf;

use strata_storage::TopicPartition;

/// Errors of the remote storage data plane (the RSM) and of the [`RemoteLogManager`](crate::RemoteLogManager).
/// Messages are lowercase and name what failed.
///
/// Broker mapping of the RemoteLogManager's errors: `OffsetOutOfRange` → OFFSET_OUT_OF_RANGE; `InvalidProperty` /
/// `PolicyViolation` → INVALID_CONFIG; `UnknownPartition` → UNKNOWN_TOPIC_OR_PARTITION; `NotReady` →
/// REPLICA_NOT_AVAILABLE; `Timeout` / `ReaderQueueFull` / `QuotaExceeded` → an empty fetch; anything else →
/// KAFKA_STORAGE_ERROR.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `rsm.config.` property was not recognised.
    #[error("unknown remote storage property rsm.config.{key}{}", .suggestion.as_ref().map(|s| format!(" (did you mean rsm.config.{s}?)")).unwrap_or_default())]
    UnknownConfig {
        /// The key, without the `rsm.config.` prefix.
        key: String,
        /// The closest known key, without the prefix.
        suggestion: Option<String>,
    },
    /// A `rsm.config.` property had a bad value, or properties contradict each other.
    #[error("invalid rsm.config.{key}: {message}")]
    InvalidConfig {
        /// The key, without the `rsm.config.` prefix.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// The encryption key file could not be read or does not hold a 256-bit key.
    #[error("encryption key file {path}: {message}")]
    KeyFile {
        /// The file named by `rsm.config.encryption.key.file`.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Kafka's `RemoteResourceNotFoundException`: the segment, its manifest or the asked-for index does not exist.
    #[error("remote resource not found: {what}")]
    ResourceNotFound {
        /// What was looked for.
        what: String,
    },
    /// An object store call failed.
    #[error("object store {operation} of {key} failed: {source}")]
    Store {
        /// The call (`put`, `get`, `put_part`, `complete_multipart`, `delete`, `list`, ...).
        operation: &'static str,
        /// The object key.
        key: String,
        /// The store's error.
        #[source]
        source: object_store::Error,
    },
    /// A local file of the segment could not be read.
    #[error("reading local segment file {path} failed: {source}")]
    LocalIo {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A stored chunk or index failed to decrypt (wrong key or tampered data).
    #[error("decryption failed for {what}: wrong encryption key or corrupted data")]
    Decrypt {
        /// The chunk or index (object key and chunk number).
        what: String,
    },
    /// The segment's data key was wrapped with a different key than the configured one.
    #[error(
        "segment {segment} was encrypted under key id {stored_key_id}, but rsm.config.encryption.key.file holds key id {configured_key_id}"
    )]
    WrongKey {
        /// The segment's manifest key.
        segment: String,
        /// The key id recorded in the manifest.
        stored_key_id: String,
        /// The id of the configured key.
        configured_key_id: String,
    },
    /// The segment is encrypted but this RSM has no key (encryption disabled or no key file).
    #[error("segment {segment} is encrypted but no encryption key is configured (rsm.config.encryption.key.file)")]
    MissingKey {
        /// The segment's manifest key.
        segment: String,
    },
    /// Stored data does not match what the manifest says (short body, bad sizes, bad JSON).
    #[error("corrupt remote object {key}: {message}")]
    Corrupt {
        /// The object key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A byte range outside the segment was asked for.
    #[error("invalid range [{start}, {end}] for segment {segment} of {size} bytes")]
    InvalidRange {
        /// The segment.
        segment: String,
        /// First requested position (inclusive).
        start: u64,
        /// Last requested position (inclusive), or -1 for "to the end".
        end: i64,
        /// The segment's size.
        size: u64,
    },
    /// zstd failed.
    #[error("zstd {operation} failed for {what}: {source}")]
    Compression {
        /// `compress` or `decompress`.
        operation: &'static str,
        /// The chunk or index.
        what: String,
        /// The zstd error.
        #[source]
        source: std::io::Error,
    },
    /// The object store could not be built from the configuration.
    #[error("cannot build the {backend} object store: {source}")]
    Backend {
        /// `s3`, `filesystem` or `memory`.
        backend: &'static str,
        /// The builder's error.
        #[source]
        source: object_store::Error,
    },
    /// The start-up connectivity check failed.
    #[error(
        "remote storage check failed at {operation} of probe {key} on backend {} (bucket {}, endpoint {}, region {}): {message}",
        backend.backend, backend.bucket, backend.endpoint, backend.region
    )]
    Connectivity {
        /// Backend, bucket, endpoint and region.
        backend: Box<crate::backend::BackendDescription>,
        /// The failing call: `put`, `ranged get`, `list` or `delete`.
        operation: &'static str,
        /// The probe object's key.
        key: String,
        /// The underlying error, flattened with its causes.
        message: String,
    },
    /// An error shared by several readers of one cache entry (the first reader's error).
    #[error(transparent)]
    Shared(std::sync::Arc<Error>),
    /// A blocking task (compression, encryption) panicked or was cancelled.
    #[error("background task for {what} failed: {message}")]
    Task {
        /// What the task was doing.
        what: String,
        /// The join error.
        message: String,
    },

    // The RemoteLogManager's errors (remote reads, deletes, config checks).
    /// A `remote.log.*` property had a bad value.
    #[error("invalid {key}={value}: {reason}")]
    InvalidProperty {
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
    CorruptSegment {
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
        source: Box<Error>,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// True for Kafka's `RemoteResourceNotFoundException`.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::ResourceNotFound { .. } => true,
            Error::Shared(e) => e.is_not_found(),
            _ => false,
        }
    }

    /// Unwraps an error shared through a cache loader.
    /// Variants without an opaque source are rebuilt, so callers can still match on them.
    pub(crate) fn from_shared(e: std::sync::Arc<Error>) -> Self {
        let e = match std::sync::Arc::try_unwrap(e) {
            Ok(e) => return e,
            Err(e) => e,
        };
        match &*e {
            Error::ResourceNotFound { what } => Error::ResourceNotFound { what: what.clone() },
            Error::Decrypt { what } => Error::Decrypt { what: what.clone() },
            Error::WrongKey {
                segment,
                stored_key_id,
                configured_key_id,
            } => Error::WrongKey {
                segment: segment.clone(),
                stored_key_id: stored_key_id.clone(),
                configured_key_id: configured_key_id.clone(),
            },
            Error::MissingKey { segment } => Error::MissingKey {
                segment: segment.clone(),
            },
            Error::Corrupt { key, message } => Error::Corrupt {
                key: key.clone(),
                message: message.clone(),
            },
            Error::Task { what, message } => Error::Task {
                what: what.clone(),
                message: message.clone(),
            },
            _ => Error::Shared(e),
        }
    }

    pub(crate) fn store(
        operation: &'static str,
        key: impl ToString,
        source: object_store::Error,
    ) -> Self {
        match source {
            object_store::Error::NotFound { .. }
                if operation.starts_with("get") || operation == "head" =>
            {
                Error::ResourceNotFound {
                    what: key.to_string(),
                }
            }
            source => Error::Store {
                operation,
                key: key.to_string(),
                source,
            },
        }
    }

    pub(crate) fn meta(operation: &'static str) -> impl FnOnce(strata_metadata::Error) -> Error {
        move |source| Error::Metadata {
            operation,
            source: Box::new(source),
        }
    }

    pub(crate) fn remote(operation: &'static str) -> impl FnOnce(Error) -> Error {
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

    pub(crate) fn invalid(key: &str, message: impl Into<String>) -> Self {
        Error::InvalidConfig {
            key: key.to_string(),
            message: message.into(),
        }
    }
}

/// Renders an error and its chain of sources on one line.
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}
