//! Producer ids handed out in durable blocks, as Kafka's `ProducerIdManager` does: before the first id of a block
//! reaches a client, the block's end is recorded in the metadata dir (written tmp + fsync + rename + fsync dir),
//! so an id is never issued twice — not after a crash (SIGKILL) that loses every id handed out but not yet used,
//! and not when the log that last used an id is gone (producer state expired, segments deleted, topic deleted).
//!
//! On start the next id is the larger of the recorded block end and the largest producer id in the logs plus one
//! (data dirs of older versions have no block file). A crash costs at most the rest of one block.
//!
//! File `producer-id-block` (JSON, the fields of Kafka's ZooKeeper-era `ProducerIdBlock`; `block_end` inclusive):
//!
//! ```text
//! {"version":1,"broker":0,"block_start":"1000","block_end":"1999"}
//! ```
use parking_lot::Mutex;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tracing::info;

use crate::error::{Error, Result};

/// The file, in the metadata dir (the log dir holding the topic registry).
pub const PRODUCER_ID_BLOCK_FILE: &str = "producer-id-block";
/// Ids per block (Kafka's `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`).
pub const PRODUCER_ID_BLOCK_SIZE: i64 = 1000;
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct BlockFile {
    version: u32,
    broker: i32,
    /// Strings, as Kafka writes them (a JSON number may lose precision in other readers).
    block_start: String,
    block_end: String,
}

struct State {
    /// The next id to hand out.
    next: i64,
    /// Ids below this are recorded as allocated; `next == end` means a new block must be recorded first.
    end: i64,
}

/// Hands out producer ids that are never repeated, also across crashes. See the [module docs](self).
pub struct ProducerIdManager {
    path: PathBuf,
    broker: i32,
    state: Mutex<State>,
}

impl std::fmt::Debug for ProducerIdManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerIdManager")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl ProducerIdManager {
    /// Reads the recorded block of `meta_dir` (if any); ids continue after it and at or above `min_next` (the
    /// largest producer id in the logs plus one). Blocking. An unreadable block file is an error naming it: ids
    /// could otherwise repeat.
    pub fn open(meta_dir: &Path, broker: i32, min_next: i64) -> Result<Self> {
        let path = meta_dir.join(PRODUCER_ID_BLOCK_FILE);
        let recorded_next = match std::fs::read(&path) {
            Ok(bytes) => Some(parse(&path, &bytes)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        let next = recorded_next.unwrap_or(0).max(min_next).max(0);
        info!(next_producer_id = next, recorded = ?recorded_next, "producer ids continue");
        Ok(Self {
            path,
            broker,
            state: Mutex::new(State { next, end: next }),
        })
    }

    /// Records that ids below `next` were handed out elsewhere (an adopted Kafka log dir: its controller's next
    /// producer id), unless the recorded block already goes past it. Blocking.
    pub fn raise_floor(meta_dir: &Path, broker: i32, next: i64) -> Result<()> {
        let m = Self::open(meta_dir, broker, next)?;
        let at = m.state.lock().next;
        if at == next && next > 0 {
            m.record(next - 1, next)?;
        }
        Ok(())
    }

    /// A producer id never handed out before. Records a new block first when the current one is used up
    /// (blocking I/O then); if that write fails no id is handed out.
    pub fn generate(&self) -> Result<i64> {
        let mut st = self.state.lock();
        if st.next >= st.end {
            let start = st.next;
            let end = start.checked_add(PRODUCER_ID_BLOCK_SIZE).ok_or_else(|| {
                Error::io(
                    "allocating a producer id block",
                    std::io::Error::other(format!("no block of ids after {start}")),
                )
            })?;
            self.record(start, end)?;
            st.end = end;
        }
        let id = st.next;
        st.next += 1;
        Ok(id)
    }

    fn record(&self, start: i64, end: i64) -> Result<()> {
        let block = BlockFile {
            version: VERSION,
            broker: self.broker,
            block_start: start.to_string(),
            block_end: (end - 1).to_string(),
        };
        let json = serde_json::to_vec(&block).map_err(|e| {
            Error::io(
                format!("encoding {}", self.path.display()),
                std::io::Error::other(e),
            )
        })?;
        strata_storage::atomic_write(&self.path, &json)?;
        tracing::debug!(
            block_start = start,
            block_end = end - 1,
            "producer id block recorded"
        );
        Ok(())
    }
}

/// The first id after the recorded block.
fn parse(path: &Path, bytes: &[u8]) -> Result<i64> {
    let bad = |reason: String| {
        let reason = format!(
            "{reason}; ids handed out before cannot be known (restore the file, or remove it to continue after \
             the largest producer id in the logs, accepting that ids handed out but never used may repeat)"
        );
        Error::config(
            PRODUCER_ID_BLOCK_FILE.into(),
            path.display().to_string(),
            reason,
        )
    };
    let block: BlockFile =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("unreadable: {e}")))?;
    if block.version != VERSION {
        return Err(bad(format!("unknown version {}", block.version)));
    }
    let end: i64 = block
        .block_end
        .parse()
        .map_err(|_| bad(format!("block_end {:?} is not a number", block.block_end)))?;
    end.checked_add(1)
        .ok_or_else(|| bad(format!("block_end {end} is the last id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_continue_after_the_recorded_block_not_after_the_last_one_handed_out() {
        let dir = tempfile::tempdir().unwrap();
        let m = ProducerIdManager::open(dir.path(), 0, 0).unwrap();
        let first: Vec<i64> = (0..3).map(|_| m.generate().unwrap()).collect();
        assert_eq!(first, vec![0, 1, 2]);
        drop(m); // a crash: ids 3..999 were never handed out, but they are recorded as allocated
        let m = ProducerIdManager::open(dir.path(), 0, 0).unwrap();
        assert_eq!(m.generate().unwrap(), PRODUCER_ID_BLOCK_SIZE);
    }

    #[test]
    fn a_new_block_is_recorded_before_its_first_id_is_handed_out() {
        let dir = tempfile::tempdir().unwrap();
        let m = ProducerIdManager::open(dir.path(), 0, 0).unwrap();
        for _ in 0..PRODUCER_ID_BLOCK_SIZE {
            m.generate().unwrap();
        }
        assert_eq!(parse_file(dir.path()), PRODUCER_ID_BLOCK_SIZE);
        assert_eq!(m.generate().unwrap(), PRODUCER_ID_BLOCK_SIZE);
        assert_eq!(parse_file(dir.path()), 2 * PRODUCER_ID_BLOCK_SIZE);
    }

    #[test]
    fn ids_stay_above_the_largest_in_the_logs_of_an_older_data_dir() {
        let dir = tempfile::tempdir().unwrap();
        let m = ProducerIdManager::open(dir.path(), 0, 5_000).unwrap();
        assert_eq!(m.generate().unwrap(), 5_000);
    }

    #[test]
    fn a_damaged_block_file_refuses_start_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PRODUCER_ID_BLOCK_FILE), b"{\"version\":1,").unwrap();
        let e = ProducerIdManager::open(dir.path(), 0, 0).unwrap_err();
        assert!(e.to_string().contains(PRODUCER_ID_BLOCK_FILE), "{e}");
    }

    fn parse_file(dir: &Path) -> i64 {
        let path = dir.join(PRODUCER_ID_BLOCK_FILE);
        parse(&path, &std::fs::read(&path).unwrap()).unwrap()
    }
}
