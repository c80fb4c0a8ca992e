//! [`RemoteLogManagerConfig`]: the broker-level `remote.log.*` settings the RemoteLogManager reads. Each field
//! names its Kafka property and default; [`RemoteLogManagerConfig::validate`] is the one place values are checked.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use strata_storage::config_def::{ConfigDef, ConfigError, ConfigKey, Type, Validator, Value};

use crate::error::{Error, Result};

/// Broker-level configuration of the [`RemoteLogManager`](super::RemoteLogManager). `Default` = Kafka's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RemoteLogManagerConfig {
    /// Kafka: `remote.log.storage.system.enable`. Default: false. Master switch: when false the manager copies,
    /// expires and reads nothing, and topics may not turn `remote.storage.enable` on.
    pub system_enable: bool,
    /// Kafka: `remote.log.manager.task.interval.ms`. Default: 30000. Period of the copy and expiry pass (a pass
    /// also starts on every segment roll). A tick that comes while a pass still runs is skipped.
    pub task_interval_ms: u64,
    /// Kafka: `remote.log.manager.copier.thread.pool.size`. Default: 10. Partition copy tasks running at once
    /// (each copies its segments in offset order, one at a time).
    pub copier_pool_size: usize,
    /// Kafka: `remote.log.manager.expiration.thread.pool.size`. Default: 10. Partition expiration tasks running
    /// at once.
    pub expiration_pool_size: usize,
    /// Kafka: `remote.log.reader.threads`. Default: 10. Remote reads running at once.
    pub reader_threads: usize,
    /// Kafka: `remote.log.reader.max.pending.tasks`. Default: 100. Remote reads waiting for a reader; beyond
    /// this a read fails at once with [`Error::Deferred`].
    pub reader_max_pending_tasks: usize,
    /// Kafka: `remote.fetch.max.wait.ms`. Default: 500. Deadline of one `read_many`: partitions not read by then
    /// come back as [`Error::Deferred`].
    pub fetch_max_wait_ms: u64,
    /// Kafka: `remote.log.manager.copy.max.bytes.per.second`. Default: `i64::MAX` (no quota). Copy quota for the
    /// whole broker (a token bucket refilled every second).
    pub copy_max_bytes_per_second: u64,
    /// Kafka: `remote.log.manager.fetch.max.bytes.per.second`. Default: `i64::MAX` (no quota). Remote read quota
    /// for the whole broker.
    pub fetch_max_bytes_per_second: u64,
    /// Kafka: `remote.log.manager.task.retry.backoff.ms`. Default: 500. First wait after a failed copy or delete
    /// of a partition; doubles per consecutive failure.
    pub retry_backoff_ms: u64,
    /// Kafka: `remote.log.manager.task.retry.backoff.max.ms`. Default: 30000. Largest wait between retries.
    pub retry_backoff_max_ms: u64,
    /// Kafka: `remote.log.manager.task.retry.jitter`. Default: 0.2, in [0, 0.5]. Random spread of each wait.
    pub retry_jitter: f64,
    /// Kafka: `remote.log.index.file.cache.total.size.bytes`. Default: 1 GiB. Bytes of remote offset and time
    /// indexes kept in memory for reads (0 disables the cache).
    pub index_cache_total_size_bytes: u64,
    /// Bytes of remote reads in flight at once in one broker (`read` and `read_many`). Default: 64 MiB. A read
    /// larger than this is still served, alone.
    pub fetch_max_bytes_in_flight: u64,
}

impl Default for RemoteLogManagerConfig {
    fn default() -> Self {
        Self {
            system_enable: false,
            task_interval_ms: 30_000,
            copier_pool_size: 10,
            expiration_pool_size: 10,
            reader_threads: 10,
            reader_max_pending_tasks: 100,
            fetch_max_wait_ms: 500,
            copy_max_bytes_per_second: i64::MAX as u64,
            fetch_max_bytes_per_second: i64::MAX as u64,
            retry_backoff_ms: 500,
            retry_backoff_max_ms: 30_000,
            retry_jitter: 0.2,
            index_cache_total_size_bytes: 1 << 30,
            fetch_max_bytes_in_flight: 64 << 20,
        }
    }
}

