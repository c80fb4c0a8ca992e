//! `TopicBasedRemoteLogMetadataManagerConfig`: the `rlmm.config.` properties of the topic-based manager.
use serde::{Deserialize, Serialize};

use strata_storage::config_def::{
    parse, ConfigDef, ConfigError, ConfigKey, Effect, Source, Type, Validator, Value,
};

use crate::{Error, Result};

/// The internal topic holding the metadata records, Kafka's `__remote_log_metadata`.
pub const REMOTE_LOG_METADATA_TOPIC_NAME: &str = "__remote_log_metadata";
/// Default partition count of the internal topic (Kafka's default).
pub const DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS: u32 = 50;
/// Default retention of the internal topic: unlimited (Kafka's default).
pub const DEFAULT_REMOTE_LOG_METADATA_TOPIC_RETENTION_MS: i64 = -1;
/// Default interval between cache snapshots: one minute.
pub const DEFAULT_REMOTE_LOG_METADATA_SNAPSHOT_INTERVAL_MS: u64 = 60_000;
/// Prefix of the RLMM's properties in the broker config, Kafka's `remote.log.metadata.manager.impl.prefix`.
pub const RLMM_CONFIG_PREFIX: &str = "rlmm.config.";

/// Property names (with the prefix).
pub const NUM_PARTITIONS_KEY: &str = "rlmm.config.remote.log.metadata.topic.num.partitions";
/// See [`TopicBasedRemoteLogMetadataManagerConfig::retention_ms`].
pub const RETENTION_MS_KEY: &str = "rlmm.config.remote.log.metadata.topic.retention.ms";
/// Kafka's replication factor of the internal topic; accepted only as 1 (single node).
pub const REPLICATION_FACTOR_KEY: &str = "rlmm.config.remote.log.metadata.topic.replication.factor";
const CLIENT_KEY_PREFIXES: [&str; 3] = [
    "rlmm.config.remote.log.metadata.common.client.",
    "rlmm.config.remote.log.metadata.producer.",
    "rlmm.config.remote.log.metadata.consumer.",
];
/// See [`TopicBasedRemoteLogMetadataManagerConfig::snapshot_interval_ms`].
pub const SNAPSHOT_INTERVAL_MS_KEY: &str = "rlmm.config.remote.log.metadata.snapshot.interval.ms";

fn retention(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::Long(-1) => Ok(()),
        Value::Long(n) if *n >= 1 => Ok(()),
        _ => Err("must be -1 (unlimited) or a positive number of milliseconds".into()),
    }
}

fn one_replica(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::Short(1) => Ok(()),
        _ => Err("a single-node broker keeps one replica; only 1 is accepted".into()),
    }
}

/// Every `rlmm.config.` key (Kafka's `TopicBasedRemoteLogMetadataManagerConfig` plus strata's snapshot interval).
pub const RLMM_KEYS: &[ConfigKey] = &[
    ConfigKey::new(
        NUM_PARTITIONS_KEY,
        Type::Int,
        "partitions of __remote_log_metadata (fixed once it holds records)",
    )
    .default("50")
    .validator(Validator::Between(1, 10_000)),
    ConfigKey::new(
        RETENTION_MS_KEY,
        Type::Long,
        "how long metadata records are kept, never past the last snapshot (-1 = forever)",
    )
    .default("-1")
    .validator(Validator::Custom(retention)),
    ConfigKey::new(
        REPLICATION_FACTOR_KEY,
        Type::Short,
        "replicas of __remote_log_metadata",
    )
    .default("1")
    .validator(Validator::Custom(one_replica))
    .effect(Effect::NoEffect(
        "a single node keeps one replica (only 1 is accepted)",
    )),
    ConfigKey::new(
        SNAPSHOT_INTERVAL_MS_KEY,
        Type::Long,
        "how often a write also snapshots the metadata cache",
    )
    .default("60000")
    .validator(Validator::Between(1, 86_400_000))
    .strata_only(),
    ConfigKey::new(
        "rlmm.config.remote.log.metadata.initialization.retry.max.timeout.ms",
        Type::Long,
        "how long the manager retries its initialization",
    )
    .default("120000")
    .validator(Validator::AtLeast(0))
    .effect(Effect::NoEffect(
        "the metadata log is local: initialization does not wait for a cluster",
    )),
    ConfigKey::new(
        "rlmm.config.remote.log.metadata.initialization.retry.interval.ms",
        Type::Long,
        "wait between initialization retries",
    )
    .default("100")
    .validator(Validator::AtLeast(0))
    .effect(Effect::NoEffect(
        "the metadata log is local: initialization does not wait for a cluster",
    )),
];

