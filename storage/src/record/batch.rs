//! [`RecordBatch`]: a validated, zero-copy view over one magic-2 record batch.
//!
//! Layout (big-endian), as in Kafka's `DefaultRecordBatch`:
//!
//! | off | len | field | notes |
//! |----:|----:|-------|-------|
//! | 0 | 8 | baseOffset | assigned by the broker, outside the CRC |
//! | 8 | 4 | batchLength | bytes after this field |
//! | 12 | 4 | partitionLeaderEpoch | assigned by the broker, outside the CRC |
//! | 16 | 1 | magic | 2 |
//! | 17 | 4 | crc | CRC-32C of bytes 21..end |
//! | 21 | 2 | attributes | bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control, 6 delete horizon set |
//! | 23 | 4 | lastOffsetDelta | |
//! | 27 | 8 | baseTimestamp | the delete horizon when bit 6 is set (KIP-534); records: base + delta either way |
//! | 35 | 8 | maxTimestamp | |
//! | 43 | 8 | producerId | -1 if none |
//! | 51 | 2 | producerEpoch | |
//! | 53 | 4 | baseSequence | -1 if none |
//! | 57 | 4 | recordsCount | then the records |
//!
//! This file reads and edits the header only; the methods that read records are beside the record code:
//! [`RecordBatch::records`] in `builder.rs`, [`RecordBatch::find_timestamp`] and `validate_for_append` in
//! `walker.rs`.
use bytes::Bytes;

use super::compression::Compression;
use super::varint;
use crate::{Error, Result};

/// Bytes before `batchLength` counts: baseOffset + batchLength. Kafka: `LOG_OVERHEAD`.
pub const LOG_OVERHEAD: usize = 12;
/// Size of the v2 batch header. Kafka: `RECORD_BATCH_OVERHEAD`.
pub const RECORD_BATCH_OVERHEAD: usize = 61;

pub(crate) const BASE_OFFSET_OFFSET: usize = 0;
pub(crate) const LENGTH_OFFSET: usize = 8;
pub(crate) const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
pub(crate) const MAGIC_OFFSET: usize = 16;
pub(crate) const CRC_OFFSET: usize = 17;
pub(crate) const ATTRIBUTES_OFFSET: usize = 21;
pub(crate) const LAST_OFFSET_DELTA_OFFSET: usize = 23;
pub(crate) const BASE_TIMESTAMP_OFFSET: usize = 27;
pub(crate) const MAX_TIMESTAMP_OFFSET: usize = 35;
pub(crate) const PRODUCER_ID_OFFSET: usize = 43;
pub(crate) const PRODUCER_EPOCH_OFFSET: usize = 51;
pub(crate) const BASE_SEQUENCE_OFFSET: usize = 53;
pub(crate) const RECORDS_COUNT_OFFSET: usize = 57;

const COMPRESSION_MASK: u16 = 0x07;
const TIMESTAMP_TYPE_MASK: u16 = 0x08;
const TRANSACTIONAL_MASK: u16 = 0x10;
const CONTROL_MASK: u16 = 0x20;
/// Attributes bit 6 (Kafka's `DELETE_HORIZON_FLAG_MASK`, KIP-534): the log cleaner stamped the batch's delete
/// horizon in `baseTimestamp`.
pub const DELETE_HORIZON_FLAG: u8 = 0x40;

fn read_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
fn read_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn read_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Checks the fixed part of a batch header (at least [`LOG_OVERHEAD`] + 5 bytes must be present) and returns the
/// batch's total size. Rejects magic 0/1 with [`Error::InvalidRecord`] and impossible lengths with
/// [`Error::CorruptRecord`].
pub(crate) fn batch_size_from_header(header: &[u8]) -> Result<usize> {
    if header.len() < MAGIC_OFFSET + 1 {
        return Err(Error::CorruptRecord {
            reason: format!(
                "{} bytes are too few for a batch header (need {})",
                header.len(),
                MAGIC_OFFSET + 1
            ),
        });
    }
    let magic = header[MAGIC_OFFSET] as i8;
    if magic != 2 {
        return Err(Error::InvalidRecord {
            reason: format!(
                "magic {magic} is not supported: only magic 2 record batches are accepted (v0/v1 message sets are not)"
            ),
        });
    }
    let length = read_i32(header, LENGTH_OFFSET);
    if (length as i64) < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i64 {
        return Err(Error::CorruptRecord {
            reason: format!(
                "batch length {length} is smaller than the minimum {}",
                RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
            ),
        });
    }
    Ok(LOG_OVERHEAD + length as usize)
}

