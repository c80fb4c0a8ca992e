//! Per-topic log configuration ([`LogConfig`]) and the manager's configuration ([`LogManagerConfig`]). Field docs
//! name the Kafka property and its default; the topic keys are declared once in [`TOPIC_CONFIG`] (the `topic`
//! module), and [`LogConfig::validate`] checks values against it plus the rules between keys.
mod topic;

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

pub use crate::handles::default_max_open_files;
use crate::{Error, Result, TopicPartition};
pub use topic::keys as topic_keys;
pub use topic::{
    config_error, server_default_log_config, topic_log_config, topic_value, topic_values,
    TOPIC_CONFIG, TOPIC_KEYS,
};

/// Kafka's `message.timestamp.type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TimestampType {
    /// Keep the producer's timestamps. Kafka: `CreateTime` (the default).
    #[default]
    CreateTime,
    /// Overwrite each batch's max timestamp with the broker's clock at append. Kafka: `LogAppendTime`.
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's property value (`CreateTime` / `LogAppendTime`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

impl std::str::FromStr for TimestampType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "CreateTime" => Ok(TimestampType::CreateTime),
            "LogAppendTime" => Ok(TimestampType::LogAppendTime),
            _ => Err(Error::InvalidConfig {
                key: "message.timestamp.type".into(),
                value: s.into(),
                reason: "must be CreateTime or LogAppendTime".into(),
            }),
        }
    }
}

/// Kafka's `cleanup.policy`. With `compact`, segments are never deleted by time or size (only DeleteRecords, the
/// log start offset, removes them) and the log cleaner ([`crate::LogCleaner`]) compacts the log; appends refuse
/// records without a key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CleanupPolicy {
    /// `delete` (the default): time and size retention.
    #[default]
    Delete,
    /// `compact`: no time or size retention; compacted by the log cleaner.
    Compact,
    /// `compact,delete`: time and size retention, and compaction.
    CompactDelete,
}

impl CleanupPolicy {
    /// Kafka's property value (`delete`, `compact`, `compact,delete`).
    pub fn as_str(self) -> &'static str {
        match self {
            CleanupPolicy::Delete => "delete",
            CleanupPolicy::Compact => "compact",
            CleanupPolicy::CompactDelete => "compact,delete",
        }
    }
    /// Whether time/size retention deletes segments (the list holds `delete`).
    pub fn deletes(self) -> bool {
        self != CleanupPolicy::Compact
    }
    /// Whether the list holds `compact`.
    pub fn compacts(self) -> bool {
        self != CleanupPolicy::Delete
    }
}

impl std::str::FromStr for CleanupPolicy {
    type Err = Error;
    /// A comma-separated list, any order, spaces around items ignored (Kafka: `[delete]`, `[compact]`, both).
    fn from_str(s: &str) -> Result<Self> {
        let (mut delete, mut compact) = (false, false);
        for item in s.split(',').map(str::trim) {
            match item.to_ascii_lowercase().as_str() {
                "delete" => delete = true,
                "compact" => compact = true,
                _ => {
                    return Err(Error::InvalidConfig {
                        key: "cleanup.policy".into(),
                        value: s.into(),
                        reason: "must be a list of delete and compact".into(),
                    })
                }
            }
        }
        Ok(match (delete, compact) {
            (true, true) => CleanupPolicy::CompactDelete,
            (false, true) => CleanupPolicy::Compact,
            _ => CleanupPolicy::Delete,
        })
    }
}

