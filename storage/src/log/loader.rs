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
use std::path::{Path, PathBuf};
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
    /// Whether loading ends with an fsync of `dir` (false for a log just created: its creator syncs it, see
    /// `LogManager::sync_new_logs`).
    pub(crate) sync_dir: bool,
    pub(crate) recovery_point: i64,
    pub(crate) log_start_offset: Option<i64>,
    /// Whether `config` is the topic's real config (from the provider or the caller), so a non-tiered one may
    /// raise a checkpointed log start offset to the first local segment.
    pub(crate) config_is_authoritative: bool,
    pub(crate) now_ms: i64,
    /// Counts (and bounds) the log's open descriptors and index mappings.
    pub(crate) handles: Arc<HandleCache>,
}

fn remove(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(io_err(path))
}

/// Opens (creating if needed) and recovers the partition directory: the steps of Kafka's `LogLoader.load`, in the
/// order of the module doc.
pub(crate) fn load_log(p: LoadParams) -> Result<UnifiedLog> {
    std::fs::create_dir_all(&p.dir).map_err(io_err(&p.dir))?;
    // 1. Leftovers and the segment list.
    let bases = remove_temp_files_and_complete_swaps(&p)?;
    // 2. Segments.
    let LoadedSegments {
        mut segments,
        recovered_from,
    } = load_segments(&p, &bases)?;
    let first_base = segments.first_base_offset().expect("non-empty");
    let leo = segments.last_segment().expect("non-empty").next_offset();
    let log_start = log_start_offset(&p, first_base, leo);
    // 3. Leader epochs and producer state.
    let leader_epochs = load_leader_epochs(&p, leo)?;
    producer::delete_snapshots_from(&p.dir, leo)?;
    let mut producers = rebuild_producer_state(&p, &mut segments, leo, recovered_from)?;
    // The replay reopened what it read; only the active segment stays open.
    let n = segments.len();
    for seg in segments.iter_mut().take(n - 1) {
        seg.release_handles(0, true);
    }
    producers.truncate_head(log_start);
    delete_stale_snapshots(&p.dir, &segments, leo)?;

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

/// What step 1 finds in the partition directory besides the segments' `.log` files.
struct DirListing {
    /// Base offsets of the `.log` files, sorted.
    bases: Vec<i64>,
    /// Files that are neither a `.log` nor a leftover (indexes, snapshots, checkpoints, ...).
    others: Vec<(String, PathBuf)>,
    /// Base offsets of the `.log.swap` files (left in place for [`complete_swap`]), sorted.
    swaps: Vec<i64>,
    /// The lowest base offset of a `.cleaned` file, `i64::MAX` if none.
    min_cleaned: i64,
}

/// Step 1 (Kafka's `removeTempFilesAndCollectSwapFiles` + `completeSwapOperations`): removes the leftovers,
/// finishes the interrupted cleaner swaps, removes indexes without a `.log`; returns the segments' base offsets,
/// sorted.
fn remove_temp_files_and_complete_swaps(p: &LoadParams) -> Result<Vec<i64>> {
    let DirListing {
        mut bases,
        others,
        swaps,
        min_cleaned,
    } = remove_temp_files_and_collect(p)?;
    for base in swaps {
        complete_swap(p, base, min_cleaned, &mut bases)?;
    }
    remove_orphan_indexes(&others, &bases)?;
    Ok(bases)
}

/// Lists the directory, removing `*.deleted`, `*.cleaned`, `*.tmp` and index `*.swap` files as it goes (a
/// `.log.swap` is left for [`complete_swap`]).
fn remove_temp_files_and_collect(p: &LoadParams) -> Result<DirListing> {
    let mut listing = DirListing {
        bases: Vec::new(),
        others: Vec::new(),
        swaps: Vec::new(),
        min_cleaned: i64::MAX,
    };
    for entry in std::fs::read_dir(&p.dir).map_err(io_err(&p.dir))? {
        let entry = entry.map_err(io_err(&p.dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if let Some(stem) = name.strip_suffix(names::SWAP_SUFFIX) {
            if let Some(base) = names::parse_offset_file(stem, LOG_SUFFIX) {
                listing.swaps.push(base);
                continue;
            }
        }
        if let Some(stem) = name.strip_suffix(names::CLEANED_SUFFIX) {
            let base = [LOG_SUFFIX, names::INDEX_SUFFIX, names::TIME_INDEX_SUFFIX]
                .iter()
                .find_map(|s| names::parse_offset_file(stem, s));
            listing.min_cleaned = listing.min_cleaned.min(base.unwrap_or(i64::MAX));
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
            listing.bases.push(base);
        } else {
            listing.others.push((name, path));
        }
    }
    listing.bases.sort_unstable();
    listing.swaps.sort_unstable();
    Ok(listing)
}

/// Removes the index files (`.index`, `.timeindex`, `.txnindex`) whose segment has no `.log` (`bases`, sorted).
fn remove_orphan_indexes(others: &[(String, PathBuf)], bases: &[i64]) -> Result<()> {
    for (name, path) in others {
        let orphan = [
            names::INDEX_SUFFIX,
            names::TIME_INDEX_SUFFIX,
            names::TXN_INDEX_SUFFIX,
        ]
        .iter()
        .filter_map(|s| names::parse_offset_file(name, s))
        .any(|base| bases.binary_search(&base).is_err());
        if orphan {
            tracing::info!(file = %path.display(), "removing index without a log file");
            match std::fs::remove_file(path) {
                // Already removed with its segment: a completed swap deletes the files of the segments it
                // replaced, and `others` was listed before (the crash loop found the start failing on it).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                r => r.map_err(io_err(path))?,
            }
        }
    }
    Ok(())
}

/// The segments step 2 opened, and the base offset of the first one it recovered (whose `.txnindex` the
/// producer state replay rebuilds), if any.
struct LoadedSegments {
    segments: LogSegments,
    recovered_from: Option<i64>,
}

/// Step 2 (Kafka's `loadSegmentFiles` + `recoverLog`): opens the segments of `bases` (sorted), recovering those
/// from the one holding the recovery point after an unclean shutdown (and any whose indexes fail their check),
/// deletes the segments after a truncated one, creates an empty segment if none is left, and flushes them all.
fn load_segments(p: &LoadParams, bases: &[i64]) -> Result<LoadedSegments> {
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
            delete_segment_files(&p.dir, base)?;
            tracing::warn!(tp = %p.tp, base_offset = base, "deleted segment after a truncated one");
            continue;
        }
        let active = i + 1 == bases.len();
        let mut seg = LogSegment::open(&p.dir, base, cfg, active, p.now_ms, &p.handles)?;
        if base >= recover_from {
            recovered_from.get_or_insert(base);
            truncated_at = recover_segment(p, &mut seg)?;
        } else if let Err(e) = seg.load_state() {
            tracing::warn!(tp = %p.tp, base_offset = base, error = %e, "rebuilding segment indexes");
            recovered_from = Some(recovered_from.map_or(base, |r| r.min(base)));
            truncated_at = rebuild_damaged_segment(p, &mut seg, active)?;
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
    for seg in segments.iter_mut() {
        seg.flush()?;
    }
    if p.sync_dir {
        fsio::sync_dir(&p.dir)?;
    }
    Ok(LoadedSegments {
        segments,
        recovered_from,
    })
}

/// Kafka's `recoverSegment` for a segment at or after the recovery point: validates every batch and rebuilds the
/// indexes, truncating at the first invalid batch. Returns the offset it truncated at (later segments are then
/// deleted), if it did.
fn recover_segment(p: &LoadParams, seg: &mut LogSegment) -> Result<Option<i64>> {
    let removed = seg.recover(p.config.segment_index_bytes, |_| {})?;
    if removed == 0 {
        return Ok(None);
    }
    tracing::warn!(tp = %p.tp, base_offset = seg.base_offset(), truncated_at_offset = seg.next_offset(), bytes = removed,
        "truncated the segment at its first invalid batch (a torn tail or a CRC mismatch; later unflushed segments are deleted)");
    Ok(Some(seg.next_offset()))
}

/// Recovers a flushed segment whose indexes failed their check. If it was damaged on disk and had to be truncated,
/// the later (also flushed) segments are kept: the offsets between them become a gap that reads skip, as after
/// compaction. Returns the offset it truncated at only for the active segment.
fn rebuild_damaged_segment(
    p: &LoadParams,
    seg: &mut LogSegment,
    active: bool,
) -> Result<Option<i64>> {
    let removed = seg.recover(p.config.segment_index_bytes, |_| {})?;
    if removed == 0 {
        return Ok(None);
    }
    tracing::error!(tp = %p.tp, base_offset = seg.base_offset(), bytes = removed, "truncated a damaged flushed segment");
    Ok(active.then(|| seg.next_offset()))
}

/// Removes the `.log` and index files of the segment based at `base`, those that exist.
fn delete_segment_files(dir: &Path, base: i64) -> Result<()> {
    for suffix in [
        LOG_SUFFIX,
        names::INDEX_SUFFIX,
        names::TIME_INDEX_SUFFIX,
        names::TXN_INDEX_SUFFIX,
    ] {
        let f = names::offset_file(dir, base, suffix);
        if f.exists() {
            remove(&f)?;
        }
    }
    Ok(())
}

/// The log start offset: the checkpoint, never past the end. It may be below the first local segment: on a tiered
/// partition those offsets live in remote storage. Only a config known to be the topic's and not tiered raises it
/// to the first local segment here; otherwise applying a non-tiered config does (`UnifiedLog::update_config`), as
/// does retention.
fn log_start_offset(p: &LoadParams, first_base: i64, leo: i64) -> i64 {
    let mut log_start = p.log_start_offset.unwrap_or(first_base);
    if p.config_is_authoritative && !p.config.remote_storage_enable {
        log_start = log_start.max(first_base);
    }
    log_start.min(leo)
}

/// The `leader-epoch-checkpoint` (reset if unreadable) without the epochs that start above the log end.
fn load_leader_epochs(p: &LoadParams, leo: i64) -> Result<LeaderEpochCache> {
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
    Ok(leader_epochs)
}

/// Kafka's `rebuildProducerState`: the newest producer snapshot at or below the log end and the first recovered
/// segment, then the log after it replayed; the recovered segments get their `.txnindex` back from the ABORT
/// markers met.
fn rebuild_producer_state(
    p: &LoadParams,
    segments: &mut LogSegments,
    leo: i64,
    recovered_from: Option<i64>,
) -> Result<ProducerStateManager> {
    let first_base = segments.first_base_offset().expect("non-empty");
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
            let rebuild_txn_index = seg.base_offset() >= rebuild_from;
            replay_segment(seg, snap_offset, &mut producers, rebuild_txn_index)?;
        }
    }
    Ok(producers)
}

/// Replays the batches of `seg` from `snap_offset` into `producers`; with `rebuild_txn_index`, writes the aborted
/// transactions they close to the segment's `.txnindex`.
fn replay_segment(
    seg: &mut LogSegment,
    snap_offset: i64,
    producers: &mut ProducerStateManager,
    rebuild_txn_index: bool,
) -> Result<()> {
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
    if rebuild_txn_index {
        for t in &aborted {
            seg.append_aborted_txn(t)?;
        }
        seg.flush()?;
    }
    Ok(())
}

/// Keeps the snapshots tiering may upload (at segment boundaries) and the newest one (the next unclean start
/// replays from it); other shutdown snapshots inside the active segment are stale.
fn delete_stale_snapshots(dir: &Path, segments: &LogSegments, leo: i64) -> Result<()> {
    let snapshots = producer::list_snapshots(dir)?;
    let newest = snapshots.last().copied();
    for off in snapshots {
        if off < leo && !segments.contains(off) && Some(off) != newest {
            let path = names::offset_file(dir, off, names::SNAPSHOT_SUFFIX);
            remove(&path)?;
        }
    }
    Ok(())
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
        delete_segment_files(&p.dir, b)?;
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
