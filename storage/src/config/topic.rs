//! The topic configuration as one table ([`TOPIC_CONFIG`]): every Apache Kafka 4.x topic key with its type,
//! default, validator, documentation, the broker properties that supply its default, and what strata does with
//! it. CreateTopics / AlterConfigs / IncrementalAlterConfigs validate through it ([`topic_log_config`]),
//! DescribeConfigs reports from it, and [`LogConfig`] is built from its parsed values.

use std::collections::BTreeMap;

use super::{CleanupPolicy, LogConfig, TimestampType};
use crate::config_def::{
    ConfigDef, ConfigError, ConfigKey, Effect, Source, Synonym, Type, Validator, Value, Values,
};
use crate::{Error, Result};

const fn syn(name: &'static str) -> Synonym {
    Synonym { name, scale: 1 }
}

const HOURS: i64 = 3_600_000;
const REPLICATION: &str = "a single node has no replicas to throttle";

/// Kafka's `GzipCompression.LevelValidator`: 1..=9 or -1 (the codec's default).
fn gzip_level(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::Int(-1 | 1..=9) => Ok(()),
        _ => Err("must be -1 or between 1 and 9".into()),
    }
}

/// Typed handles on the topic keys ([`crate::config_def::Key`]), one per row of [`TOPIC_KEYS`].
pub mod keys {
    use super::*;

