//! Producer snapshot files `{offset:020}.snapshot` (Kafka's `ProducerStateManager` format, version 1); `offset`
//! is the exclusive end of the log the state covers. Big-endian:
//!
//! | off | len | field |
//! |----:|----:|-------|
//! | 0 | 2 | version = 1 |
//! | 2 | 4 | CRC-32C of bytes 6..end |
//! | 6 | 4 | entry count |
//! | 10 | 46 × n | entries: producerId i64, producerEpoch i16, lastSequence i32, lastOffset i64, offsetDelta i32, timestamp i64, coordinatorEpoch i32, currentTxnFirstOffset i64 |
//!
//! As in Kafka, only each producer's last batch is stored; the log after the snapshot offset is replayed on load.
//! `currentTxnFirstOffset` (-1 when none) keeps a producer's open transaction across restarts, so the last stable
//! offset is known without reading the log; a producer with no batch (an open transaction's, or one whose
//! batches a transactions-v2 marker of a bumped epoch cleared) is written with lastSequence = lastOffset = -1.
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::{BatchMetadata, ProducerEntry, ProducerStateManager};
use crate::error::io_err;
use crate::names::{self, SNAPSHOT_SUFFIX};
use crate::{fsio, Error, Result};

const VERSION: i16 = 1;
const ENTRY_SIZE: usize = 46;