/// The framing fields of a v2 batch header, read from the first [`RECORD_BATCH_OVERHEAD`] bytes of a buffer that may
/// hold only part of the batch (a remote segment read in windows, for example). Unlike [`RecordBatch`] it does not
/// need the whole batch and checks no CRC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    /// `baseOffset`.
    pub base_offset: i64,
    /// `baseOffset + lastOffsetDelta`.
    pub last_offset: i64,
    /// `maxTimestamp`.
    pub max_timestamp: i64,
    /// Total bytes of the batch: [`LOG_OVERHEAD`] + `batchLength`.
    pub size: usize,
}

impl BatchHeader {
    /// Reads the header of the batch starting at `buf[0]`: `Ok(None)` when fewer than [`RECORD_BATCH_OVERHEAD`]
    /// bytes are there; errors as a batch would on a magic other than 2 or a length that cannot be a batch.
    pub fn parse(buf: &[u8]) -> Result<Option<Self>> {
        if buf.len() < RECORD_BATCH_OVERHEAD {
            return Ok(None);
        }
        let size = batch_size_from_header(buf)?;
        let base_offset = read_i64(buf, BASE_OFFSET_OFFSET);
        Ok(Some(BatchHeader {
            base_offset,
            last_offset: base_offset + i64::from(read_i32(buf, LAST_OFFSET_DELTA_OFFSET)),
            max_timestamp: read_i64(buf, MAX_TIMESTAMP_OFFSET),
            size,
        }))
    }
}

/// A validated view over exactly one magic-2 record batch. Cloning is cheap (a `Bytes` clone).
#[derive(Clone, PartialEq, Eq)]
pub struct RecordBatch {
    buf: Bytes,
}

impl std::fmt::Debug for RecordBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordBatch")
            .field("base_offset", &self.base_offset())
            .field("last_offset", &self.last_offset())
            .field("size", &self.size_in_bytes())
            .field("producer_id", &self.producer_id())
            .finish()
    }
}

impl RecordBatch {
    /// Validates `buf` as exactly one batch: magic 2, consistent lengths, CRC-32C.
    pub fn new(buf: Bytes) -> Result<Self> {
        let batch = Self::new_unchecked_crc(buf)?;
        batch.ensure_valid_crc()?;
        Ok(batch)
    }

    /// Like [`RecordBatch::new`] without the CRC check (for bytes this log already validated).
    pub fn new_unchecked_crc(buf: Bytes) -> Result<Self> {
        if buf.len() < RECORD_BATCH_OVERHEAD {
            // Report magic 0/1 as such even when the old message is shorter than a v2 header.
            if buf.len() > MAGIC_OFFSET && buf[MAGIC_OFFSET] != 2 {
                batch_size_from_header(&buf)?;
            }
            return Err(Error::CorruptRecord {
                reason: format!(
                    "{} bytes are too few for a record batch (need {RECORD_BATCH_OVERHEAD})",
                    buf.len()
                ),
            });
        }
        let size = batch_size_from_header(&buf)?;
        if size != buf.len() {
            return Err(Error::CorruptRecord {
                reason: format!(
                    "batch length field says {size} bytes but {} are present",
                    buf.len()
                ),
            });
        }
        let batch = Self { buf };
        if batch.last_offset_delta() < 0 {
            return Err(Error::InvalidRecord {
                reason: format!(
                    "last offset delta {} is negative",
                    batch.last_offset_delta()
                ),
            });
        }
        let codec = batch.attributes() as u16 & COMPRESSION_MASK;
        if codec > 4 {
            return Err(Error::InvalidRecord {
                reason: format!("unknown compression codec id {codec}"),
            });
        }
        if batch.records_count() < 0 {
            return Err(Error::InvalidRecord {
                reason: format!("records count {} is negative", batch.records_count()),
            });
        }
        Ok(batch)
    }