    crate::config_keys! {
        /// Every topic key (Kafka 4.x's `LogConfig`), in Kafka's documentation order.
        pub const TOPIC_KEYS;
        /// `cleanup.policy`.
        pub CLEANUP_POLICY: Vec<String> = ConfigKey::new("cleanup.policy", Type::List, "delete old segments by time and size (delete), keep the latest record per key (compact; the log cleaner), or both (compact,delete)")
            .default("delete")
            .validator(Validator::ListOf(&["delete", "compact"]))
            .server_default(&[syn("log.cleanup.policy")]);
        /// `compression.gzip.level`.
        pub COMPRESSION_GZIP_LEVEL: i32 = ConfigKey::new("compression.gzip.level", Type::Int, "gzip level when compression.type=gzip")
            .default("-1")
            .validator(Validator::Custom(gzip_level))
            .server_default(&[syn("compression.gzip.level")]);
        /// `compression.lz4.level`.
        pub COMPRESSION_LZ4_LEVEL: i32 = ConfigKey::new("compression.lz4.level", Type::Int, "lz4 level when compression.type=lz4")
            .default("9")
            .validator(Validator::Between(1, 17))
            .server_default(&[syn("compression.lz4.level")]);
        /// `compression.type`.
        pub COMPRESSION_TYPE: String = ConfigKey::new("compression.type", Type::String, "the codec batches are stored in (a batch in another is re-encoded on append); producer keeps the producer's")
            .default("producer")
            .validator(Validator::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]))
            .server_default(&[syn("compression.type")]);
        /// `compression.zstd.level`.
        pub COMPRESSION_ZSTD_LEVEL: i32 = ConfigKey::new("compression.zstd.level", Type::Int, "zstd level when compression.type=zstd")
            .default("3")
            .validator(Validator::Between(-131072, 22))
            .server_default(&[syn("compression.zstd.level")]);
        /// `delete.retention.ms`.
        pub DELETE_RETENTION_MS: i64 = ConfigKey::new("delete.retention.ms", Type::Long, "how long tombstones are kept on compacted topics")
            .default("86400000")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.cleaner.delete.retention.ms")]);
        /// `file.delete.delay.ms`.
        pub FILE_DELETE_DELAY_MS: i64 = ConfigKey::new("file.delete.delay.ms", Type::Long, "delay between renaming a deleted segment .deleted and removing its files")
            .default("60000")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.segment.delete.delay.ms")]);
        /// `flush.messages`.
        pub FLUSH_MESSAGES: i64 = ConfigKey::new("flush.messages", Type::Long, "fsync after this many unflushed records")
            .default("9223372036854775807")
            .validator(Validator::AtLeast(1))
            .server_default(&[syn("log.flush.interval.messages")]);
        /// `flush.ms`.
        pub FLUSH_MS: i64 = ConfigKey::new("flush.ms", Type::Long, "fsync when the last flush is this old (ms)")
            .default("9223372036854775807")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.flush.interval.ms"), syn("log.flush.scheduler.interval.ms")]);
        /// `follower.replication.throttled.replicas`.
        pub FOLLOWER_REPLICATION_THROTTLED_REPLICAS: Vec<String> = ConfigKey::new("follower.replication.throttled.replicas", Type::List, "replicas throttled on the follower side")
            .default("")
            .effect(Effect::NoEffect(REPLICATION));
        /// `index.interval.bytes`.
        pub INDEX_INTERVAL_BYTES: i32 = ConfigKey::new("index.interval.bytes", Type::Int, "bytes between offset and time index entries")
            .default("4096")
            .validator(Validator::Between(0, i32::MAX as i64))
            .server_default(&[syn("log.index.interval.bytes")]);
        /// `leader.replication.throttled.replicas`.
        pub LEADER_REPLICATION_THROTTLED_REPLICAS: Vec<String> = ConfigKey::new("leader.replication.throttled.replicas", Type::List, "replicas throttled on the leader side")
            .default("")
            .effect(Effect::NoEffect(REPLICATION));
        /// `local.retention.bytes`.
        pub LOCAL_RETENTION_BYTES: i64 = ConfigKey::new("local.retention.bytes", Type::Long, "local size retention of a tiered topic (-2 = retention.bytes)")
            .default("-2")
            .validator(Validator::AtLeast(-2))
            .server_default(&[syn("log.local.retention.bytes")]);
        /// `local.retention.ms`.
        pub LOCAL_RETENTION_MS: i64 = ConfigKey::new("local.retention.ms", Type::Long, "local time retention of a tiered topic (-2 = retention.ms)")
            .default("-2")
            .validator(Validator::AtLeast(-2))
            .server_default(&[syn("log.local.retention.ms")]);
        /// `max.compaction.lag.ms`.
        pub MAX_COMPACTION_LAG_MS: i64 = ConfigKey::new("max.compaction.lag.ms", Type::Long, "longest time a record stays ineligible for compaction")
            .default("9223372036854775807")
            .validator(Validator::AtLeast(1))
            .server_default(&[syn("log.cleaner.max.compaction.lag.ms")]);
        /// `max.message.bytes`.
        pub MAX_MESSAGE_BYTES: i32 = ConfigKey::new("max.message.bytes", Type::Int, "largest record batch accepted (0 refuses every batch, as Kafka does)")
            .default("1048588")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("message.max.bytes")]);
        // Kafka 3.x keys removed in 4.0 that older tools still send.
        /// `message.downconversion.enable`.
        pub MESSAGE_DOWNCONVERSION_ENABLE: bool = ConfigKey::new("message.downconversion.enable", Type::Boolean, "down-convert to v0/v1 messages for Fetch v0-3 (false: those fetches get UNSUPPORTED_VERSION)")
            .default("true");
        /// `message.format.version`.
        pub MESSAGE_FORMAT_VERSION: String = ConfigKey::new("message.format.version", Type::String, "deprecated (Kafka 3.x): the stored format is always v2")
            .default("3.0-IV1")
            .effect(Effect::NoEffect("deprecated since Kafka 3.0: batches are always stored in message format v2"));
        /// `message.timestamp.after.max.ms`.
        pub MESSAGE_TIMESTAMP_AFTER_MAX_MS: i64 = ConfigKey::new("message.timestamp.after.max.ms", Type::Long, "largest future skew of a CreateTime timestamp")
            .default("3600000")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.message.timestamp.after.max.ms")]);
        /// `message.timestamp.before.max.ms`.
        pub MESSAGE_TIMESTAMP_BEFORE_MAX_MS: i64 = ConfigKey::new("message.timestamp.before.max.ms", Type::Long, "largest past skew of a CreateTime timestamp")
            .default("9223372036854775807")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.message.timestamp.before.max.ms")]);
        /// `message.timestamp.difference.max.ms`.
        pub MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS: i64 = ConfigKey::new("message.timestamp.difference.max.ms", Type::Long, "deprecated (Kafka 3.x, KIP-937): largest skew of a CreateTime timestamp either way, where message.timestamp.before.max.ms / after.max.ms are left at their defaults")
            .default("9223372036854775807")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.message.timestamp.difference.max.ms")]);
        /// `message.timestamp.type`.
        pub MESSAGE_TIMESTAMP_TYPE: String = ConfigKey::new("message.timestamp.type", Type::String, "keep the producer's timestamps (CreateTime) or stamp batches at append (LogAppendTime)")
            .default("CreateTime")
            .validator(Validator::OneOf(&["CreateTime", "LogAppendTime"]))
            .server_default(&[syn("log.message.timestamp.type")]);
        /// `min.cleanable.dirty.ratio`.
        pub MIN_CLEANABLE_DIRTY_RATIO: f64 = ConfigKey::new("min.cleanable.dirty.ratio", Type::Double, "dirty ratio that makes a log eligible for compaction")
            .default("0.5")
            .validator(Validator::BetweenF(0.0, 1.0))
            .server_default(&[syn("log.cleaner.min.cleanable.ratio")]);
        /// `min.compaction.lag.ms`.
        pub MIN_COMPACTION_LAG_MS: i64 = ConfigKey::new("min.compaction.lag.ms", Type::Long, "shortest time a record stays uncompacted")
            .default("0")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.cleaner.min.compaction.lag.ms")]);
        /// `min.insync.replicas`.
        pub MIN_INSYNC_REPLICAS: i32 = ConfigKey::new("min.insync.replicas", Type::Int, "in-sync replicas an acks=all produce needs (a single node has one: more is NOT_ENOUGH_REPLICAS)")
            .default("1")
            .validator(Validator::AtLeast(1))
            .server_default(&[syn("min.insync.replicas")]);
        /// `preallocate`.
        pub PREALLOCATE: bool = ConfigKey::new("preallocate", Type::Boolean, "preallocate segment files when rolling")
            .default("false")
            .server_default(&[syn("log.preallocate")])
            .effect(Effect::NoEffect("segment files grow as written (their indexes are preallocated)"));
        /// `remote.log.copy.disable`.
        pub REMOTE_LOG_COPY_DISABLE: bool = ConfigKey::new("remote.log.copy.disable", Type::Boolean, "stop copying to remote storage; remote data stays readable (KIP-950)")
            .default("false");
        /// `remote.log.delete.on.disable`.
        pub REMOTE_LOG_DELETE_ON_DISABLE: bool = ConfigKey::new("remote.log.delete.on.disable", Type::Boolean, "allow turning remote.storage.enable off, deleting the remote data (KIP-950)")
            .default("false");
        // Kafka has no broker default for it; strata's `log.remote.storage.enable` tiers every new topic.
        /// `remote.storage.enable`.
        pub REMOTE_STORAGE_ENABLE: bool = ConfigKey::new("remote.storage.enable", Type::Boolean, "tier the topic's closed segments to remote storage")
            .default("false")
            .server_default(&[syn("log.remote.storage.enable")]);
        /// `retention.bytes`.
        // Kafka validates no range: any negative value means no size limit.
        pub RETENTION_BYTES: i64 = ConfigKey::new("retention.bytes", Type::Long, "size retention per partition, local plus remote (negative = none)")
            .default("-1")
            .server_default(&[syn("log.retention.bytes")]);
        /// `retention.ms`.
        pub RETENTION_MS: i64 = ConfigKey::new("retention.ms", Type::Long, "time retention, local plus remote (-1 = none)")
            .default("604800000")
            .validator(Validator::AtLeast(-1))
            .server_default(&[
                syn("log.retention.ms"),
                Synonym { name: "log.retention.minutes", scale: 60_000 },
                Synonym { name: "log.retention.hours", scale: HOURS },
            ]);
        // Kafka's floor is 1 MiB; strata accepts down to one batch header (tests roll tiny segments).
        /// `segment.bytes`.
        pub SEGMENT_BYTES: i32 = ConfigKey::new("segment.bytes", Type::Int, "roll when the active segment would exceed this size")
            .default("1073741824")
            .validator(Validator::Between(61, i32::MAX as i64))
            .server_default(&[syn("log.segment.bytes")]);
        /// `segment.index.bytes`.
        pub SEGMENT_INDEX_BYTES: i32 = ConfigKey::new("segment.index.bytes", Type::Int, "size of a segment's preallocated index; a full index rolls the segment")
            .default("10485760")
            .validator(Validator::Between(12, i32::MAX as i64))
            .server_default(&[syn("log.index.size.max.bytes")]);
        /// `segment.jitter.ms`.
        pub SEGMENT_JITTER_MS: i64 = ConfigKey::new("segment.jitter.ms", Type::Long, "random jitter subtracted from segment.ms")
            .default("0")
            .validator(Validator::AtLeast(0))
            .server_default(&[syn("log.roll.jitter.ms"), Synonym { name: "log.roll.jitter.hours", scale: HOURS }])
            .effect(Effect::NoEffect("segments roll at segment.ms without jitter"));
        /// `segment.ms`.
        pub SEGMENT_MS: i64 = ConfigKey::new("segment.ms", Type::Long, "roll a non-empty segment older than this")
            .default("604800000")
            .validator(Validator::AtLeast(1))
            .server_default(&[syn("log.roll.ms"), Synonym { name: "log.roll.hours", scale: HOURS }]);
        /// `unclean.leader.election.enable`.
        pub UNCLEAN_LEADER_ELECTION_ENABLE: bool = ConfigKey::new("unclean.leader.election.enable", Type::Boolean, "elect an out-of-sync replica leader")
            .default("false")
            .server_default(&[syn("unclean.leader.election.enable")])
            .effect(Effect::NoEffect("a single node is always the partition leader"));
    }
}
pub use keys::TOPIC_KEYS;

