//! Per-chunk transforms: zstd compression, then AES-256-GCM encryption; reads undo them in reverse order.
//! Indexes are transformed the same way, each index as one chunk numbered by its [`IndexType`] ordinal.
use bytes::Bytes;

use crate::crypto::{ChunkKind, DataKey};
use crate::error::{Error, Result};
use crate::rsm::IndexType;

/// zstd level used for chunks (zstd's default).
const ZSTD_LEVEL: i32 = 3;

/// The transform chosen for one segment.
#[derive(Clone, Debug)]
pub(crate) struct ChunkTransform {
    pub compress: bool,
    pub key: Option<DataKey>,
}

impl ChunkTransform {
    pub(crate) fn is_identity(&self) -> bool {
        !self.compress && self.key.is_none()
    }

    pub(crate) fn apply(
        &self,
        kind: ChunkKind,
        n: u32,
        plain: Bytes,
        what: &dyn Fn() -> String,
    ) -> Result<Bytes> {
        if self.is_identity() {
            return Ok(plain);
        }
        let compressed =
            if self.compress {
                Bytes::from(zstd::bulk::compress(&plain, ZSTD_LEVEL).map_err(|source| {
                    Error::task(format!("zstd compression of {}", what()), source)
                })?)
            } else {
                plain
            };
        Ok(match &self.key {
            Some(k) => Bytes::from(k.encrypt(kind, n, &compressed)),
            None => compressed,
        })
    }

    pub(crate) fn undo(
        &self,
        kind: ChunkKind,
        n: u32,
        stored: Bytes,
        original_len: u64,
        what: &dyn Fn() -> String,
    ) -> Result<Bytes> {
        let decrypted = match &self.key {
            Some(k) => Bytes::from(k.decrypt(kind, n, &stored, what)?),
            None => stored,
        };
        let plain = if self.compress {
            Bytes::from(
                zstd::bulk::decompress(&decrypted, original_len as usize).map_err(|source| {
                    Error::Corrupt {
                        what: what(),
                        reason: "zstd decompression failed".into(),
                        source: Some(Box::new(source)),
                    }
                })?,
            )
        } else {
            decrypted
        };
        if plain.len() as u64 != original_len {
            return Err(Error::Corrupt {
                what: what(),
                reason: format!(
                    "holds {} bytes after decoding, manifest says {original_len}",
                    plain.len()
                ),
                source: None,
            });
        }
        Ok(plain)
    }
}

/// The index's chunk number inside `.indexes` (part of its AAD).
pub(crate) fn index_chunk_number(t: IndexType) -> u32 {
    match t {
        IndexType::Offset => 0,
        IndexType::Timestamp => 1,
        IndexType::ProducerSnapshot => 2,
        IndexType::Transaction => 3,
        IndexType::LeaderEpoch => 4,
    }
}

/// Whether the first record batch in `head` (the first bytes of a `.log` file) is compressed: Aiven's
/// heuristic. A v2 batch header keeps `attributes` at bytes 21..23, the codec in its low 3 bits. Anything that
/// is not a readable v2 header counts as uncompressed (so compression stays on).
pub(crate) fn first_batch_is_compressed(head: &[u8]) -> bool {
    const MAGIC: usize = 16;
    const ATTRIBUTES: usize = 21;
    if head.len() < ATTRIBUTES + 2 || head[MAGIC] != 2 {
        return false;
    }
    let attributes = u16::from_be_bytes([head[ATTRIBUTES], head[ATTRIBUTES + 1]]);
    attributes & 0x7 != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::KeyEncryptionKey;

    fn what() -> String {
        "test chunk".into()
    }

    #[test]
    fn compress_encrypt_round_trip() {
        let kek = KeyEncryptionKey::from_bytes(&[3; 32]);
        let (dek, _) = kek.new_data_key(&uuid::Uuid::new_v4());
        let data = Bytes::from(vec![42u8; 10_000]);
        for (compress, key) in [
            (false, None),
            (true, None),
            (false, Some(dek.clone())),
            (true, Some(dek)),
        ] {
            let t = ChunkTransform { compress, key };
            let stored = t.apply(ChunkKind::Log, 1, data.clone(), &what).unwrap();
            if compress {
                assert!(stored.len() < 1000);
            }
            assert_eq!(
                t.undo(ChunkKind::Log, 1, stored, 10_000, &what).unwrap(),
                data
            );
        }
    }

    #[test]
    fn short_plain_chunk_is_corrupt() {
        let t = ChunkTransform {
            compress: false,
            key: None,
        };
        let e = t
            .undo(ChunkKind::Log, 0, Bytes::from_static(b"abc"), 4, &what)
            .unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    }

    #[test]
    fn heuristic_reads_the_codec_of_the_first_batch() {
        let mut head = vec![0u8; 61];
        head[16] = 2;
        assert!(!first_batch_is_compressed(&head));
        head[22] = 4; // zstd
        assert!(first_batch_is_compressed(&head));
        head[16] = 1; // not v2
        assert!(!first_batch_is_compressed(&head));
        assert!(!first_batch_is_compressed(&[]));
    }
}
