//! Topic-config rules for tiering that the broker checks on CreateTopics / AlterConfigs (Kafka's
//! `LogConfig.validateRemoteStorageOnlyIfSystemEnabled`, `validateNoRemoteStorageForCompactedTopic`,
//! `validateTurningOffRemoteStorageWithDelete`, `validateRemoteStorageRetentionSize|Time`, KIP-950).
use strata_storage::config_def::{ConfigError, ConfigKey, Value};
use strata_storage::TOPIC_CONFIG;

use super::RemotePolicy;
use crate::error::{Error, Result};

/// The tiering-related topic configs, as strings from the request parsed by
/// [`from_topic_props`](Self::from_topic_props). `Default` = Kafka's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopicRemoteConfig {
    /// Kafka: `remote.storage.enable`. Default: false.
    pub remote_storage_enable: bool,
    /// Kafka: `remote.log.copy.disable`. Default: false.
    pub copy_disable: bool,
    /// Kafka: `remote.log.delete.on.disable`. Default: false.
    pub delete_on_disable: bool,
    /// Kafka: `cleanup.policy`. Default: `delete`.
    pub cleanup_policy: String,
    /// Kafka: `retention.ms`. Default: 7 days.
    pub retention_ms: i64,
    /// Kafka: `retention.bytes`. Default: -1.
    pub retention_bytes: i64,
    /// Kafka: `local.retention.ms`. Default: -2 (= `retention.ms`).
    pub local_retention_ms: i64,
    /// Kafka: `local.retention.bytes`. Default: -2 (= `retention.bytes`).
    pub local_retention_bytes: i64,
}

impl Default for TopicRemoteConfig {
    fn default() -> Self {
        Self {
            remote_storage_enable: false,
            copy_disable: false,
            delete_on_disable: false,
            cleanup_policy: "delete".to_string(),
            retention_ms: 7 * 24 * 60 * 60 * 1000,
            retention_bytes: -1,
            local_retention_ms: -2,
            local_retention_bytes: -2,
        }
    }
}

/// What the broker must do after accepting a config change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigChangeAction {
    /// Nothing beyond applying the configs (and [`RemoteLogManager::set_topic_policy`](super::RemoteLogManager::set_topic_policy)).
    None,
    /// Remote storage was turned off with `remote.log.delete.on.disable=true`: call
    /// [`RemoteLogManager::delete_topic_remote_data`](super::RemoteLogManager::delete_topic_remote_data).
    DeleteRemoteData,
}

/// Parses one topic value through its key in storage's topic table (the one parser per type).
fn parse(key: &ConfigKey, v: &str) -> Result<Value> {
    key.parse_value(v).map_err(|e| {
        let reason = match e {
            ConfigError::BadValue { reason, .. } => reason,
            other => other.to_string(),
        };
        Error::InvalidProperty {
            key: key.name.into(),
            value: v.into(),
            reason,
        }
    })
}

fn long(v: Value) -> i64 {
    match v {
        Value::Long(n) => n,
        Value::Int(n) => n.into(),
        _ => 0,
    }
}

impl TopicRemoteConfig {
    /// Reads the keys it knows from a topic's config entries (others are skipped); bad values are errors naming
    /// the key.
    pub fn from_topic_props<K: AsRef<str>, V: AsRef<str>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self> {
        let mut c = Self::default();
        for (k, v) in props {
            let (k, v) = (k.as_ref(), v.as_ref());
            let Some(key) = TOPIC_CONFIG.own.iter().find(|key| key.name == k) else {
                continue;
            };
            let flag = || parse(key, v).map(|x| x == Value::Bool(true));
            match k {
                "remote.storage.enable" => c.remote_storage_enable = flag()?,
                "remote.log.copy.disable" => c.copy_disable = flag()?,
                "remote.log.delete.on.disable" => c.delete_on_disable = flag()?,
                "cleanup.policy" => c.cleanup_policy = v.trim().to_string(),
                "retention.ms" => c.retention_ms = long(parse(key, v)?),
                "retention.bytes" => c.retention_bytes = long(parse(key, v)?),
                "local.retention.ms" => c.local_retention_ms = long(parse(key, v)?),
                "local.retention.bytes" => c.local_retention_bytes = long(parse(key, v)?),
                _ => {}
            }
        }
        Ok(c)
    }

    /// The [`RemotePolicy`] these configs ask for.
    pub fn policy(&self) -> RemotePolicy {
        RemotePolicy::new(self.copy_disable, self.delete_on_disable)
    }
}

