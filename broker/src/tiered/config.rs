//! [`TieringConfig`]: the broker properties of tiered storage, split off the broker's property map.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `remote.log.storage.system.enable` | `true` (Kafka: false) | master switch: `strata` with no arguments tiers |
//! | `remote.log.*`, `remote.fetch.*` | Kafka's | the RemoteLogManager ([`RemoteLogManagerConfig`]) |
//! | `remote.log.storage.manager.impl.prefix` | `rsm.config.` | prefix of the RSM's properties |
//! | `remote.log.metadata.manager.impl.prefix` | `rlmm.config.` | prefix of the RLMM's properties |
//! | `rsm.config.*` | `storage.backend=filesystem`, `storage.filesystem.root=<metadata dir>/remote` | the RSM ([`RsmConfig`]) |
//! | `rlmm.config.*` | Kafka's | the topic-based RLMM ([`TopicBasedRemoteLogMetadataManagerConfig`]) |
//! | `http.listener` | empty (off) | `host:port` serving `GET /metrics` (Prometheus text) |

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use strata_metadata::{TopicBasedRemoteLogMetadataManagerConfig, RLMM_CONFIG_PREFIX};
use strata_tiering::{RemoteLogManagerConfig, RsmConfig};

use super::TieringError;

pub use crate::config::tiering_keys::{
    DEFAULT_RSM_PREFIX, HTTP_LISTENER_DEFAULT, HTTP_LISTENER_KEY, RLMM_PREFIX_KEY, RSM_PREFIX_KEY,
    SYSTEM_ENABLE_DEFAULT, TIERING_KEYS,
};

/// Whether the broker config leaves `key` to [`TieringConfig`] (given the configured RSM/RLMM prefixes).
fn is_tiering_key(key: &str, rsm_prefix: &str, rlmm_prefix: &str) -> bool {
    // Kafka's remote.* keys tiering does not read (plug-in class names, quotas, ...) are the broker table's, which
    // accepts them with no effect.
    if crate::config::BROKER_DEF.key(key).is_some() {
        return false;
    }
    key.starts_with("remote.log.")
        || key.starts_with("remote.fetch.")
        || key.starts_with(rsm_prefix)
        || key.starts_with(rlmm_prefix)
        || key == HTTP_LISTENER_KEY
}

/// Splits a broker property map into (broker properties, tiering properties): the tiering ones are
/// `remote.log.*`, `remote.fetch.*`, `http.listener` and everything under the RSM and RLMM prefixes.
pub fn split_properties(
    props: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let rsm_prefix = props
        .get(RSM_PREFIX_KEY)
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or(DEFAULT_RSM_PREFIX)
        .to_string();
    let rlmm_prefix = props
        .get(RLMM_PREFIX_KEY)
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or(RLMM_CONFIG_PREFIX)
        .to_string();
    props
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| !is_tiering_key(k, &rsm_prefix, &rlmm_prefix))
}

