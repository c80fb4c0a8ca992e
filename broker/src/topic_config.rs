//! Topic-level configs: the keys a topic accepts, their broker-level defaults, and the mapping to [`LogConfig`].

use std::collections::BTreeMap;

use strata_storage::{LogConfig, TimestampType};

use crate::config::parse_timestamp_type;
use crate::error::{Error, Result};

/// One topic config key: Kafka name and the broker property that supplies its default.
#[derive(Debug, Clone, Copy)]
pub struct TopicKey {
    /// Topic-level Kafka name.
    pub name: &'static str,
    /// Broker-level synonym (the default's source), if any.
    pub broker_synonym: Option<&'static str>,
}

/// Every topic config key accepted by CreateTopics / AlterConfigs / IncrementalAlterConfigs.
pub const TOPIC_KEYS: &[TopicKey] = &[
    TopicKey {
        name: "cleanup.policy",
        broker_synonym: Some("log.cleanup.policy"),
    },
    TopicKey {
        name: "retention.ms",
        broker_synonym: Some("log.retention.ms"),
    },
    TopicKey {
        name: "retention.bytes",
        broker_synonym: Some("log.retention.bytes"),
    },
    TopicKey {
        name: "min.insync.replicas",
        broker_synonym: Some("min.insync.replicas"),
    },
    TopicKey {
        name: "compression.type",
        broker_synonym: None,
    },
    TopicKey {
        name: "segment.bytes",
        broker_synonym: Some("log.segment.bytes"),
    },
    TopicKey {
        name: "segment.ms",
        broker_synonym: Some("log.roll.ms"),
    },
    TopicKey {
        name: "segment.index.bytes",
        broker_synonym: Some("log.index.size.max.bytes"),
    },
    TopicKey {
        name: "index.interval.bytes",
        broker_synonym: Some("log.index.interval.bytes"),
    },
    TopicKey {
        name: "max.message.bytes",
        broker_synonym: Some("message.max.bytes"),
    },
    TopicKey {
        name: "message.timestamp.type",
        broker_synonym: Some("log.message.timestamp.type"),
    },
    TopicKey {
        name: "flush.messages",
        broker_synonym: Some("log.flush.interval.messages"),
    },
    TopicKey {
        name: "flush.ms",
        broker_synonym: Some("log.flush.interval.ms"),
    },
    TopicKey {
        name: "file.delete.delay.ms",
        broker_synonym: Some("log.segment.delete.delay.ms"),
    },
    TopicKey {
        name: "remote.storage.enable",
        broker_synonym: Some("log.remote.storage.enable"),
    },
    TopicKey {
        name: "local.retention.ms",
        broker_synonym: Some("log.local.retention.ms"),
    },
    TopicKey {
        name: "local.retention.bytes",
        broker_synonym: Some("log.local.retention.bytes"),
    },
    TopicKey {
        name: "remote.log.copy.disable",
        broker_synonym: None,
    },
    TopicKey {
        name: "remote.log.delete.on.disable",
        broker_synonym: None,
    },
];

fn invalid(key: &str, value: &str, reason: impl Into<String>) -> Error {
    Error::InvalidConfig {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn num<T: std::str::FromStr>(key: &str, value: &str) -> Result<T> {
    value
        .trim()
        .parse::<T>()
        .map_err(|_| invalid(key, value, "not a valid number"))
}

fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(key, value, "expected true or false")),
    }
}

/// Applies one override to `cfg`, rejecting unknown keys and bad values.
pub fn apply(cfg: &mut LogConfig, key: &str, value: &str) -> Result<()> {
    match key {
        "cleanup.policy" => {
            if value.trim() != "delete" {
                return Err(invalid(
                    key,
                    value,
                    "only cleanup.policy=delete is supported (no log compaction)",
                ));
            }
            cfg.cleanup_policy = strata_storage::CleanupPolicy::Delete;
        }
        "retention.ms" => cfg.retention_ms = num(key, value)?,
        "min.insync.replicas" => cfg.min_insync_replicas = num(key, value)?,
        "compression.type" => {
            if value.trim() != "producer" {
                return Err(invalid(
                    key,
                    value,
                    "only compression.type=producer is supported: batches are stored as the producer compressed \
                     them (set the codec on the producer)",
                ));
            }
        }
        "retention.bytes" => cfg.retention_bytes = num(key, value)?,
        "segment.bytes" => cfg.segment_bytes = num(key, value)?,
        "segment.ms" => cfg.segment_ms = num(key, value)?,
        "segment.index.bytes" => cfg.segment_index_bytes = num(key, value)?,
        "index.interval.bytes" => cfg.index_interval_bytes = num(key, value)?,
        "max.message.bytes" => cfg.max_message_bytes = num(key, value)?,
        "message.timestamp.type" => {
            cfg.message_timestamp_type = parse_timestamp_type(key, value)
                .map_err(|_| invalid(key, value, "expected CreateTime or LogAppendTime"))?
        }
        "flush.messages" => cfg.flush_messages = num(key, value)?,
        "flush.ms" => cfg.flush_ms = num(key, value)?,
        "file.delete.delay.ms" => cfg.file_delete_delay_ms = num(key, value)?,
        "remote.storage.enable" => cfg.remote_storage_enable = boolean(key, value)?,
        "local.retention.ms" => cfg.local_retention_ms = num(key, value)?,
        "local.retention.bytes" => cfg.local_retention_bytes = num(key, value)?,
        "remote.log.copy.disable" => cfg.remote_log_copy_disable = boolean(key, value)?,
        "remote.log.delete.on.disable" => cfg.remote_log_delete_on_disable = boolean(key, value)?,
        _ => return Err(invalid(key, value, "unknown topic config")),
    }
    Ok(())
}

