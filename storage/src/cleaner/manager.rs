//! Which log to clean and over which range (Kafka's `LogCleanerManager`), and the `cleaner-offset-checkpoint`.
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::CLEANER_OFFSET_CHECKPOINT;
use crate::log::{CleanerView, SegmentInfo};
use crate::{checkpoint, Result, TopicPartition, UnifiedLog};

/// A compacted log and the range a cleaning would cover (Kafka's `LogToClean`).
#[derive(Clone, Debug)]
pub(crate) struct LogToClean {
    pub(crate) log: Arc<UnifiedLog>,
    pub(crate) view: CleanerView,
    pub(crate) first_dirty_offset: i64,
    /// The base offset of the first segment that may not be cleaned.
    pub(crate) first_uncleanable_offset: i64,
    pub(crate) clean_bytes: u64,
    pub(crate) cleanable_bytes: u64,
    /// How long past `max.compaction.lag.ms` its oldest dirty batch is (0 if not).
    pub(crate) compaction_delay_ms: i64,
}

impl LogToClean {
    pub(crate) fn total_bytes(&self) -> u64 {
        self.clean_bytes + self.cleanable_bytes
    }
    /// Cleanable bytes over total bytes.
    pub(crate) fn cleanable_ratio(&self) -> f64 {
        if self.total_bytes() == 0 {
            return 0.0;
        }
        self.cleanable_bytes as f64 / self.total_bytes() as f64
    }
    /// Whether it is due: over `min.cleanable.dirty.ratio`, or past `max.compaction.lag.ms` with something to clean.
    pub(crate) fn is_due(&self) -> bool {
        (self.compaction_delay_ms > 0 && self.cleanable_bytes > 0)
            || self.cleanable_ratio() > self.view.config.min_cleanable_dirty_ratio
    }
}

/// Kafka's `logSegments(from, to)`: the segment holding `from` (or the first) and every later one with a base
/// offset below `to`.
pub(crate) fn segments_between(view: &CleanerView, from: i64, to: i64) -> Vec<&SegmentInfo> {
    if from >= to {
        return Vec::new();
    }
    let floor = view
        .segments
        .iter()
        .rev()
        .find(|s| s.base_offset <= from)
        .map_or(i64::MIN, |s| s.base_offset);
    view.segments
        .iter()
        .filter(|s| s.base_offset >= floor && s.base_offset < to)
        .collect()
}

/// Kafka's `nonActiveLogSegmentsFrom(from)`.
fn non_active_from(view: &CleanerView, from: i64) -> Vec<&SegmentInfo> {
    segments_between(view, from, view.active_base_offset)
}

/// The range a cleaning of `view` would cover (Kafka's `cleanableOffsets` and `calculateCleanableBytes`).
pub(crate) fn log_to_clean(
    log: Arc<UnifiedLog>,
    view: CleanerView,
    checkpointed: Option<i64>,
    now_ms: i64,
) -> LogToClean {
    let start = view.log_start_offset;
    let first_dirty = match checkpointed {
        Some(c) if c >= start && c <= view.log_end_offset => c,
        _ => start,
    };
    // Never past the active segment, nor the last stable offset (data of open transactions stays dirty).
    let mut uncleanable = view
        .active_base_offset
        .min(view.log_end_offset)
        .min(view.last_stable_offset);
    let min_lag = view.config.min_compaction_lag_ms.max(0);
    if min_lag > 0 {
        if let Some(s) = non_active_from(&view, first_dirty)
            .into_iter()
            .find(|s| s.largest_timestamp > now_ms.saturating_sub(min_lag))
        {
            uncleanable = uncleanable.min(s.base_offset);
        }
    }
    let first_uncleanable = non_active_from(&view, uncleanable)
        .first()
        .map_or(view.active_base_offset, |s| s.base_offset);
    let cleanable_bytes =
        segments_between(&view, first_dirty.min(first_uncleanable), first_uncleanable)
            .iter()
            .map(|s| s.size)
            .sum();
    let clean_bytes = segments_between(&view, i64::MIN, first_dirty)
        .iter()
        .map(|s| s.size)
        .sum();
    let compaction_delay_ms = max_compaction_delay(&view, first_dirty, now_ms);
    LogToClean {
        log,
        view,
        first_dirty_offset: first_dirty,
        first_uncleanable_offset: first_uncleanable,
        clean_bytes,
        cleanable_bytes,
        compaction_delay_ms,
    }
}

/// Kafka's `maxCompactionDelay`: how far past `max.compaction.lag.ms` the oldest first-batch timestamp of the
/// dirty non-active segments is.
fn max_compaction_delay(view: &CleanerView, first_dirty: i64, now_ms: i64) -> i64 {
    let earliest = non_active_from(view, first_dirty)
        .iter()
        .filter_map(|s| s.first_batch_timestamp)
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(i64::MAX);
    let clean_until = now_ms.saturating_sub(view.config.max_compaction_lag_ms.max(0));
    if earliest < clean_until {
        clean_until - earliest
    } else {
        0
    }
}

/// The `cleaner-offset-checkpoint` files, one per log dir, cached.
#[derive(Default)]
pub(crate) struct Checkpoints {
    dirs: Mutex<HashMap<PathBuf, BTreeMap<TopicPartition, i64>>>,
}

impl Checkpoints {
    fn load<'a>(
        dirs: &'a mut HashMap<PathBuf, BTreeMap<TopicPartition, i64>>,
        log_dir: &Path,
    ) -> &'a mut BTreeMap<TopicPartition, i64> {
        dirs.entry(log_dir.to_path_buf()).or_insert_with(|| {
            let path = log_dir.join(CLEANER_OFFSET_CHECKPOINT);
            checkpoint::read_offsets(&path).unwrap_or_else(|e| {
                tracing::warn!(file = %path.display(), error = %e, "ignoring an unreadable cleaner checkpoint");
                BTreeMap::new()
            })
        })
    }

    /// The first dirty offset checkpointed for `tp` in `log_dir`.
    pub(crate) fn get(&self, log_dir: &Path, tp: &TopicPartition) -> Option<i64> {
        let mut dirs = self.dirs.lock();
        Self::load(&mut dirs, log_dir).get(tp).copied()
    }

    /// Records `offset` as the first dirty offset of `tp` and rewrites the dir's file (atomically), dropping
    /// entries of logs no longer in `live`.
    pub(crate) fn update(
        &self,
        log_dir: &Path,
        tp: &TopicPartition,
        offset: i64,
        live: &[TopicPartition],
    ) -> Result<()> {
        let mut dirs = self.dirs.lock();
        let map = Self::load(&mut dirs, log_dir);
        map.insert(tp.clone(), offset);
        map.retain(|t, _| live.contains(t));
        checkpoint::write_offsets(&log_dir.join(CLEANER_OFFSET_CHECKPOINT), map)
    }

    /// Drops `tp`'s entry and rewrites the dir's file (the log was deleted; a new log of the same name starts
    /// dirty from its log start offset).
    pub(crate) fn remove(&self, log_dir: &Path, tp: &TopicPartition) -> Result<()> {
        let mut dirs = self.dirs.lock();
        let map = Self::load(&mut dirs, log_dir);
        if map.remove(tp).is_some() {
            checkpoint::write_offsets(&log_dir.join(CLEANER_OFFSET_CHECKPOINT), map)?;
        }
        Ok(())
    }
}
