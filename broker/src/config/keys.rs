//! The broker keys strata uses: one [`ConfigKey`] each, the only place their type, default and check are written.

use strata_storage::config_def::{ConfigKey, Synonym, Type, Validator};
use strata_storage::topic_keys as topic;

const HOUR_MS: i64 = 3_600_000;

strata_storage::config_keys! {
    /// Every broker key strata uses (Kafka names; `*` in `--help` marks strata's own).
    pub const BROKER_KEYS;
    /// `listeners`.
    pub LISTENERS: Vec<String> = ConfigKey::new(
        "listeners",
        Type::List,
        "named listeners NAME://host:port; an empty host or 0.0.0.0 binds every interface; strata serves every \
         non-controller listener with its protocol",
    )
    .default("PLAINTEXT://127.0.0.1:9092");
    /// `advertised.listeners`.
    pub ADVERTISED_LISTENERS: Vec<String> = ConfigKey::new(
        "advertised.listeners",
        Type::List,
        "addresses given to clients in Metadata, per listener name (port 0 = the bound port)",
    )
    .default_doc("listeners");
    /// `listener.security.protocol.map`.
    pub LISTENER_SECURITY_PROTOCOL_MAP: String = ConfigKey::new(
        "listener.security.protocol.map",
        Type::String,
        "listener name → security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
    )
    .default("SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT");
    /// `controller.listener.names`.
    pub CONTROLLER_LISTENER_NAMES: Vec<String> = ConfigKey::new(
        "controller.listener.names",
        Type::List,
        "listeners of the KRaft controller: accepted, not served (strata has no controller quorum)",
    )
    .default("");
    /// `inter.broker.listener.name`.
    pub INTER_BROKER_LISTENER_NAME: Option<String> = ConfigKey::new(
        "inter.broker.listener.name",
        Type::String,
        "listener for other brokers: must name a listener; a single node has no other brokers",
    );
    /// `node.id`.
    pub NODE_ID: i32 = ConfigKey::new("node.id", Type::Int, "this broker's id")
        .default("1")
        .validator(Validator::AtLeast(0))
        .synonyms(&[Synonym {
            name: "broker.id",
            scale: 1,
        }]);
    /// `log.dirs`.
    pub LOG_DIRS: Vec<String> = ConfigKey::new("log.dirs", Type::List, "comma-separated data directories")
        .default("./strata-data")
        .validator(Validator::NonEmpty)
        .synonyms(&[Synonym {
            name: "log.dir",
            scale: 1,
        }]);
    /// `num.partitions`.
    pub NUM_PARTITIONS: i32 = ConfigKey::new("num.partitions", Type::Int, "partitions of an auto-created topic")
        .default("1")
        .validator(Validator::AtLeast(1));
    /// `auto.create.topics.enable`.
    pub AUTO_CREATE_TOPICS_ENABLE: bool = ConfigKey::new(
        "auto.create.topics.enable",
        Type::Boolean,
        "create unknown topics on Metadata requests",
    )
    .default("true");
    /// `default.replication.factor`.
    pub DEFAULT_REPLICATION_FACTOR: i32 = ConfigKey::new(
        "default.replication.factor",
        Type::Int,
        "replication factor of auto-created topics: only 1 is possible on a single node",
    )
    .default("1")
    .validator(Validator::Between(1, 1));
    /// `log.segment.bytes`.
    pub LOG_SEGMENT_BYTES: i32 = ConfigKey::new("log.segment.bytes", Type::Int, "segment size before a roll")
        .default_from(topic::SEGMENT_BYTES.def)
        .validator(Validator::AtLeast(1));
    /// `log.roll.ms`.
    pub LOG_ROLL_MS: i64 = ConfigKey::new("log.roll.ms", Type::Long, "segment age before a roll")
        .default_from(topic::SEGMENT_MS.def)
        .validator(Validator::AtLeast(1))
        .synonyms(&[Synonym {
            name: "log.roll.hours",
            scale: HOUR_MS,
        }]);
    /// `log.retention.ms`.
    pub LOG_RETENTION_MS: i64 = ConfigKey::new("log.retention.ms", Type::Long, "time retention (-1 = unlimited)")
        .default_from(topic::RETENTION_MS.def)
        .validator(Validator::AtLeast(-1))
        .synonyms(&[
            Synonym {
                name: "log.retention.minutes",
                scale: 60_000,
            },
            Synonym {
                name: "log.retention.hours",
                scale: HOUR_MS,
            },
        ]);
    /// `log.retention.bytes`.
    pub LOG_RETENTION_BYTES: i64 = ConfigKey::new(
        "log.retention.bytes",
        Type::Long,
        "size retention per partition (negative = unlimited)",
    )
    .default_from(topic::RETENTION_BYTES.def);
    /// `log.local.retention.ms`.
    pub LOG_LOCAL_RETENTION_MS: i64 = ConfigKey::new(
        "log.local.retention.ms",
        Type::Long,
        "local time retention of tiered topics (-2 = log.retention.ms)",
    )
    .default_from(topic::LOCAL_RETENTION_MS.def)
    .validator(Validator::AtLeast(-2));
    /// `log.local.retention.bytes`.
    pub LOG_LOCAL_RETENTION_BYTES: i64 = ConfigKey::new(
        "log.local.retention.bytes",
        Type::Long,
        "local size retention of tiered topics (-2 = log.retention.bytes)",
    )
    .default_from(topic::LOCAL_RETENTION_BYTES.def)
    .validator(Validator::AtLeast(-2));
    /// `log.remote.storage.enable`.
    pub LOG_REMOTE_STORAGE_ENABLE: bool = ConfigKey::new(
        "log.remote.storage.enable",
        Type::Boolean,
        "default remote.storage.enable of new topics (lets auto-created topics tier; internal topics never do)",
    )
    .default_from(topic::REMOTE_STORAGE_ENABLE.def)
    .strata_only();
    /// `log.index.interval.bytes`.
    pub LOG_INDEX_INTERVAL_BYTES: i32 = ConfigKey::new(
        "log.index.interval.bytes",
        Type::Int,
        "bytes between offset index entries",
    )
    .default_from(topic::INDEX_INTERVAL_BYTES.def)
    .validator(Validator::AtLeast(0));
    /// `log.index.size.max.bytes`.
    pub LOG_INDEX_SIZE_MAX_BYTES: i32 = ConfigKey::new(
        "log.index.size.max.bytes",
        Type::Int,
        "maximum size of an index file",
    )
    .default_from(topic::SEGMENT_INDEX_BYTES.def)
    .validator(Validator::AtLeast(4));
    /// `log.retention.check.interval.ms`.
    pub LOG_RETENTION_CHECK_INTERVAL_MS: i64 = ConfigKey::new(
        "log.retention.check.interval.ms",
        Type::Long,
        "period of the retention pass",
    )
    .default("300000")
    .validator(Validator::AtLeast(1));
    /// `min.insync.replicas`.
    pub MIN_INSYNC_REPLICAS: i32 = ConfigKey::new(
        "min.insync.replicas",
        Type::Int,
        "in-sync replicas an acks=all produce needs (a single broker has 1: above it, NOT_ENOUGH_REPLICAS)",
    )
    .default_from(topic::MIN_INSYNC_REPLICAS.def)
    .validator(Validator::AtLeast(1));
    /// `log.flush.interval.ms`.
    pub LOG_FLUSH_INTERVAL_MS: Option<i64> = ConfigKey::new(
        "log.flush.interval.ms",
        Type::Long,
        "flush a log whose unflushed data is older than this",
    )
    .default_doc("never")
    .validator(Validator::AtLeast(0));
    /// `log.flush.interval.messages`.
    pub LOG_FLUSH_INTERVAL_MESSAGES: i64 = ConfigKey::new(
        "log.flush.interval.messages",
        Type::Long,
        "flush a log after this many messages",
    )
    .default_from(topic::FLUSH_MESSAGES.def)
    .validator(Validator::AtLeast(1));
    /// `log.flush.offset.checkpoint.interval.ms`.
    pub LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS: i32 = ConfigKey::new(
        "log.flush.offset.checkpoint.interval.ms",
        Type::Int,
        "period of flush + recovery checkpoints",
    )
    .default("60000")
    .validator(Validator::AtLeast(1));
    /// `compression.type`.
    pub COMPRESSION_TYPE: String = ConfigKey::new(
        "compression.type",
        Type::String,
        "codec new topics store batches in (a batch in another codec is re-encoded on append); producer keeps \
         the producer's",
    )
    .default_from(topic::COMPRESSION_TYPE.def)
    .validator(Validator::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]));
    /// `compression.gzip.level`.
    pub COMPRESSION_GZIP_LEVEL: i32 = ConfigKey::new(
        "compression.gzip.level",
        Type::Int,
        "gzip level of new topics when compression.type=gzip (-1: the codec's default)",
    )
    .default_from(topic::COMPRESSION_GZIP_LEVEL.def)
    .validator(Validator::Between(-1, 9));
    /// `compression.lz4.level`.
    pub COMPRESSION_LZ4_LEVEL: i32 = ConfigKey::new(
        "compression.lz4.level",
        Type::Int,
        "lz4 level of new topics when compression.type=lz4",
    )
    .default_from(topic::COMPRESSION_LZ4_LEVEL.def)
    .validator(Validator::Between(1, 17));
    /// `compression.zstd.level`.
    pub COMPRESSION_ZSTD_LEVEL: i32 = ConfigKey::new(
        "compression.zstd.level",
        Type::Int,
        "zstd level of new topics when compression.type=zstd",
    )
    .default_from(topic::COMPRESSION_ZSTD_LEVEL.def)
    .validator(Validator::Between(-131072, 22));
    /// `log.message.timestamp.type`.
    pub LOG_MESSAGE_TIMESTAMP_TYPE: String = ConfigKey::new(
        "log.message.timestamp.type",
        Type::String,
        "timestamp of new records",
    )
    .default_from(topic::MESSAGE_TIMESTAMP_TYPE.def)
    .validator(Validator::OneOf(&["CreateTime", "LogAppendTime"]));
    /// `log.message.timestamp.before.max.ms`.
    pub LOG_MESSAGE_TIMESTAMP_BEFORE_MAX_MS: i64 = ConfigKey::new(
        "log.message.timestamp.before.max.ms",
        Type::Long,
        "default message.timestamp.before.max.ms: how far a CreateTime record's timestamp may lie before the \
         broker's clock (else INVALID_TIMESTAMP)",
    )
    .default_from(topic::MESSAGE_TIMESTAMP_BEFORE_MAX_MS.def)
    .validator(Validator::AtLeast(0));
    /// `log.message.timestamp.after.max.ms`.
    pub LOG_MESSAGE_TIMESTAMP_AFTER_MAX_MS: i64 = ConfigKey::new(
        "log.message.timestamp.after.max.ms",
        Type::Long,
        "default message.timestamp.after.max.ms: how far a CreateTime record's timestamp may lie after the \
         broker's clock (else INVALID_TIMESTAMP)",
    )
    .default_from(topic::MESSAGE_TIMESTAMP_AFTER_MAX_MS.def)
    .validator(Validator::AtLeast(0));
    /// `log.message.timestamp.difference.max.ms`.
    pub LOG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS: i64 = ConfigKey::new(
        "log.message.timestamp.difference.max.ms",
        Type::Long,
        "deprecated (Kafka 3.x) default message.timestamp.difference.max.ms: both bounds where the two keys \
         above are left at their defaults",
    )
    .default_from(topic::MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS.def)
    .validator(Validator::AtLeast(0));
    /// `log.cleanup.policy`.
    pub LOG_CLEANUP_POLICY: Vec<String> = ConfigKey::new(
        "log.cleanup.policy",
        Type::List,
        "cleanup policy of new topics: delete (retention by time and size), compact (the log cleaner keeps the \
         latest record per key) or both",
    )
    .default_from(topic::CLEANUP_POLICY.def)
    .validator(Validator::ListOf(&["delete", "compact"]));
    /// `log.cleaner.enable`.
    pub LOG_CLEANER_ENABLE: bool = ConfigKey::new(
        "log.cleaner.enable",
        Type::Boolean,
        "run the log cleaner, which compacts topics with cleanup.policy=compact",
    )
    .default("true");
    // Kafka's static validator is atLeast(0), but its cleaner needs at least one thread (reconfiguration refuses
    // fewer); strata refuses 0 at start-up (use log.cleaner.enable=false to stop compaction).
    /// `log.cleaner.threads`.
    pub LOG_CLEANER_THREADS: i32 = ConfigKey::new("log.cleaner.threads", Type::Int, "log cleaner threads")
        .default("1")
        .validator(Validator::AtLeast(1));
    /// `log.cleaner.dedupe.buffer.size`.
    pub LOG_CLEANER_DEDUPE_BUFFER_SIZE: i64 = ConfigKey::new(
        "log.cleaner.dedupe.buffer.size",
        Type::Long,
        "memory of the cleaner's offset maps, all threads together (at least 1 MiB per thread)",
    )
    .default("134217728");
    /// `log.cleaner.io.buffer.size`.
    pub LOG_CLEANER_IO_BUFFER_SIZE: i32 = ConfigKey::new(
        "log.cleaner.io.buffer.size",
        Type::Int,
        "bytes the cleaner reads and writes at a time",
    )
    .default("524288")
    .validator(Validator::AtLeast(0));
    /// `log.cleaner.io.buffer.load.factor`.
    pub LOG_CLEANER_IO_BUFFER_LOAD_FACTOR: f64 = ConfigKey::new(
        "log.cleaner.io.buffer.load.factor",
        Type::Double,
        "how full the cleaner's offset map may get, in (0, 1]",
    )
    .default("0.9");
    /// `log.cleaner.io.max.bytes.per.second`.
    pub LOG_CLEANER_IO_MAX_BYTES_PER_SECOND: f64 = ConfigKey::new(
        "log.cleaner.io.max.bytes.per.second",
        Type::Double,
        "cleaner I/O (read plus written bytes per second, all threads)",
    )
    .default("1.7976931348623157E308");
    /// `log.cleaner.backoff.ms`.
    pub LOG_CLEANER_BACKOFF_MS: i64 = ConfigKey::new(
        "log.cleaner.backoff.ms",
        Type::Long,
        "how long the cleaner sleeps when no log needs cleaning",
    )
    .default("15000")
    .validator(Validator::AtLeast(0));
    /// `log.cleaner.delete.retention.ms`.
    pub LOG_CLEANER_DELETE_RETENTION_MS: i64 = ConfigKey::new(
        "log.cleaner.delete.retention.ms",
        Type::Long,
        "default delete.retention.ms: how long tombstones stay on compacted topics",
    )
    .default_from(topic::DELETE_RETENTION_MS.def)
    .validator(Validator::AtLeast(0));
    /// `log.cleaner.min.cleanable.ratio`.
    pub LOG_CLEANER_MIN_CLEANABLE_RATIO: f64 = ConfigKey::new(
        "log.cleaner.min.cleanable.ratio",
        Type::Double,
        "default min.cleanable.dirty.ratio: the dirty share of a log that makes the cleaner pick it",
    )
    .default_from(topic::MIN_CLEANABLE_DIRTY_RATIO.def)
    .validator(Validator::BetweenF(0.0, 1.0));
    /// `log.cleaner.min.compaction.lag.ms`.
    pub LOG_CLEANER_MIN_COMPACTION_LAG_MS: i64 = ConfigKey::new(
        "log.cleaner.min.compaction.lag.ms",
        Type::Long,
        "default min.compaction.lag.ms: the shortest time a record stays uncompacted",
    )
    .default_from(topic::MIN_COMPACTION_LAG_MS.def)
    .validator(Validator::AtLeast(0));
    /// `log.cleaner.max.compaction.lag.ms`.
    pub LOG_CLEANER_MAX_COMPACTION_LAG_MS: i64 = ConfigKey::new(
        "log.cleaner.max.compaction.lag.ms",
        Type::Long,
        "default max.compaction.lag.ms: the longest time a record stays ineligible for compaction",
    )
    .default_from(topic::MAX_COMPACTION_LAG_MS.def)
    .validator(Validator::AtLeast(1));
    /// `message.max.bytes`.
    pub MESSAGE_MAX_BYTES: i32 = ConfigKey::new(
        "message.max.bytes",
        Type::Int,
        "largest record batch accepted",
    )
    .default_from(topic::MAX_MESSAGE_BYTES.def)
    .validator(Validator::AtLeast(0));
    /// `socket.request.max.bytes`.
    pub SOCKET_REQUEST_MAX_BYTES: i32 = ConfigKey::new(
        "socket.request.max.bytes",
        Type::Int,
        "largest request frame accepted",
    )
    .default("104857600")
    .validator(Validator::AtLeast(64));
    /// `max.connections`.
    pub MAX_CONNECTIONS: i32 = ConfigKey::new(
        "max.connections",
        Type::Int,
        "concurrent client connections; at the limit a new one closes the longest-idle (or is closed if all are busy)",
    )
    .default("1000")
    .validator(Validator::AtLeast(1));
    /// `max.connections.per.ip`.
    pub MAX_CONNECTIONS_PER_IP: i32 = ConfigKey::new(
        "max.connections.per.ip",
        Type::Int,
        "connections from one IP address; one more is closed at once",
    )
    .default("2147483647")
    .validator(Validator::AtLeast(1));
    /// `max.connections.per.ip.overrides`.
    pub MAX_CONNECTIONS_PER_IP_OVERRIDES: String = ConfigKey::new(
        "max.connections.per.ip.overrides",
        Type::String,
        "per-IP limits, Kafka syntax ip:count,... (host names: localhost only)",
    )
    .default("")
    .validator(Validator::Custom(|v| match v {
        strata_storage::config_def::Value::String(s) => {
            super::listeners::parse_ip_overrides(s).map(|_| ())
        }
        _ => Ok(()),
    }));
    /// `connections.max.idle.ms`.
    pub CONNECTIONS_MAX_IDLE_MS: i64 = ConfigKey::new(
        "connections.max.idle.ms",
        Type::Long,
        "close a connection with no request received nor response written for this long (a response the client \
         stopped reading counts as no progress)",
    )
    .default("600000")
    .validator(Validator::AtLeast(1));
    /// `socket.request.read.timeout.ms`.
    pub SOCKET_REQUEST_READ_TIMEOUT_MS: i64 = ConfigKey::new(
        "socket.request.read.timeout.ms",
        Type::Long,
        "close a connection whose request frame has not arrived in full this long after its first byte",
    )
    .default("30000")
    .validator(Validator::AtLeast(1))
    .strata_only();
    /// `queued.max.request.bytes`.
    pub QUEUED_MAX_REQUEST_BYTES: Option<i64> = ConfigKey::new(
        "queued.max.request.bytes",
        Type::Long,
        "request-frame bytes being read across all connections, reserved as they arrive (-1 = unbounded; at least \
         socket.request.max.bytes); one eighth is reserved for frames of at most 1 MiB, so stalled large frames \
         cannot starve small requests; one frame at a time may finish past it (as Kafka's memory pool), frames \
         before SASL authentication (at most 512 KiB) are not counted",
    )
    .default_doc("200 MiB, at least socket.request.max.bytes");
    /// `max.partitions.per.request`.
    pub MAX_PARTITIONS_PER_REQUEST: i64 = ConfigKey::new(
        "max.partitions.per.request",
        Type::Long,
        "partitions one CreateTopics/CreatePartitions/auto-creating Metadata may create (Kafka's fixed batch cap); \
         above, POLICY_VIOLATION",
    )
    .default("10000")
    .validator(Validator::AtLeast(1))
    .strata_only();
    /// `max.broker.partitions`.
    pub MAX_BROKER_PARTITIONS: i64 = ConfigKey::new(
        "max.broker.partitions",
        Type::Long,
        "partitions of all topics together (KIP-578 name); a creation going above is refused with POLICY_VIOLATION",
    )
    .default("20000")
    .validator(Validator::AtLeast(1));
    /// `num.recovery.threads.per.data.dir`.
    pub NUM_RECOVERY_THREADS_PER_DATA_DIR: i32 = ConfigKey::new(
        "num.recovery.threads.per.data.dir",
        Type::Int,
        "threads per log dir that load (recovering after a crash) the logs at start-up and close them at shutdown",
    )
    .default("2")
    .validator(Validator::AtLeast(1));
    /// `producer.id.expiration.ms`.
    pub PRODUCER_ID_EXPIRATION_MS: i32 = ConfigKey::new(
        "producer.id.expiration.ms",
        Type::Int,
        "a producer id idle this long (its last batch's timestamp) is forgotten from each partition's producer \
         state and later snapshots, unless it has an open transaction; checked at each retention pass \
         (log.retention.check.interval.ms)",
    )
    .default("86400000")
    .validator(Validator::AtLeast(1));
    /// `log.max.open.files`.
    pub LOG_MAX_OPEN_FILES: Option<i32> = ConfigKey::new(
        "log.max.open.files",
        Type::Int,
        "segment files and index maps kept open at once; idle ones close past it",
    )
    .default_doc("half the soft open-files limit, at most half vm.max_map_count")
    .validator(Validator::AtLeast(16))
    .strata_only();
    // The transaction coordinator (crate::txn).
    /// `transaction.state.log.num.partitions`.
    pub TRANSACTION_STATE_LOG_NUM_PARTITIONS: i32 = ConfigKey::new(
        "transaction.state.log.num.partitions",
        Type::Int,
        "partitions of __transaction_state, created on the first transactional request (Kafka: 50)",
    )
    .default("1")
    .validator(Validator::AtLeast(1));
    /// `transaction.state.log.segment.bytes`.
    pub TRANSACTION_STATE_LOG_SEGMENT_BYTES: i32 = ConfigKey::new(
        "transaction.state.log.segment.bytes",
        Type::Int,
        "segment.bytes of __transaction_state",
    )
    .default("104857600")
    .validator(Validator::AtLeast(1024));
    /// `transaction.max.timeout.ms`.
    pub TRANSACTION_MAX_TIMEOUT_MS: i32 = ConfigKey::new(
        "transaction.max.timeout.ms",
        Type::Int,
        "largest transaction.timeout.ms a producer may ask; InitProducerId above it gets INVALID_TRANSACTION_TIMEOUT",
    )
    .default("900000")
    .validator(Validator::AtLeast(1));
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms`.
    pub TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS: i32 = ConfigKey::new(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        Type::Int,
        "how often transactions open longer than their timeout are aborted (their producer is fenced)",
    )
    .default("10000")
    .validator(Validator::AtLeast(1));
    /// `transactional.id.expiration.ms`.
    pub TRANSACTIONAL_ID_EXPIRATION_MS: i32 = ConfigKey::new(
        "transactional.id.expiration.ms",
        Type::Int,
        "a transactional id with no transaction open (Empty, CompleteCommit, CompleteAbort) and no update for this \
         long is removed, with a tombstone in __transaction_state; checked every \
         transaction.abort.timed.out.transaction.cleanup.interval.ms",
    )
    .default("604800000")
    .validator(Validator::AtLeast(1));
    /// `transaction.partition.verification.enable`.
    pub TRANSACTION_PARTITION_VERIFICATION_ENABLE: bool = ConfigKey::new(
        "transaction.partition.verification.enable",
        Type::Boolean,
        "a transactional batch is appended only to a partition added to its producer's open transaction \
         (else TRANSACTION_ABORTABLE, INVALID_TXN_STATE before Produce v11); a Produce v12+ (transaction \
         version 2) adds its partition itself, also when false",
    )
    .default("true");
    /// `offsets.topic.num.partitions`.
    pub OFFSETS_TOPIC_NUM_PARTITIONS: i32 = ConfigKey::new(
        "offsets.topic.num.partitions",
        Type::Int,
        "partitions of __consumer_offsets (Kafka: 50)",
    )
    .default("1")
    .validator(Validator::AtLeast(1));
    /// `offsets.topic.segment.bytes`.
    pub OFFSETS_TOPIC_SEGMENT_BYTES: i32 = ConfigKey::new(
        "offsets.topic.segment.bytes",
        Type::Int,
        "segment.bytes of __consumer_offsets when it is created (the log cleaner compacts only rolled segments)",
    )
    .default("104857600")
    .validator(Validator::AtLeast(61));
    /// `group.initial.rebalance.delay.ms`.
    pub GROUP_INITIAL_REBALANCE_DELAY_MS: i32 = ConfigKey::new(
        "group.initial.rebalance.delay.ms",
        Type::Int,
        "wait for more members before the first rebalance of an empty classic group (test harnesses set 0)",
    )
    .default("3000")
    .validator(Validator::AtLeast(0));
    /// `group.min.session.timeout.ms`.
    pub GROUP_MIN_SESSION_TIMEOUT_MS: i32 = ConfigKey::new(
        "group.min.session.timeout.ms",
        Type::Int,
        "smallest session timeout a member may ask",
    )
    .default("6000");
    /// `group.max.session.timeout.ms`.
    pub GROUP_MAX_SESSION_TIMEOUT_MS: i32 = ConfigKey::new(
        "group.max.session.timeout.ms",
        Type::Int,
        "largest session timeout a member may ask",
    )
    .default("1800000");
    /// `offsets.retention.minutes`.
    pub OFFSETS_RETENTION_MINUTES: i32 = ConfigKey::new(
        "offsets.retention.minutes",
        Type::Int,
        "committed offsets of a group expire (tombstoned in __consumer_offsets) this long after the group became \
         empty, or, for a group with only committed offsets, after each offset's commit (KIP-211); classic groups \
         with members and KIP-848 consumer groups keep theirs",
    )
    .default("10080")
    .validator(Validator::AtLeast(1));
    /// `offsets.retention.check.interval.ms`.
    pub OFFSETS_RETENTION_CHECK_INTERVAL_MS: i64 = ConfigKey::new(
        "offsets.retention.check.interval.ms",
        Type::Long,
        "how often expired committed offsets are looked for",
    )
    .default("600000")
    .validator(Validator::AtLeast(1));
    /// `group.max.size`.
    pub GROUP_MAX_SIZE: i32 = ConfigKey::new("group.max.size", Type::Int, "members per consumer group")
        .default("2147483647")
        .validator(Validator::AtLeast(1));
    /// `group.coordinator.rebalance.protocols`.
    pub GROUP_COORDINATOR_REBALANCE_PROTOCOLS: Vec<String> = ConfigKey::new(
        "group.coordinator.rebalance.protocols",
        Type::List,
        "group protocols served: classic (JoinGroup/SyncGroup) and consumer (KIP-848 ConsumerGroupHeartbeat)",
    )
    .default("classic,consumer")
    .validator(Validator::ListOf(&["classic", "consumer"]));
    /// `group.consumer.session.timeout.ms`.
    pub GROUP_CONSUMER_SESSION_TIMEOUT_MS: i32 = ConfigKey::new(
        "group.consumer.session.timeout.ms",
        Type::Int,
        "KIP-848 consumer groups: a member with no heartbeat for this long is removed",
    )
    .default("45000")
    .validator(Validator::AtLeast(1));
    /// `group.consumer.heartbeat.interval.ms`.
    pub GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS: i32 = ConfigKey::new(
        "group.consumer.heartbeat.interval.ms",
        Type::Int,
        "KIP-848 consumer groups: the heartbeat interval given to members",
    )
    .default("5000")
    .validator(Validator::AtLeast(1));
    /// `group.consumer.min.session.timeout.ms`.
    pub GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS: i32 = ConfigKey::new("group.consumer.min.session.timeout.ms", Type::Int,
        "KIP-848 consumer groups: the smallest consumer.session.timeout.ms a group config may set").default("45000").validator(Validator::AtLeast(1));
    /// `group.consumer.max.session.timeout.ms`.
    pub GROUP_CONSUMER_MAX_SESSION_TIMEOUT_MS: i32 = ConfigKey::new("group.consumer.max.session.timeout.ms", Type::Int,
        "KIP-848 consumer groups: the largest consumer.session.timeout.ms a group config may set").default("60000").validator(Validator::AtLeast(1));
    /// `group.consumer.min.heartbeat.interval.ms`.
    pub GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS: i32 = ConfigKey::new("group.consumer.min.heartbeat.interval.ms", Type::Int,
        "KIP-848 consumer groups: the smallest consumer.heartbeat.interval.ms a group config may set").default("5000").validator(Validator::AtLeast(1));
    /// `group.consumer.max.heartbeat.interval.ms`.
    pub GROUP_CONSUMER_MAX_HEARTBEAT_INTERVAL_MS: i32 = ConfigKey::new("group.consumer.max.heartbeat.interval.ms", Type::Int,
        "KIP-848 consumer groups: the largest consumer.heartbeat.interval.ms a group config may set").default("15000").validator(Validator::AtLeast(1));
    /// `group.consumer.max.size`.
    pub GROUP_CONSUMER_MAX_SIZE: i32 = ConfigKey::new(
        "group.consumer.max.size",
        Type::Int,
        "KIP-848 consumer groups: most members of one group; a new member past it gets GROUP_MAX_SIZE_REACHED",
    )
    .default("2147483647")
    .validator(Validator::AtLeast(1));
    /// `group.consumer.assignors`.
    pub GROUP_CONSUMER_ASSIGNORS: Vec<String> = ConfigKey::new(
        "group.consumer.assignors",
        Type::List,
        "KIP-848 server-side assignors, the first the default: uniform, range (Kafka's class names accepted)",
    )
    .default("uniform,range")
    .validator(Validator::NonEmpty);
    /// `offset.metadata.max.bytes`.
    pub OFFSET_METADATA_MAX_BYTES: i32 = ConfigKey::new(
        "offset.metadata.max.bytes",
        Type::Int,
        "longest metadata string of a committed offset; longer commits get OFFSET_METADATA_TOO_LARGE",
    )
    .default("4096")
    .validator(Validator::Between(0, i16::MAX as i64));
    // TLS and SASL listeners (crate::security). Each is read per listener as `listener.name.<name>.<key>` first,
    // then as given here (Kafka's rule: the listener-prefixed key wins).
    /// `ssl.keystore.type`.
    pub SSL_KEYSTORE_TYPE: String = ConfigKey::new(
        "ssl.keystore.type",
        Type::String,
        "format of the listener's key and certificate chain: PEM or PKCS12 (JKS is refused at start-up naming the \
         keytool conversion); without it a file is read as what it holds",
    )
    .default("PEM")
    .validator(Validator::OneOfIgnoreCase(&["PEM", "PKCS12", "JKS"]));
    /// `ssl.keystore.location`.
    pub SSL_KEYSTORE_LOCATION: Option<String> = ConfigKey::new(
        "ssl.keystore.location",
        Type::String,
        "PEM file holding the listener's private key and certificate chain, or a PKCS12 keystore",
    );
    /// `ssl.keystore.password`.
    pub SSL_KEYSTORE_PASSWORD: Option<String> = ConfigKey::new(
        "ssl.keystore.password",
        Type::Password,
        "password of a PKCS12 keystore (a wrong one stops start-up naming the file)",
    );
    /// `ssl.key.password`.
    pub SSL_KEY_PASSWORD: Option<String> = ConfigKey::new(
        "ssl.key.password",
        Type::Password,
        "password of an encrypted PKCS#8 PEM key (-----BEGIN ENCRYPTED PRIVATE KEY-----), or of a PKCS12 \
         keystore that ssl.keystore.password does not open",
    );
    /// `ssl.keystore.key`.
    pub SSL_KEYSTORE_KEY: Option<String> = ConfigKey::new(
        "ssl.keystore.key",
        Type::Password,
        "the listener's private key inline (PEM; with ssl.keystore.certificate.chain)",
    );
    /// `ssl.keystore.certificate.chain`.
    pub SSL_KEYSTORE_CERTIFICATE_CHAIN: Option<String> = ConfigKey::new(
        "ssl.keystore.certificate.chain",
        Type::Password,
        "the listener's certificate chain inline (PEM)",
    );
    /// `ssl.truststore.type`.
    pub SSL_TRUSTSTORE_TYPE: String = ConfigKey::new(
        "ssl.truststore.type",
        Type::String,
        "format of the certificates client certificates are checked against: PEM or PKCS12 (every certificate of \
         the store is trusted)",
    )
    .default("PEM")
    .validator(Validator::OneOfIgnoreCase(&["PEM", "PKCS12", "JKS"]));
    /// `ssl.truststore.location`.
    pub SSL_TRUSTSTORE_LOCATION: Option<String> = ConfigKey::new(
        "ssl.truststore.location",
        Type::String,
        "PEM file (or PKCS12 truststore) of the CA certificates client certificates must chain to",
    );
    /// `ssl.truststore.password`.
    pub SSL_TRUSTSTORE_PASSWORD: Option<String> = ConfigKey::new(
        "ssl.truststore.password",
        Type::Password,
        "password of a PKCS12 truststore",
    );
    /// `ssl.truststore.certificates`.
    pub SSL_TRUSTSTORE_CERTIFICATES: Option<String> = ConfigKey::new(
        "ssl.truststore.certificates",
        Type::Password,
        "the trusted CA certificates inline (PEM)",
    );
    /// `ssl.client.auth`.
    pub SSL_CLIENT_AUTH: String = ConfigKey::new(
        "ssl.client.auth",
        Type::String,
        "client certificates: none, requested (checked when given) or required",
    )
    .default("none")
    .validator(Validator::OneOfIgnoreCase(&["none", "requested", "required"]));
    /// `ssl.enabled.protocols`.
    pub SSL_ENABLED_PROTOCOLS: Vec<String> = ConfigKey::new(
        "ssl.enabled.protocols",
        Type::List,
        "TLS versions accepted (rustls speaks TLSv1.2 and TLSv1.3; older ones are left out with a warning)",
    )
    .default("TLSv1.2,TLSv1.3");
    /// `ssl.self.signed.enable`.
    pub SSL_SELF_SIGNED_ENABLE: bool = ConfigKey::new(
        "ssl.self.signed.enable",
        Type::Boolean,
        "for development: an SSL/SASL_SSL listener without a keystore gets a certificate from a local CA \
         generated into the first log dir (ssl/ca.pem, printed at start-up)",
    )
    .default("false")
    .strata_only();
    /// `sasl.enabled.mechanisms`.
    pub SASL_ENABLED_MECHANISMS: Vec<String> = ConfigKey::new(
        "sasl.enabled.mechanisms",
        Type::List,
        "SASL mechanisms of SASL_PLAINTEXT/SASL_SSL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (SCRAM users \
         managed with AlterUserScramCredentials, kept in the metadata dir), OAUTHBEARER (unsecured JWS tokens, \
         for development)",
    )
    .default("PLAIN")
    .validator(Validator::NonEmpty);
    /// `sasl.jaas.config`.
    pub SASL_JAAS_CONFIG: Option<String> = ConfigKey::new(
        "sasl.jaas.config",
        Type::Password,
        "JAAS line of the PLAIN users (PlainLoginModule required user_<name>=\"<password>\" ...;); per listener \
         and mechanism as listener.name.<l>.plain.sasl.jaas.config; OAUTHBEARER reads the unsecuredValidator* \
         options of an OAuthBearerLoginModule line (listener.name.<l>.oauthbearer.sasl.jaas.config)",
    );
    /// `connections.max.reauth.ms`.
    pub CONNECTIONS_MAX_REAUTH_MS: i64 = ConfigKey::new(
        "connections.max.reauth.ms",
        Type::Long,
        "KIP-368: the longest SASL session; clients re-authenticate on the same connection before it ends, and a \
         connection whose session ended is closed at its next request (0 = sessions never end); per listener and \
         mechanism as listener.name.<l>.<mechanism>.connections.max.reauth.ms",
    )
    .default("0")
    .validator(Validator::AtLeast(0));
    /// `authorizer.class.name`.
    pub AUTHORIZER_CLASS_NAME: String = ConfigKey::new(
        "authorizer.class.name",
        Type::String,
        "ACLs enforced when it names org.apache.kafka.metadata.authorizer.StandardAuthorizer (or 3.x's \
         kafka.security.authorizer.AclAuthorizer); empty = no authorizer, ACL requests answer SECURITY_DISABLED",
    )
    .default("");
    /// `super.users`.
    pub SUPER_USERS: String = ConfigKey::new(
        "super.users",
        Type::String,
        "principals allowed everything, separated by ';' (User:admin;User:CN=ops)",
    )
    .default("");
    /// `allow.everyone.if.no.acl.found`.
    pub ALLOW_EVERYONE_IF_NO_ACL_FOUND: bool = ConfigKey::new(
        "allow.everyone.if.no.acl.found",
        Type::Boolean,
        "allow a request on a resource no ACL applies to",
    )
    .default("false");
    /// `principal.builder.class`.
    pub PRINCIPAL_BUILDER_CLASS: Option<String> = ConfigKey::new(
        "principal.builder.class",
        Type::String,
        "only Kafka's DefaultKafkaPrincipalBuilder (User:<SASL name>, the mapped SSL DN, User:ANONYMOUS)",
    );
    /// `ssl.principal.mapping.rules`.
    pub SSL_PRINCIPAL_MAPPING_RULES: String = ConfigKey::new(
        "ssl.principal.mapping.rules",
        Type::String,
        "SSL client certificate DN → principal name: RULE:pattern/replacement/[LU], ..., DEFAULT (Kafka's syntax)",
    )
    .default("DEFAULT");
}
