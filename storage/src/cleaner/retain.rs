//! What one batch becomes when its segment is cleaned (Kafka's `MemoryRecords.filterTo` with the cleaner's
//! `RecordFilter`): copied byte for byte when every record stays, re-encoded with its codec when some go, kept as
//! an empty batch or dropped when none stay.
use std::collections::HashMap;
use std::ops::ControlFlow;

use super::offset_map::OffsetMap;
use super::transactions::TxnTracker;
use crate::log::LastRecord;
use crate::record::{
    compress, varint, walk_records, Compression, DELETE_HORIZON_FLAG, RECORD_BATCH_OVERHEAD,
};
use crate::segment::BatchMeta;
use crate::{RecordBatch, Result, TimestampType};

/// What the cleaner decides per batch, and the tallies for its stats.
pub(crate) struct BatchFilter<'a> {
    pub(crate) map: &'a OffsetMap,
    /// The time of the cleaning: a batch's delete horizon at or before it has passed.
    pub(crate) now_ms: i64,
    /// `delete.retention.ms`: how long after a pass first finds tombstones (or a removable marker) in a batch
    /// they are kept (the batch's delete horizon).
    pub(crate) delete_retention_ms: i64,
    /// Kafka's `lastRecordsOfActiveProducers`.
    pub(crate) last_records: &'a HashMap<i64, LastRecord>,
    /// Decompression budget per batch.
    pub(crate) budget: usize,
}

/// Counters of one cleaning.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FilterTally {
    pub(crate) records_read: u64,
    pub(crate) records_retained: u64,
    pub(crate) batches_copied: u64,
    pub(crate) batches_rewritten: u64,
    pub(crate) batches_emptied: u64,
    pub(crate) batches_dropped: u64,
    /// Records without a key (dropped, Kafka's `invalidMessage`).
    pub(crate) invalid_records: u64,
}

/// A kept record's place in the batch's (decompressed) records.
#[derive(Clone, Copy)]
struct Kept {
    start: usize,
    len: usize,
    /// Where its fields after the timestamp delta start, from `start`.
    after_timestamp: usize,
    attributes: u8,
    timestamp_delta: i64,
    offset_delta: i32,
}

/// Scratch buffers reused across batches.
#[derive(Default)]
pub(crate) struct Scratch {
    decompressed: Vec<u8>,
    records: Vec<u8>,
    kept: Vec<Kept>,
}

fn meta_of(batch: &RecordBatch) -> BatchMeta {
    BatchMeta {
        size: batch.size_in_bytes(),
        last_offset: batch.last_offset(),
        max_timestamp: batch.max_timestamp(),
        offset_of_max_timestamp: batch.base_offset() + batch.offset_delta_of_max_timestamp() as i64,
    }
}

