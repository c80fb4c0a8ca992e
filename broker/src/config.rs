//! The broker's one config struct, read from Kafka `server.properties` names.
//!
//! Every key the broker accepts is in [`KEYS`] (which `strata --help` prints) and does something; an unknown key
//! or a bad value stops start-up with an error naming the key and the value.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;

use strata_storage::{LogConfig, TimestampType};

use crate::error::{Error, Result};

/// One accepted property: its Kafka name, default (as text) and meaning.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// Kafka property name.
    pub name: &'static str,
    /// Default value, as it would be written in `server.properties`.
    pub default: &'static str,
    /// What it controls.
    pub doc: &'static str,
}

/// Every broker property the broker accepts.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc {
        name: "listeners",
        default: "PLAINTEXT://127.0.0.1:9092",
        doc: "address the broker listens on (one PLAINTEXT listener)",
    },
    KeyDoc {
        name: "advertised.listeners",
        default: "(the bound listener)",
        doc: "address given to clients in Metadata",
    },
    KeyDoc {
        name: "node.id",
        default: "1",
        doc: "this broker's id",
    },
    KeyDoc {
        name: "log.dirs",
        default: "./strata-data",
        doc: "comma-separated data directories (alias: log.dir)",
    },
    KeyDoc {
        name: "num.partitions",
        default: "1",
        doc: "partitions of an auto-created topic",
    },
    KeyDoc {
        name: "auto.create.topics.enable",
        default: "true",
        doc: "create unknown topics on Metadata requests",
    },
    KeyDoc {
        name: "default.replication.factor",
        default: "1",
        doc: "only 1 is possible on a single node",
    },
    KeyDoc {
        name: "log.segment.bytes",
        default: "1073741824",
        doc: "segment size before a roll",
    },
    KeyDoc {
        name: "log.roll.ms",
        default: "604800000",
        doc: "segment age before a roll",
    },
    KeyDoc {
        name: "log.retention.ms",
        default: "604800000",
        doc: "time retention (-1 = unlimited)",
    },
    KeyDoc {
        name: "log.retention.bytes",
        default: "-1",
        doc: "size retention per partition (-1 = unlimited)",
    },
    KeyDoc {
        name: "log.local.retention.ms",
        default: "-2",
        doc: "local time retention of tiered topics (-2 = log.retention.ms)",
    },
    KeyDoc {
        name: "log.local.retention.bytes",
        default: "-2",
        doc: "local size retention of tiered topics (-2 = log.retention.bytes)",
    },
    KeyDoc {
        name: "log.remote.storage.enable",
        default: "false",
        doc: "strata-only: default remote.storage.enable of new topics (lets auto-created topics tier; internal topics never do)",
    },
    KeyDoc {
        name: "log.index.interval.bytes",
        default: "4096",
        doc: "bytes between offset index entries",
    },
    KeyDoc {
        name: "log.index.size.max.bytes",
        default: "10485760",
        doc: "maximum size of an index file",
    },
    KeyDoc {
        name: "log.retention.check.interval.ms",
        default: "300000",
        doc: "period of the retention pass",
    },
    KeyDoc {
        name: "min.insync.replicas",
        default: "1",
        doc: "in-sync replicas an acks=all produce needs (a single broker has 1: above it, NOT_ENOUGH_REPLICAS)",
    },
    KeyDoc {
        name: "log.flush.interval.ms",
        default: "(never)",
        doc: "flush a log whose unflushed data is older than this",
    },
    KeyDoc {
        name: "log.flush.interval.messages",
        default: "(never)",
        doc: "flush a log after this many messages",
    },
    KeyDoc {
        name: "log.flush.offset.checkpoint.interval.ms",
        default: "60000",
        doc: "period of flush + recovery checkpoints",
    },
    KeyDoc {
        name: "log.message.timestamp.type",
        default: "CreateTime",
        doc: "CreateTime or LogAppendTime",
    },
    KeyDoc {
        name: "message.max.bytes",
        default: "1048588",
        doc: "largest record batch accepted",
    },
    KeyDoc {
        name: "socket.request.max.bytes",
        default: "104857600",
        doc: "largest request frame accepted",
    },
    KeyDoc {
        name: "max.connections",
        default: "1000",
        doc: "concurrent client connections; at the limit a new one closes the longest-idle (or is closed if all are busy)",
    },
    KeyDoc {
        name: "max.connections.per.ip",
        default: "2147483647",
        doc: "connections from one IP address; one more is closed at once",
    },
    KeyDoc {
        name: "max.connections.per.ip.overrides",
        default: "",
        doc: "per-IP limits, Kafka syntax ip:count,... (host names: localhost only)",
    },
    KeyDoc {
        name: "connections.max.idle.ms",
        default: "600000",
        doc: "close a connection with no request received nor response written for this long",
    },
    KeyDoc {
        name: "socket.request.read.timeout.ms",
        default: "30000",
        doc: "strata-only: close a connection whose request frame has not arrived in full this long after its first byte",
    },
    KeyDoc {
        name: "queued.max.request.bytes",
        default: "209715200",
        doc: "request-frame bytes being read across all connections, reserved as they arrive (-1 = unbounded; at least socket.request.max.bytes)",
    },
    KeyDoc {
        name: "max.partitions.per.request",
        default: "10000",
        doc: "strata-only: partitions one CreateTopics/CreatePartitions/auto-creating Metadata may create (Kafka's fixed batch cap); above, POLICY_VIOLATION",
    },
    KeyDoc {
        name: "max.broker.partitions",
        default: "20000",
        doc: "partitions of all topics together (KIP-578 name); a creation going above is refused with POLICY_VIOLATION",
    },
    KeyDoc {
        name: "log.max.open.files",
        default: "(half the soft open-files limit, at most half vm.max_map_count)",
        doc: "strata: segment files and index maps kept open at once; idle ones close past it (at least 16)",
    },
    KeyDoc {
        name: "offsets.topic.num.partitions",
        default: "1",
        doc: "partitions of __consumer_offsets (Kafka: 50)",
    },
    KeyDoc {
        name: "group.initial.rebalance.delay.ms",
        default: "0",
        doc: "wait for more members before the first rebalance (Kafka: 3000)",
    },
    KeyDoc {
        name: "group.min.session.timeout.ms",
        default: "6000",
        doc: "smallest session timeout a member may ask",
    },
    KeyDoc {
        name: "group.max.session.timeout.ms",
        default: "1800000",
        doc: "largest session timeout a member may ask",
    },
    KeyDoc {
        name: "group.max.size",
        default: "2147483647",
        doc: "members per consumer group",
    },
    KeyDoc {
        name: "offset.metadata.max.bytes",
        default: "4096",
        doc: "longest metadata string of a committed offset (at most 32767); longer commits get OFFSET_METADATA_TOO_LARGE",
    },
];

