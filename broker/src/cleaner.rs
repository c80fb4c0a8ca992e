//! The log cleaner as the server runs it: storage's [`LogCleaner`] (Kafka's compaction of
//! `cleanup.policy=compact` logs) on `log.cleaner.threads` blocking threads of the server's tracker, stopped when
//! the server's root token is cancelled (before the logs are flushed), and its Kafka metrics as Prometheus text
//! for `/metrics`.

use std::fmt::Write as _;
use std::sync::Arc;

use strata_storage::{CleanerMetrics, LogCleaner, LogManager};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use crate::config::BrokerConfig;
use crate::error::Result;

/// Builds the cleaner over the opened `logs` (its config was validated with the broker's).
pub fn open(config: &BrokerConfig, logs: &Arc<LogManager>) -> Result<Arc<LogCleaner>> {
    Ok(Arc::new(LogCleaner::new(
        config.cleaner.clone(),
        logs.clone(),
    )?))
}

/// Runs `cleaner` on its configured number of threads (blocking tasks on `tasks`) until `cancel` is cancelled,
/// which calls [`LogCleaner::shutdown`]: a cleaning in progress stops at its next check and leaves the old
/// segments. Nothing runs with `log.cleaner.enable=false`.
pub fn start(cleaner: &Arc<LogCleaner>, tasks: &TaskTracker, cancel: CancellationToken) {
    let config = cleaner.config();
    if !config.enable {
        info!("log cleaner off (log.cleaner.enable=false): compacted topics are not compacted");
        return;
    }
    for thread in 0..config.threads {
        let c = cleaner.clone();
        tasks.spawn_blocking(move || {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.run())).is_err() {
                warn!(
                    thread,
                    "log cleaner thread panicked; compaction stopped on this thread"
                );
            }
        });
    }
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
}

/// The cleaner's metrics as Prometheus text, under Kafka's names (`kafka.log:type=LogCleaner,name=…` →
/// `kafka_log_LogCleaner_…`, as `/metrics` names the RemoteLogManager's `kafka_server_BrokerTopicMetrics_…`).
pub fn render_metrics(m: &CleanerMetrics) -> String {
    let gauges: [(&str, &str, String); 6] = [
        (
            "LogCleaner_max_dirty_percent",
            "highest dirty ratio of the compacted logs at the last check, in percent",
            m.max_dirty_percent.to_string(),
        ),
        (
            "LogCleaner_time_since_last_run_ms",
            "milliseconds since the last cleaning ended (or the cleaner started)",
            m.time_since_last_run_ms.to_string(),
        ),
        (
            "LogCleaner_cleaner_recopy_percent",
            "share of the bytes read that the last cleaning wrote again, in percent",
            m.cleaner_recopy_percent.to_string(),
        ),
        (
            "LogCleaner_max_buffer_utilization_percent",
            "how full the offset map got in the last cleaning, in percent",
            m.max_buffer_utilization_percent.to_string(),
        ),
        (
            "LogCleaner_max_clean_time_secs",
            "duration of the last cleaning in seconds",
            m.max_clean_time_secs.to_string(),
        ),
        (
            "LogCleanerManager_uncleanable_partitions_count",
            "logs whose cleaning failed (skipped until restart)",
            m.uncleanable_partitions_count.to_string(),
        ),
    ];
    let counters: [(&str, &str, u64); 3] = [
        (
            "LogCleaner_cleaned_bytes_read_total",
            "bytes read by all cleanings",
            m.bytes_read_total,
        ),
        (
            "LogCleaner_cleaned_bytes_written_total",
            "bytes written by all cleanings",
            m.bytes_written_total,
        ),
        (
            "LogCleaner_cleanings_total",
            "cleanings completed",
            m.cleanings_total,
        ),
    ];
    let mut out = String::new();
    for (name, help, value) in gauges {
        let family = format!("kafka_log_{name}");
        let _ = writeln!(out, "# HELP {family} Kafka's {name}: {help}.");
        let _ = writeln!(out, "# TYPE {family} gauge");
        let _ = writeln!(out, "{family} {value}");
    }
    for (name, help, value) in counters {
        let family = format!("kafka_log_{name}");
        let _ = writeln!(out, "# HELP {family} {help} (a running total; use rate()).");
        let _ = writeln!(out, "# TYPE {family} counter");
        let _ = writeln!(out, "{family} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_use_kafkas_log_cleaner_names() {
        let m = CleanerMetrics {
            max_dirty_percent: 42.5,
            uncleanable_partitions_count: 2,
            cleanings_total: 3,
            ..CleanerMetrics::default()
        };
        let text = render_metrics(&m);
        for line in [
            "kafka_log_LogCleaner_max_dirty_percent 42.5",
            "kafka_log_LogCleaner_time_since_last_run_ms 0",
            "kafka_log_LogCleaner_cleaner_recopy_percent 0",
            "kafka_log_LogCleaner_max_buffer_utilization_percent 0",
            "kafka_log_LogCleaner_max_clean_time_secs 0",
            "kafka_log_LogCleanerManager_uncleanable_partitions_count 2",
            "kafka_log_LogCleaner_cleanings_total 3",
            "# TYPE kafka_log_LogCleaner_max_dirty_percent gauge",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }
}
