//! The record walker: opens a batch (decompressing it if needed, see [`super::compression`]) and checks every
//! record's structure as Kafka's `LogValidator` does through `DefaultRecord.readFrom` / `readPartiallyFrom`,
//! without materialising records. Used on append (every record checked) and on reads that need record
//! timestamps (a timestamp lookup stops at the record it looks for).
//!
//! Memory is bounded by the decoders' buffers, never by a count or length the batch declares: nothing is
//! pre-allocated from a declared count, keys, values and headers are skipped, not copied, and the decompressed
//! bytes read are bounded by the caller's budget.
//!
//! What is checked, and the error (Kafka: `InvalidRecordException` → INVALID_RECORD, `CorruptRecordException` and
//! payloads that do not decompress → CORRUPT_MESSAGE; the decompression bound → MESSAGE_TOO_LARGE):
//!
//! | check | error |
//! |-------|-------|
//! | payload decodes as the batch's codec | [`Error::CorruptRecord`] |
//! | record length > 0 and consumed exactly by the record's fields | [`Error::InvalidRecord`] |
//! | attributes, timestamp delta (varlong), offset delta (varint) present | [`Error::InvalidRecord`] |
//! | on append, offset delta = the record's index (Kafka would recompress with new offsets; strata never rewrites a client's batch); on reads, strictly increasing deltas (the log cleaner's rewritten batches keep their records' offsets) | [`Error::InvalidRecord`] |
//! | key and value length -1 (null) or within the record | [`Error::InvalidRecord`] |
//! | header count >= 0 and <= the bytes left; each header key non-null, value -1 or within the record | [`Error::InvalidRecord`] |
//! | as many records as `recordsCount`, and no bytes after the last one | [`Error::InvalidRecord`] |
//! | decompressed bytes within the budget | [`Error::DecompressedTooLarge`] |
//!
//! Record attributes are unused in the v2 format and, as in Kafka, not checked.
use std::io::{self, BufRead, Read};
use std::ops::ControlFlow;

use super::batch::{RecordBatch, RECORD_BATCH_OVERHEAD};
use super::compression::{self, Compression};
use super::varint;
use crate::{Error, Result};

/// What the walker reports of each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecordMeta {
    /// The record's offset delta (equal to its index in the batch once walked).
    pub(crate) offset_delta: i32,
    /// The record's timestamp delta from the batch's base timestamp.
    pub(crate) timestamp_delta: i64,
    /// Whether the record has a key (not null).
    pub(crate) has_key: bool,
}

/// Walks every record of `batch`, checking its structure, and calls `visit` on each; `visit` may stop the walk
/// early (the rest of the batch is then not checked). `budget` is the most decompressed bytes a compressed batch
/// may yield; it is decreased by what was read. Uncompressed batches are bounded by their own size and leave the
/// budget alone.
pub(crate) fn walk(
    batch: &RecordBatch,
    budget: &mut usize,
    exact_offsets: bool,
    mut visit: impl FnMut(RecordMeta) -> ControlFlow<()>,
) -> Result<()> {
    let codec = batch.compression();
    let data = &batch.as_bytes()[RECORD_BATCH_OVERHEAD..];
    let ctx = Ctx {
        codec,
        base_offset: batch.base_offset(),
        count: batch.records_count(),
    };
    if codec == Compression::None {
        return walk_uncompressed(data, ctx, exact_offsets, &mut visit);
    }
    let src = compression::decompressed(codec, data, *budget).map_err(|e| ctx.io(e, *budget))?;
    let mut r = Reader::new(src, ctx, *budget, exact_offsets);
    let res = r.walk(&mut visit);
    *budget -= r.read.min(*budget);
    res
}

