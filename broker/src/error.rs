//! The broker crate's one public error.

/// Everything that can go wrong in the broker; [`crate::error_code`] maps it to Kafka error codes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A config is not accepted (INVALID_CONFIG): a broker property at start-up, a topic config or a dynamic
    /// broker config in a request (naming the key and the value given), or a topic's configs that break a rule
    /// between keys (naming the topic).
    #[error("invalid config {subject}: {reason}")]
    Config {
        /// What is not accepted.
        subject: ConfigSubject,
        /// Why.
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
    /// A topic named in a request is not known (no partition involved).
    #[error("unknown topic {0}")]
    UnknownTopic(String),
    /// A topic id named in a request is not known.
    #[error("unknown topic id {0}")]
    UnknownTopicId(uuid::Uuid),
    /// Produce of a partition without a record batch.
    #[error("a produce request must carry at least one record batch")]
    ProduceWithoutRecords,
    /// Produce v3+ records that are not exactly one complete v2 batch (Kafka's `ProduceRequest.validateRecords`).
    #[error("produce to {topic}: {reason}")]
    InvalidProduceRecords {
        /// The topic.
        topic: String,
        /// What is wrong, with the numbers.
        reason: String,
    },
    /// Produce with `acks` other than 0, 1 or -1.
    #[error("acks={0} is not one of 0, 1, -1 (all)")]
    InvalidRequiredAcks(i16),
    /// acks=all to a partition whose `min.insync.replicas` exceeds its one in-sync replica.
    #[error(
        "{topic}-{partition} has 1 in-sync replica (a single broker) and min.insync.replicas={min_isr}"
    )]
    NotEnoughReplicas {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The topic's `min.insync.replicas`.
        min_isr: i32,
    },
    /// An offset commit whose metadata is longer than `offset.metadata.max.bytes`.
    #[error("offset metadata of {topic}-{partition} is {size} bytes, over offset.metadata.max.bytes={max}")]
    OffsetMetadataTooLarge {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The metadata's length.
        size: usize,
        /// `offset.metadata.max.bytes`.
        max: usize,
    },
    /// A ListOffsets timestamp that is neither a time nor one of Kafka's sentinels (-1 .. -5), or a sentinel
    /// newer than the request's version (-3 needs v7, -4 v8, -5 v9).
    #[error("ListOffsets v{version} does not serve timestamp sentinel {timestamp}")]
    UnknownOffsetSpec {
        /// The timestamp asked for.
        timestamp: i64,
        /// The request's version.
        version: i16,
    },
    /// SASL credentials that do not match (wrong password, unknown user, bad token); the connection is closed
    /// after the answer.
    #[error("authentication failed: {0}")]
    SaslAuthenticationFailed(String),
    /// A SaslHandshake for a mechanism the listener does not enable.
    #[error("unsupported SASL mechanism {mechanism:?} (enabled: {enabled})")]
    UnsupportedSaslMechanism {
        /// The mechanism asked for.
        mechanism: String,
        /// `sasl.enabled.mechanisms` of the listener.
        enabled: String,
    },
    /// A SASL request out of turn (SaslAuthenticate before SaslHandshake, either on a listener without SASL).
    #[error("illegal SASL state: {0}")]
    IllegalSaslState(String),
    /// AlterUserScramCredentials deleting a credential that does not exist, DescribeUserScramCredentials of an
    /// unknown user.
    #[error("{0}")]
    ScramUserNotFound(String),
    /// A user named twice in one AlterUserScramCredentials or DescribeUserScramCredentials.
    #[error("user {0} appears more than once in the request")]
    DuplicateScramUser(String),
    /// A SCRAM credential Kafka would not accept (iterations out of range, an empty name or salt).
    #[error("unacceptable credential: {0}")]
    UnacceptableCredential(String),
    /// A config request for a broker other than this one.
    #[error("this is broker {node_id}")]
    NotThisBroker {
        /// This broker's `node.id`.
        node_id: i32,
    },
    /// A config request for a resource type that has no configs here.
    #[error("resource type {0} has no configs here")]
    NoConfigs(i8),
    /// Broker configs Kafka does not change at run time (Kafka's answer to AlterConfigs on the BROKER resource).
    #[error("Cannot update these configs dynamically: {}", .0.join(", "))]
    NotDynamicConfigs(Vec<String>),
    /// Per-broker configs set on the cluster-wide default resource (Kafka's answer, INVALID_REQUEST).
    #[error(
        "Cannot update these configs at default cluster level, broker id must be specified: [{}]",
        .0.join(", ")
    )]
    PerBrokerConfigs(Vec<String>),
    /// OffsetFetch with `require_stable` for a partition whose offsets wait for a transaction to end (KIP-447).
    #[error("offsets of {group} for {topic}-{partition} wait for a transaction to end")]
    UnstableOffsetCommit {
        /// The group.
        group: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// A part of a request not tried because another part of it failed (AddPartitionsToTxn with an unknown
    /// partition).
    #[error("not attempted: another part of the request failed")]
    OperationNotAttempted,
    /// FindCoordinator for a key type other than group (0) and transaction (1).
    #[error("coordinator key type {0} is not served (0 = group, 1 = transaction)")]
    UnknownCoordinatorType(i8),
    /// A control batch (transaction marker) sent by a client: only the coordinator writes them.
    #[error("clients are not allowed to write control records ({topic}-{partition})")]
    ControlBatchFromClient {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// An incremental fetch names a fetch session (KIP-227); strata holds none.
    #[error(
        "fetch session {session_id} (epoch {epoch}) is not held: strata keeps no fetch sessions"
    )]
    FetchSessionIdNotFound {
        /// The session named.
        session_id: i32,
        /// The session epoch sent.
        epoch: i32,
    },
    /// A Fetch older than v10 of a topic stored in zstd (Kafka's KafkaApis refuses it: clients of those versions
    /// may not read zstd).
    #[error("Fetch v{version} cannot carry topic {topic}'s batches (compression.type=zstd): zstd needs Fetch v10+")]
    ZstdBeforeFetchV10 {
        /// The topic.
        topic: String,
        /// The Fetch version.
        version: i16,
    },
    /// A request in a version of its API that strata does not serve.
    #[error("unsupported {api} version {version}")]
    UnsupportedVersion {
        /// The API.
        api: String,
        /// The version asked for.
        version: i16,
    },
    /// A log dir a failed write took offline.
    #[error("log dir {} is offline", .0.display())]
    LogDirOffline(std::path::PathBuf),
    /// A failed read from the remote tier of a fetch at `offset`, with the partition's log start offset after the
    /// failure ([`crate::error_code::remote_read_code`] tells the cases apart).
    #[error(
        "remote read at offset {offset} failed (log start now {log_start}): {}",
        strata_tiering::Report(source)
    )]
    RemoteRead {
        /// The offset fetched.
        offset: i64,
        /// The partition's log start offset after the failure.
        log_start: i64,
        /// What the tier answered.
        source: RemoteReadError,
    },
    /// Tiered storage failed while the server started or stopped it, or while it served a topic change
    /// (`context` says which); its config errors are [`Error::Config`].
    #[error("{context}: {}", strata_tiering::Report(source.as_ref()))]
    Tiering {
        /// What was being done, naming the subsystem (`starting tiered storage`, `in tiered storage`, ...).
        context: String,
        /// The subsystem's error (`crate::tiered::TieringError`, `strata_tiering::Error`).
        source: BoxError,
    },
    /// An ACL request to a broker without an authorizer (`authorizer.class.name` unset), as Kafka answers it.
    #[error("No Authorizer is configured on the broker")]
    SecurityDisabled,
    /// The principal may not do what it asked on a topic (`crate::authz`).
    #[error("Not authorized to access topics: [{0}]")]
    TopicAuthorizationFailed(String),
    /// The principal may not do what it asked on a group.
    #[error("Not authorized to access group: {0}")]
    GroupAuthorizationFailed(String),
    /// The principal may not do what it asked on the cluster (the operation named).
    #[error("Cluster authorization failed: {0} on the cluster is not allowed")]
    ClusterAuthorizationFailed(String),
    /// The principal may not use a transactional id.
    #[error("Transactional Id authorization failed: {0}")]
    TransactionalIdAuthorizationFailed(String),
    /// An ACL binding or filter Kafka refuses (CreateAcls / DeleteAcls / DescribeAcls validation).
    #[error("{0}")]
    InvalidAcl(String),
    /// ElectLeaders of a partition whose one replica, the preferred leader, already leads (every partition of a
    /// single node).
    #[error("leader election not needed: the one replica is the preferred leader and leads")]
    ElectionNotNeeded,
    /// A reassignment cancelled (null replicas) where none is in progress: on a single node none ever is.
    #[error("no partition reassignment is in progress for {0}")]
    NoReassignmentInProgress(String),
    /// ElectLeaders with an election type other than PREFERRED (0) and UNCLEAN (1).
    #[error("unknown election type {0} (0 = preferred, 1 = unclean)")]
    UnknownElectionType(i8),
    /// A GROUP config resource with an empty name (Kafka: "Group name must not be empty").
    #[error("group name must not be empty")]
    EmptyGroupName,
    /// An alteration of the GROUP resource with an empty name (Kafka's answer, INVALID_REQUEST).
    #[error("Default group resources are not allowed.")]
    DefaultGroupResource,
    /// A group config Kafka's `GroupConfig.validate` refuses (unknown key, bad value, outside the broker's
    /// bounds), in Kafka's words. INVALID_CONFIG.
    #[error("{0}")]
    InvalidGroupConfig(String),
    /// A task of the broker failed (a panic on the blocking pool).
    #[error("internal error: {0}")]
    Internal(String),
    /// The group coordinator refused a request.
    #[error(transparent)]
    Group(#[from] GroupError),
    /// The transaction coordinator refused a request.
    #[error(transparent)]
    Txn(#[from] TxnError),
}

/// What the transaction coordinator refuses, named after Kafka's exceptions; [`crate::error_code`] maps each to
/// its code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TxnError {
    /// A newer producer with the same transactional id holds a higher epoch (Kafka's `ProducerFencedException`).
    #[error("producer of transactional id {transactional_id:?} with epoch {epoch} is fenced: the current epoch is {current}")]
    ProducerFenced {
        /// The id.
        transactional_id: String,
        /// The epoch sent.
        epoch: i16,
        /// The id's current epoch.
        current: i16,
    },
    /// The producer id sent is not the transactional id's.
    #[error("producer id {producer_id} does not belong to transactional id {transactional_id:?} (its producer id is {current})")]
    InvalidProducerIdMapping {
        /// The id.
        transactional_id: String,
        /// The producer id sent.
        producer_id: i64,
        /// The id's producer id.
        current: i64,
    },
    /// The request does not fit the transaction's state.
    #[error("cannot {action} transaction of {transactional_id:?} in state {state}")]
    InvalidTxnState {
        /// The id.
        transactional_id: String,
        /// Kafka's state name.
        state: &'static str,
        /// What was asked.
        action: &'static str,
    },
    /// Markers of the previous transaction are being written; retriable.
    #[error("transaction of {transactional_id:?} is completing (state {state}); retry")]
    ConcurrentTransactions {
        /// The id.
        transactional_id: String,
        /// Kafka's state name.
        state: &'static str,
    },
    /// The transactional id is unknown to the coordinator.
    #[error("transactional id {transactional_id:?} is not known (InitProducerId first)")]
    TransactionalIdNotFound {
        /// The id.
        transactional_id: String,
    },
    /// `transaction.timeout.ms` above `transaction.max.timeout.ms` (or not positive).
    #[error(
        "transaction.timeout.ms={timeout_ms} is outside 1 .. transaction.max.timeout.ms={max_ms}"
    )]
    InvalidTransactionTimeout {
        /// The timeout asked for.
        timeout_ms: i32,
        /// The broker's maximum.
        max_ms: i32,
    },
    /// A transactional write to a partition the producer did not add to its transaction (Kafka's partition
    /// verification, KIP-890).
    #[error("partition {topic}-{partition} is not in the open transaction of {transactional_id:?} (AddPartitionsToTxn first)")]
    PartitionNotInTransaction {
        /// The id.
        transactional_id: String,
        /// The topic written to.
        topic: String,
        /// The partition written to.
        partition: i32,
    },
    /// Transactional record batches in a produce request that names no transactional id.
    #[error(
        "transactional record batches need the producer's transactional id in the produce request"
    )]
    MissingTransactionalId,
    /// A `__transaction_state` record that cannot be read.
    #[error("unreadable __transaction_state record: {reason}")]
    CorruptStateRecord {
        /// What is wrong.
        reason: String,
    },
}