/// Everything tiered storage reads from the broker's properties.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TieringConfig {
    /// The RemoteLogManager (`remote.log.*`, `remote.fetch.*`). `system_enable` defaults to true.
    pub rlm: RemoteLogManagerConfig,
    /// The RSM (`rsm.config.*`, prefix stripped). Default: filesystem under `<metadata dir>/remote` (the first log
    /// dir, or the one holding the topic registry).
    pub rsm: RsmConfig,
    /// The topic-based RLMM (`rlmm.config.*`).
    pub rlmm: TopicBasedRemoteLogMetadataManagerConfig,
    /// strata: `http.listener`. Default: none (no HTTP endpoint).
    pub http_listener: Option<SocketAddr>,
    /// Where the RLMM keeps its snapshot: the metadata dir (the first log dir, or the one holding the topic
    /// registry).
    pub snapshot_dir: PathBuf,
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> TieringError {
    TieringError::Config {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Parses `host:port` (`localhost` allowed, an optional `http://` in front).
fn parse_http_listener(value: &str) -> Result<Option<SocketAddr>, TieringError> {
    let v = value.trim();
    let v = v.strip_prefix("http://").unwrap_or(v).trim_end_matches('/');
    if v.is_empty() {
        return Ok(None);
    }
    let v = match v.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => v.to_string(),
    };
    v.parse::<SocketAddr>()
        .map(Some)
        .map_err(|e| bad(HTTP_LISTENER_KEY, value, format!("expected ip:port ({e})")))
}

impl TieringConfig {
    /// Reads the tiering properties (the second map of [`split_properties`]; other keys are errors) with
    /// `log_dirs` the broker's data directories. Unknown keys and bad values are errors naming the key.
    pub fn from_properties(
        props: &BTreeMap<String, String>,
        log_dirs: &[PathBuf],
    ) -> Result<Self, TieringError> {
        // The metadata dir: the first log dir, or the one holding the topic registry (see topics::metadata_dir).
        let meta_dir = crate::topics::metadata_dir(log_dirs)?;
        let first_dir: &Path = &meta_dir;
        let rsm_prefix = props
            .get(RSM_PREFIX_KEY)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| DEFAULT_RSM_PREFIX.to_string());
        let rlmm_prefix = props
            .get(RLMM_PREFIX_KEY)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| RLMM_CONFIG_PREFIX.to_string());
        if rsm_prefix == rlmm_prefix {
            return Err(bad(
                RSM_PREFIX_KEY,
                &rsm_prefix,
                format!("must differ from {RLMM_PREFIX_KEY}"),
            ));
        }

        let mut rlm = RemoteLogManagerConfig::default();
        rlm.system_enable = SYSTEM_ENABLE_DEFAULT == "true";
        let mut rsm_props: BTreeMap<String, String> = BTreeMap::new();
        let mut rlmm_props: Vec<(String, String)> = Vec::new();
        let mut http_listener = parse_http_listener(HTTP_LISTENER_DEFAULT)?;
        for (key, value) in props {
            if key == RSM_PREFIX_KEY || key == RLMM_PREFIX_KEY {
                continue;
            }
            if let Some(k) = key.strip_prefix(rsm_prefix.as_str()) {
                rsm_props.insert(k.to_string(), value.clone());
            } else if let Some(k) = key.strip_prefix(rlmm_prefix.as_str()) {
                rlmm_props.push((format!("{RLMM_CONFIG_PREFIX}{k}"), value.clone()));
            } else if key == HTTP_LISTENER_KEY {
                http_listener = parse_http_listener(value)?;
            } else if !rlm.set(key, value)? {
                return Err(bad(
                    key,
                    value,
                    "unknown tiered-storage property (see strata --help and the README)",
                ));
            }
        }
        rlm.validate()?;
        rsm_props
            .entry("storage.filesystem.root".to_string())
            .or_insert_with(|| first_dir.join("remote").display().to_string());
        let rsm = RsmConfig::from_props(rsm_props.iter())?;
        // Aiven's `rsm.config.upload.rate.limit.bytes.per.second` caps the copy rate like Kafka's copy quota.
        if let Some(limit) = rsm.upload_rate_limit {
            rlm.copy_max_bytes_per_second = rlm.copy_max_bytes_per_second.min(limit);
        }
        let rlmm = TopicBasedRemoteLogMetadataManagerConfig::from_properties(
            rlmm_props.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )?;
        Ok(Self {
            rlm,
            rsm,
            rlmm,
            http_listener,
            snapshot_dir: first_dir.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// `strata --help` prints TIERING_KEYS: every listed key is accepted, and a literal default set explicitly
    /// gives the same config as leaving the key out.
    #[test]
    fn help_lists_accepted_keys_with_their_real_defaults() {
        let dirs = [PathBuf::from("/d")];
        let base = format!(
            "{:?}",
            TieringConfig::from_properties(&BTreeMap::new(), &dirs).unwrap()
        );
        for (key, default, _) in TIERING_KEYS {
            let literal = !(default.starts_with('(') || default.starts_with('<'));
            let value = if literal { *default } else { "x" };
            let p = props(&[(key, value)]);
            if key.starts_with("rsm.config.storage.s3.")
                || key.starts_with("rsm.config.storage.aws.")
                || key.starts_with("rsm.config.storage.gcs.")
                || key.starts_with("rsm.config.storage.azure.")
            {
                continue; // only valid together with their backend and a bucket; covered by the RSM tests
            }
            if *key == "rsm.config.encryption.key.file" {
                continue; // needs an existing key file; covered by the RSM tests
            }
            if matches!(
                *key,
                "rsm.config.storage.backend.class"
                    | "rsm.config.upload.rate.limit.bytes.per.second"
                    | "rsm.config.custom.metadata.fields.include"
                    | "rsm.config.fetch.chunk.cache.class"
            ) {
                continue; // no default and "x" is not a valid value; covered by the RSM config tests
            }

            let c = TieringConfig::from_properties(&p, &dirs)
                .unwrap_or_else(|e| panic!("{key}={value} refused: {e}"));
            if literal {
                assert_eq!(
                    format!("{c:?}"),
                    base,
                    "{key}: listed default {default} is not the default"
                );
            }
        }
    }

    #[test]
    fn defaults_tier_to_the_filesystem_under_the_first_log_dir() {
        let c = TieringConfig::from_properties(&BTreeMap::new(), &[PathBuf::from("./strata-data")])
            .unwrap();
        assert!(c.rlm.system_enable);
        assert_eq!(c.rsm.backend, strata_tiering::BackendKind::Filesystem);
        assert_eq!(
            c.rsm.filesystem_root,
            PathBuf::from("./strata-data").join("remote")
        );
        assert_eq!(c.http_listener, Some("127.0.0.1:9464".parse().unwrap()));
    }

    /// `http.listener=` (empty) turns the console, API and `/metrics` off.
    #[test]
    fn an_empty_http_listener_turns_the_endpoint_off() {
        let c = TieringConfig::from_properties(
            &props(&[("http.listener", "")]),
            &[PathBuf::from("/d")],
        )
        .unwrap();
        assert_eq!(c.http_listener, None);
    }

    #[test]
    fn split_leaves_broker_keys_and_takes_tiering_keys() {
        let all = props(&[
            ("log.dirs", "/d"),
            ("remote.log.manager.task.interval.ms", "100"),
            ("rsm.config.storage.backend", "memory"),
            ("rlmm.config.remote.log.metadata.topic.num.partitions", "3"),
            ("http.listener", "127.0.0.1:0"),
            ("log.local.retention.bytes", "10"),
        ]);
        let (broker, tiering) = split_properties(&all);
        assert_eq!(
            broker.keys().collect::<Vec<_>>(),
            ["log.dirs", "log.local.retention.bytes"]
        );
        assert_eq!(tiering.len(), 4);
        let c = TieringConfig::from_properties(&tiering, &[PathBuf::from("/d")]).unwrap();
        assert_eq!(c.rlm.task_interval_ms, 100);
        assert_eq!(c.rsm.backend, strata_tiering::BackendKind::Memory);
        assert_eq!(c.rlmm.num_partitions, 3);
        assert_eq!(c.http_listener, Some("127.0.0.1:0".parse().unwrap()));
    }

    #[test]
    fn custom_prefixes_are_honoured() {
        let all = props(&[
            (RSM_PREFIX_KEY, "rsm.x."),
            ("rsm.x.storage.backend", "memory"),
            (RLMM_PREFIX_KEY, "meta."),
            ("meta.remote.log.metadata.topic.num.partitions", "2"),
        ]);
        let (broker, tiering) = split_properties(&all);
        assert!(broker.is_empty(), "{broker:?}");
        let c = TieringConfig::from_properties(&tiering, &[PathBuf::from("/d")]).unwrap();
        assert_eq!(c.rsm.backend, strata_tiering::BackendKind::Memory);
        assert_eq!(c.rlmm.num_partitions, 2);
    }

    #[test]
    fn bad_values_and_unknown_keys_name_the_key() {
        let dirs = [PathBuf::from("/d")];
        for (k, v) in [
            ("remote.log.no.such.key", "1"),
            ("remote.log.storage.system.enable", "maybe"),
            ("rsm.config.storage.backend", "tape"),
            ("rlmm.config.remote.log.metadata.topic.num.partitions", "0"),
            ("http.listener", "nowhere"),
        ] {
            let e = TieringConfig::from_properties(&props(&[(k, v)]), &dirs)
                .expect_err("must be rejected");
            let msg = e.to_string();
            assert!(
                msg.contains(k) || msg.contains(v),
                "{k}={v}: message {msg:?} names neither"
            );
        }
    }
}
