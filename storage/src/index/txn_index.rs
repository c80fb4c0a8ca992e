//! [`TransactionIndex`]: a segment's `.txnindex`, the aborted transactions whose ABORT marker lies in the segment
//! (Kafka's `TransactionIndex`). Entries are appended in marker order; the file is created on the first entry,
//! so a segment without aborted transactions has none. Unlike the offset and time indexes it is not mapped: it
//! is read whole (it is small) by a read_committed fetch and the log cleaner.
//!
//! Each entry (Kafka's `AbortedTxn`), 34 bytes, big-endian:
//!
//! | off | len | field | notes |
//! |----:|----:|-------|-------|
//! | 0 | 2 | version | 0 |
//! | 2 | 8 | producerId | |
//! | 10 | 8 | firstOffset | the transaction's first data offset in the partition |
//! | 18 | 8 | lastOffset | the ABORT marker's offset |
//! | 26 | 8 | lastStableOffset | the partition's LSO once the transaction completed |
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::io_err;
use crate::{fsio, Error, Result};

/// Bytes of one entry.
pub const ABORTED_TXN_SIZE: usize = 34;
const VERSION: i16 = 0;

/// One aborted transaction (Kafka's `AbortedTxn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AbortedTxn {
    /// The producer of the transaction.
    pub producer_id: i64,
    /// Offset of the transaction's first data batch.
    pub first_offset: i64,
    /// Offset of its ABORT marker.
    pub last_offset: i64,
    /// The partition's last stable offset right after the marker.
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// The 34-byte entry.
    pub fn encode(&self) -> [u8; ABORTED_TXN_SIZE] {
        let mut out = [0u8; ABORTED_TXN_SIZE];
        out[0..2].copy_from_slice(&VERSION.to_be_bytes());
        out[2..10].copy_from_slice(&self.producer_id.to_be_bytes());
        out[10..18].copy_from_slice(&self.first_offset.to_be_bytes());
        out[18..26].copy_from_slice(&self.last_offset.to_be_bytes());
        out[26..34].copy_from_slice(&self.last_stable_offset.to_be_bytes());
        out
    }

    fn decode(path: &Path, at: usize, e: &[u8]) -> Result<Self> {
        let version = i16::from_be_bytes([e[0], e[1]]);
        if version != VERSION {
            return Err(Error::CorruptFile {
                path: path.to_path_buf(),
                reason: format!("aborted transaction entry at byte {at} has version {version}"),
            });
        }
        let i64_at = |o: usize| i64::from_be_bytes(e[o..o + 8].try_into().expect("8"));
        Ok(Self {
            producer_id: i64_at(2),
            first_offset: i64_at(10),
            last_offset: i64_at(18),
            last_stable_offset: i64_at(26),
        })
    }
}

/// The entries of a `.txnindex` file's bytes (`path` names the file in errors: a local path, or the remote
/// segment the bytes were fetched for).
pub fn parse_entries(path: &Path, bytes: &[u8]) -> Result<Vec<AbortedTxn>> {
    if !bytes.len().is_multiple_of(ABORTED_TXN_SIZE) {
        return Err(Error::CorruptFile {
            path: path.to_path_buf(),
            reason: format!(
                "{} bytes is not a whole number of {ABORTED_TXN_SIZE}-byte entries",
                bytes.len()
            ),
        });
    }
    bytes
        .chunks(ABORTED_TXN_SIZE)
        .enumerate()
        .map(|(i, e)| AbortedTxn::decode(path, i * ABORTED_TXN_SIZE, e))
        .collect()
}

/// A segment's `.txnindex`.
#[derive(Debug)]
pub struct TransactionIndex {
    path: PathBuf,
    /// Entries written (the file's size / 34).
    entries: u64,
    last_offset: Option<i64>,
    dirty: bool,
}

impl TransactionIndex {
    /// Opens the index at `path` (absent = empty). A size that is not a multiple of 34 bytes is
    /// [`Error::CorruptFile`] (recovery rebuilds it).
    pub fn open(path: PathBuf) -> Result<Self> {
        let mut idx = Self {
            path,
            entries: 0,
            last_offset: None,
            dirty: false,
        };
        let all = idx.all()?;
        idx.entries = all.len() as u64;
        idx.last_offset = all.last().map(|t| t.last_offset);
        Ok(idx)
    }

