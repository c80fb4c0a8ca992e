//! Dynamic broker configs (Kafka's `DynamicBrokerConfig` for its `DynamicLogConfig` part): the broker properties
//! that supply a topic key's default (`log.retention.ms`, `log.segment.bytes`, `log.cleanup.policy`,
//! `log.cleaner.delete.retention.ms`, `message.max.bytes`, ...) may be changed at run time by AlterConfigs /
//! IncrementalAlterConfigs on the BROKER resource, for this node (its id) or as the cluster-wide default (`""`).
//! Per-broker values win over default ones, and both over the static config. They are kept in the metadata dir
//! (`strata-dynamic-broker-configs.json`, written atomically) and applied again on start.
//!
//! Beyond the log defaults, the keys Kafka's other `BrokerReconfigurable`s take at run time that strata has
//! ([`COMPONENT_KEYS`]: the log cleaner's, the connection limits and the remote storage quotas) are applied to
//! the running component that registered for them ([`Reconfigurable`]); the keys Kafka changes at run time but
//! strata cannot ([`NOT_APPLIED`]) are refused with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use strata_storage::config_def::{ConfigKey, Effect, Synonym};
use strata_storage::LogConfig;
use strata_tiering::rlm::RLM_CONFIG;

pub use crate::config::dynamic_keys::{kept_no_effect, KEPT_NO_EFFECT, NOT_APPLIED};
use crate::config::topic::{self, TOPIC_CONFIG};
use crate::config::BROKER_DEF;
use crate::error::{ConfigSubject, Error, Result};

/// File name of the dynamic broker configs inside the metadata dir.
pub const DYNAMIC_CONFIG_FILE: &str = "strata-dynamic-broker-configs.json";

/// Broker synonyms of topic keys that Kafka does not change at run time, or strata does not: the flush
/// scheduler's period is a thread's, and tiering every new topic is decided at start.
const NOT_DYNAMIC: &[&str] = &[
    "log.flush.scheduler.interval.ms",
    "log.remote.storage.enable",
];

/// The broker keys, other than log defaults, that Kafka changes at run time (`LogCleaner.ReconfigurableConfigs`,
/// `SocketServer.ReconfigurableConfigs`, `DynamicRemoteLogConfig`) and strata applies to a running component.
pub const COMPONENT_KEYS: &[&str] = &[
    "log.cleaner.threads",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.backoff.ms",
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.fetch.max.bytes.per.second",
];

/// Kafka's check of the cluster-wide default resource: the per-broker keys set there are INVALID_REQUEST naming
/// them ("Cannot update these configs at default cluster level, broker id must be specified").
pub fn check_scope(scope: Scope, values: &BTreeMap<String, String>) -> Result<()> {
    if scope == Scope::Broker {
        return Ok(());
    }
    let per_broker: Vec<String> = values
        .keys()
        .filter(|k| kept_no_effect(k).is_some_and(|(_, per_broker)| *per_broker))
        .cloned()
        .collect();
    match per_broker.is_empty() {
        true => Ok(()),
        false => Err(Error::PerBrokerConfigs(per_broker)),
    }
}

/// A running component that takes some of [`COMPONENT_KEYS`] at run time (Kafka's `BrokerReconfigurable`).
/// `values` holds the dynamic value of each of its keys that is set (per-broker over default); a key absent
/// from it runs with its static value.
pub trait Reconfigurable: Send + Sync {
    /// The keys it applies.
    fn keys(&self) -> &'static [&'static str];
    /// Checks `values` before anything changes (INVALID_CONFIG naming the key).
    fn validate(&self, values: &BTreeMap<String, String>) -> Result<()>;
    /// Applies `values` at once.
    fn reconfigure(&self, values: &BTreeMap<String, String>) -> Result<()>;
}

