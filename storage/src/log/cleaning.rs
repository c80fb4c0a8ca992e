//! What the log cleaner (`crate::cleaner`) needs from a [`UnifiedLog`]: a view of its non-active segments, reads
//! of their bytes outside the lock, and the swap of cleaned segments for the ones they replace.
//!
//! The swap (Kafka's `replaceSegments`), under the log's write lock:
//!
//! 1. the cleaner wrote and fsynced `{base}.log.cleaned` (+ `.index.cleaned`, `.timeindex.cleaned`);
//! 2. rename them to `.swap` (indexes first, `.log` last) and fsync the dir: from here the new segment wins;
//! 3. rename each replaced segment's files to `.deleted` (removed after `file.delete.delay.ms`);
//! 4. rename the `.swap` files to their final names and fsync the dir.
//!
//! Recovery at open (`loader.rs`) completes step 2-4 from any `.log.swap` and drops `.cleaned` files, so a crash
//! leaves either the old segments or the new one.
use std::collections::HashMap;

use bytes::Bytes;

use super::now_ms;
use super::unified::UnifiedLog;
use crate::names;
use crate::segment::LogSegment;
use crate::{fsio, Error, LogConfig, Result, TopicPartition};

/// A step of the swap protocol after which a test makes the cleaner stop as if the process died there (the
/// files stay as they are; the log is closed). For crash-recovery tests only.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoint {
    /// The `.cleaned` files are written and fsynced, nothing renamed.
    CleanedWritten,
    /// The `.cleaned` files are renamed `.swap`.
    SwapRenamed,
    /// The first old segment is renamed `.deleted`.
    FirstOldDeleted,
    /// Every old segment is renamed `.deleted`; the `.swap` files are not yet renamed.
    AllOldDeleted,
    /// The swap is complete; the `.deleted` files are still there.
    Swapped,
}

impl CrashPoint {
    /// The name of the crash point (`strata_storage::failpoint`) at this step of the swap.
    fn name(self) -> &'static str {
        match self {
            Self::CleanedWritten => "cleaner.swap.cleaned_written",
            Self::SwapRenamed => "cleaner.swap.swap_renamed",
            Self::FirstOldDeleted => "cleaner.swap.first_old_deleted",
            Self::AllOldDeleted => "cleaner.swap.all_old_deleted",
            Self::Swapped => "cleaner.swap.swapped",
        }
    }
}

/// A non-active segment as the cleaner sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SegmentInfo {
    pub(crate) base_offset: i64,
    pub(crate) next_offset: i64,
    pub(crate) size: u64,
    /// Kafka's `largestTimestamp` (max timestamp, or the file time when no batch has one).
    pub(crate) largest_timestamp: i64,
    /// The first batch's max timestamp, if any batch.
    pub(crate) first_batch_timestamp: Option<i64>,
    /// The `.log` file's modification time (ms).
    pub(crate) last_modified_ms: i64,
    /// Bytes of the offset index and time index entries.
    pub(crate) offset_index_bytes: u64,
    pub(crate) time_index_bytes: u64,
}

/// Kafka's `LastRecord`: the offset of a producer's last data batch (if the log still knows one) and its epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LastRecord {
    pub(crate) last_data_offset: Option<i64>,
    pub(crate) producer_epoch: i16,
}

/// The log as the cleaner sees it at one moment.
#[derive(Clone, Debug)]
pub(crate) struct CleanerView {
    pub(crate) tp: TopicPartition,
    pub(crate) config: LogConfig,
    pub(crate) log_start_offset: i64,
    pub(crate) log_end_offset: i64,
    /// The active segment's base offset (never cleaned).
    pub(crate) active_base_offset: i64,
    /// Non-active segments in offset order.
    pub(crate) segments: Vec<SegmentInfo>,
    /// Producer id → its last data batch and epoch, for the producers the log knows (Kafka's
    /// `lastRecordsOfActiveProducers`): the cleaner keeps that batch (or, without one, a marker of that epoch),
    /// empty if need be.
    pub(crate) last_records: HashMap<i64, LastRecord>,
    /// The aborted transactions indexed in the segments (their `.txnindex`), the active one's included: a
    /// transaction's data may be cleanable while its ABORT marker is in the active segment.
    pub(crate) aborted: Vec<crate::index::AbortedTxn>,
    /// The last stable offset: data of open transactions at or above it is not cleaned (Kafka bounds the
    /// cleanable range by it).
    pub(crate) last_stable_offset: i64,
}

fn info(seg: &LogSegment) -> Result<SegmentInfo> {
    Ok(SegmentInfo {
        base_offset: seg.base_offset(),
        next_offset: seg.next_offset(),
        size: seg.size_in_bytes(),
        largest_timestamp: seg.largest_timestamp(),
        first_batch_timestamp: seg.first_batch_timestamp(),
        last_modified_ms: seg.last_modified_ms()?,
        offset_index_bytes: seg.offset_index().entries() as u64 * 8,
        time_index_bytes: seg.time_index().entries() as u64 * 12,
    })
}

