//! The broker's one config struct, read from Kafka `server.properties` names.
//!
//! [`BROKER_DEF`] declares every key: the ones strata uses ([`keys::BROKER_KEYS`]) and every other Apache Kafka
//! 4.x broker key ([`kafka_keys::KAFKA_ONLY_KEYS`], accepted with no effect on a single node). Parsing, defaults,
//! validation and `strata --help` come from that table. An unknown key is a warning naming the closest known key
//! (as Kafka, start-up goes on), except near a strata-only key, where a typo stops start-up; a bad value for a key
//! strata uses stops start-up naming key and value.

mod env;
mod kafka_keys;
mod keys;
pub mod listeners;
pub mod topic;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;

use strata_storage::config_def::{ConfigDef, ConfigError, ConfigKey, Source, Values};
use strata_storage::{CleanerConfig, LogConfig, TimestampType};

use crate::error::{Error, Result};

pub use env::{cluster_id_from_env, properties_from_env, property_name};
pub use kafka_keys::KAFKA_ONLY_KEYS;
pub use keys::BROKER_KEYS;

/// The broker's table: the keys strata uses, then Kafka's others (no effect).
pub const BROKER_DEF: ConfigDef = ConfigDef::new("broker", BROKER_KEYS).with(&[KAFKA_ONLY_KEYS]);

/// Prefix families Kafka passes to plugins (per-listener TLS/SASL, config providers, metrics reporters) or that
/// Kafka 3.x files carry (ZooKeeper): accepted with no effect.
pub const NO_EFFECT_PREFIXES: &[&str] = &[
    "listener.name.",
    "config.providers.",
    "metrics.context.",
    "metrics.jmx.",
    "zookeeper.",
];

/// The keys strata uses, as `--help` lists them (the no-effect ones are summed up in one line).
pub const KEYS: &[ConfigKey] = BROKER_KEYS;

/// The `--help` text of the broker's keys, from the table.
pub fn help() -> String {
    let mut s = strata_storage::config_def::render::help(&ConfigDef::new("broker", BROKER_KEYS));
    let synonyms: Vec<String> = BROKER_KEYS
        .iter()
        .flat_map(|k| {
            k.synonyms.iter().map(move |syn| match syn.scale {
                1 => format!("{} = {}", syn.name, k.name),
                n => format!("{} = {} / {n}", syn.name, k.name),
            })
        })
        .collect();
    s.push_str(&format!(
        "  synonyms (the key's own name wins): {}\n",
        synonyms.join(", ")
    ));
    s.push_str(&format!(
        "  ... and {} more Apache Kafka 4.x broker keys (process.roles, controller.*, *.replication.factor, \
         num.*.threads, ssl.*, sasl.*, ...) plus the prefixes {}: accepted with no effect on a single node, listed \
         at start-up when set.\n",
        KAFKA_ONLY_KEYS.len(),
        NO_EFFECT_PREFIXES.join(", ")
    ));
    s
}