/// The topic configuration table.
pub const TOPIC_CONFIG: ConfigDef = ConfigDef::new("topic", TOPIC_KEYS);

/// A `u64` field as Kafka's INT when it fits, else as a long (so a validator's bound still catches it).
fn int_or_long(v: u64) -> Value {
    match i32::try_from(v) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::Long(v.min(i64::MAX as u64) as i64),
    }
}

fn long(v: u64) -> Value {
    Value::Long(v.min(i64::MAX as u64) as i64)
}

impl LogConfig {
    /// The value of topic key `name` this config holds; `None` for keys strata does not use (their value is
    /// the topic's override or the table's default).
    pub fn value(&self, name: &str) -> Option<Value> {
        Some(match name {
            "cleanup.policy" => Value::List(
                self.cleanup_policy
                    .as_str()
                    .split(',')
                    .map(String::from)
                    .collect(),
            ),
            "compression.type" => Value::String(super::compression_name(self.compression).into()),
            "compression.gzip.level" => Value::Int(self.compression_gzip_level),
            "compression.lz4.level" => Value::Int(self.compression_lz4_level),
            "compression.zstd.level" => Value::Int(self.compression_zstd_level),
            "message.downconversion.enable" => Value::Bool(self.message_downconversion_enable),
            "file.delete.delay.ms" => long(self.file_delete_delay_ms),
            "flush.messages" => long(self.flush_messages),
            "flush.ms" => long(self.flush_ms),
            "index.interval.bytes" => int_or_long(self.index_interval_bytes.into()),
            "local.retention.bytes" => Value::Long(self.local_retention_bytes),
            "local.retention.ms" => Value::Long(self.local_retention_ms),
            "max.message.bytes" => int_or_long(self.max_message_bytes.into()),
            "message.timestamp.type" => Value::String(self.message_timestamp_type.as_str().into()),
            "message.timestamp.before.max.ms" => Value::Long(self.message_timestamp_before_max_ms),
            "message.timestamp.after.max.ms" => Value::Long(self.message_timestamp_after_max_ms),
            "message.timestamp.difference.max.ms" => {
                Value::Long(self.message_timestamp_difference_max_ms)
            }
            "min.insync.replicas" => Value::Int(self.min_insync_replicas),
            "delete.retention.ms" => Value::Long(self.delete_retention_ms),
            "min.cleanable.dirty.ratio" => Value::Double(self.min_cleanable_dirty_ratio),
            "min.compaction.lag.ms" => Value::Long(self.min_compaction_lag_ms),
            "max.compaction.lag.ms" => Value::Long(self.max_compaction_lag_ms),
            "remote.log.copy.disable" => Value::Bool(self.remote_log_copy_disable),
            "remote.log.delete.on.disable" => Value::Bool(self.remote_log_delete_on_disable),
            "remote.storage.enable" => Value::Bool(self.remote_storage_enable),
            "retention.bytes" => Value::Long(self.retention_bytes),
            "retention.ms" => Value::Long(self.retention_ms),
            "segment.bytes" => int_or_long(self.segment_bytes),
            "segment.index.bytes" => int_or_long(self.segment_index_bytes.into()),
            "segment.ms" => Value::Long(self.segment_ms),
            _ => return None,
        })
    }

