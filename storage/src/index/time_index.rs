//! [`TimeIndex`]: the `.timeindex` file.
//!
//! | off | len | field |
//! |----:|----:|-------|
//! | 0 | 8 | timestamp (ms), big-endian i64 |
//! | 8 | 4 | relative offset of the record carrying it, big-endian u32 |
//!
//! An entry is added only when the timestamp exceeds the last entry's, so both fields increase.
use std::path::{Path, PathBuf};

use std::sync::Arc;

use super::IndexFile;
use crate::handles::HandleCache;
use crate::{Error, Result};

const ENTRY_SIZE: usize = 12;

/// A timestamp and an offset at or after which it is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimestampOffset {
    /// Timestamp in ms.
    pub timestamp: i64,
    /// Absolute offset.
    pub offset: i64,
}

/// Maps timestamps to offsets; see the module docs for the format.
#[derive(Debug)]
pub struct TimeIndex {
    base_offset: i64,
    file: IndexFile,
}

impl TimeIndex {
    /// Opens (creating if absent); `max_bytes` = Some(`segment.index.bytes`) for an active segment.
    pub fn open(path: &Path, base_offset: i64, max_bytes: Option<u32>) -> Result<Self> {
        Self::open_in(path, base_offset, max_bytes, HandleCache::unbounded())
    }

    /// [`TimeIndex::open`] with the mapping counted in `handles`.
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

    fn parse(&self, e: &[u8]) -> TimestampOffset {
        TimestampOffset {
            timestamp: i64::from_be_bytes(e[0..8].try_into().expect("8")),
            offset: self.base_offset + u32::from_be_bytes(e[8..12].try_into().expect("4")) as i64,
        }
    }

    /// The greatest entry with timestamp <= `target`; `(-1, base_offset)` when there is none. Fails only when
    /// the index cannot be mapped.
    pub fn lookup(&self, target: i64) -> Result<TimestampOffset> {
        let ts = |e: &[u8]| i64::from_be_bytes(e[0..8].try_into().expect("8"));
        Ok(match self.file.largest_lower_bound(target, ts)? {
            Some(n) => self.parse(self.file.entry(n)?),
            None => TimestampOffset {
                timestamp: -1,
                offset: self.base_offset,
            },
        })
    }

    /// Appends `(timestamp, offset)` if `timestamp` is greater than the last entry's (Kafka's `maybeAppend`).
    /// Returns whether an entry was added.
    pub fn maybe_append(&mut self, timestamp: i64, offset: i64) -> Result<bool> {
        if let Some(last) = self.last_entry()? {
            if timestamp <= last.timestamp {
                return Ok(false);
            }
            if offset < last.offset {
                return Err(Error::CorruptFile {
                    path: self.file.path().to_path_buf(),
                    reason: format!(
                        "time index entry for offset {offset} follows offset {}",
                        last.offset
                    ),
                });
            }
        }
        if self.file.is_full() {
            return Ok(false);
        }
        let mut e = [0u8; ENTRY_SIZE];
        e[0..8].copy_from_slice(&timestamp.to_be_bytes());
        e[8..12].copy_from_slice(&((offset - self.base_offset) as u32).to_be_bytes());
        self.file.push(&e)?;
        Ok(true)
    }

    /// The last entry, if any.
    pub fn last_entry(&self) -> Result<Option<TimestampOffset>> {
        let n = self.file.entries();
        if n == 0 {
            return Ok(None);
        }
        Ok(Some(self.parse(self.file.entry(n - 1)?)))
    }

    /// Removes entries with offset >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let mut keep = self.file.entries();
        while keep > 0 && self.parse(self.file.entry(keep - 1)?).offset >= offset {
            keep -= 1;
        }
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
    /// Kafka's `sanityCheck`: entries increase and offsets are below `next_offset`.
    pub fn sanity_check(&self, next_offset: i64) -> Result<()> {
        let mut prev: Option<TimestampOffset> = None;
        for n in 0..self.entries() {
            let e = self.parse(self.file.entry(n)?);
            let bad = prev.is_some_and(|p| e.timestamp <= p.timestamp || e.offset < p.offset)
                || e.offset >= next_offset;
            if bad {
                return Err(Error::CorruptFile {
                    path: self.path().to_path_buf(),
                    reason: format!(
                        "entry {n} ({} -> {}) is out of order or past the log",
                        e.timestamp, e.offset
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

    proptest! {
        #[test]
        fn prop_lookup_returns_greatest_entry_at_or_below_target(
            steps in proptest::collection::vec((-5i64..50, 0u32..20), 0..150),
            targets in proptest::collection::vec(-10i64..3000, 1..40),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let base = 500;
            let mut idx = TimeIndex::open(&dir.path().join("x.timeindex"), base, Some(12 * 200)).unwrap();
            let mut model: Vec<TimestampOffset> = Vec::new();
            let (mut ts, mut off) = (0i64, base);
            for (dt, doff) in steps {
                ts += dt;
                off += doff as i64;
                let added = idx.maybe_append(ts, off).unwrap();
                let expect_added = model.last().is_none_or(|l| ts > l.timestamp);
                prop_assert_eq!(added, expect_added);
                if added {
                    model.push(TimestampOffset { timestamp: ts, offset: off });
                }
            }
            for t in targets {
                let expected = model.iter().rev().find(|e| e.timestamp <= t).copied()
                    .unwrap_or(TimestampOffset { timestamp: -1, offset: base });
                prop_assert_eq!(idx.lookup(t).unwrap(), expected);
            }
        }
    }

    #[test]
    fn only_increasing_timestamps_are_indexed_and_lookup_finds_floor() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = TimeIndex::open(&dir.path().join("0.timeindex"), 50, Some(120)).unwrap();
        assert_eq!(
            idx.lookup(10).unwrap(),
            TimestampOffset {
                timestamp: -1,
                offset: 50
            }
        );
        assert!(idx.maybe_append(1000, 55).unwrap());
        assert!(!idx.maybe_append(900, 56).unwrap());
        assert!(idx.maybe_append(2000, 60).unwrap());
        assert_eq!(
            idx.lookup(1500).unwrap(),
            TimestampOffset {
                timestamp: 1000,
                offset: 55
            }
        );
        assert_eq!(
            idx.lookup(2000).unwrap(),
            TimestampOffset {
                timestamp: 2000,
                offset: 60
            }
        );
        idx.truncate_to(60).unwrap();
        assert_eq!(
            idx.last_entry().unwrap(),
            Some(TimestampOffset {
                timestamp: 1000,
                offset: 55
            })
        );
    }
}
