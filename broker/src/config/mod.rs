//! The broker's one config struct, read from Kafka `server.properties` names.
//!
//! [`BROKER_DEF`] declares every key: the ones strata uses ([`keys::BROKER_KEYS`]) and every other Apache Kafka
//! 4.x broker key ([`kafka_keys::KAFKA_ONLY_KEYS`], accepted with no effect on a single node). Parsing, defaults,
//! validation and `strata --help` come from that table. An unknown key is a warning naming the closest known key
//! (as Kafka, start-up goes on), except near a strata-only key, where a typo stops start-up; a bad value for a key
//! strata uses stops start-up naming key and value.

pub mod dynamic_keys;
mod env;
mod kafka_keys;
pub mod keys;
pub mod listeners;
mod parse;
pub mod reference;
pub mod tiering_keys;
pub mod topic;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;

use strata_storage::config_def::{ConfigDef, ConfigKey, Values};
use strata_storage::{CleanerConfig, LogConfig};

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
    /// Kafka: `producer.id.expiration.ms`. Default: 1 day.
    pub producer_id_expiration_ms: i64,
    /// The transaction coordinator's keys (`transaction.*`).
    pub transaction: TransactionConfig,
    /// Kafka: `offsets.topic.num.partitions`. Default: 1 (Kafka: 50).
    pub offsets_topic_num_partitions: i32,
    /// Kafka: `offsets.topic.segment.bytes`. Default: 100 MiB. `segment.bytes` of `__consumer_offsets` at its
    /// creation.
    pub offsets_topic_segment_bytes: i32,
    /// Kafka: `group.initial.rebalance.delay.ms`. Default: 3000, as Kafka.
    pub group_initial_rebalance_delay_ms: u64,
    /// Kafka: `group.min.session.timeout.ms`. Default: 6000.
    pub group_min_session_timeout_ms: i32,
    /// Kafka: `group.max.session.timeout.ms`. Default: 1800000.
    pub group_max_session_timeout_ms: i32,
    /// Kafka: `offsets.retention.minutes`, in ms. Default: 7 days.
    pub offsets_retention_ms: i64,
    /// Kafka: `offsets.retention.check.interval.ms`. Default: 600000.
    pub offsets_retention_check_interval_ms: u64,
    /// Kafka: `group.max.size`. Default: i32::MAX.
    pub group_max_size: usize,
    /// Kafka: `group.coordinator.rebalance.protocols`. Default: classic, consumer.
    pub group_rebalance_protocols: Vec<String>,
    /// Kafka: `group.consumer.session.timeout.ms`. Default: 45000.
    pub group_consumer_session_timeout_ms: i32,
    /// Kafka: `group.consumer.heartbeat.interval.ms`. Default: 5000.
    pub group_consumer_heartbeat_interval_ms: i32,
    /// Kafka: `group.consumer.min.session.timeout.ms` / `.max.session.timeout.ms`, the bounds of a group's
    /// `consumer.session.timeout.ms`. Default: 45000, 60000.
    pub group_consumer_session_bounds_ms: (i32, i32),
    /// Kafka: `group.consumer.min.heartbeat.interval.ms` / `.max.heartbeat.interval.ms`, the bounds of a group's
    /// `consumer.heartbeat.interval.ms`. Default: 5000, 15000.
    pub group_consumer_heartbeat_bounds_ms: (i32, i32),
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

impl BrokerConfig {
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
        for (key, closest) in &self.unknown {
            match closest {
                Some(c) => {
                    tracing::warn!("unknown configuration {key} ignored (did you mean {c}?)")
                }
                None => tracing::warn!("unknown configuration {key} ignored"),
            }
        }
    }
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
    /// Kafka: `transactional.id.expiration.ms`. Default: 7 days.
    pub id_expiration_ms: i64,
}

#[cfg(test)]
mod tests;