    /// The config the parsed topic values describe.
    pub fn from_values(v: &Values) -> Self {
        use keys as k;
        let policy = v.value(&k::CLEANUP_POLICY);
        let has = |p: &str| policy.iter().any(|x| x == p);
        let u = |n: i64| u64::try_from(n).unwrap_or(0);
        let u32 = |n: i32| u32::try_from(n).unwrap_or(0);
        Self {
            segment_bytes: u(v.value(&k::SEGMENT_BYTES).into()),
            segment_ms: v.value(&k::SEGMENT_MS),
            index_interval_bytes: u32(v.value(&k::INDEX_INTERVAL_BYTES)),
            segment_index_bytes: u32(v.value(&k::SEGMENT_INDEX_BYTES)),
            retention_ms: v.value(&k::RETENTION_MS),
            retention_bytes: v.value(&k::RETENTION_BYTES),
            local_retention_ms: v.value(&k::LOCAL_RETENTION_MS),
            local_retention_bytes: v.value(&k::LOCAL_RETENTION_BYTES),
            max_message_bytes: u32(v.value(&k::MAX_MESSAGE_BYTES)),
            message_timestamp_type: match v.value(&k::MESSAGE_TIMESTAMP_TYPE).as_str() {
                "LogAppendTime" => TimestampType::LogAppendTime,
                _ => TimestampType::CreateTime,
            },
            message_timestamp_before_max_ms: v.value(&k::MESSAGE_TIMESTAMP_BEFORE_MAX_MS),
            message_timestamp_after_max_ms: v.value(&k::MESSAGE_TIMESTAMP_AFTER_MAX_MS),
            message_timestamp_difference_max_ms: v.value(&k::MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS),
            flush_messages: u(v.value(&k::FLUSH_MESSAGES)),
            flush_ms: u(v.value(&k::FLUSH_MS)),
            remote_storage_enable: v.value(&k::REMOTE_STORAGE_ENABLE),
            file_delete_delay_ms: u(v.value(&k::FILE_DELETE_DELAY_MS)),
            remote_log_copy_disable: v.value(&k::REMOTE_LOG_COPY_DISABLE),
            remote_log_delete_on_disable: v.value(&k::REMOTE_LOG_DELETE_ON_DISABLE),
            cleanup_policy: match (has("compact"), has("delete")) {
                (true, true) => CleanupPolicy::CompactDelete,
                (true, false) => CleanupPolicy::Compact,
                _ => CleanupPolicy::Delete,
            },
            min_insync_replicas: v.value(&k::MIN_INSYNC_REPLICAS),
            delete_retention_ms: v.value(&k::DELETE_RETENTION_MS),
            min_cleanable_dirty_ratio: v.value(&k::MIN_CLEANABLE_DIRTY_RATIO),
            min_compaction_lag_ms: v.value(&k::MIN_COMPACTION_LAG_MS),
            max_compaction_lag_ms: v.value(&k::MAX_COMPACTION_LAG_MS),
            compression: super::compression_from_name(&v.value(&k::COMPRESSION_TYPE))
                .unwrap_or(None),
            compression_gzip_level: v.value(&k::COMPRESSION_GZIP_LEVEL),
            compression_lz4_level: v.value(&k::COMPRESSION_LZ4_LEVEL),
            compression_zstd_level: v.value(&k::COMPRESSION_ZSTD_LEVEL),
            message_downconversion_enable: v.value(&k::MESSAGE_DOWNCONVERSION_ENABLE),
        }
    }