/// Broker configuration. Each field names its Kafka property and default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BrokerConfig {
    /// Kafka: `listeners`. Default: `PLAINTEXT://127.0.0.1:9092`.
    pub listener: SocketAddr,
    /// Kafka: `advertised.listeners`. Default: the bound listener address.
    pub advertised: Option<(String, u16)>,
    /// Kafka: `node.id`. Default: 1.
    pub node_id: i32,
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
    /// Kafka: `offsets.topic.num.partitions`. Default: 1 (Kafka: 50).
    pub offsets_topic_num_partitions: i32,
    /// Kafka: `group.initial.rebalance.delay.ms`. Default: 0 (Kafka: 3000).
    pub group_initial_rebalance_delay_ms: u64,
    /// Kafka: `group.min.session.timeout.ms`. Default: 6000.
    pub group_min_session_timeout_ms: i32,
    /// Kafka: `group.max.session.timeout.ms`. Default: 1800000.
    pub group_max_session_timeout_ms: i32,
    /// Kafka: `group.max.size`. Default: i32::MAX.
    pub group_max_size: usize,
    /// Kafka: `offset.metadata.max.bytes`. Default: 4096; at most 32767 (an i16-length string in
    /// `__consumer_offsets`).
    pub offset_metadata_max_bytes: usize,
    /// The properties given explicitly (properties file or `--override`); the rest are at their defaults.
    /// DescribeConfigs reports the former as STATIC_BROKER_CONFIG and the latter as DEFAULT_CONFIG.
    pub explicit: BTreeSet<String>,
    /// Not a property: directories inside `log.dirs` owned by other components (the filesystem remote tier's
    /// root), which the log manager skips instead of warning about them.
    pub reserved_dirs: Vec<PathBuf>,
    /// Not a property of this struct: the tiered-storage properties given (`remote.log.*`, `rsm.config.*`, ...),
    /// kept so DescribeConfigs can report them next to the broker's own.
    pub tiering_props: BTreeMap<String, String>,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        Self {
            listener: SocketAddr::from(([127, 0, 0, 1], 9092)),
            advertised: None,
            node_id: 1,
            log_dirs: vec![PathBuf::from("./strata-data")],
            num_partitions: 1,
            auto_create_topics_enable: true,
            log: LogConfig::default(),
            log_retention_check_interval_ms: 300_000,
            log_flush_checkpoint_interval_ms: 60_000,
            socket_request_max_bytes: 100 * 1024 * 1024,
            max_connections: 1000,
            max_connections_per_ip: i32::MAX as usize,
            max_connections_per_ip_overrides: BTreeMap::new(),
            connections_max_idle_ms: 600_000,
            socket_request_read_timeout_ms: 30_000,
            queued_max_request_bytes: 200 * 1024 * 1024,
            max_partitions_per_request: 10_000,
            max_broker_partitions: 20_000,
            log_max_open_files: None,
            offsets_topic_num_partitions: 1,
            group_initial_rebalance_delay_ms: 0,
            group_min_session_timeout_ms: 6000,
            group_max_session_timeout_ms: 1_800_000,
            group_max_size: i32::MAX as usize,
            offset_metadata_max_bytes: 4096,
            explicit: BTreeSet::new(),
            reserved_dirs: Vec::new(),
            tiering_props: BTreeMap::new(),
        }
    }
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> Error {
    Error::Config {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn parse<T: std::str::FromStr>(key: &str, value: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .map_err(|e| bad(key, value, e.to_string()))
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(key, value, "expected true or false")),
    }
}

