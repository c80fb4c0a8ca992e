//! Sparse, memory-mapped segment indexes: [`OffsetIndex`] (`.index`) and [`TimeIndex`] (`.timeindex`).
//!
//! Both files are preallocated to `segment.index.bytes` (rounded down to whole entries) while their segment is
//! active, and trimmed to their entries when it rolls or the log closes. They carry no checksum: recovery
//! rebuilds them from the `.log`. A file is mapped on first use and unmapped when its segment goes idle past
//! `log.max.open.files` (see `crate::handles`); no descriptor stays open once it is mapped.
#[allow(unsafe_code)]
mod mmap;
mod offset_index;
mod time_index;
mod txn_index;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::MmapMut;

pub use offset_index::{OffsetIndex, OffsetPosition};
pub use time_index::{TimeIndex, TimestampOffset};
pub use txn_index::{
    parse_entries as parse_aborted_txns, AbortedTxn, TransactionIndex, ABORTED_TXN_SIZE,
};

use crate::error::io_err;
use crate::handles::{HandleCache, HandleToken};
use crate::{fsio, Error, Result};

/// A mapping and the unit of the open-files cap it holds (the file descriptor is closed once mapped).
#[derive(Debug)]
struct Mapped {
    map: MmapMut,
    _token: HandleToken,
}

/// A file of fixed-size big-endian entries behind an mmap. The entry count and capacity live here; the file is
/// mapped on first use (Kafka's `LazyIndex`) and unmapped by [`IndexFile::release`] (the log's handle sweep), and
/// no descriptor stays open: resizing, resetting and fsync open the file for the call.
#[derive(Debug)]
pub(crate) struct IndexFile {
    path: PathBuf,
    mmap: OnceLock<Mapped>,
    handles: Arc<HandleCache>,
    entry_size: usize,
    entries: usize,
    max_entries: usize,
}

fn open_file(path: &Path, create: bool) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .open(path)
        .map_err(io_err(path))
}

impl IndexFile {
    /// Opens (creating if absent). The existing length determines the entry count (it must be a whole number of
    /// entries, else [`Error::CorruptFile`]). When `max_bytes` is Some, the file is resized to that many bytes
    /// (rounded down to entries) so appends can follow. Nothing stays open or mapped.
    pub(crate) fn open(
        path: &Path,
        entry_size: usize,
        max_bytes: Option<u32>,
        handles: Arc<HandleCache>,
    ) -> Result<Self> {
        let file = open_file(path, true)?;
        let len = file.metadata().map_err(io_err(path))?.len() as usize;
        drop(file);
        if !len.is_multiple_of(entry_size) {
            return Err(Error::CorruptFile {
                path: path.to_path_buf(),
                reason: format!(
                    "index size {len} is not a multiple of the entry size {entry_size}"
                ),
            });
        }
        let entries = len / entry_size;
        let mut index = Self {
            path: path.to_path_buf(),
            mmap: OnceLock::new(),
            handles,
            entry_size,
            entries,
            max_entries: entries,
        };
        if let Some(max) = max_bytes {
            index.resize(max as usize)?;
        }
        Ok(index)
    }

    /// The mapping of the whole file (mapped now if it is not); the file must be non-empty.
    #[inline]
    fn map(&self) -> Result<&MmapMut> {
        match self.mmap.get() {
            Some(m) => Ok(&m.map),
            None => self.map_now(),
        }
    }

    #[cold]
    fn map_now(&self) -> Result<&MmapMut> {
        let token = self.handles.acquire();
        let file = open_file(&self.path, false)?;
        let map = mmap::map_mut(&file).map_err(io_err(&self.path))?;
        // The mapping outlives the descriptor.
        drop(file);
        // A concurrent reader may have mapped it first; its mapping is kept and this one dropped.
        let _ = self.mmap.set(Mapped { map, _token: token });
        Ok(&self.mmap.get().expect("set above").map)
    }

    fn map_mut(&mut self) -> Result<&mut MmapMut> {
        self.map()?;
        Ok(&mut self.mmap.get_mut().expect("mapped above").map)
    }

    /// Unmaps the file (dirty pages stay in the page cache; [`IndexFile::flush`] still fsyncs them). The next
    /// lookup or append maps it again.
    pub(crate) fn release(&mut self) {
        self.mmap.take();
    }

    /// Whether the file is mapped now.
    pub(crate) fn is_mapped(&self) -> bool {
        self.mmap.get().is_some()
    }