/// Serializes the state.
pub(crate) fn encode(state: &ProducerStateManager) -> Vec<u8> {
    // Every producer, as Kafka writes them: one whose batches a bumped epoch's marker cleared keeps its epoch
    // and last timestamp.
    let mut entries: Vec<_> = state.entries().collect();
    entries.sort_by_key(|(pid, _)| **pid);
    let mut out = Vec::with_capacity(10 + ENTRY_SIZE * entries.len());
    out.extend_from_slice(&VERSION.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for (pid, e) in entries {
        let none = BatchMetadata {
            first_seq: -1,
            last_seq: -1,
            first_offset: -1,
            last_offset: -1,
            timestamp: -1,
        };
        let last = e.batches.back().unwrap_or(&none);
        out.extend_from_slice(&pid.to_be_bytes());
        out.extend_from_slice(&e.epoch.to_be_bytes());
        out.extend_from_slice(&last.last_seq.to_be_bytes());
        out.extend_from_slice(&last.last_offset.to_be_bytes());
        out.extend_from_slice(&((last.last_offset - last.first_offset) as i32).to_be_bytes());
        out.extend_from_slice(&e.last_timestamp.to_be_bytes());
        out.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        out.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let crc = crc32c::crc32c(&out[6..]);
    out[2..6].copy_from_slice(&crc.to_be_bytes());
    out
}

/// Parses a snapshot.
pub(crate) fn decode(path: &Path, b: &[u8]) -> Result<ProducerStateManager> {
    let bad = |reason: String| Error::CorruptFile {
        path: path.to_path_buf(),
        reason,
    };
    if b.len() < 10 {
        return Err(bad(format!(
            "{} bytes are too few for a producer snapshot",
            b.len()
        )));
    }
    let version = i16::from_be_bytes([b[0], b[1]]);
    if version != VERSION {
        return Err(bad(format!("unsupported snapshot version {version}")));
    }
    let stored = u32::from_be_bytes(b[2..6].try_into().expect("4"));
    let computed = crc32c::crc32c(&b[6..]);
    if stored != computed {
        return Err(bad(format!(
            "crc mismatch: stored {stored:#010x}, computed {computed:#010x}"
        )));
    }
    let count = i32::from_be_bytes(b[6..10].try_into().expect("4"));
    if count < 0 || b.len() != 10 + count as usize * ENTRY_SIZE {
        return Err(bad(format!(
            "entry count {count} does not match the size {}",
            b.len()
        )));
    }
    let entries = b[10..].chunks(ENTRY_SIZE).map(|e| {
        let i64_at = |at: usize| i64::from_be_bytes(e[at..at + 8].try_into().expect("8"));
        let i32_at = |at: usize| i32::from_be_bytes(e[at..at + 4].try_into().expect("4"));
        let pid = i64_at(0);
        let epoch = i16::from_be_bytes([e[8], e[9]]);
        let last_seq = i32_at(10);
        let last_offset = i64_at(14);
        let delta = i32_at(22);
        let timestamp = i64_at(26);
        let first_seq = if last_seq < 0 {
            -1
        } else {
            (last_seq as i64 - delta as i64).rem_euclid(i32::MAX as i64 + 1) as i32
        };
        let batch = BatchMetadata {
            first_seq,
            last_seq,
            first_offset: last_offset - delta as i64,
            last_offset,
            timestamp,
        };
        (
            pid,
            ProducerEntry {
                epoch,
                batches: if last_offset < 0 {
                    VecDeque::new()
                } else {
                    VecDeque::from([batch])
                },
                coordinator_epoch: i32_at(34),
                current_txn_first_offset: i64_at(38),
                last_timestamp: timestamp,
            },
        )
    });
    Ok(ProducerStateManager::from_entries(
        entries.collect::<Vec<_>>(),
    ))
}

/// Writes `{offset:020}.snapshot` atomically; returns its path.
pub(crate) fn write_snapshot(
    dir: &Path,
    offset: i64,
    state: &ProducerStateManager,
) -> Result<PathBuf> {
    let path = names::offset_file(dir, offset, SNAPSHOT_SUFFIX);
    crate::failpoint::crash_point("producer.snapshot.before_write");
    fsio::atomic_write(&path, &encode(state))?;
    Ok(path)
}

/// Snapshot offsets present in `dir`, ascending.
pub(crate) fn list_snapshots(dir: &Path) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        if let Some(off) =
            names::parse_offset_file(&entry.file_name().to_string_lossy(), SNAPSHOT_SUFFIX)
        {
            out.push(off);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Loads the newest readable snapshot with offset <= `max_offset`; corrupt ones are deleted and skipped.
pub(crate) fn latest_snapshot_at_or_below(
    dir: &Path,
    max_offset: i64,
) -> Result<Option<(i64, ProducerStateManager)>> {
    for off in list_snapshots(dir)?
        .into_iter()
        .rev()
        .filter(|&o| o <= max_offset)
    {
        let path = names::offset_file(dir, off, SNAPSHOT_SUFFIX);
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        match decode(&path, &bytes) {
            Ok(state) => return Ok(Some((off, state))),
            Err(e) => {
                tracing::warn!(error = %e, "deleting unreadable producer snapshot");
                std::fs::remove_file(&path).map_err(io_err(&path))?;
            }
        }
    }
    Ok(None)
}

/// Deletes snapshots with offset > `offset` (after a log truncation).
pub(crate) fn delete_snapshots_from(dir: &Path, offset: i64) -> Result<()> {
    for off in list_snapshots(dir)?.into_iter().filter(|&o| o > offset) {
        let path = names::offset_file(dir, off, SNAPSHOT_SUFFIX);
        std::fs::remove_file(&path).map_err(io_err(&path))?;
    }
    Ok(())
}

/// Deletes snapshots with offset < `offset` (segments below it are gone).
pub(crate) fn delete_snapshots_below(dir: &Path, offset: i64) -> Result<()> {
    for off in list_snapshots(dir)?.into_iter().filter(|&o| o < offset) {
        let path = names::offset_file(dir, off, SNAPSHOT_SUFFIX);
        std::fs::remove_file(&path).map_err(io_err(&path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RecordBatch, RecordBatchBuilder};

    #[test]
    fn snapshot_round_trips_and_rejects_corruption() {
        let mut m = ProducerStateManager::new();
        let mut b = RecordBatchBuilder::new()
            .producer(42, 3, 7)
            .base_offset(100);
        b.append(5, None, Some(b"x"), &[]);
        b.append(6, None, Some(b"y"), &[]);
        m.replay(&RecordBatch::new(b.build()).unwrap());
        let bytes = encode(&m);
        assert_eq!(bytes.len(), 10 + 46);
        let path = Path::new("x.snapshot");
        let back = decode(path, &bytes).unwrap();
        let (pid, e) = back.entries().next().unwrap();
        assert_eq!(*pid, 42);
        assert_eq!(e.epoch, 3);
        assert_eq!(
            e.batches[0],
            BatchMetadata {
                first_seq: 7,
                last_seq: 8,
                first_offset: 100,
                last_offset: 101,
                timestamp: 6
            }
        );
        let mut broken = bytes.clone();
        broken[20] ^= 1;
        assert!(matches!(
            decode(path, &broken),
            Err(Error::CorruptFile { .. })
        ));
    }

    /// An open transaction is kept in the snapshot (`currentTxnFirstOffset`), even for a producer whose batches
    /// were cleared by an epoch bump, so the last stable offset survives a restart.
    #[test]
    fn snapshot_keeps_open_transactions() {
        let mut m = ProducerStateManager::new();
        let mut b = RecordBatchBuilder::new()
            .producer(1, 0, 0)
            .transactional(true)
            .base_offset(10);
        b.append(5, None, Some(b"x"), &[]);
        m.replay(&RecordBatch::new(b.build()).unwrap());
        m.producers.insert(
            2,
            ProducerEntry {
                epoch: 4,
                batches: VecDeque::new(),
                coordinator_epoch: 1,
                current_txn_first_offset: 7,
                last_timestamp: 3,
            },
        );
        let back = decode(Path::new("x.snapshot"), &encode(&m)).unwrap();
        assert_eq!(back.first_unstable_offset(), Some(7));
        assert_eq!(back.ongoing_transactions(), vec![(2, 4, 7), (1, 0, 10)]);
        let (_, e) = back.entries().find(|(p, _)| **p == 2).unwrap();
        assert!(e.batches.is_empty());
    }
}