    /// The file (it may not exist).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the index holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Appends an entry; its marker must come after the last one (Kafka's check in `TransactionIndex.append`).
    pub fn append(&mut self, txn: &AbortedTxn) -> Result<()> {
        if let Some(last) = self.last_offset {
            if txn.last_offset <= last {
                return Err(Error::Storage {
                    dir: self
                        .path
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                    reason: format!(
                        "aborted transaction marker {} is not after the last one {last} in {}",
                        txn.last_offset,
                        self.path.display()
                    ),
                });
            }
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io_err(&self.path))?;
        f.write_all(&txn.encode()).map_err(io_err(&self.path))?;
        self.entries += 1;
        self.last_offset = Some(txn.last_offset);
        self.dirty = true;
        Ok(())
    }

    /// Every entry, in marker order.
    pub fn all(&self) -> Result<Vec<AbortedTxn>> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.path)(e)),
        };
        parse_entries(&self.path, &bytes)
    }

    /// The entries overlapping `[from, to)`: marker at or after `from`, first offset before `to` (Kafka's
    /// `collectAbortedTxns`).
    pub fn collect(&self, from: i64, to: i64) -> Result<Vec<AbortedTxn>> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self
            .all()?
            .into_iter()
            .filter(|t| t.last_offset >= from && t.first_offset < to)
            .collect())
    }

    /// Deletes the file (recovery rebuilds it).
    pub fn reset(&mut self) -> Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_err(&self.path)(e))
            }
            _ => {}
        }
        self.entries = 0;
        self.last_offset = None;
        self.dirty = false;
        Ok(())
    }

    /// Fsyncs appended entries.
    pub fn flush(&mut self) -> Result<()> {
        if self.dirty {
            let f = std::fs::File::open(&self.path).map_err(io_err(&self.path))?;
            fsio::sync_file(&f, &self.path)?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Renames the file if it exists (the index then lives at `to`).
    pub fn rename_to(&mut self, to: PathBuf) -> Result<Option<PathBuf>> {
        let existed = match std::fs::rename(&self.path, &to) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(io_err(&self.path)(e)),
        };
        self.path = to;
        Ok(existed.then(|| self.path.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(pid: i64, first: i64, last: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: last,
            last_stable_offset: last + 1,
        }
    }

    /// Kafka's `AbortedTxn` layout: version 0, then four big-endian longs, 34 bytes.
    #[test]
    fn entries_are_kafkas_34_byte_aborted_txn_layout() {
        let bytes = txn(7, 10, 20).encode();
        assert_eq!(bytes.len(), 34);
        assert_eq!(&bytes[0..2], &[0, 0]);
        assert_eq!(&bytes[2..10], &7i64.to_be_bytes());
        assert_eq!(&bytes[26..34], &21i64.to_be_bytes());
    }

    #[test]
    fn appended_entries_survive_reopen_and_collect_filters_by_range() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.txnindex");
        let mut idx = TransactionIndex::open(path.clone()).unwrap();
        assert!(idx.is_empty() && !path.exists(), "created lazily");
        idx.append(&txn(1, 0, 5)).unwrap();
        idx.append(&txn(2, 6, 9)).unwrap();
        assert!(matches!(
            idx.append(&txn(3, 1, 9)),
            Err(Error::Storage { .. })
        ));
        idx.flush().unwrap();
        let back = TransactionIndex::open(path.clone()).unwrap();
        assert_eq!(back.all().unwrap(), vec![txn(1, 0, 5), txn(2, 6, 9)]);
        assert_eq!(back.collect(6, 100).unwrap(), vec![txn(2, 6, 9)]);
        assert_eq!(back.collect(0, 6).unwrap(), vec![txn(1, 0, 5)]);
        assert_eq!(back.collect(10, 100).unwrap(), vec![]);
        std::fs::write(&path, [0u8; 35]).unwrap();
        assert!(matches!(
            TransactionIndex::open(path),
            Err(Error::CorruptFile { .. })
        ));
    }
}
