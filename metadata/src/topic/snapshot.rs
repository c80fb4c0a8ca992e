//! The cache snapshot file next to the metadata log: replay starts from it and reads only the records after it.
//!
//! File `remote_log_metadata.snapshot` in the snapshot directory, written atomically (tmp file, fsync,
//! rename, fsync dir):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `b"RLMMSNAP"` |
//! | 8 | 4 | format version, u32 big-endian (1) |
//! | 12 | 4 | CRC-32C of the payload, u32 big-endian |
//! | 16 | 8 | payload length n, u64 big-endian |
//! | 24 | n | payload: JSON `{"topic_id", "num_partitions", "next_offsets": [i64; num_partitions], "cache"}` |
//!
//! `next_offsets[p]` is the offset of the first record of metadata partition `p` not reflected in `cache`.
//! Only flushed records are ever in a snapshot. A file with a bad magic, version, length or CRC is ignored
//! (with a warning) and the whole log is replayed.
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::cache::CacheImage;
use crate::{Error, Result};

/// The snapshot's file name inside the snapshot directory.
pub const SNAPSHOT_FILE_NAME: &str = "remote_log_metadata.snapshot";
const MAGIC: &[u8; 8] = b"RLMMSNAP";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 24;

/// What a snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Snapshot {
    pub(crate) topic_id: Uuid,
    pub(crate) num_partitions: u32,
    pub(crate) next_offsets: Vec<i64>,
    pub(crate) cache: CacheImage,
}

pub(crate) fn snapshot_path(dir: &Path) -> PathBuf {
    dir.join(SNAPSHOT_FILE_NAME)
}

/// Writes `snap` atomically to `dir`.
pub(crate) fn write(dir: &Path, snap: &Snapshot) -> Result<u64> {
    let payload = serde_json::to_vec(snap).map_err(|e| Error::Corrupt {
        what: "snapshot being written".to_owned(),
        reason: e.to_string(),
    })?;
    let mut buf = Vec::with_capacity(HEADER_LEN + payload.len());
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&VERSION.to_be_bytes());
    buf.extend_from_slice(&crc32c::crc32c(&payload).to_be_bytes());
    buf.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    buf.extend_from_slice(&payload);

    // Writes are serialised by the caller (`persisted_snapshot`'s lock), as `atomic_write` requires.
    strata_storage::atomic_write(&snapshot_path(dir), &buf).map_err(|e| match e {
        strata_storage::Error::Io { path, source } => Error::Io { path, source },
        other => Error::Storage {
            context: format!("writing the snapshot in {}", dir.display()),
            source: Box::new(other),
        },
    })?;
    Ok(buf.len() as u64)
}

/// Reads the snapshot in `dir`: `Ok(None)` when there is none or it is unreadable (logged).
pub(crate) fn read(dir: &Path) -> Result<Option<Snapshot>> {
    let path = snapshot_path(dir);
    let buf = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Io { path, source: e }),
    };
    match decode(&buf) {
        Ok(s) => Ok(Some(s)),
        Err(reason) => {
            tracing::warn!(path = %path.display(), %reason, "ignoring unreadable remote log metadata snapshot; replaying the whole log");
            Ok(None)
        }
    }
}

fn decode(buf: &[u8]) -> Result<Snapshot, String> {
    if buf.len() < HEADER_LEN || &buf[..8] != MAGIC {
        return Err("bad magic or short header".to_owned());
    }
    let version = u32::from_be_bytes(buf[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!("unsupported snapshot version {version}"));
    }
    let crc = u32::from_be_bytes(buf[12..16].try_into().expect("4 bytes"));
    let len = u64::from_be_bytes(buf[16..24].try_into().expect("8 bytes"));
    let payload = &buf[HEADER_LEN..];
    if payload.len() as u64 != len {
        return Err(format!(
            "payload is {} bytes, header says {len}",
            payload.len()
        ));
    }
    if crc32c::crc32c(payload) != crc {
        return Err("payload crc mismatch".to_owned());
    }
    serde_json::from_slice(payload).map_err(|e| format!("invalid payload: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_round_trip_and_corruption_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        let snap = Snapshot {
            topic_id: Uuid::from_u128(5),
            num_partitions: 2,
            next_offsets: vec![3, 0],
            cache: CacheImage::default(),
        };
        write(dir.path(), &snap).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(snap));
        let path = snapshot_path(dir.path());
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0xff;
        fs::write(&path, &bytes).unwrap();
        assert_eq!(
            read(dir.path()).unwrap(),
            None,
            "a flipped byte fails the crc"
        );
        fs::write(&path, &bytes[..10]).unwrap();
        assert_eq!(read(dir.path()).unwrap(), None, "a short file is ignored");
    }
}