/// The value of broker key `name` in `values` as the table parses it, else `static_value`; a bad value is
/// INVALID_CONFIG naming the key (for [`Reconfigurable`]s).
pub fn value_or<T>(
    values: &BTreeMap<String, String>,
    name: &str,
    static_value: T,
    convert: impl FnOnce(strata_storage::config_def::Value) -> Option<T>,
) -> Result<T> {
    let Some(raw) = values.get(name) else {
        return Ok(static_value);
    };
    let bad = |reason: String| Error::config(name.to_string(), raw.clone(), reason);
    let key = BROKER_DEF
        .key(name)
        .or_else(|| RLM_CONFIG.key(name))
        .ok_or_else(|| bad("unknown broker configuration".into()))?;
    let value = key.parse_value(raw).map_err(|e| bad(e.to_string()))?;
    convert(value).ok_or_else(|| bad("out of range".into()))
}

/// A number of `value` (an int, long or double key) as `i64`, for [`value_or`].
pub fn as_i64(value: strata_storage::config_def::Value) -> Option<i64> {
    use strata_storage::config_def::Value;
    match value {
        Value::Short(n) => Some(n.into()),
        Value::Int(n) => Some(n.into()),
        Value::Long(n) => Some(n),
        _ => None,
    }
}

/// Whether Kafka changes broker key `name` at run time and strata takes it: a log default ([`dynamic_key`]), a
/// component's key ([`COMPONENT_KEYS`]) or a key kept with no effect ([`KEPT_NO_EFFECT`]).
pub fn is_dynamic(name: &str) -> bool {
    dynamic_key(name).is_some() || COMPONENT_KEYS.contains(&name) || kept_no_effect(name).is_some()
}

/// Which of the two BROKER resources a dynamic config is set on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The cluster-wide default (resource name `""`): DYNAMIC_DEFAULT_BROKER_CONFIG.
    Default,
    /// This node (resource name = its id): DYNAMIC_BROKER_CONFIG.
    Broker,
}

/// The dynamic values set, per scope, under the names given (`log.retention.hours` stays in hours).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DynamicConfigs {
    /// Set on the cluster-wide default resource.
    #[serde(default)]
    pub default: BTreeMap<String, String>,
    /// Set on this node's resource.
    #[serde(default)]
    pub broker: BTreeMap<String, String>,
}

/// The topic key whose default the broker property `name` supplies, with the synonym entry (its scale), when
/// Kafka lets `name` change at run time and strata applies it (the topic key has an effect).
pub fn dynamic_key(name: &str) -> Option<(&'static ConfigKey, Synonym)> {
    if NOT_DYNAMIC.contains(&name) {
        return None;
    }
    TOPIC_CONFIG
        .keys()
        .filter(|k| matches!(k.effect, Effect::Used))
        .find_map(|k| {
            k.server_default
                .iter()
                .find(|s| s.name == name)
                .map(|s| (k, *s))
        })
}

impl DynamicConfigs {
    /// Reads the file in `dir`; none when absent.
    pub fn load(dir: &Path) -> Result<DynamicConfigs> {
        let path = dir.join(DYNAMIC_CONFIG_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::config(
                    "(dynamic broker configs)".into(),
                    path.display().to_string(),
                    format!("not a dynamic broker config file: {e}"),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DynamicConfigs::default()),
            Err(e) => Err(Error::io("reading the dynamic broker configs", e)),
        }
    }