/// Parses `PLAINTEXT://host:port` (first entry of a comma-separated list) into host and port.
fn parse_listener(key: &str, value: &str) -> Result<(String, u16)> {
    let first = value.split(',').next().unwrap_or("").trim();
    let rest = match first.split_once("://") {
        Some((proto, rest)) if proto.eq_ignore_ascii_case("PLAINTEXT") => rest,
        Some((proto, _)) => {
            return Err(bad(
                key,
                value,
                format!("only PLAINTEXT listeners are supported, not {proto}"),
            ))
        }
        None => first,
    };
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| bad(key, value, "expected host:port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| bad(key, value, "port is not a number in 0..=65535"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    Ok((host.to_string(), port))
}

impl BrokerConfig {
    /// Builds a config from Kafka property pairs (a properties file, then `--override`s, later wins).
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self> {
        let mut c = BrokerConfig::default();
        for (key, value) in props {
            let v = value.trim();
            match key.as_str() {
                "listeners" => {
                    let (host, port) = parse_listener(key, v)?;
                    let ip: std::net::IpAddr = if host == "localhost" {
                        std::net::IpAddr::from([127, 0, 0, 1])
                    } else {
                        host.parse()
                            .map_err(|_| bad(key, v, "host must be an IP address or localhost"))?
                    };
                    c.listener = SocketAddr::new(ip, port);
                }
                "advertised.listeners" => c.advertised = Some(parse_listener(key, v)?),
                "node.id" | "broker.id" => c.node_id = parse(key, v)?,
                "log.dirs" | "log.dir" => {
                    c.log_dirs = v
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(PathBuf::from)
                        .collect()
                }
                "num.partitions" => c.num_partitions = parse(key, v)?,
                "auto.create.topics.enable" => c.auto_create_topics_enable = parse_bool(key, v)?,
                "default.replication.factor" => {
                    let rf: i32 = parse(key, v)?;
                    if rf != 1 {
                        return Err(bad(key, v, "a single-node broker has replication factor 1"));
                    }
                }
                "log.segment.bytes" => c.log.segment_bytes = parse(key, v)?,
                "log.roll.ms" => c.log.segment_ms = parse(key, v)?,
                "log.roll.hours" => {
                    c.log.segment_ms = parse::<i64>(key, v)?.saturating_mul(3_600_000)
                }
                "log.retention.ms" => c.log.retention_ms = parse(key, v)?,
                "log.retention.minutes" => {
                    c.log.retention_ms = parse::<i64>(key, v)?.saturating_mul(60_000)
                }
                "log.retention.hours" => {
                    c.log.retention_ms = parse::<i64>(key, v)?.saturating_mul(3_600_000)
                }
                "log.retention.bytes" => c.log.retention_bytes = parse(key, v)?,
                "log.local.retention.ms" => c.log.local_retention_ms = parse(key, v)?,
                "log.local.retention.bytes" => c.log.local_retention_bytes = parse(key, v)?,
                "log.remote.storage.enable" => c.log.remote_storage_enable = parse_bool(key, v)?,
                "log.index.interval.bytes" => c.log.index_interval_bytes = parse(key, v)?,
                "log.index.size.max.bytes" => c.log.segment_index_bytes = parse(key, v)?,
                "log.retention.check.interval.ms" => {
                    c.log_retention_check_interval_ms = parse(key, v)?
                }
                "log.flush.interval.ms" => c.log.flush_ms = parse(key, v)?,
                "min.insync.replicas" => c.log.min_insync_replicas = parse(key, v)?,
                "log.flush.interval.messages" => c.log.flush_messages = parse(key, v)?,
                "log.flush.offset.checkpoint.interval.ms" => {
                    c.log_flush_checkpoint_interval_ms = parse(key, v)?
                }
                "log.message.timestamp.type" => {
                    c.log.message_timestamp_type = parse_timestamp_type(key, v)?
                }
                "message.max.bytes" => c.log.max_message_bytes = parse(key, v)?,
                "socket.request.max.bytes" => c.socket_request_max_bytes = parse(key, v)?,
                "max.connections" => c.max_connections = parse(key, v)?,
                "max.connections.per.ip" => c.max_connections_per_ip = parse(key, v)?,
                "max.connections.per.ip.overrides" => {
                    c.max_connections_per_ip_overrides =
                        crate::connection_limits::parse_ip_overrides(v)
                            .map_err(|r| bad(key, v, r))?
                }
                "connections.max.idle.ms" => c.connections_max_idle_ms = parse(key, v)?,
                "socket.request.read.timeout.ms" => {
                    c.socket_request_read_timeout_ms = parse(key, v)?
                }
                "queued.max.request.bytes" => c.queued_max_request_bytes = parse(key, v)?,
                "max.partitions.per.request" => c.max_partitions_per_request = parse(key, v)?,
                "max.broker.partitions" => c.max_broker_partitions = parse(key, v)?,
                "log.max.open.files" => c.log_max_open_files = Some(parse(key, v)?),
                "offsets.topic.num.partitions" => c.offsets_topic_num_partitions = parse(key, v)?,
                "group.initial.rebalance.delay.ms" => {
                    c.group_initial_rebalance_delay_ms = parse(key, v)?
                }
                "group.min.session.timeout.ms" => c.group_min_session_timeout_ms = parse(key, v)?,
                "group.max.session.timeout.ms" => c.group_max_session_timeout_ms = parse(key, v)?,
                "group.max.size" => c.group_max_size = parse(key, v)?,
                "offset.metadata.max.bytes" => c.offset_metadata_max_bytes = parse(key, v)?,
                _ => {
                    return Err(bad(
                        key,
                        v,
                        "unknown property (see strata --help for the accepted ones)",
                    ))
                }
            }
            c.explicit.insert(key.clone());
        }
        if !c.is_explicit("queued.max.request.bytes") && c.queued_max_request_bytes >= 0 {
            // The default follows a larger socket.request.max.bytes, so one largest frame can always be read.
            c.queued_max_request_bytes = c
                .queued_max_request_bytes
                .max(c.socket_request_max_bytes as i64);
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks every field; the error names the property and the bad value.
    pub fn validate(&self) -> Result<()> {
        if self.log_dirs.is_empty() {
            return Err(bad("log.dirs", "", "at least one directory is needed"));
        }
        if self.num_partitions < 1 {
            return Err(bad(
                "num.partitions",
                &self.num_partitions.to_string(),
                "must be at least 1",
            ));
        }
        if self.socket_request_max_bytes < 64 || self.socket_request_max_bytes > i32::MAX as usize {
            return Err(bad(
                "socket.request.max.bytes",
                &self.socket_request_max_bytes.to_string(),
                "must be in 64..=2147483647",
            ));
        }
        if self.max_connections < 1 {
            return Err(bad(
                "max.connections",
                &self.max_connections.to_string(),
                "must be at least 1",
            ));
        }
        let positive = [
            ("max.connections.per.ip", self.max_connections_per_ip as i64),
            (
                "connections.max.idle.ms",
                self.connections_max_idle_ms as i64,
            ),
            (
                "socket.request.read.timeout.ms",
                self.socket_request_read_timeout_ms as i64,
            ),
            (
                "max.partitions.per.request",
                self.max_partitions_per_request,
            ),
            ("max.broker.partitions", self.max_broker_partitions),
        ];
        if let Some((key, v)) = positive.iter().find(|(_, v)| *v < 1) {
            return Err(bad(key, &v.to_string(), "must be at least 1"));
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
        if let Some(n) = self.log_max_open_files.filter(|&n| n < 16) {
            return Err(bad(
                "log.max.open.files",
                &n.to_string(),
                "must be at least 16",
            ));
        }
        if self.offsets_topic_num_partitions < 1 {
            return Err(bad(
                "offsets.topic.num.partitions",
                &self.offsets_topic_num_partitions.to_string(),
                "must be at least 1",
            ));
        }
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms {
            return Err(bad(
                "group.min.session.timeout.ms",
                &self.group_min_session_timeout_ms.to_string(),
                "must not exceed group.max.session.timeout.ms",
            ));
        }
        if self.offset_metadata_max_bytes > i16::MAX as usize {
            return Err(bad(
                "offset.metadata.max.bytes",
                &self.offset_metadata_max_bytes.to_string(),
                "must be at most 32767 (metadata is stored as an i16-length string)",
            ));
        }
        if self.log_retention_check_interval_ms == 0 {
            return Err(bad(
                "log.retention.check.interval.ms",
                "0",
                "must be positive",
            ));
        }
        if self.log_flush_checkpoint_interval_ms == 0 {
            return Err(bad(
                "log.flush.offset.checkpoint.interval.ms",
                "0",
                "must be positive",
            ));
        }
        self.log.validate().map_err(|e| match e {
            // The storage names the topic-level key; the broker property is its broker synonym.
            strata_storage::Error::InvalidConfig { key, value, reason } => {
                let broker_key = crate::topic_config::TOPIC_KEYS
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

    /// Every accepted property with its current value (for DescribeConfigs on the broker resource).
    pub fn values(&self) -> Vec<(&'static str, String)> {
        let advertised = self
            .advertised
            .as_ref()
            .map(|(h, p)| format!("PLAINTEXT://{h}:{p}"));
        let dirs: Vec<String> = self
            .log_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let never = |v: u64| v.min(i64::MAX as u64).to_string();
        vec![
            ("listeners", format!("PLAINTEXT://{}", self.listener)),
            (
                "advertised.listeners",
                advertised.unwrap_or_else(|| format!("PLAINTEXT://{}", self.listener)),
            ),
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
            ("message.max.bytes", self.log.max_message_bytes.to_string()),
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
                "offsets.topic.num.partitions",
                self.offsets_topic_num_partitions.to_string(),
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
                "offset.metadata.max.bytes",
                self.offset_metadata_max_bytes.to_string(),
            ),
        ]
    }
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
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_listen_on_loopback_9092() {
        let c = BrokerConfig::from_properties(&BTreeMap::new()).unwrap();
        assert_eq!(c.listener, SocketAddr::from(([127, 0, 0, 1], 9092)));
        assert_eq!(c.log_dirs, vec![PathBuf::from("./strata-data")]);
    }

    #[test]
    fn bad_value_names_key_and_value() {
        let err = BrokerConfig::from_properties(&props(&[("num.partitions", "many")])).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("num.partitions") && msg.contains("many"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_key_is_rejected() {
        let err = BrokerConfig::from_properties(&props(&[("no.such.key", "1")])).unwrap_err();
        assert!(err.to_string().contains("no.such.key"));
    }

    #[test]
    fn queued_request_bytes_must_fit_one_largest_frame() {
        let c = BrokerConfig::from_properties(&props(&[("socket.request.max.bytes", "400000000")]))
            .unwrap();
        assert_eq!(c.queued_max_request_bytes, 400_000_000);
        let err = BrokerConfig::from_properties(&props(&[("queued.max.request.bytes", "1000")]))
            .unwrap_err();
        assert!(
            err.to_string().contains("queued.max.request.bytes"),
            "{err}"
        );
    }

    #[test]
    fn listener_parses_kafka_form() {
        let c = BrokerConfig::from_properties(&props(&[("listeners", "PLAINTEXT://127.0.0.1:0")]))
            .unwrap();
        assert_eq!(c.listener.port(), 0);
        assert!(
            BrokerConfig::from_properties(&props(&[("listeners", "SSL://127.0.0.1:1")])).is_err()
        );
    }
}
