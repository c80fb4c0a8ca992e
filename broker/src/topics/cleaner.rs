//! The log cleaner as the server runs it: storage's [`LogCleaner`] (Kafka's compaction of
//! `cleanup.policy=compact` logs) on `log.cleaner.threads` blocking threads of the server's tracker, stopped when
//! the server's root token is cancelled (before the logs are flushed), and its Kafka metrics for `/metrics`
//! ([`CleanerCollector`]).

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use strata_storage::config_def::Value;
use strata_storage::{CleanerConfig, CleanerMetrics, LogCleaner, LogManager};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use crate::config::BrokerConfig;
use crate::error::Result;
use crate::topics::dynamic::{as_i64, value_or, Reconfigurable};

/// Builds the cleaner over the opened `logs` (its config was validated with the broker's).
pub fn open(config: &BrokerConfig, logs: &Arc<LogManager>) -> Result<Arc<LogCleaner>> {
    Ok(Arc::new(LogCleaner::new(
        config.cleaner.clone(),
        logs.clone(),
    )?))
}

/// Runs `cleaner` on its configured number of threads (blocking tasks on `tasks`) until `cancel` is cancelled,
/// which calls [`LogCleaner::shutdown`]: a cleaning in progress stops at its next check and leaves the old
/// segments. Nothing runs with `log.cleaner.enable=false`. Returns the cleaner's [`Reconfigurable`] (its
/// `log.cleaner.*` keys change at run time, threads included), `None` when it is off.
pub fn start(
    cleaner: &Arc<LogCleaner>,
    tasks: &TaskTracker,
    cancel: CancellationToken,
) -> Option<Arc<CleanerThreads>> {
    let config = cleaner.config();
    if !config.enable {
        info!("log cleaner off (log.cleaner.enable=false): compacted topics are not compacted");
        return None;
    }
    let threads = Arc::new(CleanerThreads {
        cleaner: cleaner.clone(),
        statics: config.clone(),
        tasks: tasks.clone(),
        running: Arc::new(Mutex::new(BTreeSet::new())),
    });
    threads.spawn_missing(config.threads);
    let c = cleaner.clone();
    tasks.spawn(async move {
        cancel.cancelled().await;
        c.shutdown();
    });
    info!(
        threads = config.threads,
        dedupe_buffer_size = config.dedupe_buffer_size,
        backoff_ms = config.backoff_ms,
        "log cleaner started"
    );
    Some(threads)
}

/// The running cleaner threads and the static cleaner config, for the dynamic `log.cleaner.*` keys (Kafka's
/// `LogCleaner.ReconfigurableConfigs`).
#[derive(Debug)]
pub struct CleanerThreads {
    cleaner: Arc<LogCleaner>,
    statics: CleanerConfig,
    tasks: TaskTracker,
    /// Indexes of the threads running [`LogCleaner::run_thread`].
    running: Arc<Mutex<BTreeSet<usize>>>,
}

impl CleanerThreads {
    /// Starts the threads of index below `threads` that are not running.
    fn spawn_missing(&self, threads: usize) {
        let mut running = self.running.lock();
        for thread in 0..threads {
            if !running.insert(thread) {
                continue;
            }
            let c = self.cleaner.clone();
            let r = self.running.clone();
            self.tasks.spawn_blocking(move || {
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.run_thread(thread)))
                    .is_err()
                {
                    warn!(
                        thread,
                        "log cleaner thread panicked; compaction stopped on this thread"
                    );
                }
                r.lock().remove(&thread);
            });
        }
    }

    /// The cleaner config `values` (dynamic broker configs) make of the static one, validated.
    fn config_of(&self, values: &BTreeMap<String, String>) -> Result<CleanerConfig> {
        let s = &self.statics;
        let mut c = s.clone();
        let positive = |n: i64| u64::try_from(n).ok();
        c.threads = value_or(values, "log.cleaner.threads", s.threads, |v| {
            as_i64(v).and_then(|n| usize::try_from(n).ok())
        })?;
        c.dedupe_buffer_size = value_or(
            values,
            "log.cleaner.dedupe.buffer.size",
            s.dedupe_buffer_size,
            |v| as_i64(v).and_then(positive),
        )?;
        c.io_buffer_size = value_or(
            values,
            "log.cleaner.io.buffer.size",
            s.io_buffer_size,
            |v| as_i64(v).and_then(|n| usize::try_from(n).ok()),
        )?;
        c.io_buffer_load_factor = value_or(
            values,
            "log.cleaner.io.buffer.load.factor",
            s.io_buffer_load_factor,
            as_f64,
        )?;
        c.io_max_bytes_per_second = value_or(
            values,
            "log.cleaner.io.max.bytes.per.second",
            s.io_max_bytes_per_second,
            as_f64,
        )?;
        c.backoff_ms = value_or(values, "log.cleaner.backoff.ms", s.backoff_ms, |v| {
            as_i64(v).and_then(positive)
        })?;
        c.validate()?;
        Ok(c)
    }
}

