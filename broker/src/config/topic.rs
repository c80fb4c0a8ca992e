//! Topic-level configs: a thin adapter over storage's topic table ([`TOPIC_CONFIG`]), which declares every
//! Kafka topic key once (type, default, validator, documentation, broker synonyms, effect) and parses them.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use strata_storage::config_def::ConfigKey;
use strata_storage::LogConfig;
pub use strata_storage::TOPIC_CONFIG;

use crate::error::{Error, Result};

/// One topic config key: Kafka name and the broker property that supplies its default (derived from
/// [`TOPIC_CONFIG`]).
#[derive(Debug, Clone, Copy)]
pub struct TopicKey {
    /// Topic-level Kafka name.
    pub name: &'static str,
    /// Broker-level synonym (the default's source), if any.
    pub broker_synonym: Option<&'static str>,
}

/// Every topic config key CreateTopics / AlterConfigs / IncrementalAlterConfigs know, from [`TOPIC_CONFIG`].
pub static TOPIC_KEYS: LazyLock<Vec<TopicKey>> = LazyLock::new(|| {
    TOPIC_CONFIG
        .keys()
        .map(|k| TopicKey {
            name: k.name,
            broker_synonym: k.server_default.first().map(|s| s.name),
        })
        .collect()
});

/// A storage config error as the broker's [`Error::Config`] (INVALID_CONFIG, naming key and value).
pub fn from_storage(e: strata_storage::Error) -> Error {
    match e {
        strata_storage::Error::InvalidConfig { key, value, reason } => {
            Error::config(key, value, reason)
        }
        other => Error::config("(topic config)".into(), String::new(), other.to_string()),
    }
}

/// The topic's log config: broker defaults with the topic's overrides applied, validated through the table
/// (an unknown key names the closest known one).
pub fn log_config(defaults: &LogConfig, overrides: &BTreeMap<String, String>) -> Result<LogConfig> {
    strata_storage::topic_log_config(defaults, overrides).map_err(from_storage)
}

/// The table's key `name` (topic keys only).
pub fn key(name: &str) -> Option<&'static ConfigKey> {
    TOPIC_CONFIG.own.iter().find(|k| k.name == name)
}

/// The effective value of `key` for a topic running with `cfg` and `overrides`, as Kafka prints it.
pub fn value_of(
    cfg: &LogConfig,
    overrides: &BTreeMap<String, String>,
    key: &ConfigKey,
) -> Option<String> {
    strata_storage::topic_value(cfg, overrides, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ConfigSubject;

    fn o(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_rule_between_keys_names_the_key_and_value() {
        let overrides = o(&[("retention.ms", "1000"), ("local.retention.ms", "5000")]);
        let err = log_config(&LogConfig::default(), &overrides).expect_err("local > total");
        let text = err.to_string();
        assert!(
            text.contains("local.retention.ms") && text.contains("5000"),
            "{text}"
        );
        assert!(!text.contains("(topic config)"), "{text}");
    }

    #[test]
    fn unknown_key_is_invalid_config_with_a_suggestion() {
        let err = log_config(&LogConfig::default(), &o(&[("segment.byte", "1")])).unwrap_err();
        assert_eq!(err.config_key(), Some("segment.byte"), "{err}");
        assert!(
            err.to_string().contains("did you mean segment.bytes"),
            "{err}"
        );
    }

    #[test]
    fn tiering_keys_map_to_log_config() {
        let c = log_config(
            &LogConfig::default(),
            &o(&[
                ("remote.storage.enable", "true"),
                ("local.retention.ms", "1000"),
                ("local.retention.bytes", "2048"),
                ("remote.log.copy.disable", "false"),
                ("remote.log.delete.on.disable", "true"),
            ]),
        )
        .unwrap();
        assert!(c.remote_storage_enable && c.remote_log_delete_on_disable);
        assert_eq!(c.local_retention_ms, 1000);
        assert_eq!(c.local_retention_bytes, 2048);
    }

    #[test]
    fn bad_number_is_invalid_config_naming_key_and_value() {
        let err = log_config(&LogConfig::default(), &o(&[("retention.ms", "soon")])).unwrap_err();
        assert!(
            matches!(&err, Error::Config { subject: ConfigSubject::Value { key, value }, .. } if key == "retention.ms" && value == "soon")
        );
    }

    #[test]
    fn broker_synonyms_come_from_the_table() {
        let k = TOPIC_KEYS.iter().find(|k| k.name == "segment.ms").unwrap();
        assert_eq!(k.broker_synonym, Some("log.roll.ms"));
        assert_eq!(TOPIC_KEYS.len(), TOPIC_CONFIG.keys().count());
    }
}