/// Broker configuration. Each field names its Kafka property and default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BrokerConfig {
    /// Kafka: `listeners`, its first client listener. Default: `PLAINTEXT://127.0.0.1:9092`.
    pub listener: SocketAddr,
    /// Kafka: `advertised.listeners`, the entry of the first client listener. Default: the bound address.
    pub advertised: Option<(String, u16)>,
    /// The name of the first client listener. Default: `PLAINTEXT`.
    pub listener_name: String,
    /// The security protocol of the first client listener. Default: `PLAINTEXT`.
    pub listener_protocol: String,
    /// The other client listeners of `listeners` (each served, advertised per name).
    pub more_listeners: Vec<listeners::Served>,
    /// Kafka: `node.id`. Default: 1.
    pub node_id: i32,
    /// The cluster id written to each new log dir's `meta.properties` (Kafka's `kafka-storage format -t`; the
    /// apache/kafka image takes it from the `CLUSTER_ID` environment variable, and so does the `strata` binary,
    /// see [`cluster_id_from_env`]). A dir already formatted with another id stops start-up. Default: none (a
    /// new random id on first start).
    pub cluster_id: Option<String>,
    /// Kafka: `log.dirs`. Default: `./strata-data`.
    pub log_dirs: Vec<PathBuf>,
    /// Kafka: `num.partitions`. Default: 1.
    pub num_partitions: i32,
    /// Kafka: `auto.create.topics.enable`. Default: true.
    pub auto_create_topics_enable: bool,
    /// Defaults of every topic's log config (`log.segment.bytes`, `log.roll.ms`, `log.retention.*`, ...).
    pub log: LogConfig,
    /// Kafka: `log.retention.check.interval.ms`. Default: 300000.
    pub log_retention_check_interval_ms: u64,
    /// Kafka: `log.flush.offset.checkpoint.interval.ms`. Default: 60000.
    pub log_flush_checkpoint_interval_ms: u64,
    /// Kafka: `socket.request.max.bytes`. Default: 100 MiB.
    pub socket_request_max_bytes: usize,
    /// Kafka: `max.connections`. Default: 1000.
    pub max_connections: usize,
    /// Kafka: `max.connections.per.ip`. Default: i32::MAX.
    pub max_connections_per_ip: usize,
    /// Kafka: `max.connections.per.ip.overrides` (`ip:count,...`). Default: none.
    pub max_connections_per_ip_overrides: BTreeMap<std::net::IpAddr, usize>,
    /// Kafka: `connections.max.idle.ms`. Default: 600000.
    pub connections_max_idle_ms: u64,
    /// Strata: `socket.request.read.timeout.ms`, how long one request frame may take to arrive once its first
    /// byte came. Default: 30000.
    pub socket_request_read_timeout_ms: u64,
    /// Kafka: `queued.max.request.bytes` (-1 = unbounded). Default: 200 MiB (at least `socket.request.max.bytes`).
    pub queued_max_request_bytes: i64,
    /// Strata: `max.partitions.per.request` (Kafka's fixed `MAX_PARTITIONS_PER_BATCH`). Default: 10000.
    pub max_partitions_per_request: i64,
    /// KIP-578: `max.broker.partitions`. Default: 20000.
    pub max_broker_partitions: i64,
    /// strata: `log.max.open.files`. Default: None = half the soft `RLIMIT_NOFILE` (at most half of
    /// `vm.max_map_count`). Segment descriptors and index maps the logs keep open at once.
    pub log_max_open_files: Option<usize>,
    /// `num.recovery.threads.per.data.dir`: threads per log dir loading logs at start and closing them at stop.
    pub recovery_threads_per_data_dir: usize,
    /// The transaction coordinator's keys (`transaction.*`).
    pub transaction: TransactionConfig,
    /// Kafka: `offsets.topic.num.partitions`. Default: 1 (Kafka: 50).
    pub offsets_topic_num_partitions: i32,
    /// Kafka: `offsets.topic.segment.bytes`. Default: 100 MiB. `segment.bytes` of `__consumer_offsets` at its
    /// creation.
    pub offsets_topic_segment_bytes: i32,
    /// Kafka: `group.initial.rebalance.delay.ms`. Default: 0 (Kafka: 3000).
    pub group_initial_rebalance_delay_ms: u64,
    /// Kafka: `group.min.session.timeout.ms`. Default: 6000.
    pub group_min_session_timeout_ms: i32,
    /// Kafka: `group.max.session.timeout.ms`. Default: 1800000.
    pub group_max_session_timeout_ms: i32,
    /// Kafka: `group.max.size`. Default: i32::MAX.
    pub group_max_size: usize,
    /// Kafka: `group.coordinator.rebalance.protocols`. Default: classic, consumer.
    pub group_rebalance_protocols: Vec<String>,
    /// Kafka: `group.consumer.session.timeout.ms`. Default: 45000.
    pub group_consumer_session_timeout_ms: i32,
    /// Kafka: `group.consumer.heartbeat.interval.ms`. Default: 5000.
    pub group_consumer_heartbeat_interval_ms: i32,
    /// Kafka: `group.consumer.assignors` (short names). Default: uniform, range.
    pub group_consumer_assignors: Vec<String>,
    /// Kafka: `group.consumer.max.size`. Default: i32::MAX.
    pub group_consumer_max_size: usize,
    /// Kafka: `offset.metadata.max.bytes`. Default: 4096; at most 32767 (an i16-length string in
    /// `__consumer_offsets`).
    pub offset_metadata_max_bytes: usize,
    /// The properties given explicitly (properties file or `--override`); the rest are at their defaults.
    /// DescribeConfigs reports the former as STATIC_BROKER_CONFIG and the latter as DEFAULT_CONFIG.
    pub explicit: BTreeSet<String>,
    /// The known property names as given (a synonym such as `log.retention.hours` under its own name), for
    /// DescribeConfigs' synonym lists.
    pub given: BTreeSet<String>,
    /// Not a property: directories inside `log.dirs` owned by other components (the filesystem remote tier's
    /// root), which the log manager skips instead of warning about them.
    pub reserved_dirs: Vec<PathBuf>,
    /// Not a property of this struct: the tiered-storage properties given (`remote.log.*`, `rsm.config.*`, ...),
    /// kept so DescribeConfigs can report them next to the broker's own.
    pub tiering_props: BTreeMap<String, String>,
    /// Not a property: the TLS and SASL keys given (`ssl.*`, `sasl.*`, `listener.name.*`), read per listener by
    /// `crate::security` when the server starts (files are read then, and a bad one stops start-up).
    pub security_props: BTreeMap<String, String>,
    /// Not a property: keys given that have no effect on a single node (Kafka's, and the no-effect prefixes).
    pub ignored: Vec<String>,
    /// Not a property: unknown keys given (not under strata's namespaces), each with the closest known key.
    pub unknown: Vec<(String, Option<&'static str>)>,
    /// The log cleaner (Kafka's `log.cleaner.*` keys; the per-topic defaults are in [`BrokerConfig::log`]).
    pub cleaner: CleanerConfig,
    /// The parsed values of [`BROKER_DEF`] (sources, synonyms and defaults for DescribeConfigs).
    values: Values,
}