fn as_f64(v: Value) -> Option<f64> {
    match v {
        Value::Double(d) => Some(d),
        v => as_i64(v).map(|n| n as f64),
    }
}

impl Reconfigurable for CleanerThreads {
    fn keys(&self) -> &'static [&'static str] {
        &[
            "log.cleaner.threads",
            "log.cleaner.dedupe.buffer.size",
            "log.cleaner.io.buffer.size",
            "log.cleaner.io.buffer.load.factor",
            "log.cleaner.io.max.bytes.per.second",
            "log.cleaner.backoff.ms",
        ]
    }

    fn validate(&self, values: &BTreeMap<String, String>) -> Result<()> {
        self.config_of(values).map(|_| ())
    }

    /// Applies at once: fewer threads return after their current cleaning, more are started.
    fn reconfigure(&self, values: &BTreeMap<String, String>) -> Result<()> {
        let config = self.config_of(values)?;
        let threads = config.threads;
        self.cleaner.reconfigure(config)?;
        self.spawn_missing(threads);
        info!(threads, "log cleaner reconfigured");
        Ok(())
    }
}

/// Encodes the cleaner's metrics (read at each scrape) under the names the Strimzi JMX-exporter rules give
/// Kafka's `kafka.log:type=LogCleaner,name=…` and `kafka.log:type=LogCleanerManager,name=…` MBeans
/// (`kafka_log_logcleaner_max_dirty_percent`, …); the running totals are counters (`_total`).
#[derive(Debug)]
pub struct CleanerCollector(pub Arc<LogCleaner>);

/// (name, help, value) of the gauges, then of the counters.
#[allow(clippy::type_complexity)]
fn cleaner_series(
    m: &CleanerMetrics,
) -> (
    [(&'static str, &'static str, f64); 7],
    [(&'static str, &'static str, u64); 3],
) {
    (
        [
            (
                "kafka_log_logcleaner_max_dirty_percent",
                "Highest dirty ratio of the compacted logs at the last check, in percent.",
                m.max_dirty_percent,
            ),
            (
                "kafka_log_logcleaner_time_since_last_run_ms",
                "Milliseconds since the last cleaning ended (or the cleaner started).",
                m.time_since_last_run_ms as f64,
            ),
            (
                "kafka_log_logcleaner_cleaner_recopy_percent",
                "Share of the bytes read that the last cleaning wrote again, in percent.",
                m.cleaner_recopy_percent,
            ),
            (
                "kafka_log_logcleaner_max_buffer_utilization_percent",
                "How full the offset map got in the last cleaning, in percent.",
                m.max_buffer_utilization_percent,
            ),
            (
                "kafka_log_logcleaner_max_clean_time_secs",
                "Duration of the last cleaning in seconds.",
                m.max_clean_time_secs,
            ),
            (
                "kafka_log_logcleaner_max_compaction_delay_secs",
                "Longest delay past max.compaction.lag.ms of a log at the last check, in seconds.",
                m.max_compaction_delay_secs,
            ),
            (
                "kafka_log_logcleanermanager_uncleanable_partitions_count",
                "Logs whose cleaning failed (skipped until restart).",
                m.uncleanable_partitions_count as f64,
            ),
        ],
        [
            (
                "kafka_log_logcleaner_cleaned_bytes_read",
                "Bytes read by all cleanings.",
                m.bytes_read_total,
            ),
            (
                "kafka_log_logcleaner_cleaned_bytes_written",
                "Bytes written by all cleanings.",
                m.bytes_written_total,
            ),
            (
                "kafka_log_logcleaner_cleanings",
                "Cleanings completed.",
                m.cleanings_total,
            ),
        ],
    )
}

impl Collector for CleanerCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> std::fmt::Result {
        let (gauges, counters) = cleaner_series(&self.0.metrics());
        for (name, help, v) in gauges {
            let g = ConstGauge::new(v);
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)?;
        }
        for (name, help, v) in counters {
            let c = ConstCounter::new(v);
            c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)?;
        }
        Ok(())
    }
}

/// The cleaner's metrics alone as OpenMetrics text (what `/metrics` shows of them).
pub fn render_metrics(cleaner: &Arc<LogCleaner>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(CleanerCollector(cleaner.clone())));
    let mut out = String::new();
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_use_the_strimzi_names_of_kafkas_log_cleaner_mbeans() {
        let m = CleanerMetrics {
            max_dirty_percent: 42.5,
            uncleanable_partitions_count: 2,
            cleanings_total: 3,
            ..CleanerMetrics::default()
        };
        let (gauges, counters) = cleaner_series(&m);
        assert!(gauges.contains(&("kafka_log_logcleaner_max_dirty_percent", gauges[0].1, 42.5)));
        assert!(gauges.iter().any(|g| g.0
            == "kafka_log_logcleanermanager_uncleanable_partitions_count"
            && g.2 == 2.0));
        assert!(counters
            .iter()
            .any(|c| c.0 == "kafka_log_logcleaner_cleanings" && c.2 == 3));
        for (name, _, _) in gauges {
            assert_eq!(name, name.to_lowercase());
        }
    }
}
