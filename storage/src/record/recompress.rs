//! Broker-side recompression (Kafka's `LogValidator` when the topic's `compression.type` is a codec): a v2 batch
//! whose codec differs from the topic's is re-encoded with the topic's codec and level; the header keeps every
//! other field (base offset, producer id/epoch/sequence, timestamps, flags) and gets a new length and CRC.
//! `compression.type=producer` never comes here: batches are stored as the client sent them.
use std::io::Read;

use bytes::{Bytes, BytesMut};

use super::batch::{
    RecordBatch, ATTRIBUTES_OFFSET, CRC_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD,
};
use super::compression::{self, Compression};
use crate::{Error, Result};

/// A topic's target codec: Kafka's `compression.type` other than `producer`, with its level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetCodec {
    /// The codec batches are stored in.
    pub codec: Compression,
    /// `compression.gzip.level` / `compression.lz4.level` / `compression.zstd.level`; `None` = codec default.
    pub level: Option<i32>,
}

/// The decompressed records of `batch` (its bytes after the header), at most `*budget` bytes; the budget is
/// decreased by what was read.
pub(crate) fn plain_records(batch: &RecordBatch, budget: &mut usize) -> Result<Vec<u8>> {
    let raw = &batch.as_bytes()[RECORD_BATCH_OVERHEAD..];
    let codec = batch.compression();
    if codec == Compression::None {
        return Ok(raw.to_vec());
    }
    let corrupt = |e: std::io::Error| Error::CorruptRecord {
        reason: format!(
            "the {codec:?} records of the batch at offset {} do not decompress: {e}",
            batch.base_offset()
        ),
    };
    let mut out = Vec::with_capacity(raw.len().saturating_mul(2).min(*budget));
    compression::decompressed(codec, raw, *budget)
        .map_err(corrupt)?
        .take((*budget as u64).saturating_add(1))
        .read_to_end(&mut out)
        .map_err(corrupt)?;
    if out.len() > *budget {
        return Err(Error::DecompressedTooLarge {
            base_offset: batch.base_offset(),
            limit: *budget,
        });
    }
    *budget -= out.len();
    Ok(out)
}

/// Writes a batch with `header`'s fields, `codec` in its attributes and `records` (already encoded with `codec`):
/// new length and CRC-32C.
pub(crate) fn assemble(header: &[u8], codec: Compression, records: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&header[..RECORD_BATCH_OVERHEAD]);
    out.extend_from_slice(records);
    let b = &mut out[start..];
    let attrs = u16::from_be_bytes([b[ATTRIBUTES_OFFSET], b[ATTRIBUTES_OFFSET + 1]]) & !0x07
        | codec_bits(codec);
    b[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&attrs.to_be_bytes());
    let length = (b.len() - LOG_OVERHEAD) as i32;
    b[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&b[ATTRIBUTES_OFFSET..]);
    b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

fn codec_bits(codec: Compression) -> u16 {
    match codec {
        Compression::None => 0,
        Compression::Gzip => 1,
        Compression::Snappy => 2,
        Compression::Lz4 => 3,
        Compression::Zstd => 4,
    }
}

/// Re-encodes `batch` with `target` (its CRC is checked first, so a corrupt batch is refused rather than given
/// a fresh CRC). `budget` bounds the decompressed bytes as on append.
pub fn recompress_batch(
    batch: &RecordBatch,
    target: TargetCodec,
    budget: &mut usize,
) -> Result<Bytes> {
    batch.ensure_valid_crc()?;
    let plain = plain_records(batch, budget)?;
    let mut records = Vec::with_capacity(plain.len() / 2 + 64);
    compression::compress_at(target.codec, target.level, &plain, &mut records).map_err(|e| {
        Error::CorruptRecord {
            reason: format!(
                "cannot re-encode the batch at offset {} as {:?}: {e}",
                batch.base_offset(),
                target.codec
            ),
        }
    })?;
    let mut out = Vec::with_capacity(RECORD_BATCH_OVERHEAD + records.len());
    assemble(batch.as_bytes(), target.codec, &records, &mut out);
    Ok(Bytes::from(out))
}

