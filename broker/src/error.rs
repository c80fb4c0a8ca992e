//! The broker crate's one public error.

/// Everything that can go wrong in the broker; [`crate::error_code`] maps it to Kafka error codes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A config property has a bad value.
    #[error("bad config {key}={value:?}: {reason}")]
    Config {
        /// Kafka property name.
        key: String,
        /// The value given.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
    /// A request could not be decoded or a response encoded.
    #[error("protocol error in {api}: {message}")]
    Protocol {
        /// API being decoded.
        api: String,
        /// What went wrong.
        message: String,
    },
    /// An error from the local log.
    #[error(transparent)]
    Storage(#[from] strata_storage::Error),
    /// I/O outside the log (sockets, the topic registry file).
    #[error("i/o error on {context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The topic is not known.
    #[error("unknown topic or partition {0}")]
    UnknownTopicOrPartition(String),
    /// The topic already exists.
    #[error("topic {0} already exists")]
    TopicExists(String),
    /// A topic name is not a legal Kafka topic name.
    #[error("invalid topic name {0:?}: {1}")]
    InvalidTopic(String, &'static str),
    /// A new topic's name equals an existing one's once '.' and '_' are treated alike.
    #[error(
        "topic {name:?} collides with existing topic {existing:?} ('.' and '_' are treated alike)"
    )]
    TopicCollision {
        /// The name asked for.
        name: String,
        /// The existing topic.
        existing: String,
    },
    /// A topic config key or value is not accepted.
    #[error("invalid topic config {key}={value:?}: {reason}")]
    InvalidConfig {
        /// Config key.
        key: String,
        /// Value given.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
    /// A topic's configs break a rule between keys (Kafka's tiered-storage rules).
    #[error("invalid configs for topic {topic}: {reason}")]
    ConfigRule {
        /// The topic.
        topic: String,
        /// The rule broken.
        reason: String,
    },
    /// A partition count is not valid (e.g. decreasing).
    #[error("invalid partitions: {0}")]
    InvalidPartitions(String),
    /// A request would create more partitions than `max.partitions.per.request` allows, or bring the broker
    /// above `max.broker.partitions` (Kafka's POLICY_VIOLATION for "excessively large" batches).
    #[error("{0}")]
    PartitionLimit(String),
    /// Replica assignments that do not fit (an unknown broker, or not one per new partition).
    #[error("invalid replica assignment: {0}")]
    InvalidReplicaAssignment(String),
    /// A replication factor other than 1 or -1.
    #[error("invalid replication factor {0}: a single-node broker has replication factor 1")]
    InvalidReplicationFactor(i16),
    /// Clients may not write to internal topics.
    #[error("topic {0} is internal and cannot be written by clients")]
    InternalTopic(String),
    /// The broker is shutting down.
    #[error("the broker is shutting down")]
    ShuttingDown,
}

/// The broker's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
