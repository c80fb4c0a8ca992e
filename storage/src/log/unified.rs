//! [`UnifiedLog`]: one partition's log — local segments plus the offsets that tie them to remote storage.
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use uuid::Uuid;

use super::leader_epoch::LeaderEpochCache;
use super::local_log::LocalLog;
use super::{
    now_ms, validator, FetchDataInfo, LogAppendInfo, LogDir, LogSlice, RollListeners, RolledSegment,
};
use crate::handles::ReleaseHandles;
use crate::index::AbortedTxn;
use crate::names::{self, SNAPSHOT_SUFFIX};
use crate::producer::{self, CompletedTxn, ProducerEntry, ProducerStateManager, SequenceCheck};
use crate::record::ControlRecordType;
use crate::segment::{LogSegment, ReadBounds, SegmentRead};
use crate::{Error, LogConfig, Result, TimestampType, TopicPartition};

/// Mutable state behind the log's lock.
pub(crate) struct LogState {
    pub(crate) local: LocalLog,
    pub(crate) log_start_offset: i64,
    pub(crate) producers: ProducerStateManager,
    pub(crate) leader_epochs: LeaderEpochCache,
    pub(crate) closed: bool,
}

impl LogState {
    pub(crate) fn active(&self) -> &LogSegment {
        self.local.active()
    }
    pub(crate) fn active_mut(&mut self) -> &mut LogSegment {
        self.local.active_mut()
    }
    pub(crate) fn log_end_offset(&self) -> i64 {
        self.local.log_end_offset()
    }
    pub(crate) fn local_log_start_offset(&self) -> i64 {
        let first = self.local.segments.first_base_offset().unwrap_or(0);
        first.max(self.log_start_offset)
    }
}

/// One partition's log. Shared as `Arc<UnifiedLog>`; every method takes `&self` and locks internally. Appends
/// and reads are synchronous and may block on disk I/O (async callers use `spawn_blocking`).
pub struct UnifiedLog {
    tp: TopicPartition,
    topic_id: Uuid,
    dir: PathBuf,
    log_dir: Arc<LogDir>,
    listeners: Arc<RollListeners>,
    highest_offset_in_remote_storage: AtomicI64,
    /// The handle sweep epoch of the last append or read (see `crate::handles`).
    last_used: AtomicU64,
    state: RwLock<LogState>,
}

impl std::fmt::Debug for UnifiedLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnifiedLog")
            .field("tp", &self.tp)
            .field("dir", &self.dir)
            .finish()
    }
}

impl UnifiedLog {
    pub(crate) fn from_parts(
        tp: TopicPartition,
        topic_id: Uuid,
        dir: PathBuf,
        log_dir: Arc<LogDir>,
        listeners: Arc<RollListeners>,
        state: LogState,
    ) -> Self {
        Self {
            tp,
            topic_id,
            dir,
            log_dir,
            listeners,
            highest_offset_in_remote_storage: AtomicI64::new(-1),
            last_used: AtomicU64::new(state.local.handles.epoch()),
            state: RwLock::new(state),
        }
    }