    /// Iterates the batches in `buf` (concatenated batches, e.g. a produce request's records). A truncated or
    /// invalid batch yields one error and ends the iteration.
    pub fn iter(buf: &Bytes) -> RecordBatchIter {
        RecordBatchIter {
            buf: buf.clone(),
            pos: 0,
            failed: false,
            check_crc: true,
        }
    }

    /// [`RecordBatch::iter`] without the CRC check ([`RecordBatch::new_unchecked_crc`]): for a look at the
    /// headers of batches whose CRC is checked elsewhere (the produce path reads the producer of a request's
    /// batches before the log validates them; checking the CRC there too summed every byte twice).
    pub fn iter_unchecked_crc(buf: &Bytes) -> RecordBatchIter {
        RecordBatchIter {
            check_crc: false,
            ..Self::iter(buf)
        }
    }

    /// The CRC-32C of bytes 21..end, as it should be stored in the `crc` field.
    pub fn compute_crc(&self) -> u32 {
        crc32c::crc32c(&self.buf[ATTRIBUTES_OFFSET..])
    }

    /// Checks the stored CRC against [`RecordBatch::compute_crc`].
    pub fn ensure_valid_crc(&self) -> Result<()> {
        let (stored, computed) = (self.crc(), self.compute_crc());
        if stored != computed {
            return Err(Error::CorruptRecord {
                reason: format!(
                    "crc mismatch at base offset {}: stored {stored:#010x}, computed {computed:#010x}",
                    self.base_offset()
                ),
            });
        }
        Ok(())
    }

    /// The batch's bytes.
    pub fn as_bytes(&self) -> &Bytes {
        &self.buf
    }
    /// The batch's bytes, by value.
    pub fn into_bytes(self) -> Bytes {
        self.buf
    }
    /// Total size in bytes (12 + batchLength).
    pub fn size_in_bytes(&self) -> usize {
        self.buf.len()
    }
    /// `baseOffset`.
    pub fn base_offset(&self) -> i64 {
        read_i64(&self.buf, BASE_OFFSET_OFFSET)
    }
    /// `batchLength` (bytes after the length field).
    pub fn batch_length(&self) -> i32 {
        read_i32(&self.buf, LENGTH_OFFSET)
    }
    /// `partitionLeaderEpoch`.
    pub fn partition_leader_epoch(&self) -> i32 {
        read_i32(&self.buf, PARTITION_LEADER_EPOCH_OFFSET)
    }
    /// `magic` (always 2 for a valid batch).
    pub fn magic(&self) -> i8 {
        self.buf[MAGIC_OFFSET] as i8
    }
    /// The stored `crc`.
    pub fn crc(&self) -> u32 {
        read_i32(&self.buf, CRC_OFFSET) as u32
    }
    /// `attributes`.
    pub fn attributes(&self) -> i16 {
        read_i16(&self.buf, ATTRIBUTES_OFFSET)
    }
    /// The compression codec (attributes bits 0-2; unknown codecs are rejected by [`RecordBatch::new`]).
    pub fn compression(&self) -> Compression {
        match self.attributes() as u16 & COMPRESSION_MASK {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            _ => Compression::Zstd,
        }
    }
    /// The timestamp type (attributes bit 3).
    pub fn timestamp_type(&self) -> crate::TimestampType {
        if self.attributes() as u16 & TIMESTAMP_TYPE_MASK != 0 {
            crate::TimestampType::LogAppendTime
        } else {
            crate::TimestampType::CreateTime
        }
    }
    /// Attributes bit 4.
    pub fn is_transactional(&self) -> bool {
        self.attributes() as u16 & TRANSACTIONAL_MASK != 0
    }
    /// Attributes bit 5.
    pub fn is_control(&self) -> bool {
        self.attributes() as u16 & CONTROL_MASK != 0
    }
    /// `lastOffsetDelta`.
    pub fn last_offset_delta(&self) -> i32 {
        read_i32(&self.buf, LAST_OFFSET_DELTA_OFFSET)
    }
    /// `baseOffset + lastOffsetDelta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(self.last_offset_delta() as i64)
    }
    /// `lastOffset + 1`.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }
    /// `baseTimestamp`: what record timestamp deltas are relative to; the first record's timestamp as a
    /// producer writes it, the delete horizon once the cleaner stamped one ([`RecordBatch::delete_horizon_ms`]).
    pub fn first_timestamp(&self) -> i64 {
        read_i64(&self.buf, BASE_TIMESTAMP_OFFSET)
    }
    /// Attributes bit 6: the cleaner stamped a delete horizon (Kafka's `hasDeleteHorizonMs`).
    pub fn has_delete_horizon(&self) -> bool {
        self.attributes() as u16 & DELETE_HORIZON_FLAG as u16 != 0
    }
    /// Kafka's `deleteHorizonMs`: when the cleaner may remove this batch's tombstones (or, for a control batch,
    /// the marker), stamped by the pass that first kept them (`now + delete.retention.ms`, KIP-534); `None` if
    /// not stamped.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.has_delete_horizon().then(|| self.first_timestamp())
    }
    /// `maxTimestamp`.
    pub fn max_timestamp(&self) -> i64 {
        read_i64(&self.buf, MAX_TIMESTAMP_OFFSET)
    }
    /// `producerId` (-1 if none).
    pub fn producer_id(&self) -> i64 {
        read_i64(&self.buf, PRODUCER_ID_OFFSET)
    }
    /// `producerEpoch`.
    pub fn producer_epoch(&self) -> i16 {
        read_i16(&self.buf, PRODUCER_EPOCH_OFFSET)
    }
    /// `baseSequence` (-1 if none).
    pub fn base_sequence(&self) -> i32 {
        read_i32(&self.buf, BASE_SEQUENCE_OFFSET)
    }
    /// The last sequence (`baseSequence + lastOffsetDelta`, wrapping at `i32::MAX` as Kafka does), -1 if none.
    pub fn last_sequence(&self) -> i32 {
        let base = self.base_sequence();
        if base < 0 {
            return -1;
        }
        let last = base as i64 + self.last_offset_delta() as i64;
        if last > i32::MAX as i64 {
            (last - i32::MAX as i64 - 1) as i32
        } else {
            last as i32
        }
    }
    /// `recordsCount`.
    pub fn records_count(&self) -> i32 {
        read_i32(&self.buf, RECORDS_COUNT_OFFSET)
    }

    /// Offset delta of the first record carrying the batch's max timestamp: exact for uncompressed CreateTime
    /// batches (records are walked), 0 for LogAppendTime (every record has the max), and the last offset delta for
    /// compressed batches (Kafka's shallow answer).
    pub fn offset_delta_of_max_timestamp(&self) -> i32 {
        offset_delta_of_max_timestamp(&self.buf)
    }
}