impl BatchFilter<'_> {
    /// Kafka's `shouldRetainRecord`: past the mapped range, or the latest of its key and either a value or a
    /// tombstone whose batch's delete horizon (if stamped) has not passed.
    fn keep(
        &self,
        offset: i64,
        key: Option<&[u8]>,
        has_value: bool,
        delete_horizon: Option<i64>,
        tally: &mut FilterTally,
    ) -> bool {
        if offset > self.map.latest_offset() {
            return true;
        }
        let Some(key) = key else {
            tally.invalid_records += 1;
            return false;
        };
        let latest = self.map.get(key).is_none_or(|found| offset >= found);
        latest && (has_value || delete_horizon.is_none_or(|h| self.now_ms < h))
    }

    /// Kafka's `isBatchLastRecordOfProducer`: the batch holding a known producer's last sequence (its last data
    /// batch), or without one a marker of its current epoch (fencing), is kept, empty if need be.
    fn is_last_of_producer(&self, batch: &RecordBatch) -> bool {
        batch.producer_id() >= 0
            && self
                .last_records
                .get(&batch.producer_id())
                .is_some_and(|last| match last.last_data_offset {
                    Some(offset) => batch.last_offset() == offset,
                    None => batch.is_control() && batch.producer_epoch() == last.producer_epoch,
                })
    }

    /// Walks the records of `batch` and notes in `scratch.kept` those that stay (every record of a control
    /// batch; else Kafka's `shouldRetainRecord`). Returns whether a kept record is a tombstone.
    fn retained_records(
        &self,
        batch: &RecordBatch,
        scratch: &mut Scratch,
        tally: &mut FilterTally,
    ) -> Result<bool> {
        let (base, control, horizon) = (
            batch.base_offset(),
            batch.is_control(),
            batch.delete_horizon_ms(),
        );
        let mut tombstones = false;
        let mut first_ptr = None;
        let kept = &mut scratch.kept;
        walk_records(batch, self.budget, &mut scratch.decompressed, |r| {
            let origin = *first_ptr.get_or_insert(r.bytes.as_ptr() as usize);
            let offset = base + r.meta.offset_delta as i64;
            if control || self.keep(offset, r.key, r.has_value, horizon, tally) {
                tombstones |= !r.has_value;
                kept.push(Kept {
                    start: r.bytes.as_ptr() as usize - origin,
                    len: r.bytes.len(),
                    after_timestamp: r.after_timestamp.as_ptr() as usize
                        - r.bytes.as_ptr() as usize,
                    attributes: r.attributes,
                    timestamp_delta: r.meta.timestamp_delta,
                    offset_delta: r.meta.offset_delta,
                });
            }
            ControlFlow::Continue(())
        })?;
        Ok(tombstones)
    }

    /// Appends what `batch` becomes to `out` (and its meta to `metas`): Kafka's `checkBatchRetention` and
    /// `MemoryRecords.filterTo`. `txns` is walked in offset order.
    pub(crate) fn filter(
        &self,
        batch: &RecordBatch,
        txns: &mut TxnTracker<'_>,
        out: &mut Vec<u8>,
        metas: &mut Vec<BatchMeta>,
        scratch: &mut Scratch,
        tally: &mut FilterTally,
    ) -> Result<()> {
        tally.records_read += batch.records_count().max(0) as u64;
        let control = batch.is_control();
        // Data of an aborted transaction goes at once; a marker whose transaction has no data left goes once
        // its delete horizon has passed.
        let can_discard = if control {
            txns.on_control_batch_read(batch)
        } else {
            txns.on_batch_read(batch)
        };
        let horizon = batch.delete_horizon_ms();
        let discard_records = if control {
            can_discard && horizon.is_some_and(|h| h <= self.now_ms)
        } else {
            can_discard
        };
        let retain_empty = self.is_last_of_producer(batch);
        if discard_records && !retain_empty {
            tally.batches_dropped += 1;
            return Ok(());
        }
        scratch.kept.clear();
        let tombstones = !discard_records && self.retained_records(batch, scratch, tally)?;
        tally.records_retained += scratch.kept.len() as u64;
        if scratch.kept.is_empty() {
            // Kafka's BatchRetention.RETAIN_EMPTY: the last batch of a producer keeps its sequence and epoch.
            if retain_empty {
                tally.batches_emptied += 1;
                metas.push(write_empty_batch(batch, out));
            } else {
                tally.batches_dropped += 1;
            }
            return Ok(());
        }
        // KIP-534: the first pass that keeps a tombstone (or a removable marker) in a batch stamps its delete
        // horizon in the batch, so it survives restarts and later passes.
        let stamp = (tombstones || (control && can_discard)) && horizon.is_none();
        if !stamp && scratch.kept.len() as i64 == batch.records_count() as i64 {
            tally.batches_copied += 1;
            out.extend_from_slice(batch.as_bytes());
            metas.push(meta_of(batch));
            return Ok(());
        }
        let horizon = if stamp {
            Some(self.now_ms.saturating_add(self.delete_retention_ms.max(0)))
        } else {
            horizon
        };
        tally.batches_rewritten += 1;
        let data: &[u8] = if batch.compression() == Compression::None {
            &batch.as_bytes()[RECORD_BATCH_OVERHEAD..]
        } else {
            &scratch.decompressed
        };
        let meta = rewrite(
            batch,
            data,
            &scratch.kept,
            horizon,
            &mut scratch.records,
            out,
        )?;
        metas.push(meta);
        Ok(())
    }
}