/// [`walk`] of an uncompressed batch: every record lies whole in `data`, so each is parsed from the slice by
/// [`record_in_window`] in one tight loop (this runs for every record of every plain produce). At the first
/// record it refuses, or at bytes after the last, the byte-wise [`Reader`] takes over from that record and names
/// the fault, exactly as a walk through the reader alone would.
fn walk_uncompressed(
    data: &[u8],
    ctx: Ctx,
    exact_offsets: bool,
    visit: &mut impl FnMut(RecordMeta) -> ControlFlow<()>,
) -> Result<()> {
    let mut order = DeltaOrder::first(exact_offsets);
    let mut pos = 0;
    for index in 0..ctx.count {
        let Some((meta, used)) = record_in_window(&data[pos..], index, usize::MAX, order) else {
            return Reader::resume(&data[pos..], ctx, order, index).walk(visit);
        };
        pos += used;
        order = order.after(meta.offset_delta);
        if visit(meta).is_break() {
            return Ok(());
        }
    }
    if pos != data.len() {
        return Reader::resume(&data[pos..], ctx, order, ctx.count).walk(visit);
    }
    Ok(())
}

/// The record-level reads of a batch: they walk its records.
impl RecordBatch {
    /// Kafka's timestamp lookup inside this batch: the first record at or after `start_offset` whose timestamp is
    /// at least `ts`, as (offset, timestamp). LogAppendTime batches answer their first such offset with the batch's max
    /// timestamp (every record carries it); other batches are walked record by record (compressed ones decompressed
    /// by the bounded streaming walker, at most [`super::MAX_DECOMPRESSED_RECORDS_BYTES`]), since Kafka answers
    /// with the exact record too. A batch whose records cannot be read (e.g. written unvalidated by an older
    /// strata) is a [`Error::CorruptRecord`] naming the batch.
    pub fn find_timestamp(&self, ts: i64, start_offset: i64) -> Result<Option<(i64, i64)>> {
        if self.max_timestamp() < ts || self.last_offset() < start_offset {
            return Ok(None);
        }
        if self.timestamp_type() == crate::TimestampType::LogAppendTime {
            return Ok(Some((
                self.base_offset().max(start_offset),
                self.max_timestamp(),
            )));
        }
        let (base_offset, base_ts) = (self.base_offset(), self.first_timestamp());
        let mut found = None;
        let mut budget = super::MAX_DECOMPRESSED_RECORDS_BYTES;
        walk(self, &mut budget, false, |r| {
            let offset = base_offset.wrapping_add(r.offset_delta as i64);
            let timestamp = base_ts.wrapping_add(r.timestamp_delta);
            if offset >= start_offset && timestamp >= ts {
                found = Some((offset, timestamp));
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })
        .map_err(|e| Error::CorruptRecord {
            reason: format!("timestamp lookup cannot read the batch at offset {base_offset}: {e}"),
        })?;
        Ok(found)
    }

    /// [`RecordBatch::validate_for_append`] alone, for the per-batch validation benchmark
    /// (`benches/validate.rs`): the record checks of one batch with a fresh decompression budget.
    #[doc(hidden)]
    pub fn validate_records_for_bench(&self) -> Result<()> {
        let mut budget = super::MAX_DECOMPRESSED_RECORDS_BYTES;
        self.validate_for_append(&mut budget).map(|_| ())
    }

    /// Checks what Kafka's `LogValidator` checks before a leader append: the record count matches the offset
    /// delta, and every record is well formed (compressed batches are decompressed for this, streaming; see
    /// the module doc for the checks). `budget` is the most decompressed bytes still allowed for this append
    /// (see [`super::MAX_DECOMPRESSED_RECORDS_BYTES`]); it is decreased by what this batch used.
    ///
    /// Returns the records' own max timestamp (Kafka's `LogValidator` computes it the same way, starting from
    /// `NO_TIMESTAMP` = -1, in the same walk) and the offset delta of the first record holding it; the caller
    /// writes it into CreateTime batches whose header disagrees ([`super::edit::set_create_time_max_timestamp`]).
    pub(crate) fn validate_for_append(&self, budget: &mut usize) -> Result<RecordsMaxTimestamp> {
        let count = self.records_count();
        if count == 0 || count as i64 != self.last_offset_delta() as i64 + 1 {
            return Err(Error::InvalidRecord {
                reason: format!(
                    "records count {count} does not match last offset delta {} (expected {})",
                    self.last_offset_delta(),
                    self.last_offset_delta() as i64 + 1
                ),
            });
        }
        let base = self.first_timestamp();
        let mut max = RecordsMaxTimestamp {
            max_timestamp: NO_TIMESTAMP,
            offset_delta: self.last_offset_delta(),
            first_keyless_offset_delta: None,
            min_timestamp: None,
        };
        walk(self, budget, true, |r| {
            if !r.has_key && max.first_keyless_offset_delta.is_none() {
                max.first_keyless_offset_delta = Some(r.offset_delta);
            }
            let ts = base.wrapping_add(r.timestamp_delta);
            if ts > max.max_timestamp {
                max.max_timestamp = ts;
                max.offset_delta = r.offset_delta;
            }
            // Kafka's validateTimestamp skips records without a timestamp (NO_TIMESTAMP).
            if ts != NO_TIMESTAMP && max.min_timestamp.is_none_or(|(min, _)| ts < min) {
                max.min_timestamp = Some((ts, r.offset_delta));
            }
            ControlFlow::Continue(())
        })?;
        Ok(max)
    }
}

/// Kafka's `RecordBatch.NO_TIMESTAMP`.
const NO_TIMESTAMP: i64 = -1;

/// The max timestamp of a batch's records as computed from the records themselves (not the header's claim), by
/// [`RecordBatch::validate_for_append`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecordsMaxTimestamp {
    /// Max of `firstTimestamp + timestampDelta` over the records, or -1 if none is above -1 (Kafka's
    /// `NO_TIMESTAMP` start).
    pub(crate) max_timestamp: i64,
    /// Offset delta of the first record holding `max_timestamp` (the last offset delta if none is above -1).
    pub(crate) offset_delta: i32,
    /// Offset delta of the first record without a key, if any (a compacted log refuses the batch).
    pub(crate) first_keyless_offset_delta: Option<i32>,
    /// The smallest record timestamp other than -1 (`NO_TIMESTAMP`) and the offset delta of the first record
    /// holding it; with `max_timestamp` it bounds every record's timestamp (`message.timestamp.before.max.ms`).
    pub(crate) min_timestamp: Option<(i64, i32)>,
}