/// What the group coordinator refuses, named after Kafka's exceptions; [`crate::error_code`] maps each to its code.
/// The group APIs carry no error message, so the context here is for logs and tests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupError {
    /// A group id that cannot be stored: empty, or longer than i16::MAX bytes.
    #[error("invalid group id {0:?}: a group id is 1 to 32767 bytes")]
    InvalidGroupId(String),
    /// A session timeout outside `group.min.session.timeout.ms` .. `group.max.session.timeout.ms`.
    #[error("session timeout {timeout_ms} ms is outside group.min.session.timeout.ms={min_ms} .. group.max.session.timeout.ms={max_ms}")]
    InvalidSessionTimeout {
        /// The timeout asked for.
        timeout_ms: i32,
        /// The broker's minimum.
        min_ms: i32,
        /// The broker's maximum.
        max_ms: i32,
    },
    /// A joining member's protocol type or protocols do not fit the group's.
    #[error("member {member:?} joins with protocol type {protocol_type:?} or protocols the group does not share")]
    InconsistentGroupProtocol {
        /// The joining member ("" for a new one).
        member: String,
        /// Its protocol type.
        protocol_type: String,
    },
    /// A newer member holds this static member's `group.instance.id` (KIP-345).
    #[error("member {member:?} is fenced: a newer member holds its group.instance.id")]
    FencedInstanceId {
        /// The fenced member id.
        member: String,
    },
    /// The group has `group.max.size` members.
    #[error("the group has reached group.max.size={max}")]
    GroupMaxSizeReached {
        /// `group.max.size`.
        max: usize,
    },
    /// The member id is not (or no longer) in the group.
    #[error("unknown member id {member:?}")]
    UnknownMemberId {
        /// The member id sent.
        member: String,
    },
    /// A generation other than the group's current one.
    #[error("generation {generation} is not the group's current generation {current}")]
    IllegalGeneration {
        /// The generation sent.
        generation: i32,
        /// The group's generation.
        current: i32,
    },
    /// The group is rebalancing: the member must (re)join.
    #[error("the group is rebalancing")]
    RebalanceInProgress,
    /// KIP-848: a heartbeat with an epoch that is not the member's (it must rejoin with epoch 0).
    #[error("member {member:?} is fenced: epoch {epoch} is not its current epoch {current}")]
    FencedMemberEpoch {
        /// The member.
        member: String,
        /// The epoch sent.
        epoch: i32,
        /// The member's epoch.
        current: i32,
    },
    /// KIP-848: an OffsetCommit with an epoch other than the member's.
    #[error("member {member:?} commits with epoch {epoch}; its epoch is {current}")]
    StaleMemberEpoch {
        /// The member.
        member: String,
        /// The epoch sent.
        epoch: i32,
        /// The member's epoch.
        current: i32,
    },
    /// KIP-848: a static instance id another member holds and has not released (epoch -2).
    #[error("instance id {instance:?} is held by another member that has not left")]
    UnreleasedInstanceId {
        /// The instance id.
        instance: String,
    },
    /// KIP-848: a server assignor the broker does not have (`group.consumer.assignors`).
    #[error("server assignor {name:?} is not one of group.consumer.assignors {known:?}")]
    UnsupportedAssignor {
        /// The assignor asked for.
        name: String,
        /// The broker's assignors.
        known: Vec<String>,
    },
    /// KIP-848: a heartbeat that cannot be served (a missing field on join, a bad regex).
    #[error("invalid ConsumerGroupHeartbeat: {0}")]
    InvalidHeartbeat(String),
    /// KIP-848: `group.coordinator.rebalance.protocols` does not include `consumer`.
    #[error("group.coordinator.rebalance.protocols does not include consumer")]
    ConsumerProtocolDisabled,
    /// KIP-848: the group exists with the other protocol (classic vs consumer), or the protocol is disabled.
    #[error("group {group} is not a {wanted} group")]
    WrongGroupType {
        /// The group.
        group: String,
        /// The protocol asked for.
        wanted: &'static str,
    },
    /// KIP-394: a new member must join again with the member id it is given.
    #[error("member id required: join again with member id {member:?}")]
    MemberIdRequired {
        /// The member id handed out.
        member: String,
    },
    /// Writing the group's records to `__consumer_offsets` failed; the change they carried is undone (Kafka's
    /// coordinator reverts to its last written state). Answered as Kafka's
    /// `appendGroupMetadataErrorToResponseError` maps the append's error ([`crate::error_code::group_code`]).
    #[error("storing group {group:?} in __consumer_offsets failed: {reason}")]
    StoreFailed {
        /// The group.
        group: String,
        /// The append's own error code (mapped to the answer's code).
        append_code: i16,
        /// The append's error.
        reason: String,
    },
    /// A group with members cannot be deleted (nor its offsets of a non-consumer group).
    #[error("group {group} is not empty")]
    GroupNotEmpty {
        /// The group.
        group: String,
    },
    /// The group has neither members nor committed offsets.
    #[error("group {group} does not exist")]
    GroupIdNotFound {
        /// The group.
        group: String,
    },
    /// OffsetDelete of a topic a member of the (non-empty) group subscribes to.
    #[error("a member of group {group} subscribes to topic {topic}")]
    GroupSubscribedToTopic {
        /// The group.
        group: String,
        /// The topic.
        topic: String,
    },
}

