//! The log cleaner: Kafka's log compaction for `cleanup.policy=compact` (and `compact,delete`) logs.
//!
//! * [`LogCleaner`] (the worker, `worker.rs`; Kafka's `LogCleaner` + `CleanerThread`): [`LogCleaner::clean_once`]
//!   picks the dirtiest compacted log and cleans it; [`LogCleaner::run`] loops with `log.cleaner.backoff.ms`
//!   between idle rounds until [`LogCleaner::shutdown`].
//! * `manager.rs` (Kafka's `LogCleanerManager`): per log, the first dirty offset (from the
//!   `cleaner-offset-checkpoint` file of its log dir, else the log start offset), the first uncleanable offset
//!   (the active segment's base offset, lowered to the first segment whose newest record is younger than
//!   `min.compaction.lag.ms`; later also the last stable offset), the dirty ratio
//!   `cleanable bytes / (clean + cleanable bytes)` compared with `min.cleanable.dirty.ratio`, and
//!   `max.compaction.lag.ms`, which makes a log due whatever its ratio.
//! * `task.rs` (Kafka's `Cleaner`): one cleaning of one log. It maps every key of the dirty range to its latest
//!   offset in an [`OffsetMap`](offset_map::OffsetMap) bounded by `log.cleaner.dedupe.buffer.size` (when the
//!   range does not fit, it stops where the map filled: the next round goes on from there), then rewrites the
//!   segments from the log start up to the end of the mapped range, grouped up to `segment.bytes` (and the index
//!   sizes) as Kafka's `groupSegmentsBySize`, keeping per key only the record at its latest offset. Offsets never
//!   change. Tombstones (null values) follow KIP-534 (Kafka 2.8+): the first pass that keeps a tombstone stamps
//!   its batch's delete horizon (`now + delete.retention.ms`) into the batch (`baseTimestamp` = the horizon,
//!   attributes bit 6 set; record timestamps stay `baseTimestamp + delta`), so restarts and later passes keep it;
//!   a pass after the horizon drops the tombstone. Records without a key (older data) are dropped.
//! * `transactions.rs` (Kafka's `CleanedTransactionMetadata`): data of aborted transactions is dropped; a COMMIT
//!   or ABORT marker whose transaction has no data left gets a delete horizon like a tombstone, then goes. The
//!   cleanable range ends at the last stable offset, so open transactions are never cleaned.
//! * `retain.rs`: what one batch becomes. A batch whose records all stay is copied byte for byte; otherwise it is
//!   re-encoded with its codec, base offset, last offset delta, producer id/epoch, base sequence, leader epoch and
//!   attributes, its base timestamp moved to its first kept record, or set to the delete horizon (Kafka's
//!   `buildRetainedRecordsInto`); a batch that gets its horizon now is re-encoded even if all its records stay. A
//!   batch left without records is dropped, unless it is the last data batch of a producer the log still knows
//!   (or, without one, a marker of its epoch): it is kept as an empty batch (header only), as Kafka does, so the
//!   producer's sequence and epoch survive.
//!
//! Crash safety, Kafka's file protocol: each group is written to `{base}.log.cleaned` (with `.index.cleaned`,
//! `.timeindex.cleaned`), fsynced, renamed `.swap` (the commit point), the old segments renamed `.deleted`, the
//! `.swap` files renamed to their final names (see `log/cleaning.rs`); loading a log finishes or drops an
//! interrupted swap (`log/loader.rs`).
//!
//! `cleaner-offset-checkpoint` (per log dir, Kafka's format): `0` (version), the number of entries, then one
//! `topic partition offset` line per log: the first dirty offset.
mod manager;
mod offset_map;
mod retain;
mod task;
mod throttler;
mod transactions;
mod worker;

pub use crate::log::CrashPoint;
pub use worker::{CleanStats, CleanerMetrics, LogCleaner};

use crate::{Error, Result};

/// The cleaner's file name for the first dirty offset of each log, one per log dir (Kafka's name).
pub const CLEANER_OFFSET_CHECKPOINT: &str = "cleaner-offset-checkpoint";

