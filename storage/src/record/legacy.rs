//! Message formats v0 and v1 (Kafka's `LegacyRecord`), for clients of Kafka 3.9's oldest Produce and Fetch versions:
//! message sets are up-converted to one v2 batch on append ([`up_convert`], as Kafka's `LogValidator`
//! `convertAndAssignOffsetsNonCompressed` / `validateMessagesAndAssignOffsetsCompressed`), and v2 batches are
//! down-converted for fetches at versions that can only carry v0/v1 ([`down_convert`], Kafka's
//! `RecordsUtil.downConvert`).
//!
//! A message: `offset i64 | size i32 | crc u32 | magic i8 | attributes i8 | timestamp i64 (v1 only) | key bytes
//! (i32 length, -1 null) | value bytes`. The CRC-32 (IEEE) covers magic to the end. Attributes: bits 0-2 the codec
//! (a compressed message is a wrapper whose value is a compressed message set), bit 3 (v1) LogAppendTime.
use bytes::Bytes;

use super::batch::{RecordBatch, MAGIC_OFFSET};
use super::compression;
use super::compression::Compression;
use super::recompress::{plain_records, TargetCodec};
use super::{RecordBatchBuilder, MAX_DECOMPRESSED_RECORDS_BYTES};
use crate::{Error, Result};

/// Kafka's `RecordBatch.NO_TIMESTAMP`: what a v0 message up-converts to.
pub const NO_TIMESTAMP: i64 = -1;

/// Offset + size: what precedes every message.
const LOG_OVERHEAD: usize = 12;

/// The magic of the first message or batch in `records`, if there are enough bytes to tell (the byte sits at
/// the same position in every format).
pub fn magic_of(records: &[u8]) -> Option<i8> {
    records.get(MAGIC_OFFSET).map(|m| *m as i8)
}

/// A message set up-converted to one uncompressed v2 batch, and the codec its wrapper messages used (Kafka
/// stores the result in that codec when the topic's `compression.type` is `producer`).
#[derive(Debug)]
pub struct UpConverted {
    /// The v2 batch (base offset 0, no producer id), records in the set's order.
    pub batch: Bytes,
    /// The codec of the compressed wrapper messages, `None` when every message was uncompressed.
    pub source: Compression,
}

fn invalid(reason: String) -> Error {
    Error::InvalidRecord { reason }
}

fn corrupt(reason: String) -> Error {
    Error::CorruptRecord { reason }
}

/// One parsed message, borrowing from its set.
struct Message<'a> {
    magic: i8,
    attributes: u8,
    timestamp: i64,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
}

fn read_bytes<'a>(body: &'a [u8], pos: &mut usize, what: &str) -> Result<Option<&'a [u8]>> {
    let len_bytes = body
        .get(*pos..*pos + 4)
        .ok_or_else(|| corrupt(format!("message {what} length is cut short")))?;
    let len = i32::from_be_bytes(len_bytes.try_into().expect("4 bytes"));
    *pos += 4;
    if len < 0 {
        if len != -1 {
            return Err(corrupt(format!("message {what} length {len} is negative")));
        }
        return Ok(None);
    }
    let end = *pos + len as usize;
    let b = body.get(*pos..end).ok_or_else(|| {
        corrupt(format!(
            "message {what} of {len} bytes overruns the message ({} bytes left)",
            body.len() - *pos
        ))
    })?;
    *pos = end;
    Ok(Some(b))
}