#[derive(Clone, Copy)]
struct Ctx {
    codec: Compression,
    base_offset: i64,
    count: i32,
}

impl Ctx {
    fn io(&self, e: io::Error, budget: usize) -> Error {
        if e.kind() == io::ErrorKind::OutOfMemory {
            return Error::DecompressedTooLarge {
                base_offset: self.base_offset,
                limit: budget,
            };
        }
        Error::CorruptRecord {
            reason: format!(
                "cannot decompress the {:?} records of the batch at offset {}: {e}",
                self.codec, self.base_offset
            ),
        }
    }
    fn invalid(&self, index: i32, what: impl std::fmt::Display) -> Error {
        Error::InvalidRecord {
            reason: format!(
                "record {index} of {} in the batch at offset {}: {what}",
                self.count, self.base_offset
            ),
        }
    }
}

/// Parses one whole, well-formed record (length prefix included) at the start of `window`: its meta and the bytes
/// it takes, or `None` if it does not fit in `window`, exceeds `budget_left`, or breaks any rule (the byte-wise
/// reader then says which). Accepts exactly what [`Reader::record`]'s byte-wise path accepts.
#[inline(always)]
fn record_in_window(
    window: &[u8],
    index: i32,
    budget_left: usize,
    order: DeltaOrder,
) -> Option<(RecordMeta, usize)> {
    record_spans_in_window(window, index, budget_left, order).map(|s| (s.meta, s.used))
}