/// The broker-level cleaner settings (Kafka's `log.cleaner.*`); `Default` = Kafka's defaults. The per-topic
/// settings (`min.cleanable.dirty.ratio`, `delete.retention.ms`, `min.compaction.lag.ms`,
/// `max.compaction.lag.ms`, `segment.bytes`) come from each log's [`crate::LogConfig`].
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct CleanerConfig {
    /// Kafka: `log.cleaner.enable`. Default: true. When false, [`LogCleaner::run`] returns at once.
    pub enable: bool,
    /// Kafka: `log.cleaner.threads`. Default: 1. Threads the broker runs [`LogCleaner::run`] on; the dedupe buffer
    /// is split between them.
    pub threads: usize,
    /// Kafka: `log.cleaner.dedupe.buffer.size`. Default: 128 MiB. Memory of the offset maps of all threads
    /// (24 bytes per key); at least 1 MiB per thread.
    pub dedupe_buffer_size: u64,
    /// Kafka: `log.cleaner.io.buffer.size`. Default: 512 KiB. Bytes read from a segment at a time and written to
    /// the cleaned segment at a time (a larger batch is read whole).
    pub io_buffer_size: usize,
    /// Kafka: `log.cleaner.io.buffer.load.factor`. Default: 0.9. How full the offset map may get.
    pub io_buffer_load_factor: f64,
    /// Kafka: `log.cleaner.io.max.bytes.per.second`. Default: unlimited (Double.MAX_VALUE). Read plus written
    /// bytes per second, for all threads.
    pub io_max_bytes_per_second: f64,
    /// Kafka: `log.cleaner.backoff.ms`. Default: 15000. Sleep when no log needs cleaning.
    pub backoff_ms: u64,
}

impl Default for CleanerConfig {
    fn default() -> Self {
        Self {
            enable: true,
            threads: 1,
            dedupe_buffer_size: 128 << 20,
            io_buffer_size: 512 << 10,
            io_buffer_load_factor: 0.9,
            io_max_bytes_per_second: f64::MAX,
            backoff_ms: 15_000,
        }
    }
}

impl CleanerConfig {
    /// Checks the values as Kafka's `KafkaConfig` does; the error names the key and the bad value.
    pub fn validate(&self) -> Result<()> {
        let bad = |key: &str, value: String, reason: &str| {
            Err(Error::InvalidConfig {
                key: key.into(),
                value,
                reason: reason.into(),
            })
        };
        if self.threads == 0 {
            return bad("log.cleaner.threads", "0".into(), "must be at least 1");
        }
        if self.dedupe_buffer_size / (self.threads as u64) < 1 << 20 {
            return bad(
                "log.cleaner.dedupe.buffer.size",
                self.dedupe_buffer_size.to_string(),
                "must be at least 1MiB per cleaner thread",
            );
        }
        if self.io_buffer_size == 0 {
            return bad("log.cleaner.io.buffer.size", "0".into(), "must be positive");
        }
        if !(self.io_buffer_load_factor > 0.0 && self.io_buffer_load_factor <= 1.0) {
            return bad(
                "log.cleaner.io.buffer.load.factor",
                self.io_buffer_load_factor.to_string(),
                "must be in (0, 1]",
            );
        }
        if self.io_max_bytes_per_second.is_nan() || self.io_max_bytes_per_second <= 0.0 {
            return bad(
                "log.cleaner.io.max.bytes.per.second",
                self.io_max_bytes_per_second.to_string(),
                "must be positive",
            );
        }
        Ok(())
    }

    /// Offset map memory per thread (Kafka caps it at Int.MaxValue).
    pub(crate) fn map_memory(&self) -> usize {
        (self.dedupe_buffer_size / self.threads.max(1) as u64).min(i32::MAX as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_cleaner_values_are_invalid_config_naming_the_key() {
        type Set = fn(&mut CleanerConfig);
        let cases: [(&str, Set); 5] = [
            ("log.cleaner.threads", |c| c.threads = 0),
            ("log.cleaner.dedupe.buffer.size", |c| {
                c.threads = 4;
                c.dedupe_buffer_size = 2 << 20;
            }),
            ("log.cleaner.io.buffer.size", |c| c.io_buffer_size = 0),
            ("log.cleaner.io.buffer.load.factor", |c| {
                c.io_buffer_load_factor = 1.5
            }),
            ("log.cleaner.io.max.bytes.per.second", |c| {
                c.io_max_bytes_per_second = 0.0
            }),
        ];
        for (key, set) in cases {
            let mut c = CleanerConfig::default();
            set(&mut c);
            assert!(
                matches!(c.validate(), Err(Error::InvalidConfig { key: k, .. }) if k == key),
                "{key}"
            );
        }
        CleanerConfig::default().validate().unwrap();
        assert_eq!(CleanerConfig::default().map_memory(), 128 << 20);
    }
}
