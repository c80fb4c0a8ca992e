//! [`LogCleaner`]: picks the dirtiest compacted log, cleans it, checkpoints, and keeps Kafka's cleaner metrics.
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::manager::{log_to_clean, Checkpoints, LogToClean};
use super::offset_map::OffsetMap;
use super::task::Cleaner;
use super::throttler::Throttler;
use super::{CleanerConfig, CrashPoint};
use crate::log::now_ms;
use crate::{LogManager, Result, TopicPartition};

/// What one [`LogCleaner::clean_once`] did (Kafka's `CleanerStats`).
#[derive(Clone, Debug, PartialEq)]
pub struct CleanStats {
    /// The log cleaned.
    pub tp: TopicPartition,
    /// First dirty offset before the cleaning.
    pub first_dirty_offset: i64,
    /// First dirty offset after it (the end of the range the offset map covered), now checkpointed.
    pub end_offset: i64,
    /// Dirty ratio of the log when it was picked.
    pub dirty_ratio: f64,
    /// Bytes of the dirty range at the start (what "MB/s of dirty log" divides).
    pub dirty_bytes: u64,
    /// Bytes read to build the offset map.
    pub map_bytes_read: u64,
    /// Bytes of segments read while rewriting them.
    pub bytes_read: u64,
    /// Bytes written to cleaned segments.
    pub bytes_written: u64,
    /// Records read while rewriting.
    pub records_read: u64,
    /// Records not kept (superseded, expired tombstones, keyless, aborted).
    pub records_removed: u64,
    /// Batches copied byte for byte.
    pub batches_copied: u64,
    /// Batches re-encoded because some of their records were dropped.
    pub batches_rewritten: u64,
    /// Batches kept empty (the last batch of a producer).
    pub batches_emptied: u64,
    /// Segment groups swapped in.
    pub groups: usize,
    /// Share of the offset map's slots used (0..1).
    pub buffer_utilization: f64,
    /// Wall time of the cleaning.
    pub duration: Duration,
}

impl CleanStats {
    /// Bytes written over bytes read, in percent (Kafka's `cleaner-recopy-percent`).
    pub fn recopy_percent(&self) -> f64 {
        if self.bytes_read == 0 {
            return 0.0;
        }
        100.0 * self.bytes_written as f64 / self.bytes_read as f64
    }
}

/// Kafka's log cleaner metrics (`kafka.log:type=LogCleaner` and `type=LogCleanerManager`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CleanerMetrics {
    /// `max-dirty-percent`: the highest dirty ratio of the compacted logs at the last check, in percent.
    pub max_dirty_percent: f64,
    /// `time-since-last-run-ms`: since the last cleaning ended (or the cleaner started).
    pub time_since_last_run_ms: u64,
    /// `max-buffer-utilization-percent` of the last cleaning.
    pub max_buffer_utilization_percent: f64,
    /// `cleaner-recopy-percent` of the last cleaning.
    pub cleaner_recopy_percent: f64,
    /// `max-clean-time-secs` of the last cleaning.
    pub max_clean_time_secs: f64,
    /// `max-compaction-delay-secs`: how far past `max.compaction.lag.ms` the most overdue log is.
    pub max_compaction_delay_secs: f64,
    /// `uncleanable-partitions-count`: logs whose cleaning failed (skipped until restart).
    pub uncleanable_partitions_count: usize,
    /// Bytes read by all cleanings (map and rewrite).
    pub bytes_read_total: u64,
    /// Bytes written by all cleanings.
    pub bytes_written_total: u64,
    /// Cleanings completed.
    pub cleanings_total: u64,
}

struct State {
    metrics: CleanerMetrics,
    last_run: Instant,
}

/// The log cleaner of a [`LogManager`]: cleans compacted logs (`cleanup.policy` with `compact`). Synchronous:
/// the broker runs [`LogCleaner::run`] on `log.cleaner.threads` threads of its own and calls
/// [`LogCleaner::shutdown`] to stop them.
pub struct LogCleaner {
    /// Changed at run time by [`LogCleaner::reconfigure`] (Kafka's dynamic `log.cleaner.*`).
    config: RwLock<CleanerConfig>,
    manager: Arc<LogManager>,
    checkpoints: Checkpoints,
    throttler: Throttler,
    in_progress: Mutex<HashSet<TopicPartition>>,
    uncleanable: Mutex<HashSet<TopicPartition>>,
    state: Mutex<State>,
    stop: (Mutex<bool>, Condvar),
    crash: Mutex<Option<CrashPoint>>,
}

impl std::fmt::Debug for LogCleaner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogCleaner")
            .field("config", &self.config())
            .finish()
    }
}

