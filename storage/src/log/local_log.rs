//! [`LocalLog`]: the local part of a partition log (Kafka's `LocalLog`): its directory, config, segments,
//! recovery point and flush bookkeeping. [`super::UnifiedLog`] adds the log start offset, producer state, the
//! leader-epoch cache and the link to remote storage.
use std::path::PathBuf;
use std::sync::Arc;

use super::segments::LogSegments;
use crate::handles::HandleCache;
use crate::segment::{LogSegment, ReadBounds, SegmentRead};
use crate::{fsio, LogConfig, Result};

/// The local segments and their bookkeeping; lives behind the `UnifiedLog`'s lock.
#[derive(Debug)]
pub(crate) struct LocalLog {
    /// The partition directory.
    pub(crate) dir: PathBuf,
    pub(crate) config: LogConfig,
    /// Never empty: the last segment is the active one.
    pub(crate) segments: LogSegments,
    /// Every offset below this is fsynced.
    pub(crate) recovery_point: i64,
    /// Records appended since the last flush (for `flush.messages`).
    pub(crate) unflushed_messages: u64,
    /// When the last flush happened (for `flush.ms`).
    pub(crate) last_flush_ms: i64,
    /// Files renamed `.deleted`, removed once the time (ms) passes (`file.delete.delay.ms`).
    pub(crate) pending_deletes: Vec<(i64, Vec<PathBuf>)>,
    /// Counts (and bounds) the open descriptors and index mappings of the segments.
    pub(crate) handles: Arc<HandleCache>,
}

impl LocalLog {
    pub(crate) fn new(
        dir: PathBuf,
        config: LogConfig,
        segments: LogSegments,
        recovery_point: i64,
        now_ms: i64,
        handles: Arc<HandleCache>,
    ) -> Self {
        debug_assert!(!segments.is_empty());
        Self {
            dir,
            config,
            segments,
            recovery_point,
            unflushed_messages: 0,
            last_flush_ms: now_ms,
            pending_deletes: Vec::new(),
            handles,
        }
    }

    pub(crate) fn active(&self) -> &LogSegment {
        self.segments
            .last_segment()
            .expect("a log always has an active segment")
    }

    pub(crate) fn active_mut(&mut self) -> &mut LogSegment {
        self.segments
            .last_segment_mut()
            .expect("a log always has an active segment")
    }

    /// The offset the next record gets.
    pub(crate) fn log_end_offset(&self) -> i64 {
        self.active().next_offset()
    }

    /// Starts a new active segment at the log end (the caller made the old one inactive and flushed it), makes
    /// its creation durable, and moves the recovery point to the new base offset.
    pub(crate) fn roll(&mut self, now_ms: i64) -> Result<()> {
        let new_base = self.log_end_offset();
        let segment = LogSegment::create(&self.dir, new_base, &self.config, now_ms, &self.handles)?;
        self.segments.add(segment);
        crate::failpoint::crash_point("log.roll.before_dir_sync");
        fsio::sync_dir(&self.dir)?;
        self.recovery_point = self.recovery_point.max(new_base);
        Ok(())
    }

    /// Plans the read of whole batches from the segment holding `offset` (see `UnifiedLog::read`); the caller
    /// checked the range, and performs the `pread` with [`SegmentRead::read`] after releasing the lock.
    pub(crate) fn plan_read(&self, offset: i64, bounds: ReadBounds) -> Result<SegmentRead> {
        for seg in self.segments.starting_at(offset) {
            if let Some(read) = seg.plan_read(offset.max(seg.base_offset()), bounds)? {
                return Ok(read);
            }
        }
        Ok(SegmentRead::Empty)
    }

    /// Fsyncs every segment with unflushed data and moves the recovery point to the log end.
    pub(crate) fn flush(&mut self, now_ms: i64) -> Result<()> {
        for seg in self.segments.iter_mut() {
            seg.flush()?;
        }
        self.recovery_point = self.log_end_offset();
        self.unflushed_messages = 0;
        self.last_flush_ms = now_ms;
        Ok(())
    }

    /// Removes `.deleted` files whose delay passed.
    pub(crate) fn remove_due_files(&mut self, now_ms: i64) {
        self.pending_deletes.retain(|(due, files)| {
            if *due > now_ms {
                return true;
            }
            for f in files {
                if let Err(e) = std::fs::remove_file(f) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        tracing::warn!(file = %f.display(), error = %e, "could not remove deleted segment file");
                    }
                }
            }
            false
        });
    }
}