    /// Checks each value against its key's validator in [`TOPIC_CONFIG`].
    pub(super) fn validate_keys(&self) -> Result<()> {
        for key in TOPIC_CONFIG.keys() {
            if let Some(value) = self.value(key.name) {
                crate::config_def::parse::check(&key.validator, &value).map_err(|reason| {
                    Error::InvalidConfig {
                        key: key.name.into(),
                        value: value.to_text().unwrap_or_default(),
                        reason,
                    }
                })?;
            }
        }
        Ok(())
    }
}

/// A table error as storage's [`Error::InvalidConfig`] (the value looked up in `given` where the error has none).
pub fn config_error(e: ConfigError, given: &BTreeMap<String, String>) -> Error {
    match e {
        ConfigError::BadValue { key, value, reason } => Error::InvalidConfig { key, value, reason },
        ConfigError::Unknown { key, suggestion } => Error::InvalidConfig {
            value: given.get(&key).cloned().unwrap_or_default(),
            reason: format!(
                "unknown topic config{}",
                suggestion
                    .map(|s| format!(" (did you mean {s}?)"))
                    .unwrap_or_default()
            ),
            key,
        },
        ConfigError::Unsupported { key, value, reason } => Error::InvalidConfig {
            key,
            value,
            reason: format!("not supported: {reason}"),
        },
    }
}

