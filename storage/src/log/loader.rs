//! Loading a partition directory (Kafka's `LogLoader`).
//!
//! 1. Remove leftovers: `*.deleted`, `*.cleaned` (an unfinished cleaner output), `*.tmp`; finish each interrupted
//!    cleaner swap (Kafka's `completeSwapOperations`): a `{base}.log.swap` replaces the segments whose base offset
//!    lies in `[base, its next offset)` (at least `base` itself) and takes their place as `{base}.log` (its indexes
//!    are rebuilt), unless a `.cleaned` file at or below `base` shows its rename was not finished (then it is
//!    dropped, keeping the old segments); then remove index files without a `.log`.
//! 2. Open the segments. After a clean shutdown (marker present) trust them: read the next offset from the offset
//!    index and the log tail, the max timestamp from the time index; a segment whose indexes fail the sanity check
//!    is recovered instead. Without the marker, recover every segment from the one holding the recovery point:
//!    validate each batch (CRC included), rebuild both indexes, truncate the `.log` at the first invalid batch and
//!    delete every later segment.
//! 3. Leader epochs above the log end are dropped; producer state is loaded from the newest snapshot at or below
//!    the log end (and at or below the first recovered segment) and the log after it is replayed; the ABORT
//!    markers met in recovered segments rebuild their `.txnindex`.
use std::path::PathBuf;
use std::sync::Arc;

use uuid::Uuid;

use super::leader_epoch::LeaderEpochCache;
use super::local_log::LocalLog;
use super::segments::LogSegments;
use super::unified::{LogState, UnifiedLog};
use super::{LogDir, RollListeners};
use crate::error::io_err;
use crate::handles::HandleCache;
use crate::index::AbortedTxn;
use crate::names::{self, LOG_SUFFIX};
use crate::producer::{self, ProducerStateManager};
use crate::segment::LogSegment;
use crate::{fsio, Error, LogConfig, Result, TopicPartition};

/// What the manager knows about a partition directory before loading it.
pub(crate) struct LoadParams {
    pub(crate) tp: TopicPartition,
    pub(crate) topic_id: Uuid,
    pub(crate) dir: PathBuf,
    pub(crate) config: LogConfig,
    pub(crate) log_dir: Arc<LogDir>,
    pub(crate) listeners: Arc<RollListeners>,
    pub(crate) clean_shutdown: bool,
    pub(crate) recovery_point: i64,
    pub(crate) log_start_offset: Option<i64>,
    /// Whether `config` is the topic's real config (from the provider or the caller), so a non-tiered one may
    /// raise a checkpointed log start offset to the first local segment.
    pub(crate) config_is_authoritative: bool,
    pub(crate) now_ms: i64,
    /// Counts (and bounds) the log's open descriptors and index mappings.
    pub(crate) handles: Arc<HandleCache>,
}

fn remove(path: &std::path::Path) -> Result<()> {
    std::fs::remove_file(path).map_err(io_err(path))
}