    pub(crate) fn read_state(&self) -> RwLockReadGuard<'_, LogState> {
        self.state.read()
    }
    pub(crate) fn write_state(&self) -> RwLockWriteGuard<'_, LogState> {
        self.state.write()
    }

    /// The partition.
    pub fn topic_partition(&self) -> &TopicPartition {
        &self.tp
    }
    /// The topic id (from `partition.metadata`).
    pub fn topic_id(&self) -> Uuid {
        self.topic_id
    }
    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The log dir (a `log.dirs` entry) holding this partition.
    pub fn log_dir(&self) -> &Path {
        self.log_dir.path()
    }
    /// The current config.
    pub fn config(&self) -> LogConfig {
        self.read_state().local.config.clone()
    }
    /// Replaces the config after validating it; it applies from the next append / retention pass. A config
    /// without remote storage raises the log start offset to the first local segment (offsets below it can only
    /// live in remote storage, which the log then no longer reads).
    pub fn update_config(&self, config: LogConfig) -> Result<()> {
        config.validate()?;
        let mut st = self.write_state();
        if !config.remote_storage_enable {
            self.clamp_log_start_to_local_locked(&mut st)?;
        }
        st.local.config = config;
        Ok(())
    }

    /// Raises the log start offset to the first local segment's base offset (non-tiered logs).
    pub(crate) fn clamp_log_start_to_local_locked(&self, st: &mut LogState) -> Result<()> {
        let first = st
            .local
            .segments
            .first_base_offset()
            .expect("a log always has an active segment");
        self.advance_log_start_locked(st, first)
    }

    /// Turns a failure of a write or fsync into a poisoned log dir and a storage error. A file that could not be
    /// opened or mapped for lack of descriptors or memory (`EMFILE`, `ENFILE`, `ENOMEM`: segment files reopen on
    /// demand, see `crate::handles`) poisons nothing: nothing was written, and the call can be retried.
    pub(crate) fn poison(&self, e: Error) -> Error {
        if let Error::Io { source, .. } = &e {
            // EMFILE, ENFILE, ENOMEM.
            if matches!(source.raw_os_error(), Some(24 | 23 | 12)) {
                tracing::warn!(tp = %self.tp, error = %e, "could not open a segment file; nothing written");
                return e;
            }
        }
        self.log_dir.poison(&e);
        Error::Storage {
            dir: self.log_dir.path().to_path_buf(),
            reason: format!("write to {} failed: {e}", self.tp),
        }
    }

    /// Whether a failed write poisoned the log dir.
    pub(crate) fn is_log_dir_poisoned(&self) -> bool {
        self.log_dir.is_poisoned()
    }

    fn check_writable(&self, st: &LogState) -> Result<()> {
        if self.log_dir.is_poisoned() {
            return Err(Error::Storage {
                dir: self.log_dir.path().to_path_buf(),
                reason: format!(
                    "log dir is offline after an earlier i/o failure; {} is not writable",
                    self.tp
                ),
            });
        }
        if st.closed {
            return Err(Error::Storage {
                dir: self.dir.clone(),
                reason: format!("log of {} is closed", self.tp),
            });
        }
        Ok(())
    }

    /// Validates every batch (magic 2, CRC-32C, sizes, max.message.bytes, producer id/epoch/sequence), assigns
    /// offsets in place, appends, maybe rolls. Idempotent duplicates return the original offsets.
    pub fn append_as_leader(&self, records: Bytes, leader_epoch: i32) -> Result<LogAppendInfo> {
        self.append_as_leader_at(records, leader_epoch, now_ms())
    }

    /// [`UnifiedLog::append_as_leader`] with an explicit clock (ms), for LogAppendTime and `segment.ms`. The
    /// steps of Kafka's `UnifiedLog.append`: validate the batches without the lock, then under it check the
    /// producers (a retry answers with its original offsets), assign offsets in the client's bytes, maybe roll,
    /// append, and update producer state, transaction index and leader epochs.
    pub fn append_as_leader_at(
        &self,
        records: Bytes,
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<LogAppendInfo> {
        let batches =
            validator::analyze_and_validate_records(&self.tp, &records, &self.config(), now_ms)?;
        let total: usize = batches.iter().map(|(b, _)| b.size_in_bytes()).sum();
        let (info, rolled) = {
            let mut st = self.write_state();
            self.check_writable(&st)?;
            st.local.handles.touch(&self.last_used);
            let config = st.local.config.clone();
            let leo = st.log_end_offset();
            let (pending, completed, next) =
                match analyze_and_validate_producer_state(&st, &batches, leo)? {
                    ProducerAppend::Duplicate(info) => return Ok(info),
                    ProducerAppend::New {
                        pending,
                        completed,
                        next_offset,
                    } => (pending, completed, next_offset),
                };
            let record_count = (next - leo) as u32;
            let log_append = config.message_timestamp_type == TimestampType::LogAppendTime;
            let positions = validator::batch_positions(&batches);
            drop(batches);
            // The client's bytes, edited in place (a copy only if the buffer is shared).
            let mut buf = records
                .try_into_mut()
                .unwrap_or_else(|shared| BytesMut::from(&shared[..]));
            let (metas, offset) = validator::assign_offsets_and_timestamps(
                &mut buf,
                &positions,
                leo,
                leader_epoch,
                now_ms,
                log_append,
            );
            let mut rolled = None;
            let max_ts = metas.iter().map(|m| m.max_timestamp).max().unwrap_or(-1);
            if st
                .active()
                .should_roll(&config, total, offset - 1, max_ts, now_ms)
            {
                rolled = self.roll_locked(&mut st, now_ms)?;
            }
            if let Err(e) = st.active_mut().append(&buf, &metas) {
                return Err(self.poison(e));
            }
            st.producers.commit(pending);
            self.index_completed_locked(&mut st, &completed)?;
            st.leader_epochs
                .assign(leader_epoch, leo)
                .map_err(|e| self.poison(e))?;
            st.local.unflushed_messages += record_count as u64;
            if st.local.unflushed_messages >= config.flush_messages {
                self.flush_locked(&mut st, now_ms)?;
            }
            let info = LogAppendInfo {
                first_offset: leo,
                last_offset: offset - 1,
                log_append_time_ms: if log_append { now_ms } else { -1 },
                log_start_offset: st.log_start_offset,
                record_count,
            };
            (info, rolled)
        };
        if let Some(r) = rolled {
            self.listeners.notify(&self.tp, &r);
        }
        Ok(info)
    }

    /// Writes the aborted ones of `completed` (closed by markers just appended to the active segment) to its
    /// `.txnindex`, each with the last stable offset right after it (Kafka's `lastStableOffset(completedTxn)`).
    fn index_completed_locked(&self, st: &mut LogState, completed: &[CompletedTxn]) -> Result<()> {
        for txn in completed.iter().filter(|t| t.is_aborted) {
            let lso = st
                .producers
                .first_unstable_offset()
                .unwrap_or(txn.last_offset + 1);
            let entry = AbortedTxn {
                producer_id: txn.producer_id,
                first_offset: txn.first_offset,
                last_offset: txn.last_offset,
                last_stable_offset: lso,
            };
            st.active_mut()
                .append_aborted_txn(&entry)
                .map_err(|e| self.poison(e))?;
        }
        Ok(())
    }

    /// Appends a COMMIT or ABORT marker for `producer_id` (what the transaction coordinator writes when a
    /// transaction ends, Kafka's `appendAsLeader` with origin COORDINATOR): one control batch, transactional, no
    /// sequence. It closes the producer's open transaction; an ABORT adds the transaction to the `.txnindex`. A
    /// marker with an epoch older than the producer's is [`Error::InvalidProducerEpoch`].
    pub fn append_transaction_marker(
        &self,
        kind: ControlRecordType,
        producer_id: i64,
        producer_epoch: i16,
        coordinator_epoch: i32,
        leader_epoch: i32,
    ) -> Result<LogAppendInfo> {
        if !kind.is_transaction_marker() {
            return Err(Error::InvalidRecord {
                reason: format!(
                    "control record type {} is not a transaction marker",
                    kind.id()
                ),
            });
        }
        let now = now_ms();
        let marker =
            producer::build_marker(kind, producer_id, producer_epoch, coordinator_epoch, now);
        self.append_as_leader_at(marker, leader_epoch, now)
    }

    /// Rolls the active segment if it is non-empty: final time index entry, trim indexes, fsync, producer
    /// snapshot at the new base offset, new active segment. Returns the rolled segment.
    pub(crate) fn roll_locked(
        &self,
        st: &mut LogState,
        now_ms: i64,
    ) -> Result<Option<RolledSegment>> {
        if st.active().size_in_bytes() == 0 {
            return Ok(None);
        }
        let new_base = st.log_end_offset();
        let old = st.active_mut();
        old.on_become_inactive().map_err(|e| self.poison(e))?;
        crate::failpoint::crash_point("log.roll.before_flush");
        old.flush().map_err(|e| self.poison(e))?;
        crate::failpoint::crash_point("log.roll.before_producer_snapshot");
        let snapshot = producer::write_snapshot(&self.dir, new_base, &st.producers)
            .map_err(|e| self.poison(e))?;
        let rolled = rolled_segment(st.active(), Some(snapshot));
        crate::failpoint::crash_point("log.roll.before_new_segment");
        st.local.roll(now_ms).map_err(|e| self.poison(e))?;
        tracing::debug!(tp = %self.tp, base_offset = rolled.base_offset, next_offset = new_base, "rolled segment");
        Ok(Some(rolled))
    }

    /// Forces a roll (no-op for an empty active segment).
    pub fn roll(&self) -> Result<()> {
        let rolled = {
            let mut st = self.write_state();
            self.check_writable(&st)?;
            self.roll_locked(&mut st, now_ms())?
        };
        if let Some(r) = rolled {
            self.listeners.notify(&self.tp, &r);
        }
        Ok(())
    }

    pub(crate) fn flush_locked(&self, st: &mut LogState, now_ms: i64) -> Result<()> {
        st.local.flush(now_ms).map_err(|e| self.poison(e))
    }

    /// Fsyncs everything appended so far and advances the recovery point.
    pub fn flush(&self) -> Result<()> {
        let mut st = self.write_state();
        if self.log_dir.is_poisoned() {
            return self.check_writable(&st);
        }
        self.flush_locked(&mut st, now_ms())
    }

    /// Flushes if `flush.ms` elapsed since the last flush and something is unflushed.
    pub(crate) fn maybe_flush_on_timer(&self, now_ms: i64) -> Result<()> {
        let mut st = self.write_state();
        self.remove_due_files_locked(&mut st, now_ms);
        if st.closed || self.log_dir.is_poisoned() || st.local.recovery_point >= st.log_end_offset()
        {
            return Ok(());
        }
        let elapsed = now_ms.saturating_sub(st.local.last_flush_ms);
        if elapsed >= 0 && (elapsed as u64) >= st.local.config.flush_ms {
            self.flush_locked(&mut st, now_ms)?;
        }
        Ok(())
    }

    /// Reads up to `max_bytes` of whole batches from `offset`, never a batch starting at or past `max_offset`
    /// (exclusive upper bound, e.g. the high watermark). With `min_one_message`, the first batch is returned even
    /// if larger than `max_bytes`. Offsets below the local log start or above the log end are
    /// [`Error::OffsetOutOfRange`]; the log end offset itself reads as empty.
    pub fn read(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one_message: bool,
        max_offset: Option<i64>,
    ) -> Result<FetchDataInfo> {
        let planned = self.plan_read(
            offset,
            ReadBounds {
                max_bytes,
                min_one_message,
                max_offset,
                region_from: None,
            },
        )?;
        // The data `pread` runs without the lock, so appends and retention do not wait for it: bytes already in
        // a segment never change, and a segment deleted meanwhile stays readable through the shared handle
        // (its data is then below the log start, as if the read had finished just before the deletion).
        Ok(FetchDataInfo {
            records: planned.read()?,
        })
    }

    /// [`UnifiedLog::read`], leaving a read of at least `region_from` bytes in its file: a [`LogSlice::File`] of
    /// exactly the whole batches `read` would return, for the caller to send with `sendfile` (the batches' ends
    /// come from their headers, read here, not from their bytes).
    pub fn read_slice(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one_message: bool,
        max_offset: Option<i64>,
        region_from: usize,
    ) -> Result<LogSlice> {
        let bounds = ReadBounds {
            max_bytes,
            min_one_message,
            max_offset,
            region_from: Some(region_from),
        };
        match self.plan_read(offset, bounds)? {
            SegmentRead::Region {
                region,
                next_offset,
            } => Ok(LogSlice::File {
                region,
                next_offset,
            }),
            planned => Ok(LogSlice::Bytes(planned.read()?)),
        }
    }

    /// Checks `offset` against the local log's range and plans its read under the lock.
    fn plan_read(&self, offset: i64, bounds: ReadBounds) -> Result<SegmentRead> {
        let st = self.read_state();
        st.local.handles.touch(&self.last_used);
        let (start, end) = (st.local_log_start_offset(), st.log_end_offset());
        if offset < start || offset > end {
            return Err(Error::OffsetOutOfRange {
                tp: self.tp.clone(),
                offset,
                log_start: start,
                log_end: end,
            });
        }
        st.local.plan_read(offset, bounds)
    }

    /// The log start offset (lowest offset a consumer may fetch, locally or remotely).
    pub fn log_start_offset(&self) -> i64 {
        self.read_state().log_start_offset
    }
    /// The first offset held on local disk.
    pub fn local_log_start_offset(&self) -> i64 {
        self.read_state().local_log_start_offset()
    }
    /// Offset the next appended record gets.
    pub fn log_end_offset(&self) -> i64 {
        self.read_state().log_end_offset()
    }
    /// Single node: the log end offset.
    pub fn high_watermark(&self) -> i64 {
        self.log_end_offset()
    }
    /// The last stable offset (KIP-98): the first offset of the oldest open transaction, else the high
    /// watermark. A read_committed consumer reads below it.
    pub fn last_stable_offset(&self) -> i64 {
        let st = self.read_state();
        st.producers.last_stable_offset(st.log_end_offset())
    }

    /// Open transactions of this partition: (producer id, producer epoch, first offset), oldest first.
    pub fn ongoing_transactions(&self) -> Vec<(i64, i16, i64)> {
        self.read_state().producers.ongoing_transactions()
    }

    /// The producers this partition remembers (Kafka's DescribeProducers), by producer id.
    pub fn active_producers(&self) -> Vec<crate::ActiveProducer> {
        self.read_state().producers.active_producers()
    }

    /// The aborted transactions overlapping `[from, to)` in the local segments (Kafka's `collectAbortedTxns`):
    /// each one's ABORT marker is at or after `from` and its first offset below `to`. A read_committed fetch of
    /// `[from, to)` returns them so the consumer skips their data.
    pub fn collect_aborted(&self, from: i64, to: i64) -> Result<Vec<AbortedTxn>> {
        let st = self.read_state();
        let mut out = Vec::new();
        for seg in st.local.segments.iter().filter(|s| s.next_offset() > from) {
            out.extend(seg.txn_index().collect(from, to)?);
        }
        Ok(out)
    }

    /// Offsets up to here are fsynced.
    pub fn recovery_point(&self) -> i64 {
        self.read_state().local.recovery_point
    }
    /// Highest offset copied to remote storage; -1 when nothing is remote.
    pub fn highest_offset_in_remote_storage(&self) -> i64 {
        self.highest_offset_in_remote_storage.load(Ordering::SeqCst)
    }
    /// Sets the highest offset in remote storage (tiering calls it after each copy, and on restart).
    pub fn update_highest_offset_in_remote_storage(&self, offset: i64) {
        self.highest_offset_in_remote_storage
            .store(offset, Ordering::SeqCst);
    }

    /// Raises the log start offset (never lowers it); above the high watermark is out of range.
    pub fn maybe_increment_log_start_offset(&self, offset: i64) -> Result<()> {
        let mut st = self.write_state();
        let hw = st.log_end_offset();
        if offset > hw {
            return Err(Error::OffsetOutOfRange {
                tp: self.tp.clone(),
                offset,
                log_start: st.log_start_offset,
                log_end: hw,
            });
        }
        self.advance_log_start_locked(&mut st, offset)
    }

    pub(crate) fn advance_log_start_locked(&self, st: &mut LogState, offset: i64) -> Result<()> {
        if offset > st.log_start_offset {
            st.log_start_offset = offset;
            st.producers.truncate_head(offset);
            st.leader_epochs
                .truncate_from_start(offset)
                .map_err(|e| self.poison(e))?;
        }
        Ok(())
    }

    /// The first record with timestamp >= `ts`: (offset, its timestamp), local segments only. Exact for
    /// uncompressed batches; for compressed ones, the batch's base offset with its max timestamp.
    pub fn fetch_offset_by_timestamp(&self, ts: i64) -> Result<Option<(i64, i64)>> {
        let st = self.read_state();
        st.local.handles.touch(&self.last_used);
        let start = st.local_log_start_offset();
        for seg in st.local.segments.iter() {
            if seg.next_offset() <= start || seg.max_timestamp() < ts {
                continue;
            }
            if let Some(found) = seg.find_offset_by_timestamp(ts, start)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// (max timestamp, offset of the first record carrying it) over the local log, for ListOffsets -3. The offset
    /// is exact for uncompressed batches; for compressed ones it is the batch's last offset.
    pub fn max_timestamp_and_offset(&self) -> Option<(i64, i64)> {
        let st = self.read_state();
        let start = st.local_log_start_offset();
        st.local
            .segments
            .iter()
            .filter(|s| s.max_timestamp() >= 0 && s.offset_of_max_timestamp() >= start)
            .fold(None, |best: Option<(i64, i64)>, s| match best {
                Some((ts, _)) if ts >= s.max_timestamp() => best,
                _ => Some((s.max_timestamp(), s.offset_of_max_timestamp())),
            })
    }

    /// Rolled (inactive) segments, in offset order, for tiering.
    pub fn rolled_segments(&self) -> Vec<RolledSegment> {
        let st = self.read_state();
        let n = st.local.segments.len();
        st.local
            .segments
            .iter()
            .take(n.saturating_sub(1))
            .map(|s| {
                let snap = names::offset_file(&self.dir, s.next_offset(), SNAPSHOT_SUFFIX);
                rolled_segment(s, snap.exists().then_some(snap))
            })
            .collect()
    }

    /// Leader-epoch cache entries (epoch, start offset).
    pub fn leader_epoch_entries(&self) -> Vec<(i32, i64)> {
        self.read_state().leader_epochs.entries()
    }

    /// The largest producer id ever seen in this log (-1 if none).
    pub fn max_producer_id(&self) -> i64 {
        self.read_state().producers.max_producer_id()
    }

    /// Number of local segments (including the active one).
    pub fn number_of_segments(&self) -> usize {
        self.read_state().local.segments.len()
    }

    /// Bytes of all local segments.
    pub fn size_in_bytes(&self) -> u64 {
        self.read_state().local.segments.size_in_bytes()
    }

    /// Flush, producer snapshot at the log end, trimmed indexes; later appends fail. Idempotent.
    pub(crate) fn close(&self) -> Result<()> {
        let mut st = self.write_state();
        if st.closed {
            return Ok(());
        }
        st.closed = true;
        if self.log_dir.is_poisoned() {
            return Ok(());
        }
        let leo = st.log_end_offset();
        st.active_mut()
            .on_become_inactive()
            .map_err(|e| self.poison(e))?;
        self.flush_locked(&mut st, now_ms())?;
        // As Kafka's `takeSnapshot`, only when something was appended since the last snapshot: an empty log, or
        // one whose newest snapshot is already at its end, has nothing new to record (shutting down thousands of
        // idle partitions then costs no fsyncs).
        let nothing_new = leo == 0
            || producer::list_snapshots(&self.dir)
                .map(|s| s.last() == Some(&leo))
                .unwrap_or(false);
        if !nothing_new {
            producer::write_snapshot(&self.dir, leo, &st.producers).map_err(|e| self.poison(e))?;
        }
        Ok(())
    }

    /// Descriptors and index mappings its segments hold open now.
    pub fn open_handles(&self) -> usize {
        self.read_state()
            .local
            .segments
            .iter()
            .map(LogSegment::open_handles)
            .sum()
    }

    /// Whether the log was closed (broker shutdown) or deleted: its files may be gone, nothing more is appended.
    pub fn is_closed(&self) -> bool {
        self.read_state().closed
    }

    /// Marks the log closed without flushing (its directory is being deleted).
    pub(crate) fn mark_closed(&self) {
        self.write_state().closed = true;
    }
}

impl ReleaseHandles for UnifiedLog {
    fn last_used(&self) -> u64 {
        self.last_used.load(Ordering::Relaxed)
    }

    fn release_handles(&self, epoch: u64, all: bool) -> bool {
        // Never wait: the sweeping thread may hold another log's lock, and a busy log is in use anyway.
        let Some(mut st) = self.state.try_write() else {
            return false;
        };
        for seg in st.local.segments.iter_mut() {
            seg.release_handles(epoch, all);
        }
        true
    }
}

pub(crate) fn rolled_segment(
    s: &LogSegment,
    producer_snapshot_file: Option<PathBuf>,
) -> RolledSegment {
    RolledSegment {
        base_offset: s.base_offset(),
        next_offset: s.next_offset(),
        size_bytes: s.size_in_bytes(),
        max_timestamp_ms: s.max_timestamp(),
        log_file: s.log_path().to_path_buf(),
        offset_index_file: s.offset_index_path().to_path_buf(),
        time_index_file: s.time_index_path().to_path_buf(),
        producer_snapshot_file,
        txn_index_file: (!s.txn_index().is_empty()).then(|| s.txn_index().path().to_path_buf()),
    }
}

/// What the producer checks of an append decided.
enum ProducerAppend {
    /// A retry of an appended batch: the whole request is answered with the original offsets.
    Duplicate(LogAppendInfo),
    /// Append: the producers' updates to commit after the append, the transactions the request's markers close,
    /// and the offset after the last batch.
    New {
        pending: HashMap<i64, ProducerEntry>,
        completed: Vec<CompletedTxn>,
        next_offset: i64,
    },
}

/// Kafka's `analyzeAndValidateProducerState`: checks each batch's producer epoch and sequence against the
/// producer state (and the request's earlier batches), offsets assigned from `leo` on.
fn analyze_and_validate_producer_state(
    st: &LogState,
    batches: &[validator::ValidatedBatch],
    leo: i64,
) -> Result<ProducerAppend> {
    let mut pending = HashMap::new();
    let mut completed = Vec::new();
    let mut next = leo;
    for (batch, _) in batches {
        if let SequenceCheck::Duplicate(d) = st.producers.check(&pending, batch)? {
            return Ok(ProducerAppend::Duplicate(LogAppendInfo {
                first_offset: d.first_offset,
                last_offset: d.last_offset,
                log_append_time_ms: -1,
                log_start_offset: st.log_start_offset,
                record_count: (d.last_offset - d.first_offset + 1) as u32,
            }));
        }
        completed.extend(st.producers.update_pending(&mut pending, batch, next));
        next += batch.last_offset_delta() as i64 + 1;
    }
    Ok(ProducerAppend::New {
        pending,
        completed,
        next_offset: next,
    })
}
