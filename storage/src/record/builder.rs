//! Building uncompressed magic-2 batches ([`RecordBatchBuilder`]) and decoding their records ([`RecordIter`]).
//!
//! Record layout (varints are zigzag): `length varint | attributes i8 | timestampDelta varlong | offsetDelta varint |
//! keyLength varint (-1 = null) | key | valueLength varint | value | headerCount varint |
//! {headerKeyLength varint, headerKey, headerValueLength varint (-1 = null), headerValue}*`.
use bytes::Bytes;

use super::batch::{RecordBatch, ATTRIBUTES_OFFSET, RECORD_BATCH_OVERHEAD};
use super::compression::Compression;
use super::varint::{read_varint, read_varlong, write_varint, write_varlong};
use crate::{Error, Result};

/// A record header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The header key.
    pub key: String,
    /// The header value (None = null).
    pub value: Option<Bytes>,
}

/// One decoded record of an uncompressed batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Absolute offset (batch base offset + offset delta).
    pub offset: i64,
    /// Absolute timestamp (batch first timestamp + delta; for LogAppendTime batches the broker's time).
    pub timestamp: i64,
    /// The key (None = null).
    pub key: Option<Bytes>,
    /// The value (None = null, a tombstone).
    pub value: Option<Bytes>,
    /// The headers.
    pub headers: Vec<Header>,
}

/// Builds one uncompressed magic-2 batch with a valid CRC; base offset 0 and leader epoch -1 until the log
/// assigns them.
#[derive(Clone, Debug)]
pub struct RecordBatchBuilder {
    base_offset: i64,
    first_timestamp: Option<i64>,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    count: i32,
    records: Vec<u8>,
}

impl Default for RecordBatchBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordBatchBuilder {
    /// An empty builder: no producer id, base offset 0.
    pub fn new() -> Self {
        Self {
            base_offset: 0,
            first_timestamp: None,
            max_timestamp: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            control: false,
            count: 0,
            records: Vec::new(),
        }
    }

    /// Sets the idempotent producer fields.
    pub fn producer(mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// Sets the base offset written into the header (the log overwrites it on append).
    pub fn base_offset(mut self, base_offset: i64) -> Self {
        self.base_offset = base_offset;
        self
    }

    /// Marks the batch transactional.
    pub fn transactional(mut self, transactional: bool) -> Self {
        self.transactional = transactional;
        self
    }

    /// Marks the batch as a control batch.
    pub fn control(mut self, control: bool) -> Self {
        self.control = control;
        self
    }

    /// Number of records added so far.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends a record with the given timestamp, key, value and headers.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&str, Option<&[u8]>)],
    ) {
        let first = *self.first_timestamp.get_or_insert(timestamp);
        self.max_timestamp = self.max_timestamp.max(timestamp);
        let mut body =
            Vec::with_capacity(16 + key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len));
        body.push(0); // attributes
        write_varlong(&mut body, timestamp - first);
        write_varint(&mut body, self.count);
        write_bytes(&mut body, key);
        write_bytes(&mut body, value);
        write_varint(&mut body, headers.len() as i32);
        for (k, v) in headers {
            write_bytes(&mut body, Some(k.as_bytes()));
            write_bytes(&mut body, *v);
        }
        write_varint(&mut self.records, body.len() as i32);
        self.records.extend_from_slice(&body);
        self.count += 1;
    }

    /// Encodes the batch. An empty builder yields an empty `Bytes`.
    pub fn build(&self) -> Bytes {
        if self.count == 0 {
            return Bytes::new();
        }
        let mut out = Vec::with_capacity(RECORD_BATCH_OVERHEAD + self.records.len());
        let length = (RECORD_BATCH_OVERHEAD - 12 + self.records.len()) as i32;
        let mut attributes: i16 = 0;
        if self.transactional {
            attributes |= 0x10;
        }
        if self.control {
            attributes |= 0x20;
        }
        out.extend_from_slice(&self.base_offset.to_be_bytes());
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&(-1i32).to_be_bytes()); // partitionLeaderEpoch
        out.push(2); // magic
        out.extend_from_slice(&[0; 4]); // crc, filled below
        out.extend_from_slice(&attributes.to_be_bytes());
        out.extend_from_slice(&(self.count - 1).to_be_bytes());
        out.extend_from_slice(&self.first_timestamp.unwrap_or(-1).to_be_bytes());
        out.extend_from_slice(&self.max_timestamp.to_be_bytes());
        out.extend_from_slice(&self.producer_id.to_be_bytes());
        out.extend_from_slice(&self.producer_epoch.to_be_bytes());
        out.extend_from_slice(&self.base_sequence.to_be_bytes());
        out.extend_from_slice(&self.count.to_be_bytes());
        out.extend_from_slice(&self.records);
        let crc = crc32c::crc32c(&out[ATTRIBUTES_OFFSET..]);
        out[17..21].copy_from_slice(&crc.to_be_bytes());
        Bytes::from(out)
    }
}