    /// Writes the file in `dir` atomically (tmp file, fsync, rename, fsync dir).
    pub fn persist(&self, dir: &Path) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::io("encoding the dynamic broker configs", e.into()))?;
        strata_storage::crash_point("dynamic_config.before_write");
        Ok(strata_storage::atomic_write(&file_path(dir), &bytes)?)
    }

    /// The values of one scope.
    pub fn scope(&self, scope: Scope) -> &BTreeMap<String, String> {
        match scope {
            Scope::Default => &self.default,
            Scope::Broker => &self.broker,
        }
    }

    /// These configs with `scope` replaced by `values`.
    pub fn with(&self, scope: Scope, values: BTreeMap<String, String>) -> DynamicConfigs {
        let mut c = self.clone();
        match scope {
            Scope::Default => c.default = values,
            Scope::Broker => c.broker = values,
        }
        c
    }

    /// The dynamic value of a broker property, per-broker first: (value as set, source scope).
    pub fn get(&self, name: &str) -> Option<(&str, Scope)> {
        self.broker
            .get(name)
            .map(|v| (v.as_str(), Scope::Broker))
            .or_else(|| self.default.get(name).map(|v| (v.as_str(), Scope::Default)))
    }

    /// The dynamic values of `keys` that are set, per-broker over default (what a [`Reconfigurable`] is given).
    pub fn values_of(&self, keys: &[&str]) -> BTreeMap<String, String> {
        keys.iter()
            .filter_map(|k| self.get(k).map(|(v, _)| (k.to_string(), v.to_string())))
            .collect()
    }

    /// The log defaults: `static_log` with each dynamic value applied to the topic key it supplies (per-broker
    /// over default; within a scope Kafka's precedence, `log.retention.ms` > `.minutes` > `.hours`). A bad
    /// combination is INVALID_CONFIG naming the broker property.
    pub fn log_defaults(&self, static_log: &LogConfig) -> Result<LogConfig> {
        let mut overrides = BTreeMap::new();
        let mut given_as = BTreeMap::new();
        for k in TOPIC_CONFIG.keys() {
            let found = [&self.broker, &self.default].into_iter().find_map(|m| {
                k.server_default
                    .iter()
                    .filter(|s| dynamic_key(s.name).is_some())
                    .find_map(|s| m.get(s.name).map(|v| (s, v)))
            });
            let Some((s, raw)) = found else { continue };
            let value = if s.scale == 1 {
                raw.clone()
            } else {
                raw.trim()
                    .parse::<i64>()
                    .ok()
                    .and_then(|n| {
                        if n < 0 {
                            Some(n)
                        } else {
                            n.checked_mul(s.scale)
                        }
                    })
                    .map(|n| n.to_string())
                    .ok_or_else(|| {
                        Error::config(
                            s.name.into(),
                            raw.clone(),
                            "not a number of that unit that fits a long".into(),
                        )
                    })?
            };
            overrides.insert(k.name.to_string(), value);
            given_as.insert(k.name.to_string(), (s.name, raw.clone()));
        }
        topic::log_config(static_log, &overrides).map_err(|e| match e {
            Error::Config {
                subject: ConfigSubject::Value { key, value },
                reason,
            } => match given_as.get(&key) {
                Some((name, raw)) => Error::config((*name).to_string(), raw.clone(), reason),
                None => Error::config(key, value, reason),
            },
            other => other,
        })
    }
}

/// The key a `listener.name.<listener>.[<mechanism>.]<key>` name stands for (the name itself otherwise).
fn listener_key(name: &str) -> &str {
    let Some((_, key)) = name
        .strip_prefix("listener.name.")
        .and_then(|rest| rest.split_once('.'))
    else {
        return name;
    };
    for mechanism in [
        "plain.",
        "scram-sha-256.",
        "scram-sha-512.",
        "oauthbearer.",
        "gssapi.",
    ] {
        if let Some(k) = key.strip_prefix(mechanism) {
            return k;
        }
    }
    key
}

/// Whether a key's value is a secret (passwords, JAAS lines, private keys): errors show "(hidden)".
fn is_secret(key: &str) -> bool {
    key.ends_with("password")
        || key.ends_with("jaas.config")
        || key.ends_with("keystore.key")
        || key.ends_with("secret")
}

