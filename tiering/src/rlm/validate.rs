//! The topic-config rule for tiering that needs the broker's state (Kafka's
//! `LogConfig.validateRemoteStorageOnlyIfSystemEnabled`) and what a change asks of tiering (KIP-950: turning
//! remote storage off with `remote.log.delete.on.disable=true` deletes the remote data). The rules that need only
//! the topic's configs (no tiering of compacted topics, local retention within total retention, retention with
//! `remote.log.copy.disable=true`, turning remote storage off needs `remote.log.delete.on.disable=true`) are
//! storage's: [`LogConfig::validate`](strata_storage::LogConfig::validate) and
//! [`LogConfig::validate_change`](strata_storage::LogConfig::validate_change), which the broker runs first.
use strata_storage::config_def::{ConfigError, ConfigKey, Value};
use strata_storage::TOPIC_CONFIG;

use crate::error::{Error, Result};

/// The tiering-related topic configs, as strings from the request parsed by
/// [`from_topic_props`](Self::from_topic_props). `Default` = Kafka's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TopicRemoteConfig {
    /// Kafka: `remote.storage.enable`. Default: false.
    pub remote_storage_enable: bool,
    /// Kafka: `remote.log.copy.disable`. Default: false.
    pub copy_disable: bool,
    /// Kafka: `remote.log.delete.on.disable`. Default: false.
    pub delete_on_disable: bool,
}

/// What the broker must do after accepting a config change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigChangeAction {
    /// Nothing beyond applying the configs to the logs (the manager reads them from there).
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
        Error::Config {
            key: key.name.into(),
            value: Some(v.into()),
            reason,
            source: None,
        }
    })
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
                _ => {}
            }
        }
        Ok(c)
    }
}

/// Checks a topic's new tiering configs against the rule that needs the broker's state, and says what tiering
/// must do (`old` = the current configs, `None` on CreateTopics). Run it after storage's topic-config rules
/// ([`LogConfig::validate`](strata_storage::LogConfig::validate) /
/// [`validate_change`](strata_storage::LogConfig::validate_change)). Errors are [`Error::PolicyViolation`]
/// (→ INVALID_CONFIG): `remote.storage.enable=true` needs `remote.log.storage.system.enable=true` on the broker.
/// Turning `remote.storage.enable` off with `remote.log.delete.on.disable=true` returns
/// [`ConfigChangeAction::DeleteRemoteData`].
pub fn validate_topic_config(
    system_enable: bool,
    topic: &str,
    old: Option<&TopicRemoteConfig>,
    new: &TopicRemoteConfig,
) -> Result<ConfigChangeAction> {
    if new.remote_storage_enable && !system_enable {
        return Err(Error::PolicyViolation {
            topic: topic.to_string(),
            reason:
                "remote.storage.enable=true needs remote.log.storage.system.enable=true on the broker"
                    .into(),
        });
    }
    let was_on = old.is_some_and(|o| o.remote_storage_enable);
    if was_on && !new.remote_storage_enable && new.delete_on_disable {
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
    fn tiering_needs_the_system_switch() {
        let new = cfg(&[("remote.storage.enable", "true")]);
        let e = validate_topic_config(false, "t", None, &new).expect_err("system off");
        assert!(
            e.to_string().contains("remote.log.storage.system.enable"),
            "{e}"
        );
    }

    #[test]
    fn turning_tiering_off_with_delete_on_disable_deletes_remote_data() {
        let old = cfg(&[("remote.storage.enable", "true")]);
        let off_delete = cfg(&[
            ("remote.storage.enable", "false"),
            ("remote.log.delete.on.disable", "true"),
        ]);
        assert_eq!(
            validate_topic_config(true, "t", Some(&old), &off_delete).expect("accepted"),
            ConfigChangeAction::DeleteRemoteData
        );
        assert_eq!(
            validate_topic_config(true, "t", Some(&old), &old).expect("unchanged"),
            ConfigChangeAction::None
        );
        let bad = TopicRemoteConfig::from_topic_props([("remote.storage.enable", "maybe")])
            .expect_err("a boolean");
        assert!(bad.to_string().contains("remote.storage.enable"), "{bad}");
    }
}
