//! [`LogSegment`]: one `.log` file with its `.index` and `.timeindex`, named by its base offset.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::file_records::{FileRecords, FileRegion, PendingRead};
use crate::handles::HandleCache;
use crate::index::{AbortedTxn, OffsetIndex, TimeIndex, TimestampOffset, TransactionIndex};
use crate::names::{self, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX};
use crate::record::{batch_size_from_header, RecordBatch, LOG_OVERHEAD};
use crate::{Error, LogConfig, Result};

/// What the log knows about each batch it appends to a segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BatchMeta {
    pub(crate) size: usize,
    pub(crate) last_offset: i64,
    pub(crate) max_timestamp: i64,
    /// Offset of the first record carrying `max_timestamp`.
    pub(crate) offset_of_max_timestamp: i64,
}

/// A segment: `{base_offset:020}.log`, `.index`, `.timeindex`. Its `.log` descriptor and index mappings open on
/// first use and close when [`LogSegment::release_handles`] is called (see `crate::handles`).
#[derive(Debug)]
pub struct LogSegment {
    base_offset: i64,
    handles: Arc<HandleCache>,
    /// The handle sweep epoch of the last append or read.
    last_used: AtomicU64,
    log: FileRecords,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
    txn_index: TransactionIndex,
    index_interval_bytes: u32,
    bytes_since_last_index_entry: u64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    next_offset: i64,
    rolling_based_timestamp: Option<i64>,
    created_ms: i64,
    dirty: bool,
}

impl LogSegment {
    /// Creates a new, empty active segment in `dir` (index files preallocated).
    pub(crate) fn create(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
        handles: &Arc<HandleCache>,
    ) -> Result<Self> {
        let log_path = names::offset_file(dir, base_offset, LOG_SUFFIX);
        // An empty leftover file of the same name is reused; data is never overwritten.
        if let Ok(meta) = std::fs::metadata(&log_path) {
            if meta.len() > 0 {
                return Err(Error::Storage {
                    dir: dir.to_path_buf(),
                    reason: format!(
                        "cannot create segment {}: the file exists with data",
                        log_path.display()
                    ),
                });
            }
        }
        let mut seg = Self::open(dir, base_offset, config, true, now_ms, handles)?;
        seg.offset_index.reset()?;
        seg.time_index.reset()?;
        Ok(seg)
    }

    /// Opens an existing segment's files without validating the log (see [`LogSegment::recover`] and
    /// [`LogSegment::load_state`]). `active` preallocates the indexes to `segment.index.bytes`.
    pub(crate) fn open(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        active: bool,
        now_ms: i64,
        handles: &Arc<HandleCache>,
    ) -> Result<Self> {
        Self::open_with_suffix(dir, base_offset, config, active, now_ms, handles, "")
    }