/// Checks one change's keys and values: unknown keys and bad values are INVALID_CONFIG naming key and value;
/// known keys Kafka does not change at run time are refused together ("Cannot update these configs
/// dynamically").
pub fn check_values(values: &BTreeMap<String, String>) -> Result<()> {
    let mut static_only = Vec::new();
    for (name, value) in values {
        // Kafka's per-listener (and per-mechanism) keys, `listener.name.<l>.[<mechanism>.]<key>`, are judged as
        // <key>; secrets are never echoed back.
        let base = listener_key(name);
        let value = &if is_secret(base) {
            "(hidden)".to_string()
        } else {
            value.clone()
        };
        if let Some((_, why)) = NOT_APPLIED.iter().find(|(k, _)| *k == base) {
            return Err(Error::config(
                name.clone(),
                value.clone(),
                format!("Kafka changes it at run time, strata cannot: {why}"),
            ));
        }
        if base != name.as_str() {
            let reason = "strata changes no per-listener configuration at run time (listeners are built at start)";
            return Err(Error::config(name.clone(), value.clone(), reason.into()));
        }
        // The remote storage quotas are the RemoteLogManager table's keys.
        let Some(key) = BROKER_DEF.key(name).or_else(|| RLM_CONFIG.key(name)) else {
            return Err(Error::config(
                name.clone(),
                value.clone(),
                format!(
                    "unknown broker configuration{}",
                    BROKER_DEF
                        .closest(name)
                        .map(|c| format!(" (did you mean {c}?)"))
                        .unwrap_or_default()
                ),
            ));
        };
        if !is_dynamic(name) {
            static_only.push(name.clone());
            continue;
        }
        // A key kept with no effect is checked by Kafka's type (the catalog types it as text).
        let key = kept_no_effect(name).map_or(key, |(k, _)| k);
        key.parse_value(value)
            .map_err(|e| Error::config(name.clone(), value.clone(), e.to_string()))?;
    }
    if static_only.is_empty() {
        Ok(())
    } else {
        Err(Error::NotDynamicConfigs(static_only))
    }
}

