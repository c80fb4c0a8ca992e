//! Kafka's `LogValidator` for a leader append: the checks made on a client's batches before the log's lock is
//! taken ([`analyze_and_validate_records`]), and the in-place assignment of offsets, leader epoch and timestamps
//! under it ([`assign_offsets_and_timestamps`]). The client's bytes are edited where they lie, never decoded and
//! re-encoded.
use bytes::Bytes;

use crate::record::{edit, RecordBatch, RecordsMaxTimestamp};
use crate::segment::BatchMeta;
use crate::{Error, LogConfig, Result, TimestampType, TopicPartition};

/// A client batch that passed validation, with its records' own max timestamp (found in the validation walk).
pub(super) type ValidatedBatch = (RecordBatch, RecordsMaxTimestamp);

/// Where a batch lies in the request's bytes: its position, its size, and (for CreateTime batches) its records'
/// own max timestamp.
pub(super) type BatchPosition = (usize, usize, Option<RecordsMaxTimestamp>);

/// Kafka's `analyzeAndValidateRecords` + `LogValidator`'s record checks, needing no lock: every batch is a valid
/// magic-2 batch (structure, CRC-32C, records walked within the decompression budget), within
/// `max.message.bytes`, with timestamps within the topic's bounds (CreateTime), and with keys on a compacted
/// topic. An empty request is [`Error::InvalidRecord`].
pub(super) fn analyze_and_validate_records(
    tp: &TopicPartition,
    records: &Bytes,
    config: &LogConfig,
    now_ms: i64,
) -> Result<Vec<ValidatedBatch>> {
    let mut batches = Vec::new();
    let mut decompress_budget = crate::record::MAX_DECOMPRESSED_RECORDS_BYTES;
    for batch in RecordBatch::iter(records) {
        let batch = batch?;
        if batch.size_in_bytes() > config.max_message_bytes as usize {
            return Err(Error::RecordTooLarge {
                size: batch.size_in_bytes(),
                max: config.max_message_bytes,
            });
        }
        let records_max = batch.validate_for_append(&mut decompress_budget)?;
        let timestamps_ok = match (batch.timestamp_type(), config.message_timestamp_type) {
            (TimestampType::LogAppendTime, _) => client_log_append_time_ok(&batch, config, now_ms),
            (TimestampType::CreateTime, TimestampType::CreateTime) => {
                timestamps_in_range(&records_max, now_ms, config.timestamp_bounds())
            }
            (TimestampType::CreateTime, TimestampType::LogAppendTime) => true,
        };
        // Kafka's LogValidator: a compacted topic cannot accept a record without a key.
        let keys_ok = !config.cleanup_policy.compacts()
            || batch.is_control()
            || records_max.first_keyless_offset_delta.is_none();
        if !(timestamps_ok && keys_ok) {
            // The error path walks the batch again to name every refused record (KIP-467).
            return Err(super::record_errors::reject(tp, &batch, config, now_ms));
        }
        batches.push((batch, records_max));
    }
    if batches.is_empty() {
        return Err(Error::InvalidRecord {
            reason: "the produce request holds no record batches".into(),
        });
    }
    Ok(batches)
}

/// Each batch's position, size, and (for CreateTime batches) its records' own max timestamp.
pub(super) fn batch_positions(batches: &[ValidatedBatch]) -> Vec<BatchPosition> {
    let mut p = 0;
    batches
        .iter()
        .map(|(b, records_max)| {
            let at = p;
            p += b.size_in_bytes();
            let create_time = b.timestamp_type() == TimestampType::CreateTime;
            (at, b.size_in_bytes(), create_time.then_some(*records_max))
        })
        .collect()
}

/// Kafka's `LogValidator.assignOffsetsNonCompressed` (for any codec: offsets and timestamps live in the header):
/// writes each batch's base offset (from `first_offset` on), partition leader epoch and max timestamp into `buf`
/// in place. Returns each batch's meta for the segment's indexes and the offset after the last batch.
pub(super) fn assign_offsets_and_timestamps(
    buf: &mut [u8],
    positions: &[BatchPosition],
    first_offset: i64,
    leader_epoch: i32,
    now_ms: i64,
    log_append_time: bool,
) -> (Vec<BatchMeta>, i64) {
    let mut metas = Vec::with_capacity(positions.len());
    let mut offset = first_offset;
    for &(pos, size, records_max) in positions {
        let b = &mut buf[pos..pos + size];
        edit::set_base_offset(b, offset);
        edit::set_partition_leader_epoch(b, leader_epoch);
        // Kafka's LogValidator: LogAppendTime stamps the batch with now; a CreateTime batch gets its
        // records' own max timestamp, whatever the header claimed (setMaxTimestamp rewrites it and the CRC).
        let (max_ts, max_delta) = match records_max {
            _ if log_append_time => {
                edit::set_log_append_time(b, now_ms);
                (now_ms, 0)
            }
            Some(m) => {
                edit::set_create_time_max_timestamp(b, m.max_timestamp);
                (m.max_timestamp, m.offset_delta)
            }
            // A batch the client marked LogAppendTime with a real timestamp on a CreateTime topic (the validator
            // range-checked it, as Kafka does) keeps its header.
            None => (i64::from_be_bytes(b[35..43].try_into().expect("8")), 0),
        };
        let last_delta = i32::from_be_bytes(b[23..27].try_into().expect("4")) as i64;
        metas.push(BatchMeta {
            size,
            last_offset: offset + last_delta,
            max_timestamp: max_ts,
            offset_of_max_timestamp: offset + max_delta as i64,
        });
        offset += last_delta + 1;
    }
    (metas, offset)
}

/// Kafka's `LogValidator.validateTimestamp` for a batch the client marked LogAppendTime (attributes bit 3). Every
/// record of such a batch reads as the header's `maxTimestamp` (Kafka's `DefaultRecordBatch`). On a CreateTime
/// topic a record with a timestamp (not -1) is only range-checked, as any CreateTime record; otherwise (a
/// LogAppendTime topic, or no timestamp) the producer set a timestamp type it may not set (INVALID_TIMESTAMP, and
/// nothing of the request is appended).
fn client_log_append_time_ok(batch: &RecordBatch, config: &LogConfig, now_ms: i64) -> bool {
    let ts = batch.max_timestamp();
    if config.message_timestamp_type == TimestampType::CreateTime && ts != -1 {
        let records = RecordsMaxTimestamp {
            max_timestamp: ts,
            offset_delta: 0,
            first_keyless_offset_delta: None,
            min_timestamp: Some((ts, 0)),
        };
        return timestamps_in_range(&records, now_ms, config.timestamp_bounds());
    }
    false
}

/// Kafka's `LogValidator.validateTimestamp` (KIP-937) for a CreateTime topic: every record timestamp (other than
/// -1, none) must lie within `[now - before, now + after]` (`message.timestamp.before.max.ms` /
/// `.after.max.ms`); the records' own smallest and largest timestamps, found in the validation walk, decide it.
fn timestamps_in_range(
    records: &RecordsMaxTimestamp,
    now_ms: i64,
    (before, after): (i64, i64),
) -> bool {
    if let Some((min, _)) = records.min_timestamp {
        if now_ms.saturating_sub(min) > before {
            return false;
        }
    }
    let max = records.max_timestamp;
    !(max != -1 && max.saturating_sub(now_ms) > after)
}