fn write_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => write_varint(out, -1),
        Some(b) => {
            write_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

/// Iterator over the records of an uncompressed batch; see [`RecordBatch::records`].
pub struct RecordIter {
    batch: RecordBatch,
    pos: usize,
    remaining: i32,
}

impl RecordIter {
    pub(crate) fn new(batch: RecordBatch) -> Self {
        let remaining = batch.records_count();
        Self {
            batch,
            pos: RECORD_BATCH_OVERHEAD,
            remaining,
        }
    }

    fn decode(&mut self) -> Result<Record> {
        let buf = self.batch.as_bytes().clone();
        let bad = |what: &str| Error::InvalidRecord {
            reason: format!(
                "record in batch at offset {} has a bad {what}",
                self.batch.base_offset()
            ),
        };
        let mut pos = self.pos;
        let (len, n) = read_varint(&buf[pos..]).ok_or_else(|| bad("length"))?;
        pos += n;
        let end = pos
            .checked_add(len.max(0) as usize)
            .filter(|&e| len >= 0 && e <= buf.len())
            .ok_or_else(|| bad("length"))?;
        pos += 1; // attributes
        let (ts_delta, n) = read_varlong(buf.get(pos..end).ok_or_else(|| bad("timestamp"))?)
            .ok_or_else(|| bad("timestamp"))?;
        pos += n;
        let (offset_delta, n) = read_varint(&buf[pos..end]).ok_or_else(|| bad("offset delta"))?;
        pos += n;
        let read_opt = |pos: &mut usize| -> Result<Option<Bytes>> {
            let (l, n) = read_varint(&buf[*pos..end]).ok_or_else(|| bad("field length"))?;
            *pos += n;
            if l < 0 {
                return Ok(None);
            }
            let e = *pos + l as usize;
            if e > end {
                return Err(bad("field length"));
            }
            let b = buf.slice(*pos..e);
            *pos = e;
            Ok(Some(b))
        };
        let key = read_opt(&mut pos)?;
        let value = read_opt(&mut pos)?;
        let (hcount, n) = read_varint(&buf[pos..end]).ok_or_else(|| bad("header count"))?;
        pos += n;
        let mut headers = Vec::with_capacity(hcount.clamp(0, 64) as usize);
        for _ in 0..hcount.max(0) {
            let k = read_opt(&mut pos)?.ok_or_else(|| bad("header key"))?;
            let key = String::from_utf8(k.to_vec()).map_err(|_| bad("header key"))?;
            let value = read_opt(&mut pos)?;
            headers.push(Header { key, value });
        }
        self.pos = end;
        let timestamp = if self.batch.timestamp_type() == crate::TimestampType::LogAppendTime {
            self.batch.max_timestamp()
        } else {
            self.batch.first_timestamp().wrapping_add(ts_delta)
        };
        Ok(Record {
            offset: self.batch.base_offset().wrapping_add(offset_delta as i64),
            timestamp,
            key,
            value,
            headers,
        })
    }
}

impl RecordBatch {
    /// The records of an uncompressed batch, decoded lazily. Compressed batches return an error (they are
    /// only walked, by the bounded walker, on append and for [`RecordBatch::find_timestamp`]).
    pub fn records(&self) -> Result<RecordIter> {
        if self.compression() != Compression::None {
            return Err(Error::InvalidRecord {
                reason: format!(
                    "batch at offset {} is compressed; records cannot be read here",
                    self.base_offset()
                ),
            });
        }
        Ok(RecordIter::new(self.clone()))
    }
}

impl Iterator for RecordIter {
    type Item = Result<Record>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining <= 0 {
            return None;
        }
        self.remaining -= 1;
        let r = self.decode();
        if r.is_err() {
            self.remaining = 0;
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_batch_validates_and_decodes_back() {
        let mut b = RecordBatchBuilder::new().producer(7, 1, 10);
        b.append(1000, Some(b"k"), Some(b"v1"), &[("h", Some(b"x"))]);
        b.append(1005, None, None, &[]);
        let batch = RecordBatch::new(b.build()).unwrap();
        batch
            .validate_for_append(&mut super::super::MAX_DECOMPRESSED_RECORDS_BYTES.clone())
            .unwrap();
        assert_eq!((batch.records_count(), batch.last_offset_delta()), (2, 1));
        assert_eq!(
            (batch.first_timestamp(), batch.max_timestamp()),
            (1000, 1005)
        );
        assert_eq!(
            (
                batch.producer_id(),
                batch.producer_epoch(),
                batch.base_sequence(),
                batch.last_sequence()
            ),
            (7, 1, 10, 11)
        );
        let recs: Vec<Record> = batch.records().unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(recs[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(recs[0].headers[0].key, "h");
        assert_eq!(recs[1].offset, 1);
        assert_eq!(recs[1].timestamp, 1005);
        assert_eq!(recs[1].value, None);
    }
}

#[cfg(test)]
mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Arbitrary bytes (and mutations of a valid batch, with the CRC fixed up) never panic the parser; they
        /// either parse or return an error.
        #[test]
        fn prop_parsing_arbitrary_bytes_never_panics(
            noise in proptest::collection::vec(any::<u8>(), 0..300),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        ) {
            let inputs = {
                let mut b = RecordBatchBuilder::new().producer(1, 0, 0);
                b.append(5, Some(b"k"), Some(b"value"), &[("h", None)]);
                b.append(9, None, Some(b"v2"), &[]);
                let mut valid = b.build().to_vec();
                for (i, v) in &flips {
                    let at = i.index(valid.len());
                    valid[at] = *v;
                }
                // Keep the CRC valid so the mutation reaches the record decoder.
                if valid.len() >= 21 {
                    let crc = crc32c::crc32c(&valid[21..]);
                    valid[17..21].copy_from_slice(&crc.to_be_bytes());
                }
                vec![noise.clone(), valid]
            };
            for input in inputs {
                let bytes = Bytes::from(input);
                for batch in RecordBatch::iter(&bytes) {
                    let Ok(batch) = batch else { continue };
                    let _ = batch.validate_for_append(&mut (1 << 20));
                    let _ = (batch.last_offset(), batch.next_offset(), batch.last_sequence());
                    let _ = batch.offset_delta_of_max_timestamp();
                    if let Ok(records) = batch.records() {
                        for r in records.take(1000) {
                            let _ = r;
                        }
                    }
                }
            }
        }
    }
}