fn file_path(dir: &Path) -> PathBuf {
    dir.join(DYNAMIC_CONFIG_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn log_defaults_and_retention_keys_are_dynamic_listeners_are_not() {
        for k in [
            "log.retention.ms",
            "log.retention.hours",
            "log.segment.bytes",
            "log.roll.hours",
            "log.cleanup.policy",
            "log.cleaner.delete.retention.ms",
            "message.max.bytes",
            "log.local.retention.bytes",
        ] {
            assert!(dynamic_key(k).is_some(), "{k}");
        }
        for k in [
            "listeners",
            "log.dirs",
            "node.id",
            "log.remote.storage.enable",
        ] {
            assert!(dynamic_key(k).is_none(), "{k}");
        }
        let err =
            check_values(&m(&[("listeners", "PLAINTEXT://:1"), ("log.dirs", "/x")])).unwrap_err();
        assert!(
            matches!(&err, Error::NotDynamicConfigs(k) if k.len() == 2),
            "{err}"
        );
    }

    /// Per-listener TLS/SASL keys are refused with the reason of their key, and no error echoes a secret.
    #[test]
    fn listener_keys_are_judged_as_their_key_and_secrets_are_hidden() {
        let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";"#;
        for (k, v) in [
            ("listener.name.sasl_ssl.ssl.keystore.location", "/tmp/x.pem"),
            ("listener.name.sasl_ssl.plain.sasl.jaas.config", jaas),
            ("sasl.jaas.config", jaas),
            ("listener.name.sasl_ssl.sasl.enabled.mechanisms", "PLAIN"),
            ("ssl.keystore.password", "hunter2"),
        ] {
            let e = check_values(&m(&[(k, v)])).unwrap_err().to_string();
            assert!(e.contains(k) && e.contains("strata cannot"), "{k}: {e}");
            assert!(
                !e.contains("bob-secret") && !e.contains("hunter2"),
                "{k}: {e}"
            );
            assert!(!e.contains("topic"), "{k}: {e}");
        }
        let e = check_values(&m(&[("listener.name.x.ssl.truststore.type", "PEM")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("strata cannot"), "{e}");
        let e = check_values(&m(&[("listener.name.x.log.retention.ms", "3")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("per-listener"), "{e}");
    }

    #[test]
    fn every_dynamic_key_is_a_broker_key() {
        for k in TOPIC_CONFIG.keys() {
            for s in k
                .server_default
                .iter()
                .filter(|s| dynamic_key(s.name).is_some())
            {
                assert!(
                    BROKER_DEF.key(s.name).is_some(),
                    "{} is not in the broker table",
                    s.name
                );
            }
        }
    }

    #[test]
    fn per_broker_beats_default_and_hours_are_scaled() {
        let c = DynamicConfigs {
            default: m(&[("log.retention.hours", "2"), ("log.segment.bytes", "1000")]),
            broker: m(&[("log.segment.bytes", "2000")]),
        };
        let log = c.log_defaults(&LogConfig::default()).unwrap();
        assert_eq!(log.retention_ms, 7_200_000);
        assert_eq!(log.segment_bytes, 2000);
    }

    #[test]
    fn a_bad_value_names_the_broker_key() {
        let err = check_values(&m(&[("log.retention.ms", "soon")])).unwrap_err();
        assert!(
            matches!(&err, Error::Config { subject: ConfigSubject::Value { key, value }, .. } if key == "log.retention.ms" && value == "soon")
        );
        let c = DynamicConfigs {
            broker: m(&[
                ("log.local.retention.ms", "5000"),
                ("log.retention.ms", "1000"),
            ]),
            ..Default::default()
        };
        let err = c.log_defaults(&LogConfig::default()).unwrap_err();
        assert!(
            err.config_key().is_some_and(|k| k.starts_with("log.")),
            "{err}"
        );
    }

    /// Kafka's run-time keys strata keeps with no effect: each a Kafka key strata knows as having no effect,
    /// checked by Kafka's type; the per-broker ones refused on the cluster-wide default.
    #[test]
    fn keys_kept_with_no_effect_are_no_effect_kafka_keys_checked_by_kafkas_type() {
        for (k, _) in KEPT_NO_EFFECT {
            let known = crate::config::KAFKA_ONLY_KEYS
                .iter()
                .find(|c| c.name == k.name);
            assert!(
                known.is_some_and(|c| matches!(c.effect, Effect::NoEffect(_))),
                "{} is not a no-effect Kafka key",
                k.name
            );
            assert!(!NOT_APPLIED.iter().any(|(n, _)| *n == k.name), "{}", k.name);
            assert!(is_dynamic(k.name), "{}", k.name);
        }
        let ok = m(&[
            ("sasl.kerberos.min.time.before.relogin", "58000"),
            ("background.threads", "9"),
            ("ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"),
        ]);
        check_values(&ok).unwrap();
        check_scope(Scope::Broker, &ok).unwrap();
        let err = check_scope(Scope::Default, &ok).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cannot update these configs at default cluster level, broker id must be specified: \
             [sasl.kerberos.min.time.before.relogin, ssl.cipher.suites]"
        );
        check_scope(Scope::Default, &m(&[("background.threads", "9")])).unwrap();
        for (k, v) in [
            ("sasl.kerberos.min.time.before.relogin", "abc"),
            ("background.threads", "0"),
            ("sasl.login.refresh.window.factor", "2.0"),
        ] {
            let err = check_values(&m(&[(k, v)])).unwrap_err();
            assert!(
                matches!(&err, Error::Config { subject: ConfigSubject::Value { key, .. }, .. } if key == k),
                "{k}={v}: {err}"
            );
        }
    }

    #[test]
    fn survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            DynamicConfigs::load(dir.path()).unwrap(),
            DynamicConfigs::default()
        );
        let c = DynamicConfigs::default().with(Scope::Broker, m(&[("log.retention.ms", "5")]));
        c.persist(dir.path()).unwrap();
        assert_eq!(DynamicConfigs::load(dir.path()).unwrap(), c);
    }
}