/// Where a record's fields lie in the window [`record_spans_in_window`] parsed (positions in the window).
#[derive(Clone, Copy, Debug)]
struct RecordSpans {
    meta: RecordMeta,
    /// Bytes the record takes, its length prefix included.
    used: usize,
    /// Where the attributes byte is (the record body starts there).
    body_start: usize,
    /// Where the fields after the timestamp delta start (offset delta onwards).
    after_timestamp: usize,
    /// The key's bytes, `None` for a null key.
    key: Option<(usize, usize)>,
    /// The value's bytes, `None` for a null value.
    value: Option<(usize, usize)>,
}

/// [`record_in_window`] with the positions of the record's fields. Inlined into its two callers: it runs once
/// per record on every append.
#[inline(always)]
fn record_spans_in_window(
    window: &[u8],
    index: i32,
    budget_left: usize,
    order: DeltaOrder,
) -> Option<RecordSpans> {
    let (len, n) = varint::read_varint(window)?;
    if len <= 0 || len as usize > budget_left {
        return None;
    }
    let body = window.get(n..n + len as usize)?;
    let mut pos = 1; // attributes
    let (timestamp_delta, m) = varint::read_varlong(body.get(pos..)?)?;
    pos += m;
    let after_timestamp = n + pos;
    let (offset_delta, m) = varint::read_varint(body.get(pos..)?)?;
    pos += m;
    if !order.accepts(offset_delta, index) {
        return None;
    }
    let key = nullable_span(body, &mut pos, n)?;
    let value = nullable_span(body, &mut pos, n)?;
    let has_key = key.is_some();
    let (headers, m) = varint::read_varint(body.get(pos..)?)?;
    pos += m;
    if headers < 0 || headers as usize > body.len() - pos {
        return None;
    }
    for _ in 0..headers {
        let (key_len, m) = varint::read_varint(body.get(pos..)?)?;
        pos += m;
        if key_len < 0 {
            return None;
        }
        pos = pos
            .checked_add(key_len as usize)
            .filter(|&e| e <= body.len())?;
        nullable_span(body, &mut pos, n)?;
    }
    if pos != body.len() {
        return None;
    }
    Some(RecordSpans {
        meta: RecordMeta {
            offset_delta,
            timestamp_delta,
            has_key,
        },
        used: n + len as usize,
        body_start: n,
        after_timestamp,
        key,
        value,
    })
}

/// The span of the nullable field (varint length, -1 for null, then the bytes) at `*pos` of `body`, `None` when
/// null, as positions shifted by `shift` (where `body` starts in the window); moves `*pos` past it. `None` (outer)
/// for a length below -1 or bytes running past `body`.
#[inline(always)]
fn nullable_span(body: &[u8], pos: &mut usize, shift: usize) -> Option<Option<(usize, usize)>> {
    let (l, m) = varint::read_varint(body.get(*pos..)?)?;
    *pos += m;
    if l < -1 {
        return None;
    }
    if l >= 0 {
        let start = *pos;
        *pos = pos.checked_add(l as usize).filter(|&e| e <= body.len())?;
        return Some(Some((shift + start, shift + *pos)));
    }
    Some(None)
}

/// One record of a batch with its bytes, for the log cleaner (see [`walk_records`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordView<'a> {
    /// Offset and timestamp deltas.
    pub(crate) meta: RecordMeta,
    /// The record's attributes byte.
    pub(crate) attributes: u8,
    /// The record's fields after its timestamp delta (offset delta, key, value, headers), as stored.
    pub(crate) after_timestamp: &'a [u8],
    /// The whole record as stored, its length prefix included.
    pub(crate) bytes: &'a [u8],
    /// The key, `None` when null.
    pub(crate) key: Option<&'a [u8]>,
    /// Whether the value is non-null (a null value is a tombstone).
    pub(crate) has_value: bool,
    /// The value's length (0 when null).
    pub(crate) value_len: usize,
}

