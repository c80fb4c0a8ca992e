//! The crate's one public error type.
use strata_storage::TopicPartition;

/// A boxed source error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of the remote storage data plane (the RSM) and of the [`RemoteLogManager`](crate::RemoteLogManager):
/// one variant per thing a caller decides on, the context in fields and the cause as [`source`](std::error::Error::source)
/// (messages do not repeat it: render the chain with [`Report`]).
///
/// Callers decide by [`Error::class`] (the broker's mapping to Kafka codes is per [`ErrorClass`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bad configuration: an unknown or bad `rsm.config.` / `remote.log.*` property, properties that contradict
    /// each other, an unreadable encryption key file, an object store that cannot be built from the properties.
    #[error("invalid configuration {key}{}: {reason}", .value.as_ref().map(|v| format!("={v}")).unwrap_or_default())]
    Config {
        /// The property, with its prefix (`rsm.config.chunk.size`).
        key: String,
        /// The value given, when one is to blame (never a secret).
        value: Option<String>,
        /// What is wrong.
        reason: String,
        /// The cause, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// A topic config change Kafka forbids that needs the broker's state (tiering while
    /// `remote.log.storage.system.enable=false`).
    #[error("invalid config for topic {topic}: {reason}")]
    PolicyViolation {
        /// The topic.
        topic: String,
        /// Which rule.
        reason: String,
    },
    /// Kafka's `RemoteResourceNotFoundException`: the segment, its manifest or the asked-for index does not exist.
    #[error("remote resource not found: {what}")]
    NotFound {
        /// What was looked for.
        what: String,
    },
    /// The object store, a local file, the remote log metadata or a background task failed: retriable.
    #[error("{operation} of {what} failed")]
    Unavailable {
        /// The call (`put`, `get`, `put_part`, `complete_multipart`, `delete`, `list`, `read local file`, ...).
        operation: &'static str,
        /// What it was about (an object key, a file, a partition).
        what: String,
        /// The cause.
        #[source]
        source: BoxError,
    },
    /// Stored data is unreadable: it does not match its manifest or metadata, does not decrypt, was encrypted under
    /// another key than the configured one, or no key is configured. Retrying cannot help.
    #[error("remote data {what} is unreadable: {reason}")]
    Corrupt {
        /// The object, chunk or segment.
        what: String,
        /// What is wrong.
        reason: String,
        /// The cause, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The work was cancelled: the manager was stopped, or the partition deleted.
    #[error("cancelled: the remote log manager is stopped")]
    Cancelled,
    /// A byte range outside the segment was asked for (the RSM contract).
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
    /// A remote read was not started or did not finish in time: the fetch answers no records this time (as
    /// Kafka's delayed remote fetch) and the client fetches again.
    #[error("remote read of {tp} deferred: {reason}")]
    Deferred {
        /// The partition.
        tp: TopicPartition,
        /// Why.
        reason: Deferral,
    },
    /// An error shared by several readers of one cache entry (the first reader's error).
    #[error(transparent)]
    Shared(std::sync::Arc<Error>),
}

/// Why a remote read was deferred ([`Error::Deferred`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Deferral {
    /// `remote.log.manager.fetch.max.bytes.per.second` is used up: no remote read starts now.
    #[error("the remote fetch quota is used up")]
    Quota,
    /// The read did not finish within `remote.fetch.max.wait.ms`.
    #[error("not finished within {wait_ms} ms")]
    Timeout {
        /// The deadline.
        wait_ms: u64,
    },
    /// `remote.log.reader.max.pending.tasks` reads are already waiting.
    #[error("{pending} reads are already pending")]
    QueueFull {
        /// The queue bound.
        pending: usize,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a caller can do about an [`Error`]: one class per decision, from [`Error::class`]. Not
/// `#[non_exhaustive]` on purpose: a caller matches every class (the broker picks a Kafka code per class), so a new
/// class does not compile until each caller decided what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// A bad property or a topic config rule broken ([`Error::Config`], [`Error::PolicyViolation`]).
    Config,
    /// No remote segment holds the offset ([`Error::OffsetOutOfRange`]).
    OffsetOutOfRange,
    /// The partition has no local log here ([`Error::UnknownPartition`]).
    UnknownPartition,
    /// The read was not started or not finished in time ([`Error::Deferred`]): no records this time.
    Deferred,
    /// The segment, its manifest, an index or an object does not exist ([`Error::NotFound`]): retrying cannot help.
    Missing,
    /// Stored data is unreadable ([`Error::Corrupt`]): retrying cannot help.
    Unreadable,
    /// The store, a local file, the metadata or a task failed, the work was cancelled, or a range was out of a
    /// segment ([`Error::Unavailable`], [`Error::Cancelled`], [`Error::InvalidRange`]): retriable.
    Unavailable,
}

impl Error {
    /// The error's [`ErrorClass`] (a shared error's is its inner one's).
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Config { .. } | Error::PolicyViolation { .. } => ErrorClass::Config,
            Error::OffsetOutOfRange { .. } => ErrorClass::OffsetOutOfRange,
            Error::UnknownPartition { .. } => ErrorClass::UnknownPartition,
            Error::Deferred { .. } => ErrorClass::Deferred,
            Error::NotFound { .. } => ErrorClass::Missing,
            Error::Corrupt { .. } => ErrorClass::Unreadable,
            Error::Unavailable { .. } | Error::Cancelled | Error::InvalidRange { .. } => {
                ErrorClass::Unavailable
            }
            Error::Shared(e) => e.class(),
        }
    }

    /// True for Kafka's `RemoteResourceNotFoundException`.
    pub fn is_not_found(&self) -> bool {
        self.class() == ErrorClass::Missing
    }

    /// Whether retrying cannot help: the data is missing or unreadable (as opposed to a store that is unavailable).
    pub fn is_permanent(&self) -> bool {
        matches!(self.class(), ErrorClass::Missing | ErrorClass::Unreadable)
    }

    /// Unwraps an error shared through a cache loader.
    /// Variants without an opaque source are rebuilt, so callers can still match on them.
    pub(crate) fn from_shared(e: std::sync::Arc<Error>) -> Self {
        let e = match std::sync::Arc::try_unwrap(e) {
            Ok(e) => return e,
            Err(e) => e,
        };
        match &*e {
            Error::NotFound { what } => Error::NotFound { what: what.clone() },
            Error::Corrupt {
                what,
                reason,
                source: None,
            } => Error::Corrupt {
                what: what.clone(),
                reason: reason.clone(),
                source: None,
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
                Error::NotFound {
                    what: key.to_string(),
                }
            }
            source => Error::Unavailable {
                operation,
                what: key.to_string(),
                source: Box::new(source),
            },
        }
    }

    pub(crate) fn meta(operation: &'static str) -> impl FnOnce(strata_metadata::Error) -> Error {
        move |source| Error::Unavailable {
            operation,
            what: "remote log metadata".into(),
            source: Box::new(source),
        }
    }

    pub(crate) fn storage(tp: &TopicPartition) -> impl FnOnce(strata_storage::Error) -> Error + '_ {
        move |source| Error::Unavailable {
            operation: "local log",
            what: tp.to_string(),
            source: Box::new(source),
        }
    }

    pub(crate) fn local_io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Unavailable {
            operation: "read local segment file",
            what: path.display().to_string(),
            source: Box::new(source),
        }
    }

    pub(crate) fn task(what: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Unavailable {
            operation: "background task",
            what: what.into(),
            source: source.into(),
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            what: what.into(),
            reason: reason.into(),
            source: None,
        }
    }

    /// A bad `rsm.config.` property (`key` without the prefix).
    pub(crate) fn invalid(key: &str, reason: impl Into<String>) -> Self {
        Error::Config {
            key: format!("rsm.config.{key}"),
            value: None,
            reason: reason.into(),
            source: None,
        }
    }
}

/// Renders an error with its chain of sources on one line (`a: b: c`), for logs and messages.
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&chain(self.0))
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