/// See [`RecordBatch::offset_delta_of_max_timestamp`]; `b` is one structurally valid batch.
pub(crate) fn offset_delta_of_max_timestamp(b: &[u8]) -> i32 {
    let last = read_i32(b, LAST_OFFSET_DELTA_OFFSET);
    let attrs = read_i16(b, ATTRIBUTES_OFFSET) as u16;
    if attrs & TIMESTAMP_TYPE_MASK != 0 {
        return 0;
    }
    if attrs & COMPRESSION_MASK != 0 {
        return last;
    }
    let (first_ts, max_ts) = (
        read_i64(b, BASE_TIMESTAMP_OFFSET),
        read_i64(b, MAX_TIMESTAMP_OFFSET),
    );
    let mut pos = RECORD_BATCH_OVERHEAD;
    for _ in 0..read_i32(b, RECORDS_COUNT_OFFSET).max(0) {
        let Some((len, n)) = varint::read_varint(&b[pos..]) else {
            break;
        };
        let body = pos + n;
        let end = body + len.max(0) as usize;
        if len < 1 || end > b.len() {
            break;
        }
        let Some((ts_delta, m)) = varint::read_varlong(&b[body + 1..end]) else {
            break;
        };
        let Some((offset_delta, _)) = varint::read_varint(&b[body + 1 + m..end]) else {
            break;
        };
        if first_ts.wrapping_add(ts_delta) == max_ts {
            return offset_delta;
        }
        pos = end;
    }
    last
}

/// In-place edits of a batch's bytes, used when the leader assigns offsets.
pub(crate) mod edit {
    use super::*;