    /// Creates the log cleaner's output segment: `{base_offset:020}.log.cleaned` with its `.index.cleaned` and
    /// `.timeindex.cleaned` (indexes sized to `segment.index.bytes`), all empty. Leftovers of an earlier attempt
    /// are removed first.
    pub(crate) fn create_cleaned(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
        handles: &Arc<HandleCache>,
    ) -> Result<Self> {
        for suffix in [
            LOG_SUFFIX,
            INDEX_SUFFIX,
            TIME_INDEX_SUFFIX,
            TXN_INDEX_SUFFIX,
        ] {
            let path = names::offset_file(
                dir,
                base_offset,
                &format!("{suffix}{}", names::CLEANED_SUFFIX),
            );
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(crate::error::io_err(&path)(e))
                }
                _ => {}
            }
        }
        let mut seg = Self::open_with_suffix(
            dir,
            base_offset,
            config,
            true,
            now_ms,
            handles,
            names::CLEANED_SUFFIX,
        )?;
        seg.offset_index.reset()?;
        seg.time_index.reset()?;
        Ok(seg)
    }

    /// [`LogSegment::open`] of the files `{base_offset:020}.log{suffix}`, `.index{suffix}`, `.timeindex{suffix}`.
    fn open_with_suffix(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        active: bool,
        now_ms: i64,
        handles: &Arc<HandleCache>,
        suffix: &str,
    ) -> Result<Self> {
        let file = |s: &str| names::offset_file(dir, base_offset, &format!("{s}{suffix}"));
        let log = FileRecords::open_in(&file(LOG_SUFFIX), handles.clone())?;
        let max = active.then_some(config.segment_index_bytes);
        let index_path = file(INDEX_SUFFIX);
        let time_path = file(TIME_INDEX_SUFFIX);
        // A corrupt index (size not a multiple of the entry) is rebuilt: start it empty; the caller recovers.
        let offset_index =
            match OffsetIndex::open_in(&index_path, base_offset, max, handles.clone()) {
                Ok(i) => i,
                Err(Error::CorruptFile { .. }) => {
                    std::fs::remove_file(&index_path).map_err(crate::error::io_err(&index_path))?;
                    OffsetIndex::open_in(&index_path, base_offset, max, handles.clone())?
                }
                Err(e) => return Err(e),
            };
        let time_index = match TimeIndex::open_in(&time_path, base_offset, max, handles.clone()) {
            Ok(i) => i,
            Err(Error::CorruptFile { .. }) => {
                std::fs::remove_file(&time_path).map_err(crate::error::io_err(&time_path))?;
                TimeIndex::open_in(&time_path, base_offset, max, handles.clone())?
            }
            Err(e) => return Err(e),
        };
        let txn_path = file(TXN_INDEX_SUFFIX);
        // A corrupt transaction index is dropped; the loader rebuilds it when it recovers the segment.
        let txn_index = match TransactionIndex::open(txn_path.clone()) {
            Ok(i) => i,
            Err(Error::CorruptFile { .. }) => {
                tracing::warn!(path = %txn_path.display(), "dropping an unreadable transaction index");
                std::fs::remove_file(&txn_path).map_err(crate::error::io_err(&txn_path))?;
                TransactionIndex::open(txn_path)?
            }
            Err(e) => return Err(e),
        };
        Ok(Self {
            base_offset,
            handles: handles.clone(),
            last_used: AtomicU64::new(handles.epoch()),
            log,
            offset_index,
            time_index,
            txn_index,
            index_interval_bytes: config.index_interval_bytes,
            bytes_since_last_index_entry: 0,
            max_timestamp: -1,
            offset_of_max_timestamp: -1,
            next_offset: base_offset,
            rolling_based_timestamp: None,
            created_ms: now_ms,
            dirty: false,
        })
    }

    /// Loads next offset and max timestamp from trusted files (clean shutdown): scans the log from the last
    /// offset index entry. Fails with [`Error::CorruptFile`] if the indexes do not fit the log (the caller then
    /// recovers the segment).
    pub(crate) fn load_state(&mut self) -> Result<()> {
        self.offset_index.sanity_check(self.log.size_in_bytes())?;
        let mut pos = self
            .offset_index
            .last_entry()?
            .map_or(0, |e| e.position as u64);
        let mut next = self.base_offset;
        let size = self.log.size_in_bytes();
        while pos < size {
            let header = self
                .log
                .read_header(pos)?
                .ok_or_else(|| self.corrupt(pos, "a truncated batch header"))?;
            let batch_size = batch_size_from_header(&header)? as u64;
            if pos + batch_size > size {
                return Err(self.corrupt(pos, "a batch past the end of the log"));
            }
            next = i64::from_be_bytes(header[0..8].try_into().expect("8"))
                + i32::from_be_bytes(header[23..27].try_into().expect("4")) as i64
                + 1;
            pos += batch_size;
        }
        self.next_offset = next;
        self.time_index
            .sanity_check(self.next_offset.max(self.base_offset + 1))?;
        if let Some(TimestampOffset { timestamp, offset }) = self.time_index.last_entry()? {
            self.max_timestamp = timestamp;
            self.offset_of_max_timestamp = offset;
        }
        if size > 0 && self.time_index.entries() == 0 {
            return Err(Error::CorruptFile {
                path: self.time_index.path().to_path_buf(),
                reason: "an empty time index for a non-empty log segment".into(),
            });
        }
        self.load_rolling_timestamp()?;
        Ok(())
    }

    fn load_rolling_timestamp(&mut self) -> Result<()> {
        if let Some(h) = self.log.read_header(0)? {
            self.rolling_based_timestamp =
                Some(i64::from_be_bytes(h[35..43].try_into().expect("8")));
        }
        Ok(())
    }

    fn corrupt(&self, pos: u64, what: &str) -> Error {
        Error::CorruptFile {
            path: self.log.path().to_path_buf(),
            reason: format!("{what} at byte {pos}"),
        }
    }

    /// Kafka's `LogSegment.recover`: rebuilds both indexes by validating every batch (CRC included), calls
    /// `on_batch` for each valid one, and truncates the log at the first invalid batch. Returns the bytes removed.
    pub(crate) fn recover(
        &mut self,
        index_max_bytes: u32,
        mut on_batch: impl FnMut(&RecordBatch),
    ) -> Result<u64> {
        self.offset_index.resize(index_max_bytes)?;
        self.time_index.resize(index_max_bytes)?;
        self.offset_index.reset()?;
        self.time_index.reset()?;
        // The loader appends the aborted transactions again as it replays producer state over this segment.
        self.txn_index.reset()?;
        self.max_timestamp = -1;
        self.offset_of_max_timestamp = -1;
        self.bytes_since_last_index_entry = 0;
        self.next_offset = self.base_offset;
        let mut valid_bytes = 0u64;
        let (log, base_offset) = (&self.log, self.base_offset);
        let mut metas = Vec::new();
        for item in log.batches_from(0, true) {
            match item {
                Ok((pos, batch)) => {
                    let expected_min = metas
                        .last()
                        .map_or(base_offset, |(_, m): &(u64, BatchMeta)| m.last_offset + 1);
                    if batch.base_offset() < expected_min {
                        tracing::warn!(path = %log.path().display(), position = pos, base_offset = batch.base_offset(),
                            expected_min, "batch offset goes backwards; truncating the segment here");
                        break;
                    }
                    on_batch(&batch);
                    metas.push((
                        pos,
                        BatchMeta {
                            size: batch.size_in_bytes(),
                            last_offset: batch.last_offset(),
                            max_timestamp: batch.max_timestamp(),
                            offset_of_max_timestamp: batch.base_offset()
                                + batch.offset_delta_of_max_timestamp() as i64,
                        },
                    ));
                    valid_bytes = pos + batch.size_in_bytes() as u64;
                }
                Err(e) => {
                    tracing::warn!(path = %log.path().display(), position = e.position, error = %e.error,
                        "invalid batch during recovery; truncating the segment here");
                    break;
                }
            }
        }
        for (pos, meta) in metas {
            self.index_batch(pos, &meta)?;
            self.next_offset = meta.last_offset + 1;
        }
        if self.max_timestamp >= 0 {
            self.time_index
                .maybe_append(self.max_timestamp, self.offset_of_max_timestamp)?;
        }
        let removed = self.log.truncate_to(valid_bytes)?;
        self.load_rolling_timestamp()?;
        if removed > 0 {
            self.dirty = true;
        }
        Ok(removed)
    }

    fn index_batch(&mut self, pos: u64, meta: &BatchMeta) -> Result<()> {
        if meta.max_timestamp > self.max_timestamp {
            self.max_timestamp = meta.max_timestamp;
            self.offset_of_max_timestamp = meta.offset_of_max_timestamp;
        }
        if self.bytes_since_last_index_entry > self.index_interval_bytes as u64 {
            if !self.offset_index.is_full() {
                self.offset_index.append(meta.last_offset, pos as u32)?;
            }
            self.time_index
                .maybe_append(self.max_timestamp, self.offset_of_max_timestamp)?;
            self.bytes_since_last_index_entry = 0;
        }
        self.bytes_since_last_index_entry += meta.size as u64;
        Ok(())
    }

    /// Appends already offset-assigned batches (`records` = the concatenation described by `batches`).
    pub(crate) fn append(&mut self, records: &[u8], batches: &[BatchMeta]) -> Result<()> {
        self.touch();
        let start = self.log.append(records)?;
        crate::failpoint::crash_point("segment.append.before_index");
        if self.rolling_based_timestamp.is_none() {
            self.rolling_based_timestamp = batches.first().map(|b| b.max_timestamp);
        }
        let mut pos = start;
        for meta in batches {
            self.index_batch(pos, meta)?;
            pos += meta.size as u64;
            self.next_offset = meta.last_offset + 1;
        }
        self.dirty = true;
        Ok(())
    }

    /// Position, size and base offset of the batch containing `offset` (the first batch whose last offset is
    /// >= `offset`, searching from the offset index entry at or below it); None past the end.
    pub(crate) fn translate_offset(&self, offset: i64) -> Result<Option<(u64, usize, i64)>> {
        self.touch();
        let mut pos = self.offset_index.lookup(offset)?.position as u64;
        while let Some(h) = self.log.read_header(pos)? {
            let size = batch_size_from_header(&h)?;
            let base = i64::from_be_bytes(h[0..8].try_into().expect("8"));
            let last = base + i32::from_be_bytes(h[23..27].try_into().expect("4")) as i64;
            if last >= offset {
                return Ok(Some((pos, size, base)));
            }
            pos += size as u64;
        }
        Ok(None)
    }

    /// Plans the read of whole batches from the one containing `offset`, at most `max_bytes` (or the first batch
    /// whole when `min_one_message`), none with base offset >= `max_offset`: the index lookup and header reads
    /// here (under the log's lock), the one data `pread` in [`SegmentRead::read`] (after the lock is released).
    /// With `region_from`, a read of at least that many bytes is planned as a [`SegmentRead::Region`] instead:
    /// its end found from the batch headers here, its bytes never read by the broker. None past the segment's end.
    pub(crate) fn plan_read(&self, offset: i64, bounds: ReadBounds) -> Result<Option<SegmentRead>> {
        let ReadBounds {
            max_bytes,
            min_one_message,
            max_offset,
            region_from,
        } = bounds;
        let Some((pos, first_size, first_base)) = self.translate_offset(offset)? else {
            return Ok(None);
        };
        if max_offset.is_some_and(|m| first_base >= m) {
            return Ok(Some(SegmentRead::Empty));
        }
        let want = if min_one_message {
            max_bytes.max(first_size)
        } else {
            max_bytes
        };
        if want < first_size {
            return Ok(Some(SegmentRead::Empty));
        }
        let read = self.log.read_handle(pos, want)?;
        if let Some(from) = region_from {
            let limit = pos
                .saturating_add(want as u64)
                .min(self.log.size_in_bytes());
            if limit - pos >= from as u64 {
                let (end, next_offset) = self.whole_batches_end(pos, limit, max_offset)?;
                if let Some(region) = read.into_region((end - pos) as usize) {
                    return Ok(Some(SegmentRead::Region {
                        region,
                        next_offset,
                    }));
                }
                return Ok(Some(SegmentRead::Empty));
            }
        }
        Ok(Some(SegmentRead::Data { read, max_offset }))
    }

    /// Where the whole batches from `pos` (a batch boundary) end at or below `limit`, none with base offset >=
    /// `max_offset`, and the offset after them (the next batch's base offset, or the segment's next offset at its
    /// end: Kafka's upper bound for the aborted transactions a read_committed fetch returns). The walk over batch
    /// headers starts at the offset index's last entry at or below the limit, so it reads a few headers, not all.
    fn whole_batches_end(
        &self,
        pos: u64,
        limit: u64,
        max_offset: Option<i64>,
    ) -> Result<(u64, i64)> {
        let mut limit = limit;
        if let Some(m) = max_offset.filter(|m| *m < self.next_offset) {
            if let Some((at, size, base)) = self.translate_offset(m)? {
                limit = limit.min(if base >= m { at } else { at + size as u64 });
            }
        }
        if limit >= self.log.size_in_bytes() {
            // The rest of the segment: its end is a batch boundary, and the offset after it is known.
            return Ok((self.log.size_in_bytes(), self.next_offset));
        }
        let mut at = self
            .offset_index
            .lookup_position(limit)?
            .map_or(pos, |e| (e.position as u64).max(pos));
        while let Some(h) = self.log.read_header(at)? {
            let size = batch_size_from_header(&h)? as u64;
            if at + size > limit {
                return Ok((at, i64::from_be_bytes(h[0..8].try_into().expect("8"))));
            }
            at += size;
        }
        // Fewer than a header's bytes after `at`: the file ends there.
        Ok((at, self.next_offset))
    }

    /// The first record at or after `start_offset` whose timestamp is >= `ts`: (offset, timestamp) (see
    /// [`RecordBatch::find_timestamp`]).
    pub(crate) fn find_offset_by_timestamp(
        &self,
        ts: i64,
        start_offset: i64,
    ) -> Result<Option<(i64, i64)>> {
        self.touch();
        let entry = self.time_index.lookup(ts)?;
        let from = self
            .offset_index
            .lookup(entry.offset.max(start_offset))?
            .position as u64;
        let mut pos = from;
        while let Some(h) = self.log.read_header(pos)? {
            let size = batch_size_from_header(&h)?;
            let base = i64::from_be_bytes(h[0..8].try_into().expect("8"));
            let last = base + i32::from_be_bytes(h[23..27].try_into().expect("4")) as i64;
            let max_ts = i64::from_be_bytes(h[35..43].try_into().expect("8"));
            if max_ts >= ts && last >= start_offset {
                let batch = RecordBatch::new_unchecked_crc(self.log.read(pos, size)?)?;
                if let Some(hit) = batch.find_timestamp(ts, start_offset)? {
                    return Ok(Some(hit));
                }
            }
            pos += size as u64;
        }
        Ok(None)
    }

    /// Whether the next append of `incoming_bytes` up to `max_offset` must go to a new segment (Kafka's
    /// `shouldRoll`).
    /// `segment.ms` (or a smaller `max.compaction.lag.ms` on a compacted log) compares the incoming batch's max timestamp with the first batch's when the segment has one
    /// (Kafka's `timeWaitedForRoll`), else the clock with the segment's creation time.
    pub(crate) fn should_roll(
        &self,
        config: &LogConfig,
        incoming_bytes: usize,
        max_offset: i64,
        max_timestamp: i64,
        now_ms: i64,
    ) -> bool {
        let size = self.log.size_in_bytes();
        let age = match self.rolling_based_timestamp {
            Some(first) if first >= 0 => max_timestamp - first,
            _ => now_ms - self.created_ms,
        };
        (size > 0
            && (size + incoming_bytes as u64 > config.segment_bytes
                || age > config.max_segment_ms()))
            || self.offset_index.is_full()
            || self.time_index.is_full()
            || max_offset - self.base_offset > i32::MAX as i64
    }

    /// Forces the final time index entry and trims both indexes (Kafka's `onBecomeInactiveSegment`).
    pub(crate) fn on_become_inactive(&mut self) -> Result<()> {
        if self.max_timestamp >= 0 {
            self.time_index
                .maybe_append(self.max_timestamp, self.offset_of_max_timestamp)?;
        }
        self.offset_index.trim_to_valid_size()?;
        self.time_index.trim_to_valid_size()
    }

    /// Fsyncs the log and both indexes.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if self.dirty {
            self.log.flush()?;
            crate::failpoint::crash_point("segment.flush.before_offset_index");
            self.offset_index.flush()?;
            crate::failpoint::crash_point("segment.flush.before_time_index");
            self.time_index.flush()?;
            self.txn_index.flush()?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Renames the segment's files to `*.deleted`; returns the new paths (to remove after the delete delay).
    pub(crate) fn rename_to_deleted(&mut self) -> Result<Vec<PathBuf>> {
        let add = |p: &Path| PathBuf::from(format!("{}{}", p.display(), names::DELETED_SUFFIX));
        let (l, o, t) = (
            add(self.log.path()),
            add(self.offset_index.path()),
            add(self.time_index.path()),
        );
        self.log.rename_to(l.clone())?;
        self.offset_index.rename_to(o.clone())?;
        self.time_index.rename_to(t.clone())?;
        let txn = add(self.txn_index.path());
        let mut files = vec![l, o, t];
        files.extend(self.txn_index.rename_to(txn)?);
        Ok(files)
    }

    /// Renames the segment's files from suffix `old` to `new` (`.cleaned` → `.swap` → none: the log cleaner's
    /// swap). The indexes are renamed first and the `.log` last, so a `.log` carrying `new` means every file
    /// does (recovery relies on it).
    pub(crate) fn change_file_suffixes(&mut self, old: &str, new: &str) -> Result<()> {
        let rename = |p: &Path| -> Result<PathBuf> {
            let s = p.to_string_lossy();
            let stem = s.strip_suffix(old).ok_or_else(|| Error::Storage {
                dir: p.parent().map(Path::to_path_buf).unwrap_or_default(),
                reason: format!("{} does not end with {old:?}", p.display()),
            })?;
            Ok(PathBuf::from(format!("{stem}{new}")))
        };
        let (o, t, x, l) = (
            rename(self.offset_index.path())?,
            rename(self.time_index.path())?,
            rename(self.txn_index.path())?,
            rename(self.log.path())?,
        );
        self.offset_index.rename_to(o)?;
        self.txn_index.rename_to(x)?;
        self.time_index.rename_to(t)?;
        self.log.rename_to(l)
    }

    /// The `.log` file's modification time in ms since the epoch (Kafka's `LogSegment.lastModified`; the log
    /// cleaner's delete horizon is measured with it).
    pub fn last_modified_ms(&self) -> Result<i64> {
        let path = self.log.path();
        let modified = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .map_err(crate::error::io_err(path))?;
        Ok(modified
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64))
    }

    /// Sets the `.log` file's modification time (the cleaner gives its output the time of the last segment it
    /// replaces, as Kafka does).
    pub(crate) fn set_last_modified_ms(&self, ms: i64) -> Result<()> {
        let path = self.log.path();
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_modified(time))
            .map_err(crate::error::io_err(path))
    }

    /// The first batch's max timestamp (Kafka's `getFirstBatchTimestamp`), None when empty.
    pub(crate) fn first_batch_timestamp(&self) -> Option<i64> {
        self.rolling_based_timestamp
    }

    /// Records a use for the handle sweep (one relaxed load; a store once per sweep epoch).
    #[inline]
    fn touch(&self) {
        self.handles.touch(&self.last_used);
    }

    /// Closes the `.log` descriptor and unmaps both indexes if the segment was not used since the sweep epoch
    /// `epoch` (or always, with `all`); the next use reopens them. Returns whether it released.
    pub(crate) fn release_handles(&mut self, epoch: u64, all: bool) -> bool {
        if !all && self.last_used.load(Ordering::Relaxed) >= epoch {
            return false;
        }
        self.log.release();
        self.offset_index.release();
        self.time_index.release();
        true
    }

    /// Handles open now: the `.log` descriptor and the index mappings (0 to 3).
    pub fn open_handles(&self) -> usize {
        usize::from(self.log.is_open())
            + usize::from(self.offset_index.is_mapped())
            + usize::from(self.time_index.is_mapped())
    }

    /// The base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// Last offset + 1 (the base offset when empty).
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }
    /// Bytes in the `.log`.
    pub fn size_in_bytes(&self) -> u64 {
        self.log.size_in_bytes()
    }
    /// The largest batch max timestamp (-1 when empty).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }
    /// The timestamp retention compares with `retention.ms`: the max timestamp, or the `.log` file's modification
    /// time when no batch carries a timestamp (Kafka's `largestTimestamp`).
    pub fn largest_timestamp(&self) -> i64 {
        if self.max_timestamp >= 0 {
            return self.max_timestamp;
        }
        std::fs::metadata(self.log.path())
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(-1, |d| d.as_millis() as i64)
    }
    /// Offset of the first record carrying [`LogSegment::max_timestamp`] (-1 when empty).
    pub fn offset_of_max_timestamp(&self) -> i64 {
        self.offset_of_max_timestamp
    }
    /// The `.log` path.
    pub fn log_path(&self) -> &Path {
        self.log.path()
    }
    /// The `.index` path.
    pub fn offset_index_path(&self) -> &Path {
        self.offset_index.path()
    }
    /// The `.timeindex` path.
    pub fn time_index_path(&self) -> &Path {
        self.time_index.path()
    }
    /// The offset index.
    pub fn offset_index(&self) -> &OffsetIndex {
        &self.offset_index
    }
    /// The time index.
    pub fn time_index(&self) -> &TimeIndex {
        &self.time_index
    }
    /// The `.txnindex` (aborted transactions whose ABORT marker is in this segment).
    pub fn txn_index(&self) -> &TransactionIndex {
        &self.txn_index
    }
    /// Records an aborted transaction whose marker was appended to (or replayed from) this segment.
    pub(crate) fn append_aborted_txn(&mut self, txn: &AbortedTxn) -> Result<()> {
        self.txn_index.append(txn)?;
        self.dirty = true;
        Ok(())
    }
    pub(crate) fn file_records(&self) -> &FileRecords {
        &self.log
    }
}