impl LogCleaner {
    /// A cleaner over the logs of `manager`; the config is validated.
    pub fn new(config: CleanerConfig, manager: Arc<LogManager>) -> Result<Self> {
        config.validate()?;
        Ok(Self {
            throttler: Throttler::new(config.io_max_bytes_per_second),
            config: RwLock::new(config),
            manager,
            checkpoints: Checkpoints::default(),
            in_progress: Mutex::new(HashSet::new()),
            uncleanable: Mutex::new(HashSet::new()),
            state: Mutex::new(State {
                metrics: CleanerMetrics::default(),
                last_run: Instant::now(),
            }),
            stop: (Mutex::new(false), Condvar::new()),
            crash: Mutex::new(None),
        })
    }

    /// The config (as last reconfigured).
    pub fn config(&self) -> CleanerConfig {
        self.config.read().clone()
    }

    /// Applies a new config at once (Kafka's `LogCleaner.reconfigure` for its dynamic keys): the I/O rate, the
    /// backoff and the offset-map sizes from the next cleaning on; a lower `threads` makes the threads of index
    /// `threads` and above ([`LogCleaner::run_thread`]) return after their current cleaning, and the broker starts
    /// the missing ones for a higher count. `enable` stays as started. Refused (nothing changes) when the config
    /// is invalid.
    pub fn reconfigure(&self, mut config: CleanerConfig) -> Result<()> {
        config.validate()?;
        {
            let mut current = self.config.write();
            config.enable = current.enable;
            self.throttler.set_rate(config.io_max_bytes_per_second);
            *current = config;
        }
        // Wake the threads sleeping out their backoff: a thread now above the count returns.
        let _guard = self.stop.0.lock();
        self.stop.1.notify_all();
        Ok(())
    }

    /// Makes the swap stop after `point` as if the process died there (crash-recovery tests only).
    #[doc(hidden)]
    pub fn crash_at(&self, point: Option<CrashPoint>) {
        *self.crash.lock() = point;
    }

    fn stopped(&self) -> bool {
        *self.stop.0.lock()
    }

    /// Stops [`LogCleaner::run`] (a cleaning in progress stops at its next batch or group, discarding its
    /// unfinished output).
    pub fn shutdown(&self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
    }

    /// Cleans logs until [`LogCleaner::shutdown`], sleeping `log.cleaner.backoff.ms` when none is due (Kafka's
    /// `CleanerThread`). Returns at once when `log.cleaner.enable` is false.
    pub fn run(&self) {
        self.run_thread(0)
    }