/// A boxed cause.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a read from the remote tier failed: one variant per answer the broker gives the client
/// ([`crate::error_code::remote_read_code`]). The cause is the [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
pub enum RemoteReadError {
    /// No finished remote segment holds the offset (Kafka's RemoteLogManager throws OffsetOutOfRangeException):
    /// OFFSET_OUT_OF_RANGE, so the consumer resets instead of retrying forever.
    #[error("no remote segment holds the offset")]
    OffsetOutOfRange(#[source] BoxError),
    /// The remote segment, its manifest, an index or one of its objects does not exist (Kafka's
    /// `RemoteResourceNotFoundException`): retrying cannot help.
    #[error("remote data is missing")]
    Missing(#[source] BoxError),
    /// Stored data is unreadable (does not match its manifest, does not decrypt): retrying cannot help.
    #[error("remote data is unreadable")]
    Unreadable(#[source] BoxError),
    /// The tier cannot serve the read now (the object store or the remote log metadata failed, the manager is
    /// stopping): retriable.
    #[error("the remote tier is unavailable")]
    Unavailable(#[source] BoxError),
}

/// What a [`Error::Config`] does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSubject {
    /// A key and the value given.
    Value {
        /// The key (a broker property, a topic config, a dynamic broker config).
        key: String,
        /// The value given.
        value: String,
    },
    /// A topic whose configs break a rule between keys (Kafka's tiered-storage rules).
    Topic(String),
}

impl std::fmt::Display for ConfigSubject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigSubject::Value { key, value } => write!(f, "{key}={value:?}"),
            ConfigSubject::Topic(topic) => write!(f, "of topic {topic}"),
        }
    }
}

/// The broker's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A key with a value that is not accepted ([`Error::Config`]).
    pub fn config(key: String, value: String, reason: String) -> Self {
        Error::Config {
            subject: ConfigSubject::Value { key, value },
            reason,
        }
    }

    /// A topic whose configs break a rule between keys ([`Error::Config`]).
    pub fn config_rule(topic: String, reason: String) -> Self {
        Error::Config {
            subject: ConfigSubject::Topic(topic),
            reason,
        }
    }

    /// The config key a [`Error::Config`] names, if it names one.
    pub fn config_key(&self) -> Option<&str> {
        match self {
            Error::Config {
                subject: ConfigSubject::Value { key, .. },
                ..
            } => Some(key),
            _ => None,
        }
    }

    /// Tiered storage failed while doing `context` ([`Error::Tiering`]).
    pub fn tiering(context: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Tiering {
            context: context.into(),
            source: source.into(),
        }
    }

    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