/// The `rlmm.config.` table.
pub const RLMM_CONFIG: ConfigDef = ConfigDef::new("rlmm.config.", RLMM_KEYS);

/// Configuration of [`TopicBasedRemoteLogMetadataManager`](crate::TopicBasedRemoteLogMetadataManager).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(default)]
pub struct TopicBasedRemoteLogMetadataManagerConfig {
    /// Partitions of `__remote_log_metadata`. The count is fixed once the topic holds records: opening an
    /// existing topic with a different count fails (Kafka fails RLMM initialization likewise).
    /// Kafka: `rlmm.config.remote.log.metadata.topic.num.partitions`. Default: 50. Range: 1..=10000.
    pub num_partitions: u32,
    /// How long records of `__remote_log_metadata` are kept; -1 keeps every record. The manager applies it
    /// itself whenever it writes a snapshot, by moving each partition's log start offset (Kafka's
    /// `DeleteRecords`) to the first record younger than this, but never past the snapshot: a record that is
    /// not in a snapshot is never deleted, so a restart always rebuilds the full state. (The partitions'
    /// own `retention.ms` stays -1.) Kafka: `rlmm.config.remote.log.metadata.topic.retention.ms`.
    /// Default: -1. Range: -1 or 1..
    pub retention_ms: i64,
    /// How often (at most) a write also stores a snapshot of the cache next to the log, so that start-up
    /// replays the snapshot plus the records after it (time grows with live segments, not with history).
    /// A snapshot is also written on [`close`](crate::TopicBasedRemoteLogMetadataManager::close) and after a
    /// start-up that replayed a long tail.
    /// strata: `rlmm.config.remote.log.metadata.snapshot.interval.ms`. Default: 60000. Range: 1..=86400000.
    pub snapshot_interval_ms: u64,
}

impl Default for TopicBasedRemoteLogMetadataManagerConfig {
    fn default() -> Self {
        Self {
            num_partitions: DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS,
            retention_ms: DEFAULT_REMOTE_LOG_METADATA_TOPIC_RETENTION_MS,
            snapshot_interval_ms: DEFAULT_REMOTE_LOG_METADATA_SNAPSHOT_INTERVAL_MS,
        }
    }
}

impl TopicBasedRemoteLogMetadataManagerConfig {
    /// Reads the `rlmm.config.` properties out of `props` (full names, other keys ignored) through
    /// [`RLMM_CONFIG`], then validates. An unknown `rlmm.config.` key is an error naming it and the closest
    /// known key; so is a key of Kafka's internal metadata clients, which strata does not have.
    pub fn from_properties<'a>(
        props: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self> {
        let mut given = Vec::new();
        for (key, value) in props {
            if !key.starts_with(RLMM_CONFIG_PREFIX) {
                continue;
            }
            if CLIENT_KEY_PREFIXES.iter().any(|p| key.starts_with(p))
                || key.ends_with(".consume.wait.ms")
            {
                return Err(Error::InvalidConfig {
                    key: "rlmm.config.*",
                    value: key.to_owned(),
                    reason: "configures Kafka's internal metadata producer/consumer, which strata does not \
                             have (it appends to and replays the metadata log directly); remove it"
                        .to_owned(),
                });
            }
            given.push((key, value, Source::File));
        }
        let v = RLMM_CONFIG.parse(given).map_err(|e| match e {
            ConfigError::BadValue { key, value, reason } => Error::InvalidConfig {
                key: RLMM_CONFIG.key(&key).map_or("rlmm.config.*", |k| k.name),
                value,
                reason,
            },
            other => Error::InvalidConfig {
                key: "rlmm.config.*",
                value: String::new(),
                reason: other.to_string(),
            },
        })?;
        if let Some(key) = v.unknown().first() {
            return Err(Error::InvalidConfig {
                key: "rlmm.config.*",
                value: key.clone(),
                reason: format!(
                    "unknown remote log metadata manager property{}",
                    RLMM_CONFIG
                        .closest(key)
                        .map(|s| format!(" (did you mean {s}?)"))
                        .unwrap_or_default()
                ),
            });
        }
        let c = Self {
            num_partitions: v.int(NUM_PARTITIONS_KEY) as u32,
            retention_ms: v.long(RETENTION_MS_KEY),
            snapshot_interval_ms: v.long(SNAPSHOT_INTERVAL_MS_KEY) as u64,
        };
        c.validate()?;
        Ok(c)
    }

