//! The `.rsm-manifest` object: JSON, written after `.log` and `.indexes`, so its presence marks a complete
//! segment. Modeled on Aiven's `SegmentManifestV1`:
//!
//! ```json
//! {"version":1,
//!  "chunk_index":{"type":"fixed","original_chunk_size":4194304,"original_file_size":N,
//!                 "transformed_chunk_size":T,"final_transformed_chunk_size":F},
//!  "segment_indexes":{"offset":{"position":0,"size":s,"original_size":o},"timestamp":{..},
//!                     "producer_snapshot":{..},"leader_epoch":{..},"transaction":{..}|null},
//!  "compression":false,
//!  "encryption":{"key_id":"<16 hex>","data_key":"<base64 wrapped DEK>"}|null,
//!  "remote_log_segment_metadata":{..}}
//! ```
//!
//! `chunk_index` is `fixed` when every stored chunk but the last has one size (no compression), else
//! `{"type":"variable","original_chunk_size":C,"original_file_size":N,"transformed_chunk_sizes":[..]}`.
//! `.log` is the stored chunks back to back; chunk `i` holds original bytes `[i*C, min((i+1)*C, N))`:
//!
//! | bytes | content |
//! |---|---|
//! | `T0` | chunk 0: `zstd?(original[0..C])`, then, if encrypted, `nonce(12) ‖ ciphertext ‖ tag(16)` |
//! | `T1` | chunk 1, same transform of `original[C..2C]` |
//! | ... | |
//!
//! `.indexes` is the stored indexes back to back, each transformed as one chunk (chunk number = index ordinal:
//! offset 0, timestamp 1, producer snapshot 2, transaction 3, leader epoch 4), in this order:
//!
//! | bytes | content |
//! |---|---|
//! | `segment_indexes.offset.size` | `.index` |
//! | `segment_indexes.timestamp.size` | `.timeindex` |
//! | `segment_indexes.producer_snapshot.size` | producer `.snapshot` |
//! | `segment_indexes.leader_epoch.size` | leader-epoch checkpoint text |
//! | `segment_indexes.transaction.size` | `.txnindex` (absent when `transaction` is null) |
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The manifest format version written by this crate.
pub const MANIFEST_VERSION: u32 = 1;

/// How original chunk positions map to stored ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChunkIndex {
    /// Every stored chunk but the last has the same size.
    Fixed {
        /// `chunk.size` at copy time.
        original_chunk_size: u64,
        /// The `.log` file's size.
        original_file_size: u64,
        /// Stored size of every chunk but the last.
        transformed_chunk_size: u64,
        /// Stored size of the last chunk.
        final_transformed_chunk_size: u64,
    },
    /// Stored chunk sizes vary (compression).
    Variable {
        /// `chunk.size` at copy time.
        original_chunk_size: u64,
        /// The `.log` file's size.
        original_file_size: u64,
        /// Stored size of each chunk.
        transformed_chunk_sizes: Vec<u64>,
    },
}

/// Where one index lives inside `.indexes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRange {
    /// Offset of the stored index in `.indexes`.
    pub position: u64,
    /// Stored (transformed) size.
    pub size: u64,
    /// Size of the original file.
    pub original_size: u64,
}

/// The indexes of a segment inside `.indexes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentIndexes {
    /// `.index`.
    pub offset: IndexRange,
    /// `.timeindex`.
    pub timestamp: IndexRange,
    /// The producer-state `.snapshot`.
    pub producer_snapshot: IndexRange,
    /// Leader-epoch checkpoint text.
    pub leader_epoch: IndexRange,
    /// `.txnindex`, absent when the segment had none.
    pub transaction: Option<IndexRange>,
}

/// Encryption parameters of a segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncryptionMetadata {
    /// Id of the key-encryption key that wrapped `data_key`.
    pub key_id: String,
    /// The wrapped per-segment data key, base64.
    pub data_key: String,
}