impl Default for BrokerConfig {
    /// Every key at its default (from [`BROKER_DEF`]).
    fn default() -> Self {
        Self::from_properties(&BTreeMap::new()).expect("the broker table's defaults are valid")
    }
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> Error {
    Error::Config {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn from_config_error(e: ConfigError) -> Error {
    match e {
        ConfigError::BadValue { key, value, reason } => Error::Config { key, value, reason },
        ConfigError::Unsupported { key, value, reason } => Error::Config {
            key,
            value,
            reason: format!("not supported: {reason}"),
        },
        ConfigError::Unknown { key, suggestion } => Error::Config {
            key,
            value: String::new(),
            reason: format!(
                "unknown configuration{}",
                suggestion
                    .map(|s| format!(" (did you mean {s}?)"))
                    .unwrap_or_default()
            ),
        },
        other => bad("(broker)", "", other.to_string()),
    }
}

/// strata-only keys owned by tiering (which checks its own `remote.*` and prefixed keys).
const STRATA_TIERING_KEYS: &[ConfigKey] = &[ConfigKey::new(
    "http.listener", // tiered::HTTP_LISTENER_KEY (tiering depends on config, not the reverse)
    strata_storage::config_def::Type::String,
    "127.0.0.1:9464", // tiered::HTTP_LISTENER_DEFAULT
)];

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
        v: Values,
        ignored: Vec<String>,
        unknown: Vec<(String, Option<&'static str>)>,
    ) -> Result<Self> {
        let mut served = listeners::choose(
            v.list("listeners"),
            v.list("advertised.listeners"),
            v.string("listener.security.protocol.map")
                .unwrap_or_default(),
            v.is_explicit("listener.security.protocol.map"),
            v.list("controller.listener.names"),
            v.string("inter.broker.listener.name"),
        )
        .map_err(|(key, reason)| {
            let value = v.get(key).to_text().unwrap_or_default();
            bad(key, &value, reason)
        })?;
        let long = |k: &str| v.long(k);
        let unsigned = |k: &str| v.long(k).max(0) as u64;
        let mut log = LogConfig::default();
        let l = &mut log;
        l.segment_bytes = unsigned("log.segment.bytes");
        l.segment_ms = long("log.roll.ms");
        l.index_interval_bytes = v.int("log.index.interval.bytes") as u32;
        l.segment_index_bytes = v.int("log.index.size.max.bytes") as u32;
        l.retention_ms = long("log.retention.ms");
        l.retention_bytes = long("log.retention.bytes");
        l.local_retention_ms = long("log.local.retention.ms");
        l.local_retention_bytes = long("log.local.retention.bytes");
        l.max_message_bytes = v.int("message.max.bytes") as u32;
        l.message_timestamp_type = match v.string("log.message.timestamp.type") {
            Some("LogAppendTime") => TimestampType::LogAppendTime,
            _ => TimestampType::CreateTime,
        };
        l.message_timestamp_before_max_ms = long("log.message.timestamp.before.max.ms");
        l.message_timestamp_after_max_ms = long("log.message.timestamp.after.max.ms");
        l.message_timestamp_difference_max_ms = long("log.message.timestamp.difference.max.ms");
        l.compression = v
            .string("compression.type")
            .and_then(strata_storage::compression_from_name)
            .unwrap_or(None);
        l.compression_gzip_level = v.int("compression.gzip.level");
        l.compression_lz4_level = v.int("compression.lz4.level");
        l.compression_zstd_level = v.int("compression.zstd.level");
        l.flush_messages = unsigned("log.flush.interval.messages");
        l.flush_ms = match v.get("log.flush.interval.ms") {
            strata_storage::config_def::Value::Null => u64::MAX,
            _ => unsigned("log.flush.interval.ms"),
        };
        l.remote_storage_enable = v.bool("log.remote.storage.enable");
        l.cleanup_policy = v
            .list("log.cleanup.policy")
            .join(",")
            .parse()
            .map_err(|_| {
                let given = v.list("log.cleanup.policy").join(",");
                bad(
                    "log.cleanup.policy",
                    &given,
                    "must be a list of delete and compact",
                )
            })?;
        l.min_insync_replicas = v.int("min.insync.replicas");
        l.delete_retention_ms = long("log.cleaner.delete.retention.ms");
        l.min_cleanable_dirty_ratio = v.double("log.cleaner.min.cleanable.ratio");
        l.min_compaction_lag_ms = long("log.cleaner.min.compaction.lag.ms");
        l.max_compaction_lag_ms = long("log.cleaner.max.compaction.lag.ms");
        let mut cleaner = CleanerConfig::default();
        cleaner.enable = v.bool("log.cleaner.enable");
        cleaner.threads = v.int("log.cleaner.threads").max(0) as usize;
        cleaner.dedupe_buffer_size = unsigned("log.cleaner.dedupe.buffer.size");
        cleaner.io_buffer_size = v.int("log.cleaner.io.buffer.size").max(0) as usize;
        cleaner.io_buffer_load_factor = v.double("log.cleaner.io.buffer.load.factor");
        cleaner.io_max_bytes_per_second = v.double("log.cleaner.io.max.bytes.per.second");
        cleaner.backoff_ms = unsigned("log.cleaner.backoff.ms");

        let socket_request_max_bytes = v.int("socket.request.max.bytes") as usize;
        let queued_max_request_bytes = match v.get("queued.max.request.bytes") {
            // The default follows a larger socket.request.max.bytes, so one largest frame can always be read.
            strata_storage::config_def::Value::Null => {
                (200 * 1024 * 1024i64).max(socket_request_max_bytes as i64)
            }
            _ => long("queued.max.request.bytes"),
        };
        let explicit: BTreeSet<String> = BROKER_DEF
            .keys()
            .filter(|k| v.is_explicit(k.name))
            .map(|k| k.name.to_string())
            .collect();
        let first = served.remove(0);
        let c = BrokerConfig {
            listener: first.bind,
            advertised: first.advertised,
            listener_name: first.name,
            listener_protocol: first.protocol,
            more_listeners: served,
            node_id: v.int("node.id"),
            cluster_id: None,
            log_dirs: v.list("log.dirs").iter().map(PathBuf::from).collect(),
            num_partitions: v.int("num.partitions"),
            auto_create_topics_enable: v.bool("auto.create.topics.enable"),
            log,
            log_retention_check_interval_ms: unsigned("log.retention.check.interval.ms"),
            log_flush_checkpoint_interval_ms: unsigned("log.flush.offset.checkpoint.interval.ms"),
            socket_request_max_bytes,
            max_connections: v.int("max.connections") as usize,
            max_connections_per_ip: v.int("max.connections.per.ip") as usize,
            max_connections_per_ip_overrides: listeners::parse_ip_overrides(
                v.string("max.connections.per.ip.overrides")
                    .unwrap_or_default(),
            )
            .map_err(|r| bad("max.connections.per.ip.overrides", "", r))?,
            connections_max_idle_ms: unsigned("connections.max.idle.ms"),
            socket_request_read_timeout_ms: unsigned("socket.request.read.timeout.ms"),
            queued_max_request_bytes,
            max_partitions_per_request: long("max.partitions.per.request"),
            max_broker_partitions: long("max.broker.partitions"),
            log_max_open_files: match v.get("log.max.open.files") {
                strata_storage::config_def::Value::Null => None,
                _ => Some(v.int("log.max.open.files") as usize),
            },
            recovery_threads_per_data_dir: v.int("num.recovery.threads.per.data.dir") as usize,
            transaction: TransactionConfig {
                state_partitions: v.int("transaction.state.log.num.partitions"),
                state_segment_bytes: v.int("transaction.state.log.segment.bytes"),
                max_timeout_ms: v.int("transaction.max.timeout.ms"),
                abort_interval_ms: v
                    .int("transaction.abort.timed.out.transaction.cleanup.interval.ms")
                    as u64,
                partition_verification: v.bool("transaction.partition.verification.enable"),
            },
            offsets_topic_num_partitions: v.int("offsets.topic.num.partitions"),
            offsets_topic_segment_bytes: v.int("offsets.topic.segment.bytes"),
            group_initial_rebalance_delay_ms: v.int("group.initial.rebalance.delay.ms") as u64,
            group_min_session_timeout_ms: v.int("group.min.session.timeout.ms"),
            group_max_session_timeout_ms: v.int("group.max.session.timeout.ms"),
            group_max_size: v.int("group.max.size") as usize,
            group_rebalance_protocols: v.list("group.coordinator.rebalance.protocols").to_vec(),
            group_consumer_session_timeout_ms: v.int("group.consumer.session.timeout.ms"),
            group_consumer_heartbeat_interval_ms: v.int("group.consumer.heartbeat.interval.ms"),
            group_consumer_max_size: v.int("group.consumer.max.size") as usize,
            group_consumer_assignors: v
                .list("group.consumer.assignors")
                .iter()
                .map(|a| {
                    // org.apache.kafka.coordinator.group.assignor.UniformAssignor -> uniform
                    let last = a.rsplit('.').next().unwrap_or(a);
                    last.strip_suffix("Assignor")
                        .unwrap_or(last)
                        .to_ascii_lowercase()
                })
                .collect(),
            offset_metadata_max_bytes: v.int("offset.metadata.max.bytes") as usize,
            cleaner,
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

    /// The parsed values of [`BROKER_DEF`]: per key its value, source (default or given) and synonyms.
    pub fn config_values(&self) -> &Values {
        &self.values
    }

    /// Logs what start-up should say about the configuration: one INFO line listing the keys given that have no
    /// effect, one WARN per unknown key (with the closest known one).
    pub fn log_startup_notes(&self) {
        if !self.ignored.is_empty() {
            tracing::info!(
                "configuration with no effect on a single-node strata (accepted, ignored): {}",
                self.ignored.join(", ")
            );
        }
        // A broker configured for ACLs expects them enforced: say loudly that they are not.
        if let Some(class) = self
            .values
            .string("authorizer.class.name")
            .filter(|c| !c.trim().is_empty())
        {
            tracing::warn!(
                "authorizer.class.name={class} has no effect: strata has no authorizer, ACLs are not enforced and \
                 every client may do everything"
            );
        }
        for (key, closest) in &self.unknown {
            match closest {
                Some(c) => {
                    tracing::warn!("unknown configuration {key} ignored (did you mean {c}?)")
                }
                None => tracing::warn!("unknown configuration {key} ignored"),
            }
        }
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

impl BrokerConfig {
    /// Whether `key` was given explicitly rather than left at its default.
    pub fn is_explicit(&self, key: &str) -> bool {
        self.explicit.contains(key)
    }

    /// Whether the property was given under exactly this name (a synonym counts only under its own name).
    pub fn was_given(&self, name: &str) -> bool {
        self.given.contains(name)
    }

    /// The client listeners to serve, the first being [`listener`](Self::listener).
    pub fn client_listeners(&self) -> Vec<listeners::Served> {
        let first = listeners::Served {
            bind: self.listener,
            advertised: self.advertised.clone(),
            name: self.listener_name.clone(),
            protocol: self.listener_protocol.clone(),
        };
        std::iter::once(first)
            .chain(self.more_listeners.iter().cloned())
            .collect()
    }

    /// Every accepted property with its current value (for DescribeConfigs on the broker resource).
    pub fn values(&self) -> Vec<(&'static str, String)> {
        let all = self.client_listeners();
        let listeners: Vec<String> = all
            .iter()
            .map(|l| format!("{}://{}", l.name, l.bind))
            .collect();
        let advertised: Vec<String> = all
            .iter()
            .map(|l| match &l.advertised {
                Some((h, p)) => format!("{}://{h}:{p}", l.name),
                None => format!("{}://{}", l.name, l.bind),
            })
            .collect();
        let dirs: Vec<String> = self
            .log_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let never = |v: u64| v.min(i64::MAX as u64).to_string();
        vec![
            ("listeners", listeners.join(",")),
            ("advertised.listeners", advertised.join(",")),
            ("node.id", self.node_id.to_string()),
            ("log.dirs", dirs.join(",")),
            ("num.partitions", self.num_partitions.to_string()),
            (
                "auto.create.topics.enable",
                self.auto_create_topics_enable.to_string(),
            ),
            ("default.replication.factor", "1".into()),
            ("log.segment.bytes", self.log.segment_bytes.to_string()),
            ("log.roll.ms", self.log.segment_ms.to_string()),
            ("log.retention.ms", self.log.retention_ms.to_string()),
            ("log.retention.bytes", self.log.retention_bytes.to_string()),
            (
                "log.local.retention.ms",
                self.log.local_retention_ms.to_string(),
            ),
            (
                "log.local.retention.bytes",
                self.log.local_retention_bytes.to_string(),
            ),
            (
                "log.remote.storage.enable",
                self.log.remote_storage_enable.to_string(),
            ),
            (
                "log.index.interval.bytes",
                self.log.index_interval_bytes.to_string(),
            ),
            (
                "log.index.size.max.bytes",
                self.log.segment_index_bytes.to_string(),
            ),
            (
                "log.retention.check.interval.ms",
                self.log_retention_check_interval_ms.to_string(),
            ),
            ("log.flush.interval.ms", never(self.log.flush_ms)),
            (
                "min.insync.replicas",
                self.log.min_insync_replicas.to_string(),
            ),
            (
                "log.flush.interval.messages",
                never(self.log.flush_messages),
            ),
            (
                "log.flush.offset.checkpoint.interval.ms",
                self.log_flush_checkpoint_interval_ms.to_string(),
            ),
            (
                "log.message.timestamp.type",
                match self.log.message_timestamp_type {
                    TimestampType::LogAppendTime => "LogAppendTime".into(),
                    _ => "CreateTime".into(),
                },
            ),
            (
                "log.message.timestamp.before.max.ms",
                self.log.message_timestamp_before_max_ms.to_string(),
            ),
            (
                "log.message.timestamp.after.max.ms",
                self.log.message_timestamp_after_max_ms.to_string(),
            ),
            (
                "log.message.timestamp.difference.max.ms",
                self.log.message_timestamp_difference_max_ms.to_string(),
            ),
            ("message.max.bytes", self.log.max_message_bytes.to_string()),
            (
                "compression.type",
                strata_storage::compression_name(self.log.compression).into(),
            ),
            (
                "compression.gzip.level",
                self.log.compression_gzip_level.to_string(),
            ),
            (
                "compression.lz4.level",
                self.log.compression_lz4_level.to_string(),
            ),
            (
                "compression.zstd.level",
                self.log.compression_zstd_level.to_string(),
            ),
            (
                "socket.request.max.bytes",
                self.socket_request_max_bytes.to_string(),
            ),
            ("max.connections", self.max_connections.to_string()),
            (
                "max.connections.per.ip",
                self.max_connections_per_ip.to_string(),
            ),
            (
                "max.connections.per.ip.overrides",
                self.max_connections_per_ip_overrides
                    .iter()
                    .map(|(ip, n)| format!("{ip}:{n}"))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            (
                "connections.max.idle.ms",
                self.connections_max_idle_ms.to_string(),
            ),
            (
                "socket.request.read.timeout.ms",
                self.socket_request_read_timeout_ms.to_string(),
            ),
            (
                "queued.max.request.bytes",
                self.queued_max_request_bytes.to_string(),
            ),
            (
                "max.partitions.per.request",
                self.max_partitions_per_request.to_string(),
            ),
            (
                "max.broker.partitions",
                self.max_broker_partitions.to_string(),
            ),
            (
                "log.max.open.files",
                self.log_max_open_files
                    .unwrap_or_else(strata_storage::default_max_open_files)
                    .to_string(),
            ),
            (
                "transaction.state.log.num.partitions",
                self.transaction.state_partitions.to_string(),
            ),
            (
                "transaction.state.log.segment.bytes",
                self.transaction.state_segment_bytes.to_string(),
            ),
            (
                "transaction.max.timeout.ms",
                self.transaction.max_timeout_ms.to_string(),
            ),
            (
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                self.transaction.abort_interval_ms.to_string(),
            ),
            (
                "transaction.partition.verification.enable",
                self.transaction.partition_verification.to_string(),
            ),
            (
                "offsets.topic.num.partitions",
                self.offsets_topic_num_partitions.to_string(),
            ),
            (
                "offsets.topic.segment.bytes",
                self.offsets_topic_segment_bytes.to_string(),
            ),
            (
                "group.initial.rebalance.delay.ms",
                self.group_initial_rebalance_delay_ms.to_string(),
            ),
            (
                "group.min.session.timeout.ms",
                self.group_min_session_timeout_ms.to_string(),
            ),
            (
                "group.max.session.timeout.ms",
                self.group_max_session_timeout_ms.to_string(),
            ),
            ("group.max.size", self.group_max_size.to_string()),
            (
                "group.coordinator.rebalance.protocols",
                self.group_rebalance_protocols.join(","),
            ),
            (
                "group.consumer.session.timeout.ms",
                self.group_consumer_session_timeout_ms.to_string(),
            ),
            (
                "group.consumer.heartbeat.interval.ms",
                self.group_consumer_heartbeat_interval_ms.to_string(),
            ),
            (
                "group.consumer.assignors",
                self.group_consumer_assignors.join(","),
            ),
            (
                "group.consumer.max.size",
                self.group_consumer_max_size.to_string(),
            ),
            (
                "offset.metadata.max.bytes",
                self.offset_metadata_max_bytes.to_string(),
            ),
        ]
    }
}

/// The transaction coordinator's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionConfig {
    /// Kafka: `transaction.state.log.num.partitions`. Default: 1 (Kafka: 50).
    pub state_partitions: i32,
    /// Kafka: `transaction.state.log.segment.bytes`. Default: 100 MiB.
    pub state_segment_bytes: i32,
    /// Kafka: `transaction.max.timeout.ms`. Default: 900000.
    pub max_timeout_ms: i32,
    /// Kafka: `transaction.abort.timed.out.transaction.cleanup.interval.ms`. Default: 10000.
    pub abort_interval_ms: u64,
    /// Kafka: `transaction.partition.verification.enable`. Default: true.
    pub partition_verification: bool,
}

/// Parses `CreateTime` / `LogAppendTime`.
pub fn parse_timestamp_type(key: &str, value: &str) -> Result<TimestampType> {
    match value {
        "CreateTime" => Ok(TimestampType::CreateTime),
        "LogAppendTime" => Ok(TimestampType::LogAppendTime),
        _ => Err(bad(key, value, "expected CreateTime or LogAppendTime")),
    }
}

#[cfg(test)]
mod tests;