    /// Sets the partition count.
    pub fn with_num_partitions(mut self, n: u32) -> Self {
        self.num_partitions = n;
        self
    }

    /// Sets the snapshot interval.
    pub fn with_snapshot_interval_ms(mut self, ms: u64) -> Self {
        self.snapshot_interval_ms = ms;
        self
    }

    /// Sets the retention of the internal topic.
    pub fn with_retention_ms(mut self, ms: i64) -> Self {
        self.retention_ms = ms;
        self
    }

    /// Checks every field against its key's validator in [`RLMM_CONFIG`]; the error names the property and
    /// the value.
    pub fn validate(&self) -> Result<()> {
        for (key, value) in [
            (NUM_PARTITIONS_KEY, Value::Long(self.num_partitions.into())),
            (
                SNAPSHOT_INTERVAL_MS_KEY,
                Value::Long(self.snapshot_interval_ms.min(i64::MAX as u64) as i64),
            ),
            (RETENTION_MS_KEY, Value::Long(self.retention_ms)),
        ] {
            let k = RLMM_CONFIG.key(key).expect("declared");
            parse::check(&k.validator, &value).map_err(|reason| Error::InvalidConfig {
                key: k.name,
                value: value.to_text().unwrap_or_default(),
                reason,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent_and_a_typo_suggests_the_key() {
        RLMM_CONFIG.check_table().unwrap();
        assert_eq!(
            TopicBasedRemoteLogMetadataManagerConfig::from_properties([]).unwrap(),
            TopicBasedRemoteLogMetadataManagerConfig::default(),
            "the table's defaults are the struct's"
        );
        let err = TopicBasedRemoteLogMetadataManagerConfig::from_properties([(
            "rlmm.config.remote.log.metadata.topic.num.partition",
            "3",
        )])
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("did you mean rlmm.config.remote.log.metadata.topic.num.partitions"),
            "{err}"
        );
    }

    #[test]
    fn defaults_are_kafkas_and_valid() {
        let c = TopicBasedRemoteLogMetadataManagerConfig::default();
        assert_eq!(c.num_partitions, 50);
        assert_eq!(c.retention_ms, -1);
        c.validate().unwrap();
    }

    #[test]
    fn from_properties_reads_prefixed_keys_and_names_bad_values() {
        let c = TopicBasedRemoteLogMetadataManagerConfig::from_properties([
            ("rlmm.config.remote.log.metadata.topic.num.partitions", "3"),
            (
                "rlmm.config.remote.log.metadata.snapshot.interval.ms",
                "1000",
            ),
            ("log.dirs", "/tmp/x"),
        ])
        .unwrap();
        assert_eq!((c.num_partitions, c.snapshot_interval_ms), (3, 1000));

        let err =
            TopicBasedRemoteLogMetadataManagerConfig::from_properties([(NUM_PARTITIONS_KEY, "0")])
                .unwrap_err();
        assert!(
            err.to_string().contains(NUM_PARTITIONS_KEY) && err.to_string().contains("value 0"),
            "{err}"
        );
        let err =
            TopicBasedRemoteLogMetadataManagerConfig::from_properties([(NUM_PARTITIONS_KEY, "x")])
                .unwrap_err();
        assert!(matches!(err, Error::InvalidConfig { .. }), "{err}");
        TopicBasedRemoteLogMetadataManagerConfig::from_properties([(REPLICATION_FACTOR_KEY, "1")])
            .unwrap();
        let err = TopicBasedRemoteLogMetadataManagerConfig::from_properties([(
            REPLICATION_FACTOR_KEY,
            "3",
        )])
        .unwrap_err();
        assert!(err.to_string().contains("only 1"), "{err}");
        let err = TopicBasedRemoteLogMetadataManagerConfig::from_properties([(
            "rlmm.config.remote.log.metadata.producer.acks",
            "all",
        )])
        .unwrap_err();
        assert!(err.to_string().contains("producer.acks"), "{err}");
        let err =
            TopicBasedRemoteLogMetadataManagerConfig::from_properties([("rlmm.config.bogus", "1")])
                .unwrap_err();
        assert!(err.to_string().contains("rlmm.config.bogus"), "{err}");
        let err =
            TopicBasedRemoteLogMetadataManagerConfig::from_properties([(RETENTION_MS_KEY, "0")])
                .unwrap_err();
        assert!(err.to_string().contains(RETENTION_MS_KEY), "{err}");
        TopicBasedRemoteLogMetadataManagerConfig::from_properties([(
            RETENTION_MS_KEY,
            "604800000",
        )])
        .unwrap();
    }
}
