//! [`OffsetIndex`]: the `.index` file.
//!
//! | off | len | field |
//! |----:|----:|-------|
//! | 0 | 4 | relative offset (offset - segment base offset), big-endian u32 |
//! | 4 | 4 | file position of the batch in the `.log`, big-endian u32 |
//!
//! Entries are sparse (one per `index.interval.bytes` of log) and strictly increasing in both fields.
use std::path::{Path, PathBuf};

use std::sync::Arc;

use super::IndexFile;
use crate::handles::HandleCache;
use crate::{Error, Result};

const ENTRY_SIZE: usize = 8;

/// An offset and the file position of the batch carrying it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetPosition {
    /// Absolute offset.
    pub offset: i64,
    /// Byte position in the `.log`.
    pub position: u32,
}

/// Maps offsets to `.log` positions; see the module docs for the format.
#[derive(Debug)]
pub struct OffsetIndex {
    base_offset: i64,
    file: IndexFile,
}

impl OffsetIndex {
    /// Opens (creating if absent); `max_bytes` = Some(`segment.index.bytes`) for an active segment.
    pub fn open(path: &Path, base_offset: i64, max_bytes: Option<u32>) -> Result<Self> {
        Self::open_in(path, base_offset, max_bytes, HandleCache::unbounded())
    }

    /// [`OffsetIndex::open`] with the mapping counted in `handles`.
    pub(crate) fn open_in(
        path: &Path,
        base_offset: i64,
        max_bytes: Option<u32>,
        handles: Arc<HandleCache>,
    ) -> Result<Self> {
        Ok(Self {
            base_offset,
            file: IndexFile::open(path, ENTRY_SIZE, max_bytes, handles)?,
        })
    }

    fn parse(&self, e: &[u8]) -> OffsetPosition {
        OffsetPosition {
            offset: self.base_offset + u32::from_be_bytes(e[0..4].try_into().expect("4")) as i64,
            position: u32::from_be_bytes(e[4..8].try_into().expect("4")),
        }
    }

    /// The greatest entry with offset <= `target`; `(base_offset, 0)` when there is none. Fails only when the
    /// index cannot be mapped.
    pub fn lookup(&self, target: i64) -> Result<OffsetPosition> {
        let rel = |e: &[u8]| u32::from_be_bytes(e[0..4].try_into().expect("4")) as i64;
        Ok(
            match self
                .file
                .largest_lower_bound(target - self.base_offset, rel)?
            {
                Some(n) => self.parse(self.file.entry(n)?),
                None => OffsetPosition {
                    offset: self.base_offset,
                    position: 0,
                },
            },
        )
    }

    /// The greatest entry with position <= `position` (a batch boundary at or below it); None when there is none.
    pub fn lookup_position(&self, position: u64) -> Result<Option<OffsetPosition>> {
        let pos = |e: &[u8]| u32::from_be_bytes(e[4..8].try_into().expect("4")) as i64;
        let target = i64::try_from(position).unwrap_or(i64::MAX);
        match self.file.largest_lower_bound(target, pos)? {
            Some(n) => Ok(Some(self.parse(self.file.entry(n)?))),
            None => Ok(None),
        }
    }

    /// Appends an entry. Offsets must increase; a non-increasing one is ignored (as Kafka's does on the same
    /// offset) unless it goes backwards, which is a bug reported as an error.
    pub fn append(&mut self, offset: i64, position: u32) -> Result<()> {
        if let Some(last) = self.last_entry()? {
            if offset <= last.offset {
                if offset < last.offset || position != last.position {
                    return Err(Error::CorruptFile {
                        path: self.file.path().to_path_buf(),
                        reason: format!(
                            "index entry for offset {offset} follows offset {}",
                            last.offset
                        ),
                    });
                }
                return Ok(());
            }
        }
        if self.file.is_full() {
            return Err(Error::CorruptFile {
                path: self.file.path().to_path_buf(),
                reason: format!("index is full with {} entries", self.file.entries()),
            });
        }
        let mut e = [0u8; ENTRY_SIZE];
        e[0..4].copy_from_slice(&((offset - self.base_offset) as u32).to_be_bytes());
        e[4..8].copy_from_slice(&position.to_be_bytes());
        self.file.push(&e)
    }

    /// The last entry, if any.
    pub fn last_entry(&self) -> Result<Option<OffsetPosition>> {
        let n = self.file.entries();
        if n == 0 {
            return Ok(None);
        }
        Ok(Some(self.parse(self.file.entry(n - 1)?)))
    }

    /// Entry `n`.
    pub fn entry(&self, n: usize) -> Result<OffsetPosition> {
        Ok(self.parse(self.file.entry(n)?))
    }

