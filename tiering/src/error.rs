//! The crate's one public error type.
use std::path::PathBuf;

/// Errors of the remote storage data plane. Messages are lowercase and name what failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `rsm.config.` property was not recognised.
    #[error("unknown remote storage property rsm.config.{key}")]
    UnknownConfig {
        /// The key, without the `rsm.config.` prefix.
        key: String,
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