    /// Resizes the file to `bytes` rounded down to whole entries (never below the current entries).
    pub(crate) fn resize(&mut self, bytes: usize) -> Result<()> {
        let max_entries = (bytes / self.entry_size).max(self.entries);
        if max_entries == self.max_entries {
            return Ok(());
        }
        // The mapping is dropped before the size changes (see `mmap::map_mut`); the next use maps again.
        self.mmap.take();
        let _token = self.handles.acquire();
        open_file(&self.path, false)?
            .set_len((max_entries * self.entry_size) as u64)
            .map_err(io_err(&self.path))?;
        self.max_entries = max_entries;
        Ok(())
    }

    /// Shrinks the file to exactly its entries (Kafka's `trimToValidSize`).
    pub(crate) fn trim_to_valid_size(&mut self) -> Result<()> {
        self.resize(self.entries * self.entry_size)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
    pub(crate) fn entries(&self) -> usize {
        self.entries
    }
    pub(crate) fn is_full(&self) -> bool {
        self.entries >= self.max_entries
    }

    /// The bytes of entry `n` (< entries).
    pub(crate) fn entry(&self, n: usize) -> Result<&[u8]> {
        debug_assert!(n < self.entries);
        let mmap = self.map()?;
        Ok(&mmap[n * self.entry_size..(n + 1) * self.entry_size])
    }

    /// Appends an entry; the caller checked `!is_full()`.
    pub(crate) fn push(&mut self, entry: &[u8]) -> Result<()> {
        debug_assert_eq!(entry.len(), self.entry_size);
        let (at, size) = (self.entries * self.entry_size, self.entry_size);
        let mmap = self.map_mut()?;
        mmap[at..at + size].copy_from_slice(entry);
        self.entries += 1;
        Ok(())
    }

    /// Drops every entry: the file is cut to nothing and grown back to its capacity, so it is sparse again (no
    /// block written, no page touched) however much of it was in use — recovery after a crash resets the index
    /// of every active segment, and zeroing 10 MiB per partition filled the disk and the page cache.
    pub(crate) fn reset(&mut self) -> Result<()> {
        let capacity = (self.max_entries * self.entry_size) as u64;
        self.mmap.take();
        self.entries = 0;
        let _token = self.handles.acquire();
        let file = open_file(&self.path, false)?;
        let res = file.set_len(0).and_then(|()| file.set_len(capacity));
        if res.is_err() {
            let len = file.metadata().map_or(0, |m| m.len()) as usize;
            self.max_entries = len / self.entry_size;
        }
        res.map_err(io_err(&self.path))
    }

    /// Drops entries from `n` on.
    pub(crate) fn truncate_entries(&mut self, n: usize) -> Result<()> {
        if n < self.entries {
            let (size, end) = (self.entry_size, self.entries * self.entry_size);
            let mmap = self.map_mut()?;
            mmap[n * size..end].fill(0);
            self.entries = n;
        }
        Ok(())
    }

    /// Binary search: the index of the last entry whose key (per `key`) is <= `target`, or None.
    pub(crate) fn largest_lower_bound(
        &self,
        target: i64,
        key: impl Fn(&[u8]) -> i64,
    ) -> Result<Option<usize>> {
        if self.entries == 0 {
            return Ok(None);
        }
        let mmap = self.map()?;
        let entry = |n: usize| &mmap[n * self.entry_size..(n + 1) * self.entry_size];
        let (mut lo, mut hi) = (0usize, self.entries);
        // Invariant: entries [0, lo) have key <= target, entries [hi, n) have key > target.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key(entry(mid)) <= target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo.checked_sub(1))
    }

    /// Flushes the mapping to disk.
    pub(crate) fn flush(&self) -> Result<()> {
        #[cfg(test)]
        if fsio::FAIL_FSYNC.with(|f| f.get()) {
            return Err(io_err(&self.path)(std::io::Error::other(
                "injected fsync failure",
            )));
        }
        if let Some(m) = self.mmap.get() {
            m.map.flush().map_err(io_err(&self.path))?;
        }
        // Also when unmapped: pages written through an earlier mapping may still be dirty.
        let _token = self.handles.acquire();
        fsio::sync_file(&open_file(&self.path, false)?, &self.path)
    }

    /// Renames the file (a mapping stays valid; a later one maps the new name).
    pub(crate) fn rename_to(&mut self, path: PathBuf) -> Result<()> {
        std::fs::rename(&self.path, &path).map_err(io_err(&self.path))?;
        self.path = path;
        Ok(())
    }
}