    /// Removes entries with offset >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let keep = match self
            .file
            .largest_lower_bound(offset - 1 - self.base_offset, |e| {
                u32::from_be_bytes(e[0..4].try_into().expect("4")) as i64
            })? {
            Some(n) => n + 1,
            None => 0,
        };
        self.file.truncate_entries(keep)
    }

    /// Removes every entry (the file stays at its size, sparse).
    pub fn reset(&mut self) -> Result<()> {
        self.file.reset()
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.file.entries()
    }
    /// Whether no entry fits.
    pub fn is_full(&self) -> bool {
        self.file.is_full()
    }
    /// The file path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
    /// Kafka's `sanityCheck`: entries are increasing and the positions fit in a log of `log_size` bytes.
    pub fn sanity_check(&self, log_size: u64) -> Result<()> {
        let mut prev: Option<OffsetPosition> = None;
        for n in 0..self.entries() {
            let e = self.entry(n)?;
            let bad = prev.is_some_and(|p| e.offset <= p.offset || e.position <= p.position)
                || e.position as u64 >= log_size;
            if bad {
                return Err(Error::CorruptFile {
                    path: self.path().to_path_buf(),
                    reason: format!(
                        "entry {n} ({} -> {}) is out of order or past the log",
                        e.offset, e.position
                    ),
                });
            }
            prev = Some(e);
        }
        Ok(())
    }

    pub(crate) fn resize(&mut self, bytes: u32) -> Result<()> {
        self.file.resize(bytes as usize)
    }
    pub(crate) fn trim_to_valid_size(&mut self) -> Result<()> {
        self.file.trim_to_valid_size()
    }
    pub(crate) fn flush(&self) -> Result<()> {
        self.file.flush()
    }
    pub(crate) fn rename_to(&mut self, path: PathBuf) -> Result<()> {
        self.file.rename_to(path)
    }
    pub(crate) fn release(&mut self) {
        self.file.release()
    }
    pub(crate) fn is_mapped(&self) -> bool {
        self.file.is_mapped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl OffsetIndex {
        fn lookup_ok(&self, target: i64) -> OffsetPosition {
            self.lookup(target).unwrap()
        }
    }

    #[test]
    fn lookup_returns_greatest_entry_at_or_below_target() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = OffsetIndex::open(&dir.path().join("0.index"), 100, Some(800)).unwrap();
        assert_eq!(
            idx.lookup_ok(150),
            OffsetPosition {
                offset: 100,
                position: 0
            }
        );
        idx.append(110, 4000).unwrap();
        idx.append(120, 8000).unwrap();
        assert_eq!(
            idx.lookup_ok(105),
            OffsetPosition {
                offset: 100,
                position: 0
            }
        );
        assert_eq!(
            idx.lookup_ok(110),
            OffsetPosition {
                offset: 110,
                position: 4000
            }
        );
        assert_eq!(
            idx.lookup_ok(119),
            OffsetPosition {
                offset: 110,
                position: 4000
            }
        );
        assert_eq!(
            idx.lookup_ok(1000),
            OffsetPosition {
                offset: 120,
                position: 8000
            }
        );
        idx.truncate_to(120).unwrap();
        assert_eq!(idx.entries(), 1);
        assert!(idx.append(100, 1).is_err());
    }

    #[test]
    fn preallocated_index_is_trimmed_and_reopened_with_its_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.index");
        let mut idx = OffsetIndex::open(&path, 0, Some(1024)).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1024);
        idx.append(5, 100).unwrap();
        idx.trim_to_valid_size().unwrap();
        drop(idx);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);
        let idx = OffsetIndex::open(&path, 0, None).unwrap();
        assert_eq!(
            idx.last_entry().unwrap(),
            Some(OffsetPosition {
                offset: 5,
                position: 100
            })
        );
        assert!(idx.is_full());
    }

    #[test]
    fn full_index_reports_full() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = OffsetIndex::open(&dir.path().join("0.index"), 0, Some(20)).unwrap();
        idx.append(1, 1).unwrap();
        idx.append(2, 2).unwrap();
        assert!(idx.is_full());
        assert!(idx.append(3, 3).is_err());
    }

    proptest! {
        #[test]
        fn prop_lookup_matches_linear_scan(
            deltas in proptest::collection::vec(1u32..1000, 0..200),
            targets in proptest::collection::vec(0i64..250_000, 1..50),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let base = 1000;
            let mut idx = OffsetIndex::open(&dir.path().join("x.index"), base, Some(8 * 256)).unwrap();
            let mut entries = Vec::new();
            let (mut off, mut pos) = (base, 0u32);
            for d in deltas {
                off += d as i64;
                pos += d;
                idx.append(off, pos).unwrap();
                entries.push(OffsetPosition { offset: off, position: pos });
            }
            for t in targets {
                let t = t + base - 10;
                let expected = entries.iter().rev().find(|e| e.offset <= t).copied()
                    .unwrap_or(OffsetPosition { offset: base, position: 0 });
                prop_assert_eq!(idx.lookup_ok(t), expected);
            }
        }
    }
}