/// Walks the records of `batch` like [`walk`], giving each record's bytes and key: a compressed batch is first
/// decompressed into `scratch` (at most `budget` bytes, [`Error::DecompressedTooLarge`] beyond). The fields are
/// checked by the same rules as [`walk`]; a record that breaks one is reported with [`walk`]'s error.
pub(crate) fn walk_records(
    batch: &RecordBatch,
    budget: usize,
    scratch: &mut Vec<u8>,
    mut visit: impl FnMut(RecordView<'_>) -> ControlFlow<()>,
) -> Result<()> {
    let codec = batch.compression();
    let raw = &batch.as_bytes()[RECORD_BATCH_OVERHEAD..];
    let data: &[u8] = if codec == Compression::None {
        raw
    } else {
        let ctx = Ctx {
            codec,
            base_offset: batch.base_offset(),
            count: batch.records_count(),
        };
        scratch.clear();
        let src = compression::decompressed(codec, raw, budget).map_err(|e| ctx.io(e, budget))?;
        let read = src
            .take(budget as u64 + 1)
            .read_to_end(scratch)
            .map_err(|e| ctx.io(e, budget))?;
        if read > budget {
            return Err(Error::DecompressedTooLarge {
                base_offset: batch.base_offset(),
                limit: budget,
            });
        }
        scratch
    };
    let mut pos = 0usize;
    let mut order = DeltaOrder::Increasing(-1);
    for index in 0..batch.records_count() {
        let Some(s) = record_spans_in_window(&data[pos..], index, usize::MAX, order) else {
            return Err(authoritative_error(batch, budget));
        };
        let rec = &data[pos..pos + s.used];
        let view = RecordView {
            meta: s.meta,
            attributes: rec[s.body_start],
            after_timestamp: &rec[s.after_timestamp..],
            bytes: rec,
            key: s.key.map(|(a, b)| &rec[a..b]),
            has_value: s.value.is_some(),
            value_len: s.value.map_or(0, |(a, b)| b - a),
        };
        pos += s.used;
        order = order.after(s.meta.offset_delta);
        if visit(view).is_break() {
            return Ok(());
        }
    }
    if pos != data.len() {
        return Err(authoritative_error(batch, budget));
    }
    Ok(())
}

/// The byte-wise walker's error for a batch the fast parse refused.
fn authoritative_error(batch: &RecordBatch, budget: usize) -> Error {
    let mut budget = budget;
    match walk(batch, &mut budget, false, |_| ControlFlow::Continue(())) {
        Err(e) => e,
        Ok(()) => Error::CorruptRecord {
            reason: format!(
                "the records of the batch at offset {} cannot be parsed",
                batch.base_offset()
            ),
        },
    }
}

/// What offset deltas a walk accepts.
#[derive(Clone, Copy, Debug)]
enum DeltaOrder {
    /// Each record's offset delta is its index (what producers send; checked on append).
    Exact,
    /// Strictly increasing deltas above the one held (a batch the log cleaner rewrote keeps its records'
    /// offsets, so gaps appear).
    Increasing(i32),
}

impl DeltaOrder {
    /// The order before a batch's first record.
    fn first(exact_offsets: bool) -> Self {
        if exact_offsets {
            DeltaOrder::Exact
        } else {
            DeltaOrder::Increasing(-1)
        }
    }
    fn accepts(self, delta: i32, index: i32) -> bool {
        match self {
            DeltaOrder::Exact => delta == index,
            DeltaOrder::Increasing(prev) => delta > prev,
        }
    }
    fn after(self, delta: i32) -> Self {
        match self {
            DeltaOrder::Exact => self,
            DeltaOrder::Increasing(_) => DeltaOrder::Increasing(delta),
        }
    }
}

struct Reader<R> {
    order: DeltaOrder,
    src: R,
    ctx: Ctx,
    /// Decompressed bytes read so far.
    read: usize,
    /// The most bytes that may be read.
    limit: usize,
    /// Index of the record being read.
    index: i32,
    /// Bytes left in the record being read.
    left: usize,
}

impl<R: BufRead> Reader<R> {
    fn new(src: R, ctx: Ctx, limit: usize, exact_offsets: bool) -> Self {
        Self {
            order: DeltaOrder::first(exact_offsets),
            src,
            ctx,
            read: 0,
            limit,
            index: 0,
            left: 0,
        }
    }

    /// A reader of the records from record `index` on, `src` starting at that record, `order` what the records
    /// before it left (an uncompressed batch, so no decompression budget).
    fn resume(src: R, ctx: Ctx, order: DeltaOrder, index: i32) -> Self {
        Self {
            order,
            index,
            ..Self::new(src, ctx, usize::MAX, false)
        }
    }

    /// Reads the records from `self.index` on (the first, for a new reader), then checks that nothing follows.
    fn walk(&mut self, visit: &mut impl FnMut(RecordMeta) -> ControlFlow<()>) -> Result<()> {
        for index in self.index..self.ctx.count {
            self.index = index;
            let meta = self.record()?;
            if visit(meta).is_break() {
                return Ok(());
            }
        }
        match self.byte()? {
            None => Ok(()),
            Some(_) => Err(Error::InvalidRecord {
                reason: format!(
                    "bytes follow the last of the {} records of the batch at offset {} (incorrect declared batch size)",
                    self.ctx.count, self.ctx.base_offset
                ),
            }),
        }
    }

    fn record(&mut self) -> Result<RecordMeta> {
        // Fast path: the whole record is in the decoder's buffer (always, for uncompressed batches) and well
        // formed. Anything else — a record straddling buffers, or any fault — goes the byte-wise way below, which
        // is authoritative for errors.
        let window = self
            .src
            .fill_buf()
            .map_err(|e| self.ctx.io(e, self.limit))?;
        let budget_left = self.limit.saturating_sub(self.read);
        if let Some((meta, used)) = record_in_window(window, self.index, budget_left, self.order) {
            self.src.consume(used);
            self.read += used;
            self.order = self.order.after(meta.offset_delta);
            return Ok(meta);
        }
        let len = match self.varint_outside()? {
            Some(len) => len,
            None => {
                return Err(self.ctx.invalid(
                    self.index,
                    format!(
                        "premature end: the batch declares {} records but holds {}",
                        self.ctx.count, self.index
                    ),
                ))
            }
        };
        if len <= 0 {
            return Err(self
                .ctx
                .invalid(self.index, format!("record length {len} is not positive")));
        }
        if len as usize > self.limit.saturating_sub(self.read) {
            return Err(Error::DecompressedTooLarge {
                base_offset: self.ctx.base_offset,
                limit: self.limit,
            });
        }
        self.left = len as usize;
        let _attributes = self.field_byte("attributes")?;
        let timestamp_delta = self.field_varlong("timestamp delta")?;
        let offset_delta = self.field_varint("offset delta")?;
        if !self.order.accepts(offset_delta, self.index) {
            return Err(self.ctx.invalid(
                self.index,
                format!(
                    "offset delta {offset_delta} is not the record's position {}",
                    self.index
                ),
            ));
        }
        let has_key = self.skip_nullable("key")?;
        self.skip_nullable("value")?;
        let headers = self.field_varint("header count")?;
        if headers < 0 {
            return Err(self
                .ctx
                .invalid(self.index, format!("header count {headers} is negative")));
        }
        if headers as usize > self.left {
            return Err(self.ctx.invalid(
                self.index,
                format!(
                    "header count {headers} is larger than the {} bytes left in the record",
                    self.left
                ),
            ));
        }
        for h in 0..headers {
            let key_len = self.field_varint("header key length")?;
            if key_len < 0 {
                return Err(self.ctx.invalid(
                    self.index,
                    format!("header {h} has key length {key_len} (a header key must not be null)"),
                ));
            }
            self.skip_field(key_len as usize, "header key")?;
            self.skip_nullable("header value")?;
        }
        if self.left != 0 {
            return Err(self.ctx.invalid(
                self.index,
                format!(
                    "record length {len} leaves {} bytes unread after the headers",
                    self.left
                ),
            ));
        }
        Ok(RecordMeta {
            offset_delta,
            timestamp_delta,
            has_key,
        })
    }

    /// One byte of the stream, `None` at its end.
    fn byte(&mut self) -> Result<Option<u8>> {
        let buf = match self.src.fill_buf() {
            Ok(buf) => buf,
            Err(e) => return Err(self.ctx.io(e, self.limit)),
        };
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        self.src.consume(1);
        self.read += 1;
        Ok(Some(b))
    }

    /// A varint between records (not counted against a record's length); `None` at the end of the stream.
    fn varint_outside(&mut self) -> Result<Option<i32>> {
        let mut v = 0u32;
        for i in 0..5 {
            let Some(b) = self.byte()? else {
                return if i == 0 {
                    Ok(None)
                } else {
                    Err(self
                        .ctx
                        .invalid(self.index, "the record length is cut short"))
                };
            };
            v |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(Some(((v >> 1) as i32) ^ -((v & 1) as i32)));
            }
        }
        Err(self
            .ctx
            .invalid(self.index, "the record length is not a varint"))
    }

    fn field_byte(&mut self, what: &str) -> Result<u8> {
        if self.left == 0 {
            return Err(self.past_end(what));
        }
        match self.byte()? {
            Some(b) => {
                self.left -= 1;
                Ok(b)
            }
            None => Err(self.cut_short(what)),
        }
    }

    fn field_unsigned(&mut self, max_len: usize, what: &str) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..max_len {
            let b = self.field_byte(what)?;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self
            .ctx
            .invalid(self.index, format!("{what} is not a varint")))
    }

    fn field_varint(&mut self, what: &str) -> Result<i32> {
        let v = self.field_unsigned(5, what)? as u32;
        Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    fn field_varlong(&mut self, what: &str) -> Result<i64> {
        let v = self.field_unsigned(10, what)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A length-prefixed field that may be null (-1): skipped. Returns whether it was not null.
    fn skip_nullable(&mut self, what: &str) -> Result<bool> {
        let len = self.field_varint(what)?;
        match len {
            -1 => Ok(false),
            len if len < -1 => Err(self
                .ctx
                .invalid(self.index, format!("{what} length {len} is negative"))),
            len => self.skip_field(len as usize, what).map(|()| true),
        }
    }

    fn skip_field(&mut self, len: usize, what: &str) -> Result<()> {
        if len > self.left {
            return Err(self.ctx.invalid(
                self.index,
                format!(
                    "{what} of {len} bytes runs past the {} bytes left in the record",
                    self.left
                ),
            ));
        }
        let mut n = len;
        while n > 0 {
            let avail = match self.src.fill_buf() {
                Ok(buf) => buf.len(),
                Err(e) => return Err(self.ctx.io(e, self.limit)),
            };
            if avail == 0 {
                return Err(self.cut_short(what));
            }
            let step = avail.min(n);
            self.src.consume(step);
            n -= step;
        }
        self.read += len;
        self.left -= len;
        Ok(())
    }

    fn past_end(&self, what: &str) -> Error {
        self.ctx.invalid(
            self.index,
            format!("{what} runs past the end of the record"),
        )
    }

    fn cut_short(&self, what: &str) -> Error {
        self.ctx.invalid(
            self.index,
            format!("the records end inside its {what} (premature end of the batch)"),
        )
    }
}

#[cfg(test)]
mod tests;