/// Per-topic log config. `Default` = Kafka's defaults.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct LogConfig {
    /// Kafka: `segment.bytes`. Default: 1 GiB. Roll when the active segment would exceed it.
    pub segment_bytes: u64,
    /// Kafka: `segment.ms`. Default: 7 days. Roll a non-empty segment older than this.
    pub segment_ms: i64,
    /// Kafka: `index.interval.bytes`. Default: 4096. Bytes between offset/time index entries.
    pub index_interval_bytes: u32,
    /// Kafka: `segment.index.bytes`. Default: 10 MiB. Preallocated index size; a full index rolls the segment.
    pub segment_index_bytes: u32,
    /// Kafka: `retention.ms`. Default: 7 days; -1 = unlimited. Total (local + remote) time retention.
    pub retention_ms: i64,
    /// Kafka: `retention.bytes`. Default: -1 (unlimited; any negative value is). Total (local + remote) size
    /// retention.
    pub retention_bytes: i64,
    /// Kafka: `local.retention.ms`. Default: -2 (= `retention.ms`). Local time retention on tiered topics.
    pub local_retention_ms: i64,
    /// Kafka: `local.retention.bytes`. Default: -2 (= `retention.bytes`). Local size retention on tiered topics.
    pub local_retention_bytes: i64,
    /// Kafka: `max.message.bytes`. Default: 1048588. Largest accepted batch (0: none is).
    pub max_message_bytes: u32,
    /// Kafka: `message.timestamp.type`. Default: CreateTime.
    pub message_timestamp_type: TimestampType,
    /// Kafka: `message.timestamp.before.max.ms` (KIP-937). Default: Long.MAX_VALUE (unbounded). On a CreateTime
    /// topic a record older than the broker's clock by more than this is refused (INVALID_TIMESTAMP). See
    /// [`LogConfig::timestamp_bounds`].
    pub message_timestamp_before_max_ms: i64,
    /// Kafka: `message.timestamp.after.max.ms` (KIP-937). Default: 1 hour (Kafka 4.0's). On a CreateTime topic a
    /// record newer than the broker's clock by more than this is refused (INVALID_TIMESTAMP).
    pub message_timestamp_after_max_ms: i64,
    /// Kafka 3.x: `message.timestamp.difference.max.ms`, deprecated by KIP-937 (removed in 4.0). Default:
    /// Long.MAX_VALUE. Applies where the two keys above are left at their defaults (Kafka 3.9's rule).
    pub message_timestamp_difference_max_ms: i64,
    /// Kafka: `flush.messages`. Default: Long.MAX_VALUE (never forced). Fsync after this many unflushed records.
    pub flush_messages: u64,
    /// Kafka: `flush.ms`. Default: Long.MAX_VALUE (never forced). Fsync when the last flush is this old.
    pub flush_ms: u64,
    /// Kafka: `remote.storage.enable`. Default: false. Segments leave the disk only once in remote storage.
    pub remote_storage_enable: bool,
    /// Kafka: `file.delete.delay.ms`. Default: 60000. Delay between renaming a segment `.deleted` and removing it.
    pub file_delete_delay_ms: u64,
    /// Kafka: `remote.log.copy.disable` (KIP-950). Default: false. With remote storage on, stop copying to
    /// remote storage (remote data stays readable); local retention then uses `retention.ms|bytes` and no
    /// longer waits for segments to be in remote storage.
    pub remote_log_copy_disable: bool,
    /// Kafka: `remote.log.delete.on.disable` (KIP-950). Default: false. Turning `remote.storage.enable` off
    /// deletes the partition's remote data (done by tiering); storage then raises the log start offset to the
    /// first local segment. Turning remote storage off requires it (see [`LogConfig::validate_change`]).
    pub remote_log_delete_on_disable: bool,
    /// Kafka: `cleanup.policy`. Default: delete. See [`CleanupPolicy`].
    pub cleanup_policy: CleanupPolicy,
    /// Kafka: `min.insync.replicas`. Default: 1. A single broker's in-sync replica set has one member, so an
    /// `acks=all` produce to a partition asking for more is refused with NOT_ENOUGH_REPLICAS (by the broker).
    pub min_insync_replicas: i32,
    /// Kafka: `delete.retention.ms`. Default: 1 day. How long the cleaner keeps a tombstone (a null value) after
    /// it first cleaned the segment holding it (compacted topics).
    pub delete_retention_ms: i64,
    /// Kafka: `min.cleanable.dirty.ratio`. Default: 0.5. The share of a compacted log's cleanable bytes not yet
    /// cleaned that makes the cleaner pick it.
    pub min_cleanable_dirty_ratio: f64,
    /// Kafka: `min.compaction.lag.ms`. Default: 0. A segment whose newest record is younger is not cleaned.
    pub min_compaction_lag_ms: i64,
    /// Kafka: `max.compaction.lag.ms`. Default: Long.MAX_VALUE. A log whose oldest dirty record is older is
    /// cleaned whatever its dirty ratio.
    pub max_compaction_lag_ms: i64,
    /// Kafka: `compression.type`. Default: `producer` (`None`: batches are stored as the producer sent them);
    /// otherwise the codec every batch is stored in (a batch in another codec is re-encoded on append).
    pub compression: Option<crate::record::Compression>,
    /// Kafka: `compression.gzip.level`. Default: -1 (the codec's default).
    pub compression_gzip_level: i32,
    /// Kafka: `compression.lz4.level`. Default: 9.
    pub compression_lz4_level: i32,
    /// Kafka: `compression.zstd.level`. Default: 3.
    pub compression_zstd_level: i32,
    /// Kafka 3.x: `message.downconversion.enable`. Default: true. When false, fetches at versions that need
    /// v0/v1 messages (Fetch v0-3) are answered UNSUPPORTED_VERSION for this topic.
    pub message_downconversion_enable: bool,
}