/// Parses the messages of a message set (every CRC checked) and calls `each` on them in order.
fn for_each_message<'a>(
    set: &'a [u8],
    mut each: impl FnMut(Message<'a>) -> Result<()>,
) -> Result<()> {
    let mut pos = 0usize;
    while pos < set.len() {
        let rest = &set[pos..];
        if rest.len() < LOG_OVERHEAD + 6 {
            return Err(corrupt(format!(
                "{} bytes at position {pos} are too few for a message",
                rest.len()
            )));
        }
        let size = i32::from_be_bytes(rest[8..12].try_into().expect("4 bytes"));
        if size < 6 || LOG_OVERHEAD + size as usize > rest.len() {
            return Err(corrupt(format!(
                "message size {size} at position {pos} does not fit the {} bytes left",
                rest.len() - LOG_OVERHEAD
            )));
        }
        let msg = &rest[LOG_OVERHEAD..LOG_OVERHEAD + size as usize];
        let stored = u32::from_be_bytes(msg[0..4].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&msg[4..]);
        if stored != computed {
            return Err(corrupt(format!(
                "message crc mismatch at position {pos}: stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        let (magic, attributes) = (msg[4] as i8, msg[5]);
        let mut p = 6;
        let timestamp = match magic {
            0 => NO_TIMESTAMP,
            1 => {
                let ts = msg
                    .get(6..14)
                    .ok_or_else(|| corrupt("v1 message timestamp is cut short".into()))?;
                p = 14;
                i64::from_be_bytes(ts.try_into().expect("8 bytes"))
            }
            m => {
                return Err(invalid(format!(
                    "magic {m} in a message set: v0/v1 messages and v2 batches cannot be mixed"
                )))
            }
        };
        let key = read_bytes(msg, &mut p, "key")?;
        let value = read_bytes(msg, &mut p, "value")?;
        if p != msg.len() {
            return Err(corrupt(format!(
                "message at position {pos} has {} bytes after its value",
                msg.len() - p
            )));
        }
        each(Message {
            magic,
            attributes,
            timestamp,
            key,
            value,
        })?;
        pos += LOG_OVERHEAD + size as usize;
    }
    Ok(())
}

fn codec_of(attributes: u8) -> Result<Compression> {
    Ok(match attributes & 0x07 {
        0 => Compression::None,
        1 => Compression::Gzip,
        2 => Compression::Snappy,
        3 => Compression::Lz4,
        c => {
            return Err(invalid(format!(
                "codec id {c} is not valid for a v0/v1 message"
            )))
        }
    })
}

/// Kafka 0.8/0.9 clients compute an lz4 frame's header checksum over the frame's magic number too (KAFKA-3160),
/// and Kafka does not check it in magic-0 messages; lz4's decoder does. The frame with the checksum recomputed
/// over the frame descriptor, as the lz4 frame format defines it; `None` when the bytes are not an lz4 frame
/// header (the decoder then reports what is wrong).
fn lz4_with_true_header_checksum(frame: &[u8]) -> Option<Vec<u8>> {
    const LZ4_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
    let flg = *frame.get(4)?;
    if frame[..4] != LZ4_MAGIC {
        return None;
    }
    // FLG, BD, then the content size (FLG bit 3) and the dictionary id (FLG bit 0); the checksum byte follows.
    let descriptor = 2 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    let hc_at = 4 + descriptor;
    if frame.len() <= hc_at {
        return None;
    }
    let mut out = frame.to_vec();
    out[hc_at] = (xxhash_rust::xxh32::xxh32(&frame[4..hc_at], 0) >> 8) as u8;
    Some(out)
}

/// Up-converts a v0/v1 message set (a Produce v0-2 partition's records) to one uncompressed v2 batch: offsets
/// are assigned by the log on append; v0 messages get [`NO_TIMESTAMP`], v1 messages keep theirs (the inner
/// messages of a LogAppendTime wrapper get the wrapper's); `message.timestamp.type=LogAppendTime` is applied by
/// the log as for any batch. Decompressed bytes are bounded by [`MAX_DECOMPRESSED_RECORDS_BYTES`].
pub fn up_convert(set: &[u8]) -> Result<UpConverted> {
    let mut builder = RecordBatchBuilder::new();
    let mut source = Compression::None;
    let mut budget = MAX_DECOMPRESSED_RECORDS_BYTES;
    for_each_message(set, |m| {
        let codec = codec_of(m.attributes)?;
        if codec == Compression::None {
            builder.append(m.timestamp, m.key, m.value, &[]);
            return Ok(());
        }
        source = codec;
        let wrapped = m
            .value
            .ok_or_else(|| invalid("a compressed wrapper message has a null value".into()))?;
        let mut inner = Vec::new();
        use std::io::Read;
        let fixed;
        let wrapped = if codec == Compression::Lz4 && m.magic == 0 {
            fixed = lz4_with_true_header_checksum(wrapped);
            fixed.as_deref().unwrap_or(wrapped)
        } else {
            wrapped
        };
        compression::decompressed(codec, wrapped, budget)
            .and_then(|r| r.take(budget as u64 + 1).read_to_end(&mut inner))
            .map_err(|e| {
                corrupt(format!(
                    "a {codec:?} wrapper message does not decompress: {e}"
                ))
            })?;
        if inner.len() > budget {
            return Err(Error::DecompressedTooLarge {
                base_offset: 0,
                limit: MAX_DECOMPRESSED_RECORDS_BYTES,
            });
        }
        budget -= inner.len();
        let log_append = m.magic == 1 && m.attributes & 0x08 != 0;
        let wrapper_ts = m.timestamp;
        for_each_message(&inner, |i| {
            if codec_of(i.attributes)? != Compression::None {
                return Err(invalid(
                    "a compressed message inside a compressed wrapper".into(),
                ));
            }
            let ts = if log_append { wrapper_ts } else { i.timestamp };
            builder.append(ts, i.key, i.value, &[]);
            Ok(())
        })
    })?;
    if builder.is_empty() {
        return Err(invalid("the message set holds no message".into()));
    }
    Ok(UpConverted {
        batch: builder.build(),
        source,
    })
}

/// Down-converts fetched v2 batches to uncompressed messages of `magic` (0 for Fetch v0-1, 1 for v2-3), each
/// with its offset; control batches are left out (old clients know none). v1 messages keep the batch's
/// timestamp type (LogAppendTime batches give the append time); v0 messages have no timestamp. Record headers
/// cannot be expressed and are dropped, as Kafka does.
pub fn down_convert(records: &Bytes, magic: i8) -> Result<Bytes> {
    let mut out = Vec::with_capacity(records.len() + records.len() / 4);
    for b in RecordBatch::iter(records) {
        let b = b?;
        if b.is_control() {
            continue;
        }
        let log_append = b.timestamp_type() == crate::TimestampType::LogAppendTime;
        let plain = if b.compression() == Compression::None {
            b
        } else {
            let mut budget = MAX_DECOMPRESSED_RECORDS_BYTES;
            let records = plain_records(&b, &mut budget)?;
            let mut buf = Vec::new();
            super::recompress::assemble(b.as_bytes(), Compression::None, &records, &mut buf);
            RecordBatch::new(Bytes::from(buf))?
        };
        for r in plain.records()? {
            let r = r?;
            write_message(
                &mut out,
                magic,
                r.offset,
                log_append,
                r.timestamp,
                r.key.as_deref(),
                r.value.as_deref(),
            );
        }
    }
    Ok(Bytes::from(out))
}

/// Appends one uncompressed message of `magic` at `offset`.
pub fn write_message(
    out: &mut Vec<u8>,
    magic: i8,
    offset: i64,
    log_append: bool,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) {
    let start = out.len();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // size, crc: filled below
    out.push(magic as u8);
    out.push(if magic == 1 && log_append { 0x08 } else { 0 });
    if magic == 1 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for b in [key, value] {
        match b {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    let size = (out.len() - start - LOG_OVERHEAD) as i32;
    out[start + 8..start + 12].copy_from_slice(&size.to_be_bytes());
    let crc = crc32fast::hash(&out[start + 16..]);
    out[start + 12..start + 16].copy_from_slice(&crc.to_be_bytes());
}

/// Writes a compressed wrapper message of `magic` holding `inner` (a message set), for tests and tools that
/// play an old producer.
pub fn write_wrapper(
    out: &mut Vec<u8>,
    magic: i8,
    codec: Compression,
    offset: i64,
    timestamp: i64,
    inner: &[u8],
) -> Result<()> {
    let mut compressed = Vec::new();
    compression::compress_at(codec, None, inner, &mut compressed)
        .map_err(|e| corrupt(format!("cannot compress a wrapper: {e}")))?;
    let start = out.len();
    write_message(
        out,
        magic,
        offset,
        false,
        timestamp,
        None,
        Some(&compressed),
    );
    let attr_at = start + 17;
    out[attr_at] |= match codec {
        Compression::Gzip => 1,
        Compression::Snappy => 2,
        Compression::Lz4 => 3,
        _ => 0,
    };
    let crc = crc32fast::hash(&out[start + 16..]);
    out[start + 12..start + 16].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// The target of an up-converted set's storage: the topic's codec, or with `compression.type=producer` the codec
/// the old producer used (as Kafka).
pub fn up_converted_target(up: &UpConverted, topic: Option<TargetCodec>) -> TargetCodec {
    topic.unwrap_or(TargetCodec {
        codec: up.source,
        level: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(magic: i8, values: &[(&[u8], i64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, (v, ts)) in values.iter().enumerate() {
            write_message(&mut out, magic, i as i64, false, *ts, Some(b"k"), Some(v));
        }
        out
    }

    fn read(batch: &Bytes) -> Vec<(i64, i64, Option<Bytes>)> {
        let b = RecordBatch::new(batch.clone()).unwrap();
        b.records()
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| (r.offset, r.timestamp, r.value))
            .collect()
    }

    #[test]
    fn v0_messages_up_convert_without_timestamps_and_v1_keep_theirs() {
        let up = up_convert(&set(0, &[(b"a", 5), (b"b", 6)])).unwrap();
        assert_eq!(up.source, Compression::None);
        assert_eq!(
            read(&up.batch),
            vec![
                (0, NO_TIMESTAMP, Some(Bytes::from_static(b"a"))),
                (1, NO_TIMESTAMP, Some(Bytes::from_static(b"b")))
            ]
        );
        let up = up_convert(&set(1, &[(b"a", 5), (b"b", 9)])).unwrap();
        let got: Vec<i64> = read(&up.batch).iter().map(|r| r.1).collect();
        assert_eq!(got, vec![5, 9]);
    }

    /// KAFKA-3160: Kafka 0.8/0.9 clients compute an lz4 frame's header checksum over the frame magic too; Kafka
    /// accepts that in magic-0 messages (not in magic 1, whose clients compute it right).
    #[test]
    fn lz4_magic_0_wrappers_with_the_old_clients_header_checksum_up_convert() {
        let broken = |magic: i8| {
            let inner = set(magic, &[(b"x", 1), (b"y", 2)]);
            let mut wrapped = Vec::new();
            write_wrapper(&mut wrapped, magic, Compression::Lz4, 1, 3, &inner).unwrap();
            // offset, size, crc, magic, attributes, [timestamp], null key, value length: then the frame.
            let frame_at = 26 + if magic == 1 { 8 } else { 0 };
            let flg = wrapped[frame_at + 4];
            let hc_at = frame_at + 6 + if flg & 0x08 != 0 { 8 } else { 0 };
            let old = (xxhash_rust::xxh32::xxh32(&wrapped[frame_at..hc_at], 0) >> 8) as u8;
            assert_ne!(
                old, wrapped[hc_at],
                "the old checksum differs from the true one"
            );
            wrapped[hc_at] = old;
            let crc = crc32fast::hash(&wrapped[16..]);
            wrapped[12..16].copy_from_slice(&crc.to_be_bytes());
            wrapped
        };
        let up = up_convert(&broken(0)).expect("magic 0 with the old checksum");
        let got: Vec<Option<Bytes>> = read(&up.batch).into_iter().map(|r| r.2).collect();
        assert_eq!(
            got,
            vec![
                Some(Bytes::from_static(b"x")),
                Some(Bytes::from_static(b"y"))
            ]
        );
        assert!(up_convert(&broken(1)).is_err(), "magic 1 is checked");
    }

    #[test]
    fn compressed_wrappers_up_convert_with_their_codec_and_log_append_time() {
        for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4] {
            let inner = set(1, &[(b"x", 1), (b"y", 2), (b"z", 3)]);
            let mut wrapped = Vec::new();
            write_wrapper(&mut wrapped, 1, codec, 2, 3, &inner).unwrap();
            let up = up_convert(&wrapped).unwrap();
            assert_eq!(up.source, codec);
            let got: Vec<(i64, i64)> = read(&up.batch).iter().map(|r| (r.0, r.1)).collect();
            assert_eq!(got, vec![(0, 1), (1, 2), (2, 3)], "{codec:?}");
        }
        // A LogAppendTime wrapper stamps its inner messages with its own timestamp.
        let inner = set(1, &[(b"x", 1), (b"y", 2)]);
        let mut wrapped = Vec::new();
        write_wrapper(&mut wrapped, 1, Compression::Gzip, 1, 777, &inner).unwrap();
        wrapped[17] |= 0x08;
        let crc = crc32fast::hash(&wrapped[16..]);
        wrapped[12..16].copy_from_slice(&crc.to_be_bytes());
        let got: Vec<i64> = read(&up_convert(&wrapped).unwrap().batch)
            .iter()
            .map(|r| r.1)
            .collect();
        assert_eq!(got, vec![777, 777]);
    }

    #[test]
    fn bad_crcs_and_cut_messages_are_refused() {
        let mut s = set(1, &[(b"a", 5)]);
        let last = s.len() - 1;
        s[last] ^= 1;
        assert!(matches!(up_convert(&s), Err(Error::CorruptRecord { .. })));
        let s = set(0, &[(b"a", 5)]);
        assert!(matches!(
            up_convert(&s[..s.len() - 2]),
            Err(Error::CorruptRecord { .. })
        ));
        assert!(matches!(up_convert(&[]), Err(Error::InvalidRecord { .. })));
    }

    #[test]
    fn down_conversion_gives_each_record_its_offset_and_drops_control_batches() {
        let mut b = RecordBatchBuilder::new().base_offset(40);
        b.append(100, Some(b"k1"), Some(b"v1"), &[("h", Some(b"dropped"))]);
        b.append(101, None, None, &[]);
        let mut all = b.build().to_vec();
        let mut c = RecordBatchBuilder::new().base_offset(42).control(true);
        c.append(102, Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 0]), &[]);
        all.extend_from_slice(&c.build());
        let all = Bytes::from(all);
        for magic in [0i8, 1] {
            let out = down_convert(&all, magic).unwrap();
            let mut seen = Vec::new();
            for_each_message(&out, |m| {
                assert_eq!(m.magic, magic);
                seen.push((
                    m.timestamp,
                    m.key.map(<[u8]>::to_vec),
                    m.value.map(<[u8]>::to_vec),
                ));
                Ok(())
            })
            .unwrap();
            let ts = |t| if magic == 0 { NO_TIMESTAMP } else { t };
            assert_eq!(
                seen,
                vec![
                    (ts(100), Some(b"k1".to_vec()), Some(b"v1".to_vec())),
                    (ts(101), None, None)
                ]
            );
            assert_eq!(i64::from_be_bytes(out[0..8].try_into().unwrap()), 40);
        }
        // A compressed batch down-converts too, and round-trips through up-conversion.
        let zstd = super::super::recompress::recompress_records(
            all.slice(..all.len() - c.build().len()),
            TargetCodec {
                codec: Compression::Zstd,
                level: None,
            },
        )
        .unwrap();
        let out = down_convert(&zstd, 1).unwrap();
        let back = up_convert(&out).unwrap();
        let got: Vec<(i64, i64)> = read(&back.batch).iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(got, vec![(0, 100), (1, 101)]);
    }
}
