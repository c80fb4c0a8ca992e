//! [`RemoteLogManagerConfig`]: the broker-level `remote.log.*` settings the RemoteLogManager reads. Each field
//! names its Kafka property and default; [`RemoteLogManagerConfig::validate`] is the one place values are checked.
use std::time::Duration;

use serde::{Deserialize, Serialize};

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

fn parse<T: std::str::FromStr>(key: &str, value: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| bad(key, value, "not a valid number"))
}

/// A `.bytes.per.second` value: Kafka writes "no quota" as `Long.MAX_VALUE`; -1 is accepted for it too.
fn parse_rate(key: &str, value: &str) -> Result<u64> {
    let v: i64 = parse(key, value)?;
    match v {
        -1 => Ok(i64::MAX as u64),
        v if v > 0 => Ok(v as u64),
        _ => Err(bad(key, value, "must be positive")),
    }
}

impl RemoteLogManagerConfig {
    /// The Kafka property names this config reads (everything else is ignored by
    /// [`from_props`](Self::from_props)).
    pub const KEYS: [&'static str; 14] = [
        "remote.log.storage.system.enable",
        "remote.log.manager.task.interval.ms",
        "remote.log.manager.copier.thread.pool.size",
        "remote.log.manager.expiration.thread.pool.size",
        "remote.log.reader.threads",
        "remote.log.reader.max.pending.tasks",
        "remote.fetch.max.wait.ms",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "remote.log.manager.task.retry.backoff.ms",
        "remote.log.manager.task.retry.backoff.max.ms",
        "remote.log.manager.task.retry.jitter",
        "remote.log.index.file.cache.total.size.bytes",
        "remote.fetch.max.bytes.in.flight",
    ];

    /// Builds the config from broker properties (the whole broker map: keys not in [`Self::KEYS`] are skipped,
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

    /// Sets one property; returns false (and changes nothing) for a key this config does not read.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool> {
        match key {
            "remote.log.storage.system.enable" => {
                self.system_enable = match value.trim() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad(key, value, "must be true or false")),
                }
            }
            "remote.log.manager.task.interval.ms" => self.task_interval_ms = parse(key, value)?,
            "remote.log.manager.copier.thread.pool.size" => {
                // Kafka 3.x: -1 = use remote.log.manager.thread.pool.size (10).
                let v: i64 = parse(key, value)?;
                self.copier_pool_size = if v == -1 { 10 } else { v.max(0) as usize };
            }
            "remote.log.manager.expiration.thread.pool.size" => {
                let v: i64 = parse(key, value)?;
                self.expiration_pool_size = if v == -1 { 10 } else { v.max(0) as usize };
            }
            "remote.log.reader.threads" => self.reader_threads = parse(key, value)?,
            "remote.log.reader.max.pending.tasks" => {
                self.reader_max_pending_tasks = parse(key, value)?
            }
            "remote.fetch.max.wait.ms" => self.fetch_max_wait_ms = parse(key, value)?,
            "remote.log.manager.copy.max.bytes.per.second" => {
                self.copy_max_bytes_per_second = parse_rate(key, value)?
            }
            "remote.log.manager.fetch.max.bytes.per.second" => {
                self.fetch_max_bytes_per_second = parse_rate(key, value)?
            }
            "remote.log.manager.task.retry.backoff.ms" => {
                self.retry_backoff_ms = parse(key, value)?
            }
            "remote.log.manager.task.retry.backoff.max.ms" => {
                self.retry_backoff_max_ms = parse(key, value)?
            }
            "remote.log.manager.task.retry.jitter" => self.retry_jitter = parse(key, value)?,
            "remote.log.index.file.cache.total.size.bytes" => {
                self.index_cache_total_size_bytes = parse(key, value)?
            }
            "remote.fetch.max.bytes.in.flight" => {
                self.fetch_max_bytes_in_flight = parse(key, value)?
            }
            _ => return Ok(false),
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