/// The topic's log config: broker defaults with the topic's overrides applied, validated.
pub fn log_config(defaults: &LogConfig, overrides: &BTreeMap<String, String>) -> Result<LogConfig> {
    let mut cfg = defaults.clone();
    for (k, v) in overrides {
        apply(&mut cfg, k, v)?;
    }
    cfg.validate().map_err(|e| match e {
        strata_storage::Error::InvalidConfig { key, value, reason } => {
            invalid(&key, &value, reason)
        }
        other => invalid("(topic config)", "", other.to_string()),
    })?;
    Ok(cfg)
}

/// The effective value of `key` in `cfg`, as Kafka prints it.
pub fn value_of(cfg: &LogConfig, overrides: &BTreeMap<String, String>, key: &str) -> String {
    match key {
        "cleanup.policy" => cfg.cleanup_policy.as_str().into(),
        "retention.ms" => cfg.retention_ms.to_string(),
        "min.insync.replicas" => cfg.min_insync_replicas.to_string(),
        "compression.type" => "producer".into(),
        "retention.bytes" => cfg.retention_bytes.to_string(),
        "segment.bytes" => cfg.segment_bytes.to_string(),
        "segment.ms" => cfg.segment_ms.to_string(),
        "segment.index.bytes" => cfg.segment_index_bytes.to_string(),
        "index.interval.bytes" => cfg.index_interval_bytes.to_string(),
        "max.message.bytes" => cfg.max_message_bytes.to_string(),
        "message.timestamp.type" => match cfg.message_timestamp_type {
            TimestampType::LogAppendTime => "LogAppendTime".into(),
            _ => "CreateTime".into(),
        },
        "flush.messages" => long_max(cfg.flush_messages),
        "flush.ms" => long_max(cfg.flush_ms),
        "file.delete.delay.ms" => cfg.file_delete_delay_ms.to_string(),
        "remote.storage.enable" => cfg.remote_storage_enable.to_string(),
        "local.retention.ms" => cfg.local_retention_ms.to_string(),
        "local.retention.bytes" => cfg.local_retention_bytes.to_string(),
        "remote.log.copy.disable" => cfg.remote_log_copy_disable.to_string(),
        "remote.log.delete.on.disable" => cfg.remote_log_delete_on_disable.to_string(),
        other => overrides.get(other).cloned().unwrap_or_default(),
    }
}

/// Kafka prints "never" as Long.MAX_VALUE.
fn long_max(v: u64) -> String {
    v.min(i64::MAX as u64).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_between_keys_names_the_key_and_value() {
        let overrides: BTreeMap<String, String> =
            [("retention.ms", "1000"), ("local.retention.ms", "5000")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let err = log_config(&LogConfig::default(), &overrides).expect_err("local > total");
        let text = err.to_string();
        assert!(
            text.contains("local.retention.ms") && text.contains("5000"),
            "{text}"
        );
        assert!(!text.contains("(topic config)"), "{text}");
    }

    #[test]
    fn unknown_key_is_invalid_config() {
        let mut c = LogConfig::default();
        assert!(matches!(
            apply(&mut c, "no.such", "1"),
            Err(Error::InvalidConfig { .. })
        ));
    }

    #[test]
    fn tiering_keys_map_to_log_config() {
        let o: BTreeMap<String, String> = [
            ("remote.storage.enable", "true"),
            ("local.retention.ms", "1000"),
            ("local.retention.bytes", "2048"),
            ("remote.log.copy.disable", "false"),
            ("remote.log.delete.on.disable", "true"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let c = log_config(&LogConfig::default(), &o).unwrap();
        assert!(c.remote_storage_enable);
        assert_eq!(c.local_retention_ms, 1000);
        assert_eq!(c.local_retention_bytes, 2048);
    }

    #[test]
    fn bad_number_is_invalid_config() {
        let mut c = LogConfig::default();
        assert!(matches!(
            apply(&mut c, "retention.ms", "soon"),
            Err(Error::InvalidConfig { .. })
        ));
    }
}