/// Kafka's defaults, parsed from [`TOPIC_CONFIG`] (the only place they are written).
static DEFAULT: LazyLock<LogConfig> = LazyLock::new(|| topic::server_default_log_config(|_| None));

impl Default for LogConfig {
    /// Every topic key at its default in [`TOPIC_CONFIG`].
    fn default() -> Self {
        DEFAULT.clone()
    }
}

/// Kafka's `compression.type` values: `producer` is `None`.
pub fn compression_from_name(name: &str) -> Option<Option<crate::record::Compression>> {
    use crate::record::Compression;
    Some(match name {
        "producer" => None,
        "uncompressed" => Some(Compression::None),
        "gzip" => Some(Compression::Gzip),
        "snappy" => Some(Compression::Snappy),
        "lz4" => Some(Compression::Lz4),
        "zstd" => Some(Compression::Zstd),
        _ => return None,
    })
}

/// The `compression.type` value naming `c`.
pub fn compression_name(c: Option<crate::record::Compression>) -> &'static str {
    use crate::record::Compression;
    match c {
        None => "producer",
        Some(Compression::None) => "uncompressed",
        Some(Compression::Gzip) => "gzip",
        Some(Compression::Snappy) => "snappy",
        Some(Compression::Lz4) => "lz4",
        Some(Compression::Zstd) => "zstd",
    }
}

impl LogConfig {
    /// How far (ms) a CreateTime record's timestamp may lie before and after the broker's clock:
    /// `message.timestamp.before.max.ms` / `.after.max.ms`, each replaced by the deprecated
    /// `message.timestamp.difference.max.ms` when left at its default (Kafka 3.9's `LogConfig`, where both
    /// defaults meant "not set"; `after`'s default is Kafka 4.0's one hour here).
    pub fn timestamp_bounds(&self) -> (i64, i64) {
        let difference = self.message_timestamp_difference_max_ms;
        let before = match self.message_timestamp_before_max_ms {
            i64::MAX => difference,
            b => b,
        };
        let after = match self.message_timestamp_after_max_ms {
            a if a == DEFAULT.message_timestamp_after_max_ms && difference != i64::MAX => {
                difference
            }
            a => a,
        };
        (before, after)
    }

    /// The codec and level batches are stored in; `None` for `compression.type=producer`.
    pub fn target_codec(&self) -> Option<crate::record::TargetCodec> {
        use crate::record::Compression;
        let codec = self.compression?;
        let level = match codec {
            Compression::Gzip => Some(self.compression_gzip_level),
            Compression::Lz4 => Some(self.compression_lz4_level),
            Compression::Zstd => Some(self.compression_zstd_level),
            Compression::None | Compression::Snappy => None,
        };
        Some(crate::record::TargetCodec { codec, level })
    }
}