fn bad(key: &str, value: impl ToString, reason: &str) -> Error {
    Error::Config {
        key: key.to_string(),
        value: Some(value.to_string()),
        reason: reason.to_string(),
        source: None,
    }
}

/// Kafka 3.x pool sizes: -1 = use `remote.log.manager.thread.pool.size` (10), else at least 1.
fn pool_size(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::Int(-1) => Ok(()),
        Value::Int(n) if *n >= 1 => Ok(()),
        _ => Err("must be -1 (Kafka's shared pool size, 10) or at least 1".into()),
    }
}

/// A `.bytes.per.second` quota: Kafka writes "no quota" as `Long.MAX_VALUE`; -1 is accepted for it too.
fn quota(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::Long(-1) => Ok(()),
        Value::Long(n) if *n > 0 => Ok(()),
        _ => Err("must be positive (-1 or 9223372036854775807 = no quota)".into()),
    }
}

const fn key(name: &'static str, ty: Type, doc: &'static str) -> ConfigKey {
    ConfigKey::new(name, ty, doc)
}

/// The broker-level `remote.log.*` / `remote.fetch.*` keys the RemoteLogManager reads (Kafka's names and
/// defaults; `remote.fetch.max.bytes.in.flight` is strata's). [`RemoteLogManagerConfig::set`] parses through it;
/// `strata --help`, DescribeConfigs and `docs/CONFIG.md` are rendered from it.
pub const RLM_KEYS: &[ConfigKey] = &[
    key(
        "remote.log.storage.system.enable",
        Type::Boolean,
        "tiered storage on; topics opt in with remote.storage.enable=true",
    )
    .default("false"),
    key(
        "remote.log.manager.task.interval.ms",
        Type::Long,
        "period of each partition's copy and expiration tasks (a segment roll also starts them)",
    )
    .default("30000")
    .validator(Validator::AtLeast(1)),
    key(
        "remote.log.manager.copier.thread.pool.size",
        Type::Int,
        "partitions copying at once (one segment each)",
    )
    .default("10")
    .validator(Validator::Custom(pool_size)),
    key(
        "remote.log.manager.expiration.thread.pool.size",
        Type::Int,
        "partitions expired at once",
    )
    .default("10")
    .validator(Validator::Custom(pool_size)),
    key(
        "remote.log.manager.task.retry.backoff.ms",
        Type::Long,
        "first wait after a failed copy or delete (doubles per failure)",
    )
    .default("500")
    .validator(Validator::AtLeast(1)),
    key(
        "remote.log.manager.task.retry.backoff.max.ms",
        Type::Long,
        "largest wait between retries",
    )
    .default("30000")
    .validator(Validator::AtLeast(1)),
    key(
        "remote.log.manager.task.retry.jitter",
        Type::Double,
        "random spread of each wait",
    )
    .default("0.2")
    .validator(Validator::BetweenF(0.0, 0.5)),
    key(
        "remote.log.manager.copy.max.bytes.per.second",
        Type::Long,
        "copy quota of the broker (-1 or Long.MAX = none)",
    )
    .default("9223372036854775807")
    .validator(Validator::Custom(quota)),
    key(
        "remote.log.manager.fetch.max.bytes.per.second",
        Type::Long,
        "remote read quota of the broker (-1 or Long.MAX = none)",
    )
    .default("9223372036854775807")
    .validator(Validator::Custom(quota)),
    key(
        "remote.log.reader.threads",
        Type::Int,
        "remote reads running at once",
    )
    .default("10")
    .validator(Validator::AtLeast(1)),
    key(
        "remote.log.reader.max.pending.tasks",
        Type::Int,
        "remote reads waiting for a reader; beyond, a fetch gets no records this time",
    )
    .default("100")
    .validator(Validator::AtLeast(1)),
    key(
        "remote.fetch.max.wait.ms",
        Type::Int,
        "deadline of the remote reads of one Fetch",
    )
    .default("500")
    .validator(Validator::AtLeast(1)),
    key(
        "remote.fetch.max.bytes.in.flight",
        Type::Long,
        "bytes of remote reads in flight in the broker (strata's)",
    )
    .default("67108864")
    .validator(Validator::AtLeast(1))
    .strata_only(),
    key(
        "remote.log.index.file.cache.total.size.bytes",
        Type::Long,
        "remote offset/time indexes kept in memory (0 = no cache)",
    )
    .default("1073741824")
    .validator(Validator::AtLeast(0)),
];

