//! [`BrokerConfig`] from Kafka properties: the table parses and validates each key ([`BROKER_DEF`]), then every
//! field is read through its typed handle ([`keys`]); the topic defaults ([`BrokerConfig::log`]) come from the
//! topic table's broker properties (`log.retention.ms` for `retention.ms`, ...), the path dynamic defaults take
//! too; [`BrokerConfig::validate`] checks the rules between keys.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use strata_storage::config_def::{
    ConfigDef, ConfigError, ConfigKey, Effect, Source, Value, Values,
};
use strata_storage::{CleanerConfig, LogConfig};

use super::keys as k;
use super::{
    listeners, BrokerConfig, TransactionConfig, BROKER_DEF, BROKER_KEYS, NO_EFFECT_PREFIXES,
};
use crate::error::{Error, Result};

pub(super) fn bad(key: &str, value: &str, reason: impl Into<String>) -> Error {
    Error::config(key.to_string(), value.to_string(), reason.into())
}

fn from_config_error(e: ConfigError) -> Error {
    match e {
        ConfigError::BadValue { key, value, reason } => Error::config(key, value, reason),
        ConfigError::Unsupported { key, value, reason } => {
            Error::config(key, value, format!("not supported: {reason}"))
        }
        ConfigError::Unknown { key, suggestion } => Error::config(
            key,
            String::new(),
            format!(
                "unknown configuration{}",
                suggestion
                    .map(|s| format!(" (did you mean {s}?)"))
                    .unwrap_or_default()
            ),
        ),
        other => bad("(broker)", "", other.to_string()),
    }
}

/// strata-only keys owned by tiering (which checks its own `remote.*` and prefixed keys).
const STRATA_TIERING_KEYS: &[ConfigKey] = &[ConfigKey::new(
    super::tiering_keys::HTTP_LISTENER_KEY,
    strata_storage::config_def::Type::String,
    "the console, JSON API and /metrics listener",
)
.default(super::tiering_keys::HTTP_LISTENER_DEFAULT)];

/// KIP-368's session lifetime, read per listener and mechanism by crate::security.
const REAUTH_KEY: &str = "connections.max.reauth.ms";

/// Whether `key` is a listener-prefixed TLS/SASL key strata reads (`listener.name.<l>.ssl.keystore.location`,
/// `listener.name.<l>.<mechanism>.sasl.jaas.config`, ...), which has an effect.
fn is_listener_security_key(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("listener.name.") else {
        return false;
    };
    let Some((_, rest)) = rest.split_once('.') else {
        return false;
    };
    let rest = match rest.split_once('.') {
        Some((_, r)) if r == "sasl.jaas.config" || r == REAUTH_KEY => r,
        _ => rest,
    };
    BROKER_KEYS.iter().any(|k| {
        k.name == rest
            && (k.name.starts_with("ssl.") || k.name.starts_with("sasl.") || k.name == REAUTH_KEY)
    })
}

/// Whether an unknown `key` is in strata's own namespaces, where a typo stops start-up: the RSM/RLMM prefixes
/// (mistyped), or closest to a strata-only key.
fn in_strata_namespace(key: &str, closest: Option<&'static str>) -> bool {
    key.starts_with("rsm.")
        || key.starts_with("rlmm.")
        || closest
            .and_then(|c| BROKER_DEF.key(c))
            .is_some_and(|k| k.strata_only)
        || ConfigDef::new("strata", STRATA_TIERING_KEYS)
            .closest(key)
            .is_some()
}