/// The records of one produce request partition (one or more v2 batches) with every batch whose codec is not
/// `target` re-encoded; control batches are kept as they are. Returns `records` itself (no copy) when every
/// batch already has the codec. Errors are the append's: a batch that does not parse, a bad CRC, a payload that
/// does not decompress or inflates beyond [`super::MAX_DECOMPRESSED_RECORDS_BYTES`].
pub fn recompress_records(records: Bytes, target: TargetCodec) -> Result<Bytes> {
    let batches: Vec<RecordBatch> = RecordBatch::iter(&records).collect::<Result<_>>()?;
    if batches
        .iter()
        .all(|b| b.compression() == target.codec || b.is_control())
    {
        return Ok(records);
    }
    let mut budget = super::MAX_DECOMPRESSED_RECORDS_BYTES;
    let mut out = BytesMut::with_capacity(records.len());
    for b in &batches {
        if b.compression() == target.codec || b.is_control() {
            out.extend_from_slice(b.as_bytes());
        } else {
            out.extend_from_slice(&recompress_batch(b, target, &mut budget)?);
        }
    }
    Ok(out.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordBatchBuilder;

    fn plain_batch(n: usize) -> Bytes {
        let mut b = RecordBatchBuilder::new().producer(7, 1, 10);
        for i in 0..n {
            let v = format!("value {i} value value value value");
            b.append(
                1000 + i as i64,
                Some(b"k"),
                Some(v.as_bytes()),
                &[("h", Some(b"x"))],
            );
        }
        b.build()
    }

    fn values(batch: &RecordBatch) -> Vec<(i64, Option<Bytes>)> {
        let plain = RecordBatch::new(
            recompress_batch(
                batch,
                TargetCodec {
                    codec: Compression::None,
                    level: None,
                },
                &mut usize::MAX.clone(),
            )
            .unwrap(),
        )
        .unwrap();
        plain
            .records()
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| (r.timestamp, r.value))
            .collect()
    }

    #[test]
    fn every_codec_and_level_round_trips_keeping_the_header_fields() {
        let src = RecordBatch::new(plain_batch(50)).unwrap();
        let want = values(&src);
        for (codec, level) in [
            (Compression::Gzip, Some(1)),
            (Compression::Gzip, Some(9)),
            (Compression::Gzip, Some(-1)),
            (Compression::Snappy, None),
            (Compression::Lz4, Some(1)),
            (Compression::Lz4, Some(17)),
            (Compression::Zstd, Some(-5)),
            (Compression::Zstd, Some(19)),
        ] {
            let out =
                recompress_records(src.as_bytes().clone(), TargetCodec { codec, level }).unwrap();
            let b = RecordBatch::new(out).expect("valid CRC");
            assert_eq!(b.compression(), codec);
            assert!(
                b.size_in_bytes() < src.size_in_bytes(),
                "{codec:?} compresses"
            );
            assert_eq!(
                (
                    b.producer_id(),
                    b.producer_epoch(),
                    b.base_sequence(),
                    b.records_count()
                ),
                (7, 1, 10, 50)
            );
            assert_eq!((b.first_timestamp(), b.max_timestamp()), (1000, 1049));
            assert_eq!(values(&b), want, "{codec:?}");
        }
    }

    #[test]
    fn batches_already_in_the_codec_are_not_copied() {
        let zstd = recompress_records(
            plain_batch(3),
            TargetCodec {
                codec: Compression::Zstd,
                level: None,
            },
        )
        .unwrap();
        let again = recompress_records(
            zstd.clone(),
            TargetCodec {
                codec: Compression::Zstd,
                level: Some(9),
            },
        )
        .unwrap();
        assert_eq!(again.as_ptr(), zstd.as_ptr(), "the same bytes, not a copy");
    }

    #[test]
    fn a_corrupt_batch_is_refused_not_given_a_fresh_crc() {
        let mut bad = plain_batch(3).to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        let err = recompress_records(
            Bytes::from(bad),
            TargetCodec {
                codec: Compression::Gzip,
                level: None,
            },
        )
        .unwrap_err();
        assert!(matches!(err, Error::CorruptRecord { .. }), "{err}");
    }
}
