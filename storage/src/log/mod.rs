//! The partition log: [`UnifiedLog`] (log start offset, local log start offset, highest offset in remote storage,
//! high watermark, producer state, leader epochs) over a `LocalLog` (directory, `LogSegments`, recovery point),
//! with loading/recovery (`loader`) and retention (`retention`).
mod cleaning;
mod leader_epoch;
mod loader;
mod local_log;
mod record_errors;
mod retention;
mod segments;
mod unified;
mod validator;

use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;

pub use cleaning::CrashPoint;
pub(crate) use cleaning::{discard_cleaned, CleanerView, LastRecord, SegmentInfo};
pub(crate) use loader::{load_log, LoadParams};
pub use unified::UnifiedLog;

use crate::TopicPartition;

/// The result of [`UnifiedLog::append_as_leader`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogAppendInfo {
    /// Offset of the first record appended (or of the original, for a duplicate).
    pub first_offset: i64,
    /// Offset of the last record appended.
    pub last_offset: i64,
    /// The broker time written into the batches with LogAppendTime; -1 otherwise.
    pub log_append_time_ms: i64,
    /// The log start offset after the append.
    pub log_start_offset: i64,
    /// Records appended.
    pub record_count: u32,
}

/// The result of [`UnifiedLog::read`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchDataInfo {
    /// Whole batches starting at the batch that contains the fetch offset; empty `Bytes` when nothing.
    pub records: Bytes,
}

/// What [`UnifiedLog::read_slice`] returns: whole batches read into memory, or left in their file.
#[derive(Debug, Clone)]
pub enum LogSlice {
    /// Read (a small read, or nothing); empty when nothing.
    Bytes(Bytes),
    /// Left in the segment file, to be sent from there.
    File {
        /// The batches' bytes in the file.
        region: crate::FileRegion,
        /// The offset after the last of them (the next batch's base offset).
        next_offset: i64,
    },
}

impl LogSlice {
    /// Bytes in the slice.
    pub fn len(&self) -> usize {
        match self {
            LogSlice::Bytes(b) => b.len(),
            LogSlice::File { region, .. } => region.len(),
        }
    }

    /// Whether the slice holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A segment that is no longer active, as tiering sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolledSegment {
    /// First offset of the segment (its file name).
    pub base_offset: i64,
    /// Last offset + 1.
    pub next_offset: i64,
    /// Bytes in the `.log`.
    pub size_bytes: u64,
    /// Largest batch max timestamp in the segment (-1 if none).
    pub max_timestamp_ms: i64,
    /// The `.log` file.
    pub log_file: PathBuf,
    /// The `.index` file.
    pub offset_index_file: PathBuf,
    /// The `.timeindex` file.
    pub time_index_file: PathBuf,
    /// `{next_offset:020}.snapshot`, the producer state at the segment's end, if present.
    pub producer_snapshot_file: Option<PathBuf>,
    /// The `.txnindex` file, if the segment holds an aborted transaction's marker.
    pub txn_index_file: Option<PathBuf>,
}

/// A roll listener; see `LogManager::add_roll_listener`.
pub type RollListener = Arc<dyn Fn(&TopicPartition, &RolledSegment) + Send + Sync>;

/// Roll listeners shared by the manager and its logs.
#[derive(Default)]
pub(crate) struct RollListeners(RwLock<Vec<RollListener>>);

impl RollListeners {
    pub(crate) fn add(&self, l: RollListener) {
        self.0.write().push(l);
    }
    pub(crate) fn notify(&self, tp: &TopicPartition, seg: &RolledSegment) {
        let listeners = self.0.read().clone();
        for l in listeners {
            l(tp, seg);
        }
    }
}

/// One `log.dirs` entry and whether a failed write or fsync poisoned it.
#[derive(Debug)]
pub(crate) struct LogDir {
    pub(crate) path: PathBuf,
    poisoned: AtomicBool,
}

impl LogDir {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            poisoned: AtomicBool::new(false),
        }
    }
    pub(crate) fn poison(&self, why: &crate::Error) {
        if !self.poisoned.swap(true, Ordering::SeqCst) {
            tracing::error!(dir = %self.path.display(), error = %why, "log dir failed; later writes to it fail");
        }
    }
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::SeqCst)
    }
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

pub(crate) use crate::time::now_ms;

#[cfg(test)]
mod tests;
