//! Sparse, memory-mapped segment indexes: [`OffsetIndex`] (`.index`) and [`TimeIndex`] (`.timeindex`).
//!
//! Both files are preallocated to `segment.index.bytes` (rounded down to whole entries) while their segment is
//! active, and trimmed to their entries when it rolls or the log closes. They carry no checksum: recovery
//! rebuilds them from the `.log`.
#[allow(unsafe_code)]
mod mmap;
mod offset_index;
mod time_index;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use memmap2::MmapMut;

pub use offset_index::{OffsetIndex, OffsetPosition};
pub use time_index::{TimeIndex, TimestampOffset};

use crate::error::io_err;
use crate::{fsio, Error, Result};

/// A file of fixed-size big-endian entries behind an mmap.
#[derive(Debug)]
pub(crate) struct IndexFile {
    path: PathBuf,
    file: File,
    mmap: Option<MmapMut>,
    entry_size: usize,
    entries: usize,
    max_entries: usize,
}

impl IndexFile {
    /// Opens (creating if absent). The existing length determines the entry count (it must be a whole number of
    /// entries, else [`Error::CorruptFile`]). When `max_bytes` is Some, the file is resized to that many bytes
    /// (rounded down to entries) so appends can follow.
    pub(crate) fn open(path: &Path, entry_size: usize, max_bytes: Option<u32>) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_err(path))?;
        let len = file.metadata().map_err(io_err(path))?.len() as usize;
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
            file,
            mmap: None,
            entry_size,
            entries,
            max_entries: entries,
        };
        match max_bytes {
            Some(max) => index.resize(max as usize)?,
            None => index.remap()?,
        }
        Ok(index)
    }

    fn remap(&mut self) -> Result<()> {
        self.mmap = None;
        let len = self.max_entries * self.entry_size;
        if len > 0 {
            self.mmap = Some(mmap::map_mut(&self.file).map_err(io_err(&self.path))?);
        }
        Ok(())
    }

    /// Resizes the file to `bytes` rounded down to whole entries (never below the current entries).
    pub(crate) fn resize(&mut self, bytes: usize) -> Result<()> {
        let max_entries = (bytes / self.entry_size).max(self.entries);
        if max_entries == self.max_entries && self.mmap.is_some() {
            return Ok(());
        }
        self.mmap = None;
        if let Err(e) = self.file.set_len((max_entries * self.entry_size) as u64) {
            // Keep the old mapping usable; the caller sees the error (and poisons the log dir).
            self.remap()?;
            return Err(io_err(&self.path)(e));
        }
        self.max_entries = max_entries;
        self.remap()
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
    pub(crate) fn entry(&self, n: usize) -> &[u8] {
        let mmap = self.mmap.as_ref().expect("an index with entries is mapped");
        &mmap[n * self.entry_size..(n + 1) * self.entry_size]
    }

    /// Appends an entry; the caller checked `!is_full()`.
    pub(crate) fn push(&mut self, entry: &[u8]) {
        debug_assert_eq!(entry.len(), self.entry_size);
        let at = self.entries * self.entry_size;
        let mmap = self.mmap.as_mut().expect("a non-full index is mapped");
        mmap[at..at + self.entry_size].copy_from_slice(entry);
        self.entries += 1;
    }

    /// Drops every entry: the file is cut to nothing and grown back to its capacity, so it is sparse again (no
    /// block written, no page touched) however much of it was in use — recovery after a crash resets the index
    /// of every active segment, and zeroing 10 MiB per partition filled the disk and the page cache.
    pub(crate) fn reset(&mut self) -> Result<()> {
        let capacity = (self.max_entries * self.entry_size) as u64;
        self.mmap = None;
        self.entries = 0;
        let res = self
            .file
            .set_len(0)
            .and_then(|()| self.file.set_len(capacity));
        if res.is_err() {
            let len = self.file.metadata().map_or(0, |m| m.len()) as usize;
            self.max_entries = len / self.entry_size;
        }
        self.remap()?;
        res.map_err(io_err(&self.path))
    }

    /// Drops entries from `n` on.
    pub(crate) fn truncate_entries(&mut self, n: usize) {
        if n < self.entries {
            if let Some(mmap) = self.mmap.as_mut() {
                mmap[n * self.entry_size..self.entries * self.entry_size].fill(0);
            }
            self.entries = n;
        }
    }

    /// Binary search: the index of the last entry whose key (per `key`) is <= `target`, or None.
    pub(crate) fn largest_lower_bound(
        &self,
        target: i64,
        key: impl Fn(&[u8]) -> i64,
    ) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.entries);
        // Invariant: entries [0, lo) have key <= target, entries [hi, n) have key > target.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key(self.entry(mid)) <= target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1)
    }

    /// Flushes the mapping to disk.
    pub(crate) fn flush(&self) -> Result<()> {
        #[cfg(test)]
        if fsio::FAIL_FSYNC.with(|f| f.get()) {
            return Err(io_err(&self.path)(std::io::Error::other(
                "injected fsync failure",
            )));
        }
        if let Some(m) = &self.mmap {
            m.flush().map_err(io_err(&self.path))?;
        }
        fsio::sync_file(&self.file, &self.path)
    }

    /// Renames the file (the mapping stays valid).
    pub(crate) fn rename_to(&mut self, path: PathBuf) -> Result<()> {
        std::fs::rename(&self.path, &path).map_err(io_err(&self.path))?;
        self.path = path;
        Ok(())
    }
}