/// The `.rsm-manifest` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentManifest {
    /// Format version, [`MANIFEST_VERSION`].
    pub version: u32,
    /// Chunk positions of `.log`.
    pub chunk_index: ChunkIndex,
    /// Index positions in `.indexes`.
    pub segment_indexes: SegmentIndexes,
    /// Whether chunks and indexes are zstd-compressed.
    pub compression: bool,
    /// Present when encrypted.
    pub encryption: Option<EncryptionMetadata>,
    /// A copy of the segment metadata at copy time, so objects describe themselves (never read back).
    pub remote_log_segment_metadata: serde_json::Value,
}

impl SegmentManifest {
    /// Parses and checks a manifest read from `key`.
    pub fn from_json(key: &str, bytes: &[u8]) -> Result<Self> {
        let m: SegmentManifest = serde_json::from_slice(bytes).map_err(|e| Error::Corrupt {
            what: key.to_string(),
            reason: "bad manifest json".into(),
            source: Some(Box::new(e)),
        })?;
        if m.version != MANIFEST_VERSION {
            return Err(Error::Corrupt {
                what: key.to_string(),
                reason: format!(
                    "manifest version {} is not supported (expected {MANIFEST_VERSION})",
                    m.version
                ),
                source: None,
            });
        }
        let (c, n) = match &m.chunk_index {
            ChunkIndex::Fixed {
                original_chunk_size,
                original_file_size,
                ..
            } => (*original_chunk_size, *original_file_size),
            ChunkIndex::Variable {
                original_chunk_size,
                original_file_size,
                transformed_chunk_sizes,
            } => {
                let expected = original_file_size.div_ceil((*original_chunk_size).max(1));
                if transformed_chunk_sizes.len() as u64 != expected {
                    return Err(Error::Corrupt {
                        what: key.to_string(),
                        reason: format!(
                            "{} chunk sizes for {expected} chunks",
                            transformed_chunk_sizes.len()
                        ),
                        source: None,
                    });
                }
                (*original_chunk_size, *original_file_size)
            }
        };
        if c == 0 && n > 0 {
            return Err(Error::Corrupt {
                what: key.to_string(),
                reason: "chunk size 0".into(),
                source: None,
            });
        }
        Ok(m)
    }

    /// Serializes the manifest.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("manifest serializes")
    }
}

/// A manifest's chunk index with prefix sums, for range lookups.
#[derive(Clone, Debug)]
pub(crate) struct ChunkMap {
    pub chunk_size: u64,
    pub file_size: u64,
    /// `stored_offsets[i]..stored_offsets[i+1]` is chunk `i` in `.log`.
    stored_offsets: Vec<u64>,
}

impl ChunkMap {
    pub(crate) fn new(index: &ChunkIndex) -> Self {
        match index {
            ChunkIndex::Fixed {
                original_chunk_size,
                original_file_size,
                transformed_chunk_size,
                final_transformed_chunk_size,
            } => {
                let count = original_file_size.div_ceil((*original_chunk_size).max(1));
                let mut offs = Vec::with_capacity(count as usize + 1);
                offs.push(0);
                for i in 0..count {
                    let sz = if i + 1 == count {
                        *final_transformed_chunk_size
                    } else {
                        *transformed_chunk_size
                    };
                    offs.push(offs[i as usize] + sz);
                }
                Self {
                    chunk_size: *original_chunk_size,
                    file_size: *original_file_size,
                    stored_offsets: offs,
                }
            }
            ChunkIndex::Variable {
                original_chunk_size,
                original_file_size,
                transformed_chunk_sizes,
            } => {
                let mut offs = Vec::with_capacity(transformed_chunk_sizes.len() + 1);
                offs.push(0);
                for s in transformed_chunk_sizes {
                    offs.push(offs[offs.len() - 1] + s);
                }
                Self {
                    chunk_size: *original_chunk_size,
                    file_size: *original_file_size,
                    stored_offsets: offs,
                }
            }
        }
    }