/// A topic's overrides parsed over `defaults` (the broker's topic defaults): every key of [`TOPIC_CONFIG`] with
/// its value and source ([`Source::Topic`] for an override). An unknown key or a bad value is an error naming
/// it.
pub fn topic_values(defaults: &LogConfig, overrides: &BTreeMap<String, String>) -> Result<Values> {
    let values = TOPIC_CONFIG
        .parse_over(
            overrides
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str(), Source::Topic)),
            |k| defaults.value(k.name).map(|v| (v, Source::Default)),
        )
        .map_err(|e| config_error(e, overrides))?;
    if let Some(key) = values.unknown().first() {
        return Err(config_error(TOPIC_CONFIG.unknown_error(key), overrides));
    }
    Ok(values)
}

/// The broker's default topic config, on the path topic overrides take ([`TOPIC_CONFIG`]): each topic key takes
/// the value `broker` gives for the first of its broker properties ([`ConfigKey::server_default`], Kafka's
/// precedence) that has one, else the table's default. `broker`'s values are trusted (its own table checked
/// them) and the result is not validated: the caller validates it, naming its broker properties.
pub fn server_default_log_config(broker: impl Fn(&str) -> Option<Value>) -> LogConfig {
    let values = TOPIC_CONFIG
        .parse_over(std::iter::empty(), |k| {
            k.server_default
                .iter()
                .find_map(|s| broker(s.name))
                .map(|v| (v, Source::Default))
        })
        .expect("no value is parsed, so none can be refused");
    LogConfig::from_values(&values)
}

/// The topic's log config: `defaults` with the topic's `overrides`, validated (each key, then the rules
/// between keys).
pub fn topic_log_config(
    defaults: &LogConfig,
    overrides: &BTreeMap<String, String>,
) -> Result<LogConfig> {
    let cfg = LogConfig::from_values(&topic_values(defaults, overrides)?);
    cfg.validate()?;
    Ok(cfg)
}