impl UnifiedLog {
    /// The cleaner's view of the log; None once closed or deleted.
    pub(crate) fn cleaner_view(&self) -> Result<Option<CleanerView>> {
        let st = self.read_state();
        if st.closed {
            return Ok(None);
        }
        let n = st.local.segments.len();
        let segments = st
            .local
            .segments
            .iter()
            .take(n.saturating_sub(1))
            .map(info)
            .collect::<Result<Vec<_>>>()?;
        let last_records = st
            .producers
            .entries()
            .map(|(pid, e)| {
                let last = LastRecord {
                    last_data_offset: e.batches.back().map(|b| b.last_offset),
                    producer_epoch: e.epoch,
                };
                (*pid, last)
            })
            .collect();
        let mut aborted = Vec::new();
        for seg in st.local.segments.iter() {
            aborted.extend(seg.txn_index().all()?);
        }
        Ok(Some(CleanerView {
            tp: self.topic_partition().clone(),
            config: st.local.config.clone(),
            log_start_offset: st.log_start_offset,
            log_end_offset: st.log_end_offset(),
            active_base_offset: st.active().base_offset(),
            segments,
            last_records,
            aborted,
            last_stable_offset: st.producers.last_stable_offset(st.log_end_offset()),
        }))
    }

    /// Up to `len` bytes of the segment based at `base_offset` from byte `pos` (the `pread` runs without the
    /// lock); None if the segment is gone.
    pub(crate) fn read_segment_bytes(
        &self,
        base_offset: i64,
        pos: u64,
        len: usize,
    ) -> Result<Option<Bytes>> {
        let planned = {
            let st = self.read_state();
            match st.local.segments.get(base_offset) {
                Some(seg) if !st.closed => seg.file_records().read_handle(pos, len)?,
                _ => return Ok(None),
            }
        };
        planned.read().map(Some)
    }

    /// Swaps `cleaned` (a flushed segment named `.cleaned`) in for `old` (consecutive non-active segments, the
    /// first with `cleaned`'s base offset). Returns false, changing nothing, if the log no longer has exactly
    /// those segments (retention, truncation or deletion ran meanwhile); the caller then removes `cleaned`.
    /// `crash` stops the swap after that step, leaving the files as a crash would (tests only).
    pub(crate) fn replace_segments(
        &self,
        mut cleaned: LogSegment,
        old: &[SegmentInfo],
        crash: Option<CrashPoint>,
    ) -> Result<std::result::Result<(), LogSegment>> {
        let mut st = self.write_state();
        let active = st.active().base_offset();
        let unchanged = !st.closed
            && !self.is_log_dir_poisoned()
            && old.iter().all(|o| {
                o.base_offset < active
                    && st.local.segments.get(o.base_offset).is_some_and(|s| {
                        s.size_in_bytes() == o.size && s.next_offset() == o.next_offset
                    })
            });
        if !unchanged {
            return Ok(Err(cleaned));
        }
        let dir = self.dir().to_path_buf();
        let stop = |at: CrashPoint| -> Result<()> {
            crate::failpoint::crash_point(at.name());
            if crash == Some(at) {
                return Err(Error::Storage {
                    dir: dir.clone(),
                    reason: format!("simulated crash at {at:?}"),
                });
            }
            Ok(())
        };
        let result = (|| -> Result<()> {
            stop(CrashPoint::CleanedWritten)?;
            cleaned.change_file_suffixes(names::CLEANED_SUFFIX, names::SWAP_SUFFIX)?;
            fsio::sync_dir(&dir)?;
            stop(CrashPoint::SwapRenamed)?;
            let due = now_ms().saturating_add(st.local.config.file_delete_delay_ms as i64);
            for (i, o) in old.iter().enumerate() {
                let mut seg = st
                    .local
                    .segments
                    .remove(o.base_offset)
                    .expect("checked above");
                let files = seg.rename_to_deleted()?;
                st.local.pending_deletes.push((due, files));
                if i == 0 {
                    stop(CrashPoint::FirstOldDeleted)?;
                }
            }
            stop(CrashPoint::AllOldDeleted)?;
            cleaned.change_file_suffixes(names::SWAP_SUFFIX, "")?;
            fsio::sync_dir(&dir)?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                cleaned.release_handles(0, true);
                st.local.segments.add(cleaned);
                stop(CrashPoint::Swapped)?;
                Ok(Ok(()))
            }
            Err(e) => {
                // A half-done swap is only completed by recovery: stop serving this log.
                st.closed = true;
                Err(if matches!(e, Error::Storage { .. }) {
                    e
                } else {
                    self.poison(e)
                })
            }
        }
    }
}

impl UnifiedLog {
    /// A new, empty `{base_offset}.log.cleaned` segment (with its indexes) in the log's directory.
    pub(crate) fn new_cleaned_segment(&self, base_offset: i64) -> Result<LogSegment> {
        let st = self.read_state();
        LogSegment::create_cleaned(
            self.dir(),
            base_offset,
            &st.local.config,
            now_ms(),
            &st.local.handles,
        )
    }
}

/// Removes a cleaned segment that will not be swapped in (its files, whatever their suffix now).
pub(crate) fn discard_cleaned(seg: LogSegment) {
    let files = [
        seg.log_path().to_path_buf(),
        seg.offset_index_path().to_path_buf(),
        seg.time_index_path().to_path_buf(),
    ];
    drop(seg);
    for f in files {
        if let Err(e) = std::fs::remove_file(&f) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(file = %f.display(), error = %e, "could not remove a discarded cleaner file");
            }
        }
    }
}