/// The RemoteLogManager's table ([`RLM_KEYS`]).
pub const RLM_CONFIG: ConfigDef = ConfigDef::new("remote log manager", RLM_KEYS);

fn long(v: &Value) -> i64 {
    match v {
        Value::Long(n) => *n,
        Value::Int(n) => i64::from(*n),
        _ => 0,
    }
}

impl RemoteLogManagerConfig {
    /// Builds the config from broker properties (the whole broker map: keys not in [`RLM_CONFIG`] are skipped,
    /// so `rsm.config.*`, `log.dirs`, ... can be passed along), then validates it. Bad values are errors
    /// naming the key and the value.
    pub fn from_props<K: AsRef<str>, V: AsRef<str>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self> {
        let mut c = Self::default();
        for (k, v) in props {
            c.set(k.as_ref(), v.as_ref())?;
        }
        c.validate()?;
        Ok(c)
    }

    /// Sets one property, parsed and checked by its key in [`RLM_CONFIG`]; returns false (and changes nothing)
    /// for a key this config does not read.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool> {
        let Some(k) = RLM_CONFIG.key(key) else {
            return Ok(false);
        };
        let v = k.parse_value(value).map_err(|e| match e {
            ConfigError::BadValue { key, value, reason } => bad(&key, value, &reason),
            other => bad(key, value, &other.to_string()),
        })?;
        let n = long(&v);
        let pool = |n: i64| if n == -1 { 10 } else { n as usize };
        let rate = |n: i64| if n == -1 { i64::MAX as u64 } else { n as u64 };
        match k.name {
            "remote.log.storage.system.enable" => self.system_enable = v == Value::Bool(true),
            "remote.log.manager.task.interval.ms" => self.task_interval_ms = n as u64,
            "remote.log.manager.copier.thread.pool.size" => self.copier_pool_size = pool(n),
            "remote.log.manager.expiration.thread.pool.size" => self.expiration_pool_size = pool(n),
            "remote.log.reader.threads" => self.reader_threads = n as usize,
            "remote.log.reader.max.pending.tasks" => self.reader_max_pending_tasks = n as usize,
            "remote.fetch.max.wait.ms" => self.fetch_max_wait_ms = n as u64,
            "remote.log.manager.copy.max.bytes.per.second" => {
                self.copy_max_bytes_per_second = rate(n)
            }
            "remote.log.manager.fetch.max.bytes.per.second" => {
                self.fetch_max_bytes_per_second = rate(n)
            }
            "remote.log.manager.task.retry.backoff.ms" => self.retry_backoff_ms = n as u64,
            "remote.log.manager.task.retry.backoff.max.ms" => self.retry_backoff_max_ms = n as u64,
            "remote.log.manager.task.retry.jitter" => {
                if let Value::Double(j) = v {
                    self.retry_jitter = j;
                }
            }
            "remote.log.index.file.cache.total.size.bytes" => {
                self.index_cache_total_size_bytes = n as u64
            }
            "remote.fetch.max.bytes.in.flight" => self.fetch_max_bytes_in_flight = n as u64,
            other => unreachable!("RLM_CONFIG key {other} has no field"),
        }
        Ok(true)
    }

    /// Checks every field; the error names the Kafka property and the bad value.
    pub fn validate(&self) -> Result<()> {
        if self.task_interval_ms == 0 {
            return Err(bad(
                "remote.log.manager.task.interval.ms",
                0,
                "must be at least 1",
            ));
        }
        let pools = [
            (
                "remote.log.manager.copier.thread.pool.size",
                self.copier_pool_size,
            ),
            (
                "remote.log.manager.expiration.thread.pool.size",
                self.expiration_pool_size,
            ),
            ("remote.log.reader.threads", self.reader_threads),
            (
                "remote.log.reader.max.pending.tasks",
                self.reader_max_pending_tasks,
            ),
        ];
        for (key, v) in pools {
            if v == 0 {
                return Err(bad(key, v, "must be at least 1"));
            }
        }
        if self.fetch_max_wait_ms == 0 {
            return Err(bad("remote.fetch.max.wait.ms", 0, "must be at least 1"));
        }
        if self.retry_backoff_ms == 0 || self.retry_backoff_max_ms < self.retry_backoff_ms {
            return Err(bad(
                "remote.log.manager.task.retry.backoff.max.ms",
                self.retry_backoff_max_ms,
                "backoff must be at least 1 ms and the maximum at least remote.log.manager.task.retry.backoff.ms",
            ));
        }
        if !(0.0..=0.5).contains(&self.retry_jitter) {
            return Err(bad(
                "remote.log.manager.task.retry.jitter",
                self.retry_jitter,
                "must be in [0, 0.5]",
            ));
        }
        if self.copy_max_bytes_per_second == 0 || self.fetch_max_bytes_per_second == 0 {
            return Err(bad(
                "remote.log.manager.copy.max.bytes.per.second",
                0,
                "quotas must be positive",
            ));
        }
        if self.fetch_max_bytes_in_flight == 0 {
            return Err(bad(
                "remote.fetch.max.bytes.in.flight",
                0,
                "must be at least 1",
            ));
        }
        Ok(())
    }

    /// `task_interval_ms` as a duration.
    pub fn task_interval(&self) -> Duration {
        Duration::from_millis(self.task_interval_ms)
    }

    /// The wait before retry number `failures` (1 = after the first failure): exponential, capped, jittered.
    pub fn backoff(&self, failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(30);
        let base = self
            .retry_backoff_ms
            .saturating_mul(1u64 << exp)
            .min(self.retry_backoff_max_ms) as f64;
        let spread = (rand::random::<f64>() * 2.0 - 1.0) * self.retry_jitter;
        Duration::from_millis((base * (1.0 + spread)).max(1.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_props_reads_kafka_keys_and_skips_others() {
        let c = RemoteLogManagerConfig::from_props([
            ("remote.log.storage.system.enable", "true"),
            ("remote.log.manager.task.interval.ms", "1000"),
            ("remote.log.manager.copier.thread.pool.size", "-1"),
            ("rsm.config.storage.backend", "s3"),
        ])
        .expect("valid");
        assert!(c.system_enable);
        assert_eq!(c.task_interval_ms, 1000);
        assert_eq!(c.copier_pool_size, 10);
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = RemoteLogManagerConfig::from_props([("remote.fetch.max.wait.ms", "soon")])
            .expect_err("not a number");
        assert!(e.to_string().contains("remote.fetch.max.wait.ms"), "{e}");
        let e =
            RemoteLogManagerConfig::from_props([("remote.log.manager.task.retry.jitter", "0.9")])
                .expect_err("out of range");
        assert!(e.to_string().contains("0.9"), "{e}");
        let e = RemoteLogManagerConfig::from_props([(
            "remote.log.manager.copier.thread.pool.size",
            "0",
        )])
        .expect_err("zero");
        assert!(e.to_string().contains("copier"), "{e}");
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let c = RemoteLogManagerConfig {
            retry_jitter: 0.0,
            ..Default::default()
        };
        assert_eq!(c.backoff(1), Duration::from_millis(500));
        assert_eq!(c.backoff(2), Duration::from_millis(1000));
        assert_eq!(c.backoff(40), Duration::from_millis(30_000));
    }
}