    /// Writes `baseOffset` (outside the CRC).
    pub(crate) fn set_base_offset(batch: &mut [u8], offset: i64) {
        batch[BASE_OFFSET_OFFSET..BASE_OFFSET_OFFSET + 8].copy_from_slice(&offset.to_be_bytes());
    }
    /// Writes `partitionLeaderEpoch` (outside the CRC).
    pub(crate) fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) {
        batch[PARTITION_LEADER_EPOCH_OFFSET..PARTITION_LEADER_EPOCH_OFFSET + 4]
            .copy_from_slice(&epoch.to_be_bytes());
    }
    /// Kafka's `setMaxTimestamp(LOG_APPEND_TIME, ts)`: sets the timestamp-type bit and `maxTimestamp`, then
    /// recomputes the CRC.
    pub(crate) fn set_log_append_time(batch: &mut [u8], ts: i64) {
        let attrs = u16::from_be_bytes([batch[ATTRIBUTES_OFFSET], batch[ATTRIBUTES_OFFSET + 1]])
            | TIMESTAMP_TYPE_MASK;
        batch[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&attrs.to_be_bytes());
        batch[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8].copy_from_slice(&ts.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    }
    /// Kafka's `setMaxTimestamp(CREATE_TIME, ts)` for a CreateTime batch: writes `maxTimestamp` (the records' own
    /// max) and recomputes the CRC, only if the header disagrees (Kafka skips the rewrite when nothing changes).
    /// Returns whether the batch was rewritten.
    pub(crate) fn set_create_time_max_timestamp(batch: &mut [u8], ts: i64) -> bool {
        if read_i64(batch, MAX_TIMESTAMP_OFFSET) == ts {
            return false;
        }
        batch[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8].copy_from_slice(&ts.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        true
    }
}

/// Iterator over concatenated batches; see [`RecordBatch::iter`].
pub struct RecordBatchIter {
    buf: Bytes,
    pos: usize,
    failed: bool,
    check_crc: bool,
}

impl RecordBatchIter {
    /// Byte position of the next batch in the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl Iterator for RecordBatchIter {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let rest = &self.buf[self.pos..];
        let size = match batch_size_from_header(rest) {
            Ok(size) if size <= rest.len() => size,
            Ok(size) => {
                self.failed = true;
                return Some(Err(Error::CorruptRecord {
                    reason: format!(
                        "batch at byte {} needs {size} bytes but only {} remain",
                        self.pos,
                        rest.len()
                    ),
                }));
            }
            Err(e) => {
                self.failed = true;
                return Some(Err(e));
            }
        };
        let bytes = self.buf.slice(self.pos..self.pos + size);
        self.pos += size;
        let batch = if self.check_crc {
            RecordBatch::new(bytes)
        } else {
            RecordBatch::new_unchecked_crc(bytes)
        };
        if batch.is_err() {
            self.failed = true;
        }
        Some(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_header_is_framed_from_its_first_61_bytes_and_impossible_lengths_are_refused() {
        let mut h = vec![0u8; RECORD_BATCH_OVERHEAD];
        h[MAGIC_OFFSET] = 2;
        h[0..8].copy_from_slice(&7i64.to_be_bytes());
        h[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&3i32.to_be_bytes());
        assert!(matches!(
            BatchHeader::parse(&h),
            Err(Error::CorruptRecord { .. })
        ));
        h[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&100i32.to_be_bytes());
        h[LAST_OFFSET_DELTA_OFFSET..LAST_OFFSET_DELTA_OFFSET + 4]
            .copy_from_slice(&4i32.to_be_bytes());
        h[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8].copy_from_slice(&1_000i64.to_be_bytes());
        let f = BatchHeader::parse(&h)
            .expect("valid")
            .expect("complete header");
        assert_eq!(
            (f.base_offset, f.last_offset, f.max_timestamp, f.size),
            (7, 11, 1_000, 112)
        );
        assert!(BatchHeader::parse(&h[..60]).expect("short").is_none());
        h[MAGIC_OFFSET] = 1;
        assert!(matches!(
            BatchHeader::parse(&h),
            Err(Error::InvalidRecord { .. })
        ));
    }
}