/// The value of topic key `key` for a topic running with `cfg` and the overrides `overrides`, as Kafka prints
/// it (`None` for null).
pub fn topic_value(
    cfg: &LogConfig,
    overrides: &BTreeMap<String, String>,
    key: &ConfigKey,
) -> Option<String> {
    cfg.value(key.name)
        .or_else(|| {
            overrides
                .get(key.name)
                .and_then(|raw| key.parse_value(raw).ok())
        })
        .or_else(|| key.default.and_then(|d| key.parse_value(d).ok()))
        .and_then(|v| v.to_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn table_is_consistent_and_log_configs_default_is_the_tables() {
        TOPIC_CONFIG.check_table().unwrap();
        let from_table = topic_log_config(&LogConfig::default(), &BTreeMap::new()).unwrap();
        assert_eq!(from_table, LogConfig::default());
        for key in TOPIC_CONFIG.keys() {
            if let Some(v) = LogConfig::default().value(key.name) {
                assert_eq!(
                    Some(v),
                    key.default.map(|d| key.parse_value(d).unwrap()),
                    "{}",
                    key.name
                );
            }
        }
    }

    #[test]
    fn every_kafka_topic_key_is_known() {
        // Apache Kafka 4.x's public topic keys (LogConfig / TopicConfig).
        for name in [
            "cleanup.policy",
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.type",
            "compression.zstd.level",
            "delete.retention.ms",
            "file.delete.delay.ms",
            "flush.messages",
            "flush.ms",
            "follower.replication.throttled.replicas",
            "index.interval.bytes",
            "leader.replication.throttled.replicas",
            "local.retention.bytes",
            "local.retention.ms",
            "max.compaction.lag.ms",
            "max.message.bytes",
            "message.timestamp.after.max.ms",
            "message.timestamp.before.max.ms",
            "message.timestamp.type",
            "min.cleanable.dirty.ratio",
            "min.compaction.lag.ms",
            "min.insync.replicas",
            "preallocate",
            "remote.log.copy.disable",
            "remote.log.delete.on.disable",
            "remote.storage.enable",
            "retention.bytes",
            "retention.ms",
            "segment.bytes",
            "segment.index.bytes",
            "segment.jitter.ms",
            "segment.ms",
            "unclean.leader.election.enable",
        ] {
            assert!(TOPIC_CONFIG.key(name).is_some(), "{name}");
        }
        // Plus the three Kafka 3.x keys older tools still send (message.downconversion.enable,
        // message.format.version, message.timestamp.difference.max.ms).
        assert_eq!(TOPIC_CONFIG.keys().count(), 36);
    }

    #[test]
    fn overrides_parse_over_the_broker_defaults() {
        let defaults = LogConfig {
            retention_ms: 1000,
            ..LogConfig::default()
        };
        let c = topic_log_config(&defaults, &overrides(&[("segment.bytes", " 2048 ")])).unwrap();
        assert_eq!((c.retention_ms, c.segment_bytes), (1000, 2048));
        let v = topic_values(&defaults, &overrides(&[("preallocate", "TRUE")])).unwrap();
        assert!(v.bool("preallocate") && v.is_explicit("preallocate"));
        assert_eq!(v.source("retention.ms"), Source::Default);
    }

    #[test]
    fn ranges_are_kafkas_any_retention_bytes_and_max_message_bytes_from_zero() {
        let d = LogConfig::default();
        // Kafka 4.4 validates no range for retention.bytes (negative = unlimited) and max.message.bytes >= 0.
        for v in ["-2", "-7", "-9223372036854775808"] {
            let c = topic_log_config(&d, &overrides(&[("retention.bytes", v)])).unwrap();
            assert_eq!(c.retention_bytes.to_string(), v);
        }
        let c = topic_log_config(&d, &overrides(&[("max.message.bytes", "0")])).unwrap();
        assert_eq!(c.max_message_bytes, 0);
        // A local size limit under an unlimited total one is fine, as Kafka accepts it.
        let c = topic_log_config(
            &d,
            &overrides(&[("retention.bytes", "-2"), ("local.retention.bytes", "100")]),
        )
        .unwrap();
        assert_eq!(c.effective_local_retention_bytes(), 100);
        // What Kafka refuses stays refused.
        for (k, v) in [
            ("max.message.bytes", "-1"),
            ("retention.ms", "-2"),
            ("local.retention.bytes", "-3"),
        ] {
            let err = topic_log_config(&d, &overrides(&[(k, v)]))
                .unwrap_err()
                .to_string();
            assert!(err.contains(k) && err.contains(v), "{err}");
        }
    }

    #[test]
    fn unknown_key_suggests_the_closest_and_bad_value_names_key_and_value() {
        let err = topic_log_config(&LogConfig::default(), &overrides(&[("retention.mss", "1")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("retention.mss") && err.contains("did you mean retention.ms"),
            "{err}"
        );
        let err = topic_log_config(
            &LogConfig::default(),
            &overrides(&[("retention.ms", "soon")]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("retention.ms") && err.contains("soon"),
            "{err}"
        );
    }

    #[test]
    fn compaction_keys_are_used_codecs_stay_refused_and_replication_keys_are_ignored() {
        let c = topic_log_config(
            &LogConfig::default(),
            &overrides(&[
                ("cleanup.policy", "delete, compact"),
                ("min.cleanable.dirty.ratio", "0.01"),
                ("delete.retention.ms", "100"),
                ("min.compaction.lag.ms", "5"),
                ("max.compaction.lag.ms", "60000"),
            ]),
        )
        .unwrap();
        assert_eq!(c.cleanup_policy, CleanupPolicy::CompactDelete);
        assert_eq!(
            (c.min_cleanable_dirty_ratio, c.delete_retention_ms),
            (0.01, 100)
        );
        assert_eq!(
            (c.min_compaction_lag_ms, c.max_compaction_lag_ms),
            (5, 60000)
        );
        for key in [
            "cleanup.policy",
            "delete.retention.ms",
            "min.cleanable.dirty.ratio",
        ] {
            assert_eq!(TOPIC_CONFIG.key(key).unwrap().effect, Effect::Used, "{key}");
        }
        for (k, v, says) in [
            ("cleanup.policy", "shred", "cleanup.policy"),
            ("compression.type", "brotli", "compression.type"),
            ("compression.zstd.level", "23", "compression.zstd.level"),
            (
                "min.cleanable.dirty.ratio",
                "2",
                "min.cleanable.dirty.ratio",
            ),
            ("min.compaction.lag.ms", "-1", "min.compaction.lag.ms"),
        ] {
            let err = topic_log_config(&LogConfig::default(), &overrides(&[(k, v)]))
                .unwrap_err()
                .to_string();
            assert!(err.contains(k) && err.contains(says), "{err}");
        }
        let c = topic_log_config(
            &LogConfig::default(),
            &overrides(&[
                ("leader.replication.throttled.replicas", "*"),
                ("unclean.leader.election.enable", "true"),
                ("compression.type", "producer"),
            ]),
        )
        .unwrap();
        assert_eq!(c, LogConfig::default());
    }

    #[test]
    fn a_topic_codec_and_its_level_are_parsed_and_reported() {
        use crate::record::{Compression, TargetCodec};
        let c = topic_log_config(
            &LogConfig::default(),
            &overrides(&[
                ("compression.type", "zstd"),
                ("compression.zstd.level", "7"),
            ]),
        )
        .unwrap();
        assert_eq!(
            c.target_codec(),
            Some(TargetCodec {
                codec: Compression::Zstd,
                level: Some(7)
            })
        );
        assert_eq!(
            c.value("compression.type"),
            Some(Value::String("zstd".into()))
        );
        for (name, codec) in [
            ("uncompressed", Compression::None),
            ("gzip", Compression::Gzip),
            ("snappy", Compression::Snappy),
            ("lz4", Compression::Lz4),
        ] {
            let c = topic_log_config(
                &LogConfig::default(),
                &overrides(&[("compression.type", name)]),
            )
            .unwrap();
            assert_eq!(c.target_codec().map(|t| t.codec), Some(codec), "{name}");
        }
        assert_eq!(LogConfig::default().target_codec(), None, "producer");
        // Kafka 3.x's deprecated keys are accepted; message.format.version changes nothing.
        let c = topic_log_config(
            &LogConfig::default(),
            &overrides(&[
                ("message.format.version", "0.10.2"),
                ("message.downconversion.enable", "false"),
            ]),
        )
        .unwrap();
        assert!(!c.message_downconversion_enable);
        assert_eq!(
            LogConfig {
                message_downconversion_enable: true,
                ..c
            },
            LogConfig::default()
        );
    }
}
