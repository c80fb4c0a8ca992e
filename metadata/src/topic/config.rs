//! `TopicBasedRemoteLogMetadataManagerConfig`: the `rlmm.config.` properties of the topic-based manager.
use serde::{Deserialize, Serialize};

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
    /// Reads the `rlmm.config.` properties out of `props` (full names, other keys ignored), starting from the
    /// defaults, then validates. An unknown `rlmm.config.` key is an error naming it.
    pub fn from_properties<'a>(
        props: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self> {
        let mut c = Self::default();
        for (key, value) in props {
            let Some(_) = key.strip_prefix(RLMM_CONFIG_PREFIX) else {
                continue;
            };
            match key {
                NUM_PARTITIONS_KEY => c.num_partitions = parse(NUM_PARTITIONS_KEY, value)?,
                RETENTION_MS_KEY => c.retention_ms = parse(RETENTION_MS_KEY, value)?,
                SNAPSHOT_INTERVAL_MS_KEY => c.snapshot_interval_ms = parse(SNAPSHOT_INTERVAL_MS_KEY, value)?,
                // Kafka single-broker setups set it to 1, which is what a single node does; refuse anything else.
                REPLICATION_FACTOR_KEY => {
                    let rf: i16 = parse(REPLICATION_FACTOR_KEY, value)?;
                    if rf != 1 {
                        return Err(Error::InvalidConfig {
                            key: REPLICATION_FACTOR_KEY,
                            value: value.to_owned(),
                            reason: "a single-node broker keeps one replica; only 1 is accepted".to_owned(),
                        });
                    }
                }
                _ if CLIENT_KEY_PREFIXES.iter().any(|p| key.starts_with(p)) || key.ends_with(".consume.wait.ms") => {
                    return Err(Error::InvalidConfig {
                        key: "rlmm.config.*",
                        value: key.to_owned(),
                        reason: "configures Kafka's internal metadata producer/consumer, which strata does not \
                                 have (it appends to and replays the metadata log directly); remove it"
                            .to_owned(),
                    })
                }
                _ => {
                    return Err(Error::InvalidConfig {
                        key: "rlmm.config.*",
                        value: key.to_owned(),
                        reason: format!(
                            "unknown remote log metadata manager property (known: {NUM_PARTITIONS_KEY}, \
                             {RETENTION_MS_KEY}, {SNAPSHOT_INTERVAL_MS_KEY})"
                        ),
                    })
                }
            }
        }
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

    /// Checks every field's range; the error names the property and the value.
    pub fn validate(&self) -> Result<()> {
        if !(1..=10_000).contains(&self.num_partitions) {
            return Err(Error::InvalidConfig {
                key: NUM_PARTITIONS_KEY,
                value: self.num_partitions.to_string(),
                reason: "must be between 1 and 10000".to_owned(),
            });
        }
        if !(1..=86_400_000).contains(&self.snapshot_interval_ms) {
            return Err(Error::InvalidConfig {
                key: SNAPSHOT_INTERVAL_MS_KEY,
                value: self.snapshot_interval_ms.to_string(),
                reason: "must be between 1 and 86400000".to_owned(),
            });
        }
        if self.retention_ms != -1 && self.retention_ms < 1 {
            return Err(Error::InvalidConfig {
                key: RETENTION_MS_KEY,
                value: self.retention_ms.to_string(),
                reason: "must be -1 (unlimited) or a positive number of milliseconds".to_owned(),
            });
        }
        Ok(())
    }
}

fn parse<T: std::str::FromStr>(key: &'static str, value: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse()
        .map_err(|e: T::Err| Error::InvalidConfig {
            key,
            value: value.to_owned(),
            reason: format!("not a valid number: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

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