/// Kafka's `buildRetainedRecordsInto`: the kept records in a batch with the original's header fields, base offset
/// and last offset delta, compressed with the original codec. Its base timestamp is the delete horizon when there
/// is one (attributes bit 6 set; Kafka's `MemoryRecordsBuilder` with `deleteHorizonMs`), else the first kept
/// record's (LogAppendTime batches: the append time); record timestamp deltas are relative to it, so every
/// record keeps its timestamp (`baseTimestamp + delta`).
fn rewrite(
    batch: &RecordBatch,
    data: &[u8],
    kept: &[Kept],
    delete_horizon: Option<i64>,
    records: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<BatchMeta> {
    let log_append = batch.timestamp_type() == TimestampType::LogAppendTime;
    let old_base_ts = batch.first_timestamp();
    let timestamp_of = |k: &Kept| {
        if log_append {
            batch.max_timestamp()
        } else {
            old_base_ts.wrapping_add(k.timestamp_delta)
        }
    };
    let new_base_ts = delete_horizon.unwrap_or_else(|| timestamp_of(&kept[0]));
    let (mut max_ts, mut max_delta) = (i64::MIN, kept[0].offset_delta);
    records.clear();
    let mut body = Vec::with_capacity(16);
    for k in kept {
        let rec = &data[k.start..k.start + k.len];
        let ts = timestamp_of(k);
        if !log_append && ts > max_ts {
            max_ts = ts;
            max_delta = k.offset_delta;
        }
        let delta = ts.wrapping_sub(new_base_ts);
        if delta == k.timestamp_delta {
            records.extend_from_slice(rec);
            continue;
        }
        body.clear();
        body.push(k.attributes);
        varint::write_varlong(&mut body, delta);
        let rest = &rec[k.after_timestamp..];
        varint::write_varint(records, (body.len() + rest.len()) as i32);
        records.extend_from_slice(&body);
        records.extend_from_slice(rest);
    }
    if log_append {
        max_ts = batch.max_timestamp();
        max_delta = 0;
    }
    let start = out.len();
    let header = &batch.as_bytes()[..RECORD_BATCH_OVERHEAD];
    out.extend_from_slice(header);
    if delete_horizon.is_some() {
        out[start + 22] |= DELETE_HORIZON_FLAG;
    }
    out[start + 27..start + 35].copy_from_slice(&new_base_ts.to_be_bytes());
    out[start + 35..start + 43].copy_from_slice(&max_ts.to_be_bytes());
    out[start + 57..start + 61].copy_from_slice(&(kept.len() as i32).to_be_bytes());
    compress(batch.compression(), records, out).map_err(|e| crate::Error::CorruptRecord {
        reason: format!(
            "cannot re-encode the {:?} batch at offset {}: {e}",
            batch.compression(),
            batch.base_offset()
        ),
    })?;
    finish_header(out, start);
    Ok(BatchMeta {
        size: out.len() - start,
        last_offset: batch.last_offset(),
        max_timestamp: max_ts,
        offset_of_max_timestamp: batch.base_offset() + max_delta as i64,
    })
}

/// Kafka's `writeEmptyHeader`: a header without records keeping the base offset, last offset delta, producer
/// fields, leader epoch, timestamp type and transactional/control flags; first and max timestamp = the batch's
/// max timestamp; no codec, no delete horizon. Returns its meta.
fn write_empty_batch(batch: &RecordBatch, out: &mut Vec<u8>) -> BatchMeta {
    let start = out.len();
    out.extend_from_slice(&batch.as_bytes()[..RECORD_BATCH_OVERHEAD]);
    let attrs = batch.attributes() as u16 & !(0x07 | DELETE_HORIZON_FLAG as u16);
    out[start + 21..start + 23].copy_from_slice(&attrs.to_be_bytes());
    out[start + 27..start + 35].copy_from_slice(&batch.max_timestamp().to_be_bytes());
    out[start + 57..start + 61].copy_from_slice(&0i32.to_be_bytes());
    finish_header(out, start);
    BatchMeta {
        size: out.len() - start,
        last_offset: batch.last_offset(),
        max_timestamp: batch.max_timestamp(),
        offset_of_max_timestamp: batch.last_offset(),
    }
}

/// Writes the batch length and CRC of the batch at `out[start..]`.
fn finish_header(out: &mut [u8], start: usize) {
    let len = (out.len() - start - 12) as i32;
    out[start + 8..start + 12].copy_from_slice(&len.to_be_bytes());
    let crc = crc32c::crc32c(&out[start + 21..]);
    out[start + 17..start + 21].copy_from_slice(&crc.to_be_bytes());
}