/// What a read asks for besides its offset (see `UnifiedLog::read` and `UnifiedLog::read_slice`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadBounds {
    pub(crate) max_bytes: usize,
    pub(crate) min_one_message: bool,
    /// No batch with a base offset at or past it.
    pub(crate) max_offset: Option<i64>,
    /// A read of at least this many bytes is left in its file.
    pub(crate) region_from: Option<usize>,
}

/// A read planned by [`LogSegment::plan_read`].
#[derive(Debug)]
pub(crate) enum SegmentRead {
    /// Nothing to return (the first batch is past `max_offset` or larger than `max_bytes`).
    Empty,
    /// The bytes to `pread`, then cut to whole batches below `max_offset`.
    Data {
        read: PendingRead,
        max_offset: Option<i64>,
    },
    /// Whole batches left in the file, and the offset after them.
    Region {
        region: FileRegion,
        next_offset: i64,
    },
}

impl SegmentRead {
    /// Performs the `pread` and keeps whole batches with base offsets below `max_offset`.
    pub(crate) fn read(self) -> Result<Bytes> {
        let (read, max_offset) = match self {
            SegmentRead::Empty => return Ok(Bytes::new()),
            SegmentRead::Region { region, .. } => return region.read(),
            SegmentRead::Data { read, max_offset } => (read, max_offset),
        };
        let mut buf = read.read()?;
        let mut end = 0usize;
        while end + LOG_OVERHEAD <= buf.len() {
            let len = i32::from_be_bytes(buf[end + 8..end + 12].try_into().expect("4"));
            let size = LOG_OVERHEAD + len.max(0) as usize;
            let base = i64::from_be_bytes(buf[end..end + 8].try_into().expect("8"));
            if end + size > buf.len() || max_offset.is_some_and(|m| base >= m) {
                break;
            }
            end += size;
        }
        buf.truncate(end);
        Ok(buf)
    }
}