    /// Builds the index to store: fixed when it can be.
    pub(crate) fn index_for(chunk_size: u64, file_size: u64, stored: &[u64]) -> ChunkIndex {
        let fixed = stored.len() <= 1 || stored[..stored.len() - 1].iter().all(|s| *s == stored[0]);
        if fixed {
            let first = stored.first().copied().unwrap_or(0);
            ChunkIndex::Fixed {
                original_chunk_size: chunk_size,
                original_file_size: file_size,
                transformed_chunk_size: if stored.len() > 1 {
                    first
                } else {
                    stored.last().copied().unwrap_or(0)
                },
                final_transformed_chunk_size: stored.last().copied().unwrap_or(0),
            }
        } else {
            ChunkIndex::Variable {
                original_chunk_size: chunk_size,
                original_file_size: file_size,
                transformed_chunk_sizes: stored.to_vec(),
            }
        }
    }

    pub(crate) fn count(&self) -> u32 {
        (self.stored_offsets.len() - 1) as u32
    }

    pub(crate) fn original(&self, i: u32) -> Range<u64> {
        let start = i as u64 * self.chunk_size;
        start..(start + self.chunk_size).min(self.file_size)
    }

    pub(crate) fn stored(&self, i: u32) -> Range<u64> {
        self.stored_offsets[i as usize]..self.stored_offsets[i as usize + 1]
    }

    #[cfg(test)]
    pub(crate) fn stored_total(&self) -> u64 {
        *self.stored_offsets.last().unwrap_or(&0)
    }

    /// The chunk holding original byte `pos` (`pos < file_size`).
    pub(crate) fn chunk_of(&self, pos: u64) -> u32 {
        (pos / self.chunk_size) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_index_maps_positions() {
        let idx = ChunkMap::index_for(10, 25, &[38, 38, 33]);
        assert!(matches!(
            idx,
            ChunkIndex::Fixed {
                transformed_chunk_size: 38,
                final_transformed_chunk_size: 33,
                ..
            }
        ));
        let m = ChunkMap::new(&idx);
        assert_eq!(m.count(), 3);
        assert_eq!(m.original(2), 20..25);
        assert_eq!(m.stored(1), 38..76);
        assert_eq!(m.stored(2), 76..109);
        assert_eq!(m.chunk_of(19), 1);
    }

    #[test]
    fn variable_index_round_trips_through_json() {
        let idx = ChunkMap::index_for(10, 25, &[5, 7, 3]);
        assert!(matches!(idx, ChunkIndex::Variable { .. }));
        let m = SegmentManifest {
            version: MANIFEST_VERSION,
            chunk_index: idx,
            segment_indexes: SegmentIndexes {
                offset: IndexRange {
                    position: 0,
                    size: 1,
                    original_size: 1,
                },
                timestamp: IndexRange {
                    position: 1,
                    size: 1,
                    original_size: 1,
                },
                producer_snapshot: IndexRange {
                    position: 2,
                    size: 1,
                    original_size: 1,
                },
                leader_epoch: IndexRange {
                    position: 3,
                    size: 1,
                    original_size: 1,
                },
                transaction: None,
            },
            compression: true,
            encryption: None,
            remote_log_segment_metadata: serde_json::Value::Null,
        };
        let back = SegmentManifest::from_json("k", &m.to_json()).unwrap();
        assert_eq!(back, m);
        assert_eq!(ChunkMap::new(&back.chunk_index).stored(1), 5..12);
    }

    #[test]
    fn empty_segment_has_no_chunks() {
        let m = ChunkMap::new(&ChunkMap::index_for(10, 0, &[]));
        assert_eq!(m.count(), 0);
        assert_eq!(m.stored_total(), 0);
    }

    #[test]
    fn bad_manifest_is_a_corrupt_error() {
        let e = SegmentManifest::from_json("a/b.rsm-manifest", b"{not json").unwrap_err();
        assert!(
            matches!(&e, Error::Corrupt { what, source: Some(_), .. } if what == "a/b.rsm-manifest"),
            "{e}"
        );
    }
}