fn invalid(key: &str, value: impl ToString, reason: &str) -> Error {
    Error::InvalidConfig {
        key: key.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

impl LogConfig {
    /// Checks every field against its key in [`TOPIC_CONFIG`], then the rules between keys; the error names
    /// the Kafka property and the bad value.
    pub fn validate(&self) -> Result<()> {
        self.validate_keys()?;
        // Kafka: local retention must not exceed total retention (unless total is unlimited: -1 for
        // retention.ms, any negative value for retention.bytes).
        let (local_ms, local_bytes) = (
            self.effective_local_retention_ms(),
            self.effective_local_retention_bytes(),
        );
        if self.retention_ms != -1 && (local_ms == -1 || local_ms > self.retention_ms) {
            return Err(invalid(
                "local.retention.ms",
                self.local_retention_ms,
                &format!("must not exceed retention.ms {}", self.retention_ms),
            ));
        }
        if self.retention_bytes >= 0 && (local_bytes == -1 || local_bytes > self.retention_bytes) {
            return Err(invalid(
                "local.retention.bytes",
                self.local_retention_bytes,
                &format!("must not exceed retention.bytes {}", self.retention_bytes),
            ));
        }
        // Kafka's LogConfig.validateValues.
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(invalid(
                "min.compaction.lag.ms",
                self.min_compaction_lag_ms,
                &format!(
                    "must not exceed max.compaction.lag.ms {}",
                    self.max_compaction_lag_ms
                ),
            ));
        }
        if self.remote_storage_enable && self.cleanup_policy.compacts() {
            return Err(invalid(
                "cleanup.policy",
                self.cleanup_policy.as_str(),
                "remote storage (remote.storage.enable=true) is not supported for compacted topics",
            ));
        }
        // Kafka's validateRetentionConfigsWhenRemoteCopyDisabled (KIP-950): with copying off, local data is all
        // there is to retain beyond what is already remote, so local retention must be total retention.
        if self.remote_storage_enable && self.remote_log_copy_disable {
            for (local_key, local, total_key, total) in [
                (
                    "local.retention.ms",
                    self.local_retention_ms,
                    "retention.ms",
                    self.retention_ms,
                ),
                (
                    "local.retention.bytes",
                    self.local_retention_bytes,
                    "retention.bytes",
                    self.retention_bytes,
                ),
            ] {
                if local != -2 && local != total {
                    return Err(invalid(
                        local_key,
                        local,
                        &format!(
                            "with remote.log.copy.disable=true it must be -2 or equal {total_key} {total}"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks a config change from `old` to `self` (after [`LogConfig::validate`]): turning remote storage off
    /// requires `remote.log.delete.on.disable=true` (Kafka's rule, KIP-950), since the remote data is then
    /// deleted; to keep it read-only, keep remote storage on with `remote.log.copy.disable=true`.
    pub fn validate_change(&self, old: &LogConfig) -> Result<()> {
        // Kafka's LogConfig.validateNoRemoteStorageForCompactedTopic on a change: a tiered topic cannot start
        // compacting (its remote segments would never be cleaned).
        if old.remote_storage_enable
            && self.cleanup_policy.compacts()
            && !old.cleanup_policy.compacts()
        {
            return Err(invalid(
                "cleanup.policy",
                self.cleanup_policy.as_str(),
                "compaction cannot be turned on for a tiered topic (remote.storage.enable=true)",
            ));
        }
        if old.remote_storage_enable
            && !self.remote_storage_enable
            && !self.remote_log_delete_on_disable
        {
            return Err(invalid(
                "remote.storage.enable",
                false,
                "disabling remote storage requires remote.log.delete.on.disable=true (it deletes the remote \
                 data); to keep remote data read-only set remote.storage.enable=true and \
                 remote.log.copy.disable=true",
            ));
        }
        Ok(())
    }

    /// Whether local segments may be deleted only once in remote storage and local retention applies: remote
    /// storage on and copying not disabled.
    pub fn remote_copy_enabled(&self) -> bool {
        self.remote_storage_enable && !self.remote_log_copy_disable
    }

    /// How old the active segment may get before it rolls (Kafka's `LogConfig.maxSegmentMs`): `segment.ms`, or
    /// `max.compaction.lag.ms` when smaller on a compacted log (so its records become cleanable in time).
    pub fn max_segment_ms(&self) -> i64 {
        if self.cleanup_policy.compacts() && self.max_compaction_lag_ms > 0 {
            self.max_compaction_lag_ms.min(self.segment_ms)
        } else {
            self.segment_ms
        }
    }

    /// `local.retention.ms`, with -2 resolved to `retention.ms`.
    pub fn effective_local_retention_ms(&self) -> i64 {
        if self.local_retention_ms == -2 {
            self.retention_ms
        } else {
            self.local_retention_ms
        }
    }

    /// `local.retention.bytes`, with -2 resolved to `retention.bytes` (so a negative result, whatever its value,
    /// means no local size limit: `retention.bytes=-2` is unlimited, not "inherit").
    pub fn effective_local_retention_bytes(&self) -> i64 {
        if self.local_retention_bytes == -2 {
            self.retention_bytes
        } else {
            self.local_retention_bytes
        }
    }
}

/// Supplies a partition's topic config (defaults plus topic overrides) while [`crate::LogManager::open`] loads
/// the logs; `None` = not known, load with [`LogManagerConfig::default_log_config`].
pub type TopicConfigProvider = Arc<dyn Fn(&TopicPartition) -> Option<LogConfig> + Send + Sync>;

/// The log manager's configuration.
#[non_exhaustive]
#[derive(Clone)]
pub struct LogManagerConfig {
    /// Kafka: `log.dirs`. Default: empty (must be set). Each dir holds `<topic>-<partition>` directories.
    pub log_dirs: Vec<PathBuf>,
    /// The config of logs created without an explicit one and the base of topic overrides.
    pub default_log_config: LogConfig,
    /// The real topic configs at open. Default: None (every log loads with `default_log_config`, and a
    /// checkpointed log start offset below the first local segment is kept until a non-tiered config is
    /// applied, because the topic may be tiered). With a provider, a log whose config it knows loads with that
    /// config (an invalid one is logged and replaced by the default).
    pub topic_config: Option<TopicConfigProvider>,
    /// Kafka: `node.id`. Default: 1. Written to each dir's `meta.properties`; a dir holding another node id
    /// fails the open.
    pub node_id: i32,
    /// The cluster id (22-char URL-safe base64 UUID) for dirs without `meta.properties`. Default: None (the
    /// one on disk, else a new random one). A different id on disk fails the open.
    pub cluster_id: Option<String>,
    /// Directories inside the log dirs that belong to other components (e.g. the filesystem remote tier under
    /// `<log dir>/remote`): skipped silently at open instead of being reported as stray. Default: empty.
    pub ignored_dirs: Vec<PathBuf>,
    /// strata: `log.max.open.files`. Default: None = half the process's soft `RLIMIT_NOFILE`, at most half of
    /// `vm.max_map_count` ([`default_max_open_files`]). The most segment file descriptors and index memory maps
    /// the logs keep open at once (each counts one): they open on first use, and past the cap the least recently
    /// used are closed (reopened on the next append or read). At least 16.
    pub max_open_files: Option<usize>,
    /// Kafka: `num.recovery.threads.per.data.dir`. Default: 2. Threads per log dir that load (and recover) the
    /// logs at open and close them at shutdown.
    pub recovery_threads_per_data_dir: usize,
    /// Kafka: `producer.id.expiration.ms`. Default: 1 day. The state of a producer id idle this long (its last
    /// batch's timestamp) is forgotten at the next retention pass, unless it has an open transaction.
    pub producer_id_expiration_ms: i64,
}

impl Default for LogManagerConfig {
    fn default() -> Self {
        Self {
            log_dirs: Vec::new(),
            default_log_config: LogConfig::default(),
            topic_config: None,
            node_id: 1,
            cluster_id: None,
            ignored_dirs: Vec::new(),
            max_open_files: None,
            recovery_threads_per_data_dir: 2,
            producer_id_expiration_ms: crate::producer::PRODUCER_ID_EXPIRATION_MS,
        }
    }
}

impl std::fmt::Debug for LogManagerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogManagerConfig")
            .field("log_dirs", &self.log_dirs)
            .field("default_log_config", &self.default_log_config)
            .field(
                "topic_config",
                &self.topic_config.as_ref().map(|_| "<provider>"),
            )
            .field("ignored_dirs", &self.ignored_dirs)
            .field("max_open_files", &self.max_open_files)
            .finish()
    }
}

impl LogManagerConfig {
    /// A config over `log_dirs` with Kafka's default log config.
    pub fn new(log_dirs: Vec<PathBuf>) -> Self {
        Self {
            log_dirs,
            ..Self::default()
        }
    }

    /// Checks the dirs and the default log config.
    pub fn validate(&self) -> Result<()> {
        if self.log_dirs.is_empty() {
            return Err(invalid("log.dirs", "", "at least one log dir is required"));
        }
        if self.node_id < 0 {
            return Err(invalid("node.id", self.node_id, "must be at least 0"));
        }
        if let Some(id) = &self.cluster_id {
            if id.len() != 22 || crate::parse_kafka_uuid(id).is_none() {
                return Err(invalid(
                    "cluster.id",
                    id,
                    "must be a 22-character URL-safe base64 UUID (as kafka-storage random-uuid prints)",
                ));
            }
        }
        if let Some(n) = self.max_open_files {
            if n < 16 {
                return Err(invalid("log.max.open.files", n, "must be at least 16"));
            }
        }
        self.default_log_config.validate()
    }

    /// `max_open_files`, or its default.
    pub fn effective_max_open_files(&self) -> usize {
        self.max_open_files.unwrap_or_else(default_max_open_files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_matches_kafka() {
        let c = LogConfig::default();
        c.validate().unwrap();
        assert_eq!(c.segment_bytes, 1_073_741_824);
        assert_eq!(c.max_message_bytes, 1_048_588);
        assert_eq!(c.effective_local_retention_ms(), c.retention_ms);
        assert_eq!((c.retention_ms, c.segment_ms), (604_800_000, 604_800_000));
        // Kafka 4.0's message.timestamp.after.max.ms (KIP-1030: one hour).
        assert_eq!(c.message_timestamp_after_max_ms, 3_600_000);
        assert_eq!(
            (c.flush_ms, c.flush_messages),
            (i64::MAX as u64, i64::MAX as u64)
        );
        assert_eq!((c.retention_bytes, c.local_retention_ms), (-1, -2));
        assert_eq!(c.cleanup_policy, CleanupPolicy::Delete);
        assert!(c.message_downconversion_enable && !c.remote_storage_enable);
    }

    #[test]
    fn validate_names_the_bad_key_and_value() {
        let c = LogConfig {
            local_retention_ms: 10 * LogConfig::default().retention_ms,
            ..LogConfig::default()
        };
        let err = c.validate().unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig { key, .. } if key == "local.retention.ms"),
            "{err}"
        );
        let c = LogConfig {
            segment_bytes: 3,
            ..LogConfig::default()
        };
        let msg = c.validate().unwrap_err().to_string();
        assert!(msg.contains("segment.bytes") && msg.contains('3'), "{msg}");
    }

    #[test]
    fn cleanup_policy_parses_kafka_lists_and_compact_rejects_remote_storage() {
        assert_eq!(
            "delete".parse::<CleanupPolicy>().unwrap(),
            CleanupPolicy::Delete
        );
        assert_eq!(
            "compact".parse::<CleanupPolicy>().unwrap(),
            CleanupPolicy::Compact
        );
        assert_eq!(
            "compact, delete".parse::<CleanupPolicy>().unwrap(),
            CleanupPolicy::CompactDelete
        );
        let err = "shred".parse::<CleanupPolicy>().unwrap_err().to_string();
        assert!(
            err.contains("cleanup.policy") && err.contains("shred"),
            "{err}"
        );
        for policy in [CleanupPolicy::Compact, CleanupPolicy::CompactDelete] {
            let c = LogConfig {
                cleanup_policy: policy,
                remote_storage_enable: true,
                ..LogConfig::default()
            };
            let err = c.validate().unwrap_err();
            assert!(
                matches!(&err, Error::InvalidConfig { key, .. } if key == "cleanup.policy"),
                "{err}"
            );
            assert!(err.to_string().contains("compacted"), "{err}");
            LogConfig {
                cleanup_policy: policy,
                ..LogConfig::default()
            }
            .validate()
            .unwrap();
        }
    }

    /// Kafka: a tiered topic cannot be switched to compaction (validateNoRemoteStorageForCompactedTopic), even
    /// when remote storage is turned off in the same change.
    #[test]
    fn turning_compaction_on_for_a_tiered_topic_is_refused() {
        let tiered = LogConfig {
            remote_storage_enable: true,
            ..LogConfig::default()
        };
        let compacted_untiered = LogConfig {
            cleanup_policy: CleanupPolicy::Compact,
            remote_log_delete_on_disable: true,
            ..LogConfig::default()
        };
        let err = compacted_untiered.validate_change(&tiered).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig { key, .. } if key == "cleanup.policy"),
            "{err}"
        );
        assert!(err.to_string().contains("tiered"), "{err}");
        compacted_untiered
            .validate_change(&LogConfig::default())
            .unwrap();
    }

    #[test]
    fn kip_950_defaults_and_disabling_remote_storage_needs_delete_on_disable() {
        let d = LogConfig::default();
        assert!(!d.remote_log_copy_disable && !d.remote_log_delete_on_disable);
        let tiered = LogConfig {
            remote_storage_enable: true,
            ..LogConfig::default()
        };
        assert!(tiered.remote_copy_enabled());
        let read_only = LogConfig {
            remote_log_copy_disable: true,
            ..tiered.clone()
        };
        assert!(!read_only.remote_copy_enabled());
        read_only.validate_change(&tiered).unwrap();
        let err = LogConfig::default().validate_change(&tiered).unwrap_err();
        assert!(
            err.to_string().contains("remote.log.delete.on.disable"),
            "{err}"
        );
        LogConfig {
            remote_log_delete_on_disable: true,
            ..LogConfig::default()
        }
        .validate_change(&tiered)
        .unwrap();
        tiered.validate_change(&LogConfig::default()).unwrap();
    }

    /// Kafka's `validateRetentionConfigsWhenRemoteCopyDisabled` (KIP-950).
    #[test]
    fn with_remote_copy_disabled_local_retention_must_equal_total_retention() {
        let read_only = LogConfig {
            remote_storage_enable: true,
            remote_log_copy_disable: true,
            retention_ms: 5000,
            local_retention_ms: 1000,
            ..LogConfig::default()
        };
        let err = read_only.validate().unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig { key, value, .. } if key == "local.retention.ms" && value == "1000"),
            "{err}"
        );
        for local in [-2, 5000] {
            LogConfig {
                local_retention_ms: local,
                ..read_only.clone()
            }
            .validate()
            .unwrap();
        }
        let err = LogConfig {
            local_retention_ms: -2,
            local_retention_bytes: 10,
            retention_bytes: 100,
            ..read_only
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("local.retention.bytes"), "{err}");
    }
}