/// Opens (creating if needed) and recovers the partition directory.
pub(crate) fn load_log(p: LoadParams) -> Result<UnifiedLog> {
    std::fs::create_dir_all(&p.dir).map_err(io_err(&p.dir))?;
    // 1. Leftovers and the segment list.
    let mut bases = Vec::new();
    let mut others = Vec::new();
    let mut swaps = Vec::new();
    let mut min_cleaned = i64::MAX;
    for entry in std::fs::read_dir(&p.dir).map_err(io_err(&p.dir))? {
        let entry = entry.map_err(io_err(&p.dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if let Some(stem) = name.strip_suffix(names::SWAP_SUFFIX) {
            if let Some(base) = names::parse_offset_file(stem, LOG_SUFFIX) {
                swaps.push(base);
                continue;
            }
        }
        if let Some(stem) = name.strip_suffix(names::CLEANED_SUFFIX) {
            let base = [LOG_SUFFIX, names::INDEX_SUFFIX, names::TIME_INDEX_SUFFIX]
                .iter()
                .find_map(|s| names::parse_offset_file(stem, s));
            min_cleaned = min_cleaned.min(base.unwrap_or(i64::MAX));
        }
        if [
            names::DELETED_SUFFIX,
            names::SWAP_SUFFIX,
            names::CLEANED_SUFFIX,
            ".tmp",
        ]
        .iter()
        .any(|s| name.ends_with(s))
        {
            tracing::info!(file = %path.display(), "removing leftover file");
            remove(&path)?;
        } else if let Some(base) = names::parse_offset_file(&name, LOG_SUFFIX) {
            bases.push(base);
        } else {
            others.push((name, path));
        }
    }
    bases.sort_unstable();
    swaps.sort_unstable();
    for base in swaps {
        complete_swap(&p, base, min_cleaned, &mut bases)?;
    }
    for (name, path) in others {
        let orphan = [
            names::INDEX_SUFFIX,
            names::TIME_INDEX_SUFFIX,
            names::TXN_INDEX_SUFFIX,
        ]
        .iter()
        .filter_map(|s| names::parse_offset_file(&name, s))
        .any(|base| bases.binary_search(&base).is_err());
        if orphan {
            tracing::info!(file = %path.display(), "removing index without a log file");
            remove(&path)?;
        }
    }

    // 2. Segments.
    let cfg = &p.config;
    let mut segments = LogSegments::new();
    let recover_from = if p.clean_shutdown {
        i64::MAX
    } else {
        // The segment holding the recovery point and every later one.
        bases
            .iter()
            .rev()
            .find(|&&b| b <= p.recovery_point)
            .copied()
            .unwrap_or(i64::MIN)
    };
    let mut truncated_at: Option<i64> = None;
    let mut recovered_from: Option<i64> = None;
    for (i, &base) in bases.iter().enumerate() {
        if truncated_at.is_some() {
            // Unflushed segments after a torn one are deleted (Kafka's LogLoader does the same).
            for suffix in [
                LOG_SUFFIX,
                names::INDEX_SUFFIX,
                names::TIME_INDEX_SUFFIX,
                names::TXN_INDEX_SUFFIX,
            ] {
                let f = names::offset_file(&p.dir, base, suffix);
                if f.exists() {
                    remove(&f)?;
                }
            }
            tracing::warn!(tp = %p.tp, base_offset = base, "deleted segment after a truncated one");
            continue;
        }
        let active = i + 1 == bases.len();
        let mut seg = LogSegment::open(&p.dir, base, cfg, active, p.now_ms, &p.handles)?;
        let must_recover = base >= recover_from;
        if must_recover {
            recovered_from.get_or_insert(base);
            let removed = seg.recover(cfg.segment_index_bytes, |_| {})?;
            if removed > 0 {
                tracing::warn!(tp = %p.tp, base_offset = base, truncated_at_offset = seg.next_offset(), bytes = removed,
                    "truncated the segment at its first invalid batch (a torn tail or a CRC mismatch; later unflushed segments are deleted)");
                truncated_at = Some(seg.next_offset());
            }
        } else if let Err(e) = seg.load_state() {
            tracing::warn!(tp = %p.tp, base_offset = base, error = %e, "rebuilding segment indexes");
            recovered_from = Some(recovered_from.map_or(base, |r| r.min(base)));
            let removed = seg.recover(cfg.segment_index_bytes, |_| {})?;
            if removed > 0 {
                // A flushed segment damaged on disk: keep the later (also flushed) segments; the offsets
                // between them become a gap that reads skip, as after compaction.
                tracing::error!(tp = %p.tp, base_offset = base, bytes = removed, "truncated a damaged flushed segment");
                if active {
                    truncated_at = Some(seg.next_offset());
                }
            }
        }
        if !active && truncated_at.is_none() {
            seg.on_become_inactive()?;
            // Flushed below; older segments reopen on their first read.
            seg.flush()?;
            seg.release_handles(0, true);
        }
        segments.add(seg);
    }
    // A truncated segment became the last one; `recover` left its indexes preallocated for appends.
    if segments.is_empty() {
        let base = p.log_start_offset.unwrap_or(0).max(0);
        segments.add(LogSegment::create(&p.dir, base, cfg, p.now_ms, &p.handles)?);
    }
    let first_base = segments.first_base_offset().expect("non-empty");
    let leo = segments.last_segment().expect("non-empty").next_offset();
    for seg in segments.iter_mut() {
        seg.flush()?;
    }
    fsio::sync_dir(&p.dir)?;

    // Log start: the checkpoint, never past the end. It may be below the first local segment: on a tiered
    // partition those offsets live in remote storage. Only a config known to be the topic's and not tiered
    // raises it to the first local segment here; otherwise applying a non-tiered config does
    // (`UnifiedLog::update_config`), as does retention.
    let mut log_start = p.log_start_offset.unwrap_or(first_base);
    if p.config_is_authoritative && !cfg.remote_storage_enable {
        log_start = log_start.max(first_base);
    }
    let log_start = log_start.min(leo);

    // 3. Leader epochs and producer state.
    let epoch_path = p.dir.join(names::LEADER_EPOCH_CHECKPOINT);
    let mut leader_epochs = match LeaderEpochCache::load(epoch_path.clone()) {
        Ok(c) => c,
        Err(e @ Error::CorruptFile { .. }) => {
            tracing::warn!(tp = %p.tp, error = %e, "resetting an unreadable leader-epoch-checkpoint");
            LeaderEpochCache::empty(epoch_path)
        }
        Err(e) => return Err(e),
    };
    leader_epochs.truncate_from_end(leo)?;
    producer::delete_snapshots_from(&p.dir, leo)?;
    // Recovered segments lost their `.txnindex`; the replay rebuilds it, so it starts at or below the first of
    // them (Kafka's `recoverSegment` replays producer state over the segment for the same reason).
    let rebuild_from = recovered_from.unwrap_or(i64::MAX);
    let (snap_offset, mut producers) =
        match producer::latest_snapshot_at_or_below(&p.dir, leo.min(rebuild_from))? {
            // A snapshot below the first segment still holds the state of producers whose batches are gone.
            Some((off, state)) => (off.max(first_base), state),
            None => (first_base, ProducerStateManager::new()),
        };
    if snap_offset < leo {
        for seg in segments
            .iter_mut()
            .filter(|s| s.next_offset() > snap_offset)
        {
            let from = seg.offset_index().lookup(snap_offset)?.position as u64;
            let mut aborted = Vec::new();
            for item in seg.file_records().batches_from(from, false) {
                let (_, batch) = item.map_err(|e| e.error)?;
                if batch.base_offset() >= snap_offset {
                    if let Some(t) = producers.replay(&batch).filter(|t| t.is_aborted) {
                        aborted.push(AbortedTxn {
                            producer_id: t.producer_id,
                            first_offset: t.first_offset,
                            last_offset: t.last_offset,
                            last_stable_offset: producers
                                .first_unstable_offset()
                                .unwrap_or(t.last_offset + 1),
                        });
                    }
                }
            }
            if seg.base_offset() >= rebuild_from {
                for t in &aborted {
                    seg.append_aborted_txn(t)?;
                }
                seg.flush()?;
            }
        }
    }
    // The replay reopened what it read; only the active segment stays open.
    let n = segments.len();
    for seg in segments.iter_mut().take(n - 1) {
        seg.release_handles(0, true);
    }
    producers.truncate_head(log_start);
    // Keep the snapshots tiering may upload (at segment boundaries) and the newest one (the next unclean start
    // replays from it); other shutdown snapshots inside the active segment are stale.
    let snapshots = producer::list_snapshots(&p.dir)?;
    let newest = snapshots.last().copied();
    for off in snapshots {
        if off < leo && !segments.contains(off) && Some(off) != newest {
            let path = names::offset_file(&p.dir, off, names::SNAPSHOT_SUFFIX);
            remove(&path)?;
        }
    }

    let state = LogState {
        local: LocalLog::new(
            p.dir.clone(),
            p.config.clone(),
            segments,
            leo,
            p.now_ms,
            p.handles.clone(),
        ),
        log_start_offset: log_start,
        producers,
        leader_epochs,
        closed: false,
    };
    tracing::info!(tp = %p.tp, log_start_offset = log_start, log_end_offset = leo, clean = p.clean_shutdown, "loaded log");
    Ok(UnifiedLog::from_parts(
        p.tp,
        p.topic_id,
        p.dir,
        p.log_dir,
        p.listeners,
        state,
    ))
}

/// Finishes (or, if a `.cleaned` file at or below it shows the rename was cut short, drops) the cleaner swap of
/// `{base}.log.swap`; `bases` (sorted) is updated to the `.log` files left.
fn complete_swap(p: &LoadParams, base: i64, min_cleaned: i64, bases: &mut Vec<i64>) -> Result<()> {
    let swap = names::offset_file(&p.dir, base, &format!("{LOG_SUFFIX}{}", names::SWAP_SUFFIX));
    if base >= min_cleaned {
        tracing::warn!(tp = %p.tp, file = %swap.display(), "dropping an unfinished cleaner swap (keeping the old segments)");
        return remove(&swap);
    }
    // The swap was fsynced before its rename: every batch is valid. Its next offset bounds what it replaces.
    let records = crate::file_records::FileRecords::open_in(&swap, p.handles.clone())?;
    let mut next = base;
    for item in records.batches_from(0, true) {
        match item {
            Ok((_, batch)) => next = batch.next_offset(),
            Err(e) => {
                tracing::warn!(tp = %p.tp, file = %swap.display(), error = %e.error, "invalid batch in a cleaner swap file");
                break;
            }
        }
    }
    drop(records);
    let end = next.max(base + 1);
    let replaced: Vec<i64> = bases
        .iter()
        .copied()
        .filter(|&b| b >= base && b < end)
        .collect();
    for &b in &replaced {
        for suffix in [
            LOG_SUFFIX,
            names::INDEX_SUFFIX,
            names::TIME_INDEX_SUFFIX,
            names::TXN_INDEX_SUFFIX,
        ] {
            let f = names::offset_file(&p.dir, b, suffix);
            if f.exists() {
                remove(&f)?;
            }
        }
    }
    // The swap's indexes are rebuilt from its log.
    for suffix in [names::INDEX_SUFFIX, names::TIME_INDEX_SUFFIX] {
        let f = names::offset_file(&p.dir, base, suffix);
        if f.exists() {
            remove(&f)?;
        }
    }
    let target = names::offset_file(&p.dir, base, LOG_SUFFIX);
    std::fs::rename(&swap, &target).map_err(io_err(&swap))?;
    fsio::sync_dir(&p.dir)?;
    bases.retain(|b| !replaced.contains(b));
    bases.push(base);
    bases.sort_unstable();
    tracing::info!(tp = %p.tp, base_offset = base, replaced = ?replaced, "completed an interrupted cleaner swap");
    Ok(())
}

impl From<crate::file_records::BatchScanError> for Error {
    fn from(e: crate::file_records::BatchScanError) -> Self {
        e.error
    }
}