    /// [`LogCleaner::run`] as cleaner thread `index` (from 0): also returns once `index` is not below the
    /// configured `threads` ([`LogCleaner::reconfigure`]).
    pub fn run_thread(&self, index: usize) {
        if !self.config().enable {
            return;
        }
        let wanted = || index < self.config().threads;
        while !self.stopped() && wanted() {
            match self.clean_once() {
                Ok(Some(_)) => continue,
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "log cleaning failed"),
            }
            let mut guard = self.stop.0.lock();
            let backoff = Duration::from_millis(self.config().backoff_ms);
            let _ = self
                .stop
                .1
                .wait_while_for(&mut guard, |s| !*s && wanted(), backoff);
        }
    }

    /// Forgets `tp` in `log_dir`'s `cleaner-offset-checkpoint` (Kafka's `updateCheckpoints` with
    /// `partitionToRemove`): the broker calls it when it deletes a partition, so a later log of the same name
    /// is cleaned from its start.
    pub fn forget_log(&self, log_dir: &std::path::Path, tp: &TopicPartition) -> Result<()> {
        self.uncleanable.lock().remove(tp);
        self.checkpoints.remove(log_dir, tp)
    }

    /// The cleaner's metrics now.
    pub fn metrics(&self) -> CleanerMetrics {
        let st = self.state.lock();
        let mut m = st.metrics.clone();
        m.time_since_last_run_ms = st.last_run.elapsed().as_millis() as u64;
        m.uncleanable_partitions_count = self.uncleanable.lock().len();
        m
    }

    /// Picks the dirtiest compacted log that is due (dirty ratio above `min.cleanable.dirty.ratio`, or past
    /// `max.compaction.lag.ms`) and cleans it. None when no log is due. A log whose cleaning fails is marked
    /// uncleanable (skipped from then on, Kafka's behaviour) and the error returned.
    pub fn clean_once(&self) -> Result<Option<CleanStats>> {
        self.clean_once_at(now_ms())
    }

    /// [`LogCleaner::clean_once`] as if the clock read `now_ms` (the time delete horizons are stamped from and
    /// compared with, and `min`/`max.compaction.lag.ms` measured to). For tests of time-based rules.
    #[doc(hidden)]
    pub fn clean_once_at(&self, now_ms: i64) -> Result<Option<CleanStats>> {
        let Some(ltc) = self.grab_filthiest(now_ms)? else {
            return Ok(None);
        };
        let tp = ltc.view.tp.clone();
        let result = self.clean(&ltc, now_ms);
        self.in_progress.lock().remove(&tp);
        if result.is_err() {
            self.uncleanable.lock().insert(tp);
        }
        result
    }

    /// Kafka's `grabFilthiestCompactedLog`.
    fn grab_filthiest(&self, now: i64) -> Result<Option<LogToClean>> {
        let mut in_progress = self.in_progress.lock();
        let uncleanable = self.uncleanable.lock().clone();
        let mut logs = Vec::new();
        for log in self.manager.all_logs() {
            let tp = log.topic_partition().clone();
            if in_progress.contains(&tp)
                || uncleanable.contains(&tp)
                || !log.config().cleanup_policy.compacts()
            {
                continue;
            }
            let Some(view) = log.cleaner_view()? else {
                continue;
            };
            if !view.config.cleanup_policy.compacts() {
                continue;
            }
            let checkpointed = self.checkpoints.get(log.log_dir(), &tp);
            let ltc = log_to_clean(log, view, checkpointed, now);
            if ltc.total_bytes() > 0 {
                logs.push(ltc);
            }
        }
        let max_ratio = logs.iter().map(|l| l.cleanable_ratio()).fold(0.0, f64::max);
        let max_delay = logs
            .iter()
            .map(|l| l.compaction_delay_ms)
            .max()
            .unwrap_or(0);
        {
            let mut st = self.state.lock();
            st.metrics.max_dirty_percent = 100.0 * max_ratio;
            st.metrics.max_compaction_delay_secs = max_delay as f64 / 1000.0;
        }
        let filthiest = logs
            .into_iter()
            .filter(LogToClean::is_due)
            .max_by(|a, b| a.cleanable_ratio().total_cmp(&b.cleanable_ratio()));
        if let Some(l) = &filthiest {
            in_progress.insert(l.view.tp.clone());
        }
        Ok(filthiest)
    }

    fn clean(&self, ltc: &LogToClean, now_ms: i64) -> Result<Option<CleanStats>> {
        let started = Instant::now();
        let is_cancelled = || self.stopped();
        let config = self.config();
        let mut cleaner = Cleaner {
            config: &config,
            throttler: &self.throttler,
            map: OffsetMap::new(config.map_memory(), config.io_buffer_load_factor),
            is_cancelled: &is_cancelled,
            crash: *self.crash.lock(),
            now_ms,
        };
        let Some(outcome) = cleaner.clean(ltc)? else {
            tracing::info!(tp = %ltc.view.tp, "log cleaning aborted (log changed or cleaner stopping)");
            return Ok(None);
        };
        drop(cleaner);
        let log = &ltc.log;
        let live: Vec<TopicPartition> = self
            .manager
            .all_logs()
            .iter()
            .filter(|l| l.log_dir() == log.log_dir())
            .map(|l| l.topic_partition().clone())
            .collect();
        self.checkpoints
            .update(log.log_dir(), &ltc.view.tp, outcome.end_offset, &live)?;
        let t = outcome.tally;
        let stats = CleanStats {
            tp: ltc.view.tp.clone(),
            first_dirty_offset: ltc.first_dirty_offset,
            end_offset: outcome.end_offset,
            dirty_ratio: ltc.cleanable_ratio(),
            dirty_bytes: ltc.cleanable_bytes,
            map_bytes_read: outcome.map_bytes_read,
            bytes_read: outcome.bytes_read,
            bytes_written: outcome.bytes_written,
            records_read: t.records_read,
            records_removed: t.records_read - t.records_retained,
            batches_copied: t.batches_copied,
            batches_rewritten: t.batches_rewritten,
            batches_emptied: t.batches_emptied,
            groups: outcome.groups,
            buffer_utilization: outcome.buffer_utilization,
            duration: started.elapsed(),
        };
        {
            let mut st = self.state.lock();
            let m = &mut st.metrics;
            m.max_buffer_utilization_percent = 100.0 * stats.buffer_utilization;
            m.cleaner_recopy_percent = stats.recopy_percent();
            m.max_clean_time_secs = stats.duration.as_secs_f64();
            m.bytes_read_total += stats.map_bytes_read + stats.bytes_read;
            m.bytes_written_total += stats.bytes_written;
            m.cleanings_total += 1;
            st.last_run = Instant::now();
        }
        let secs = stats.duration.as_secs_f64().max(1e-9);
        tracing::info!(
            tp = %stats.tp,
            first_dirty_offset = stats.first_dirty_offset,
            end_offset = stats.end_offset,
            dirty_ratio = format!("{:.3}", stats.dirty_ratio),
            bytes_read = stats.bytes_read,
            bytes_written = stats.bytes_written,
            records_removed = stats.records_removed,
            recopy_percent = format!("{:.1}", stats.recopy_percent()),
            mb_per_sec = format!("{:.1}", stats.dirty_bytes as f64 / secs / 1e6),
            duration_ms = stats.duration.as_millis() as u64,
            "cleaned log"
        );
        Ok(Some(stats))
    }
}