impl BrokerConfig {
    /// Builds a config from Kafka property pairs (a properties file, the environment and `--override`s, merged
    /// with the later winning).
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self> {
        let values = BROKER_DEF
            .parse(
                props
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str(), Source::File)),
            )
            .map_err(from_config_error)?;
        let mut ignored: Vec<String> = values.ignored().into_iter().map(String::from).collect();
        let mut unknown = Vec::new();
        for key in values.unknown() {
            if is_listener_security_key(key) {
                continue;
            }
            if NO_EFFECT_PREFIXES.iter().any(|p| key.starts_with(p)) {
                ignored.push(key.clone());
                continue;
            }
            let closest = BROKER_DEF.closest(key);
            if in_strata_namespace(key, closest) {
                let closest = closest.filter(|c| BROKER_DEF.key(c).is_some_and(|k| k.strata_only));
                return Err(bad(
                    key,
                    &props[key],
                    format!(
                        "unknown strata configuration{}",
                        closest
                            .map(|c| format!(" (did you mean {c}?)"))
                            .unwrap_or_default()
                    ),
                ));
            }
            unknown.push((key.clone(), closest));
        }
        let mut c = Self::from_values(values, ignored, unknown)?;
        c.security_props = props
            .iter()
            .filter(|(k, _)| {
                k.starts_with("ssl.") || k.starts_with("sasl.") || k.starts_with("listener.name.")
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        c.given = props
            .keys()
            .filter(|k| BROKER_DEF.key(k).is_some())
            .cloned()
            .collect();
        Ok(c)
    }

    fn from_values(
        mut v: Values,
        ignored: Vec<String>,
        unknown: Vec<(String, Option<&'static str>)>,
    ) -> Result<Self> {
        let mut served = served_listeners(&mut v)?;
        let socket_request_max_bytes = v.value(&k::SOCKET_REQUEST_MAX_BYTES) as usize;
        // The default follows a larger socket.request.max.bytes, so one largest frame can always be read.
        let queued_max_request_bytes = v
            .value(&k::QUEUED_MAX_REQUEST_BYTES)
            .unwrap_or_else(|| (200 * 1024 * 1024i64).max(socket_request_max_bytes as i64));
        v.resolve_default(
            &k::QUEUED_MAX_REQUEST_BYTES,
            Value::Long(queued_max_request_bytes),
        );
        let log_max_open_files = v.value(&k::LOG_MAX_OPEN_FILES).map(|n| n as usize);
        let open_files = log_max_open_files.unwrap_or_else(strata_storage::default_max_open_files);
        v.resolve_default(
            &k::LOG_MAX_OPEN_FILES,
            Value::Int(open_files.min(i32::MAX as usize) as i32),
        );
        let ms = |key: &strata_storage::config_def::Key<i64>| v.value(key).max(0) as u64;
        let explicit: BTreeSet<String> = BROKER_DEF
            .keys()
            .filter(|key| v.is_explicit(key.name))
            .map(|key| key.name.to_string())
            .collect();
        let first = served.remove(0);
        let c = BrokerConfig {
            listener: first.bind,
            advertised: first.advertised,
            listener_name: first.name,
            listener_protocol: first.protocol,
            more_listeners: served,
            node_id: v.value(&k::NODE_ID),
            cluster_id: None,
            log_dirs: v.value(&k::LOG_DIRS).iter().map(PathBuf::from).collect(),
            num_partitions: v.value(&k::NUM_PARTITIONS),
            auto_create_topics_enable: v.value(&k::AUTO_CREATE_TOPICS_ENABLE),
            log: log_defaults(&v),
            log_retention_check_interval_ms: ms(&k::LOG_RETENTION_CHECK_INTERVAL_MS),
            log_flush_checkpoint_interval_ms: v
                .value(&k::LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS)
                .max(0) as u64,
            socket_request_max_bytes,
            max_connections: v.value(&k::MAX_CONNECTIONS) as usize,
            max_connections_per_ip: v.value(&k::MAX_CONNECTIONS_PER_IP) as usize,
            max_connections_per_ip_overrides: listeners::parse_ip_overrides(
                &v.value(&k::MAX_CONNECTIONS_PER_IP_OVERRIDES),
            )
            .map_err(|r| bad(k::MAX_CONNECTIONS_PER_IP_OVERRIDES.name(), "", r))?,
            connections_max_idle_ms: ms(&k::CONNECTIONS_MAX_IDLE_MS),
            socket_request_read_timeout_ms: ms(&k::SOCKET_REQUEST_READ_TIMEOUT_MS),
            queued_max_request_bytes,
            max_partitions_per_request: v.value(&k::MAX_PARTITIONS_PER_REQUEST),
            max_broker_partitions: v.value(&k::MAX_BROKER_PARTITIONS),
            log_max_open_files,
            recovery_threads_per_data_dir: v.value(&k::NUM_RECOVERY_THREADS_PER_DATA_DIR) as usize,
            producer_id_expiration_ms: v.value(&k::PRODUCER_ID_EXPIRATION_MS).into(),
            transaction: transaction(&v),
            offsets_topic_num_partitions: v.value(&k::OFFSETS_TOPIC_NUM_PARTITIONS),
            offsets_topic_segment_bytes: v.value(&k::OFFSETS_TOPIC_SEGMENT_BYTES),
            group_initial_rebalance_delay_ms: v.value(&k::GROUP_INITIAL_REBALANCE_DELAY_MS) as u64,
            group_min_session_timeout_ms: v.value(&k::GROUP_MIN_SESSION_TIMEOUT_MS),
            group_max_session_timeout_ms: v.value(&k::GROUP_MAX_SESSION_TIMEOUT_MS),
            group_max_size: v.value(&k::GROUP_MAX_SIZE) as usize,
            offsets_retention_ms: v.value(&k::OFFSETS_RETENTION_MINUTES) as i64 * 60_000,
            offsets_retention_check_interval_ms: v.value(&k::OFFSETS_RETENTION_CHECK_INTERVAL_MS)
                as u64,
            group_rebalance_protocols: v.value(&k::GROUP_COORDINATOR_REBALANCE_PROTOCOLS),
            group_consumer_session_timeout_ms: v.value(&k::GROUP_CONSUMER_SESSION_TIMEOUT_MS),
            group_consumer_heartbeat_interval_ms: v.value(&k::GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS),
            group_consumer_session_bounds_ms: (
                v.value(&k::GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS),
                v.value(&k::GROUP_CONSUMER_MAX_SESSION_TIMEOUT_MS),
            ),
            group_consumer_heartbeat_bounds_ms: (
                v.value(&k::GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS),
                v.value(&k::GROUP_CONSUMER_MAX_HEARTBEAT_INTERVAL_MS),
            ),
            group_consumer_max_size: v.value(&k::GROUP_CONSUMER_MAX_SIZE) as usize,
            group_consumer_assignors: v
                .value(&k::GROUP_CONSUMER_ASSIGNORS)
                .iter()
                .map(|a| assignor_name(a))
                .collect(),
            offset_metadata_max_bytes: v.value(&k::OFFSET_METADATA_MAX_BYTES) as usize,
            cleaner: cleaner(&v),
            explicit,
            given: BTreeSet::new(),
            reserved_dirs: Vec::new(),
            tiering_props: BTreeMap::new(),
            security_props: BTreeMap::new(),
            ignored,
            unknown,
            values: v,
        };
        c.validate()?;
        Ok(c)
    }

    /// Checks the rules between keys (each key's own check is in its table entry); the error names the property
    /// and the bad value.
    pub fn validate(&self) -> Result<()> {
        if self.log_dirs.is_empty() {
            return Err(bad("log.dirs", "", "at least one directory is needed"));
        }
        let queued = self.queued_max_request_bytes;
        if queued != -1 && queued < self.socket_request_max_bytes as i64 {
            return Err(bad(
                "queued.max.request.bytes",
                &queued.to_string(),
                format!(
                    "must be -1 (unbounded) or at least socket.request.max.bytes ({}), or no request of that size \
                     could ever be read",
                    self.socket_request_max_bytes
                ),
            ));
        }
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms {
            return Err(bad(
                "group.min.session.timeout.ms",
                &self.group_min_session_timeout_ms.to_string(),
                "must not exceed group.max.session.timeout.ms",
            ));
        }
        self.cleaner.validate().map_err(|e| match e {
            strata_storage::Error::InvalidConfig { key, value, reason } => {
                bad(&key, &value, reason)
            }
            other => bad("log.cleaner.*", "", other.to_string()),
        })?;
        self.log.validate().map_err(|e| match e {
            // The storage names the topic-level key; the broker property is its broker synonym.
            strata_storage::Error::InvalidConfig { key, value, reason } => {
                let broker_key = crate::config::topic::TOPIC_KEYS
                    .iter()
                    .find(|k| k.name == key)
                    .and_then(|k| k.broker_synonym)
                    .map_or(key, str::to_string);
                bad(&broker_key, &value, reason)
            }
            other => bad("log.*", "", other.to_string()),
        })?;
        Ok(())
    }
}

/// The client listeners `listeners` and `advertised.listeners` describe, the first being the one the
/// [`BrokerConfig::listener`] fields hold; `advertised.listeners` left at its default resolves to them.
fn served_listeners(v: &mut Values) -> Result<Vec<listeners::Served>> {
    let served = listeners::choose(
        &v.value(&k::LISTENERS),
        &v.value(&k::ADVERTISED_LISTENERS),
        &v.value(&k::LISTENER_SECURITY_PROTOCOL_MAP),
        v.is_explicit(k::LISTENER_SECURITY_PROTOCOL_MAP.name()),
        &v.value(&k::CONTROLLER_LISTENER_NAMES),
        v.value(&k::INTER_BROKER_LISTENER_NAME).as_deref(),
    )
    .map_err(|(key, reason)| {
        let value = v.get(key).to_text().unwrap_or_default();
        bad(key, &value, reason)
    })?;
    let advertised = served
        .iter()
        .map(|l| match &l.advertised {
            Some((h, p)) => format!("{}://{h}:{p}", l.name),
            None => format!("{}://{}", l.name, l.bind),
        })
        .collect();
    v.resolve_default(&k::ADVERTISED_LISTENERS, Value::List(advertised));
    Ok(served)
}

/// The default config of every topic: each topic key from the first of its broker properties strata uses
/// (`retention.ms` ← `log.retention.ms`, which the table already filled from `log.retention.hours`), else the
/// topic table's default. Checked by [`BrokerConfig::validate`], which names the broker property.
fn log_defaults(v: &Values) -> LogConfig {
    strata_storage::server_default_log_config(|name| {
        let used = BROKER_KEYS
            .iter()
            .any(|key| key.name == name && key.effect == Effect::Used);
        match v.get(name) {
            _ if !used => None,
            Value::Null => None,
            value => Some(value.clone()),
        }
    })
}

/// The transaction coordinator's keys (`transaction.*`).
fn transaction(v: &Values) -> TransactionConfig {
    TransactionConfig {
        state_partitions: v.value(&k::TRANSACTION_STATE_LOG_NUM_PARTITIONS),
        state_segment_bytes: v.value(&k::TRANSACTION_STATE_LOG_SEGMENT_BYTES),
        max_timeout_ms: v.value(&k::TRANSACTION_MAX_TIMEOUT_MS),
        abort_interval_ms: v.value(&k::TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS)
            as u64,
        partition_verification: v.value(&k::TRANSACTION_PARTITION_VERIFICATION_ENABLE),
        id_expiration_ms: v.value(&k::TRANSACTIONAL_ID_EXPIRATION_MS).into(),
    }
}

/// The log cleaner's keys (`log.cleaner.*`).
fn cleaner(v: &Values) -> CleanerConfig {
    let mut c = CleanerConfig::default();
    c.enable = v.value(&k::LOG_CLEANER_ENABLE);
    c.threads = v.value(&k::LOG_CLEANER_THREADS).max(0) as usize;
    c.dedupe_buffer_size = v.value(&k::LOG_CLEANER_DEDUPE_BUFFER_SIZE).max(0) as u64;
    c.io_buffer_size = v.value(&k::LOG_CLEANER_IO_BUFFER_SIZE).max(0) as usize;
    c.io_buffer_load_factor = v.value(&k::LOG_CLEANER_IO_BUFFER_LOAD_FACTOR);
    c.io_max_bytes_per_second = v.value(&k::LOG_CLEANER_IO_MAX_BYTES_PER_SECOND);
    c.backoff_ms = v.value(&k::LOG_CLEANER_BACKOFF_MS).max(0) as u64;
    c
}

/// A KIP-848 assignor's short name: `org.apache.kafka.coordinator.group.assignor.UniformAssignor` -> `uniform`.
fn assignor_name(a: &str) -> String {
    let last = a.rsplit('.').next().unwrap_or(a);
    last.strip_suffix("Assignor")
        .unwrap_or(last)
        .to_ascii_lowercase()
}
