//! Kafka's per-record validation errors (KIP-467, `LogValidator.validateRecord` + `processRecordErrors`): once a
//! batch is known to hold a record the log refuses (found by the validation walk, which only keeps the first
//! keyless record and the smallest and largest timestamps), the batch is walked again to name every refused record
//! with Kafka's message. Only the error path pays for this second walk.
use std::ops::ControlFlow;

use crate::record::{walk_records, RecordBatch, MAX_DECOMPRESSED_RECORDS_BYTES};
use crate::{Error, LogConfig, RecordError, TimestampType, TopicPartition};

/// Kafka's `RecordBatch.NO_TIMESTAMP`.
const NO_TIMESTAMP: i64 = -1;

/// The error for `batch`, one of whose records the validation refused: every refused record of the batch with
/// Kafka's message (a record's key is checked before its timestamp, one error per record), and Kafka's
/// partition-level message. A batch that cannot be walked again answers the walk's error.
pub(super) fn reject(
    tp: &TopicPartition,
    batch: &RecordBatch,
    config: &LogConfig,
    now_ms: i64,
) -> Error {
    let mut errors = Vec::new();
    let mut timestamp = false;
    let check_keys = config.cleanup_policy.compacts() && !batch.is_control();
    let (before, after) = config.timestamp_bounds();
    let range = (now_ms.saturating_sub(before), now_ms.saturating_add(after));
    let log_append_time = batch.timestamp_type() == TimestampType::LogAppendTime;
    let mut scratch = Vec::new();
    let walked = walk_records(batch, MAX_DECOMPRESSED_RECORDS_BYTES, &mut scratch, |r| {
        let index = r.meta.offset_delta;
        let offset = batch.base_offset().wrapping_add(index.into());
        // Every record of a LogAppendTime batch reads as the header's max timestamp (Kafka's DefaultRecordBatch).
        let ts = match log_append_time {
            true => batch.max_timestamp(),
            false => batch.first_timestamp().wrapping_add(r.meta.timestamp_delta),
        };
        let message = if check_keys && r.key.is_none() {
            Some(format!(
                "Compacted topic cannot accept message without key in topic partition {tp}"
            ))
        } else if config.message_timestamp_type == TimestampType::CreateTime && ts != NO_TIMESTAMP {
            (ts < range.0 || ts > range.1).then(|| {
                timestamp = true;
                format!(
                    "Timestamp {ts} of message with offset {offset} is out of range. The timestamp should be \
                     within [{}, {}]",
                    range.0, range.1
                )
            })
        } else if log_append_time {
            timestamp = true;
            Some(format!(
                "Invalid timestamp type in message DefaultRecord(offset={offset}, timestamp={ts}, key={} bytes, \
                 value={} bytes). Producer should not set timestamp type to LogAppendTime.",
                r.key.map_or(0, <[u8]>::len),
                r.value_len
            ))
        } else {
            None
        };
        if let Some(message) = message {
            errors.push(RecordError {
                batch_index: index,
                message,
            });
        }
        ControlFlow::Continue(())
    });
    if let Err(e) = walked {
        return e;
    }
    let message = if timestamp {
        "One or more records have been rejected due to invalid timestamp".to_string()
    } else {
        let shown: Vec<String> = errors
            .iter()
            .take(3)
            .map(|e| {
                format!(
                    "RecordError(batchIndex={}, message='{}')",
                    e.batch_index, e.message
                )
            })
            .collect();
        format!(
            "One or more records have been rejected due to {} record errors in total, and only showing the \
             first three errors at most: [{}]",
            errors.len(),
            shown.join(", ")
        )
    };
    Error::RecordValidation {
        timestamp,
        message,
        record_errors: errors,
    }
}