/// Checks a topic's new tiering configs (`old` = the current ones, `None` on CreateTopics). Errors are
/// [`Error::PolicyViolation`] (→ INVALID_CONFIG) naming the rule:
/// - `remote.storage.enable=true` needs `remote.log.storage.system.enable=true` on the broker;
/// - a compacted topic (`cleanup.policy` containing `compact`) cannot be tiered;
/// - turning `remote.storage.enable` off needs `remote.log.delete.on.disable=true` (then the remote data is
///   deleted: [`ConfigChangeAction::DeleteRemoteData`]);
/// - `local.retention.ms|bytes` must be -2, or <= `retention.ms|bytes` (and not -1 unless that is -1);
/// - with `remote.log.copy.disable=true`, `local.retention.*` must be -2 or equal `retention.*`.
pub fn validate_topic_config(
    system_enable: bool,
    topic: &str,
    old: Option<&TopicRemoteConfig>,
    new: &TopicRemoteConfig,
) -> Result<ConfigChangeAction> {
    let violation = |reason: String| {
        Err(Error::PolicyViolation {
            topic: topic.to_string(),
            reason,
        })
    };
    if new.remote_storage_enable && !system_enable {
        return violation(
            "remote.storage.enable=true needs remote.log.storage.system.enable=true on the broker"
                .into(),
        );
    }
    if new.remote_storage_enable && new.cleanup_policy.split(',').any(|p| p.trim() == "compact") {
        return violation(format!(
            "remote storage is not supported for compacted topics (cleanup.policy={})",
            new.cleanup_policy
        ));
    }
    for (local_key, local, total_key, total) in [
        (
            "local.retention.ms",
            new.local_retention_ms,
            "retention.ms",
            new.retention_ms,
        ),
        (
            "local.retention.bytes",
            new.local_retention_bytes,
            "retention.bytes",
            new.retention_bytes,
        ),
    ] {
        if local == -2 {
            continue;
        }
        if local < -2 {
            return violation(format!("{local_key}={local} must be -2, -1 or at least 0"));
        }
        if total != -1 && (local == -1 || local > total) {
            return violation(format!(
                "{local_key}={local} must not exceed {total_key}={total} (-2 means the same value)"
            ));
        }
        if new.copy_disable && local != total {
            return violation(format!(
                "with remote.log.copy.disable=true, {local_key}={local} must be -2 or equal {total_key}={total}"
            ));
        }
    }
    let was_on = old.is_some_and(|o| o.remote_storage_enable);
    if was_on && !new.remote_storage_enable {
        if !new.delete_on_disable {
            return violation(
                "turning remote.storage.enable off needs remote.log.delete.on.disable=true, which deletes the topic's remote data"
                    .into(),
            );
        }
        return Ok(ConfigChangeAction::DeleteRemoteData);
    }
    Ok(ConfigChangeAction::None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kv: &[(&str, &str)]) -> TopicRemoteConfig {
        TopicRemoteConfig::from_topic_props(kv.iter().copied()).expect("parses")
    }

    #[test]
    fn compacted_topics_cannot_be_tiered() {
        let new = cfg(&[
            ("remote.storage.enable", "true"),
            ("cleanup.policy", "compact,delete"),
        ]);
        let e = validate_topic_config(true, "t", None, &new).expect_err("compacted");
        assert!(e.to_string().contains("compacted"), "{e}");
        let ok = cfg(&[
            ("remote.storage.enable", "true"),
            ("cleanup.policy", "delete"),
        ]);
        assert_eq!(
            validate_topic_config(true, "t", None, &ok).expect("ok"),
            ConfigChangeAction::None
        );
    }

    #[test]
    fn tiering_needs_the_system_switch() {
        let new = cfg(&[("remote.storage.enable", "true")]);
        let e = validate_topic_config(false, "t", None, &new).expect_err("system off");
        assert!(
            e.to_string().contains("remote.log.storage.system.enable"),
            "{e}"
        );
    }

    #[test]
    fn turning_tiering_off_needs_delete_on_disable() {
        let old = cfg(&[("remote.storage.enable", "true")]);
        let off = cfg(&[("remote.storage.enable", "false")]);
        let e = validate_topic_config(true, "t", Some(&old), &off).expect_err("needs delete");
        assert!(
            e.to_string().contains("remote.log.delete.on.disable"),
            "{e}"
        );
        let off_delete = cfg(&[
            ("remote.storage.enable", "false"),
            ("remote.log.delete.on.disable", "true"),
        ]);
        assert_eq!(
            validate_topic_config(true, "t", Some(&old), &off_delete).expect("accepted"),
            ConfigChangeAction::DeleteRemoteData
        );
    }

    #[test]
    fn local_retention_must_not_exceed_total() {
        let new = cfg(&[
            ("remote.storage.enable", "true"),
            ("retention.ms", "1000"),
            ("local.retention.ms", "5000"),
        ]);
        let e = validate_topic_config(true, "t", None, &new).expect_err("local > total");
        assert!(e.to_string().contains("local.retention.ms=5000"), "{e}");
        let bad =
            TopicRemoteConfig::from_topic_props([("retention.bytes", "lots")]).expect_err("number");
        assert!(bad.to_string().contains("retention.bytes"), "{bad}");
    }
}
