//! A batch's header `maxTimestamp` is not trusted: as Kafka's `LogValidator` does for CreateTime batches
//! (`setMaxTimestamp(CREATE_TIME, maxTimestamp)` after walking the records), the leader computes the max from the
//! records and writes it into the stored batch (rewriting the CRC), so a header claiming a far-future (or tiny, or
//! below `firstTimestamp`) max cannot pin a segment against `segment.ms` or `retention.ms`, nor mislead the time
//! index. (Kafka's `message.timestamp.before.max.ms` / `after.max.ms` default to unbounded, so the records' own
//! timestamps are not bounded here.)
mod common;

use bytes::Bytes;
use common::*;
use strata_storage::{LogConfig, RecordBatch};

const YEAR: i64 = 365 * 24 * 3600 * 1000;

/// `batch` with its header `maxTimestamp` replaced by `max` and the CRC-32C made valid again, as a hostile
/// client would send it.
fn lying(batch: Bytes, max: i64) -> Bytes {
    let mut b = batch.to_vec();
    b[35..43].copy_from_slice(&max.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(b)
}

/// Three uncompressed records stamped 1000, 3000, 2000: the max is held by the record at offset delta 1.
fn three_records() -> Bytes {
    let mut b = strata_storage::RecordBatchBuilder::new();
    for ts in [1000, 3000, 2000] {
        b.append(ts, None, Some(b"v"), &[]);
    }
    b.build()
}

/// The same three timestamps in a gzip batch, as a client would encode it.
fn three_records_gzip() -> Bytes {
    let value = || Some(Bytes::from_static(b"v"));
    client_batch(
        kafka_protocol::records::Compression::Gzip,
        [
            (1000, None, value()),
            (3000, None, value()),
            (2000, None, value()),
        ],
    )
}

#[test]
fn stored_max_timestamp_is_the_records_max_whatever_the_header_claims() {
    for (name, honest) in [("none", three_records()), ("gzip", three_records_gzip())] {
        // 100 years ahead, 1, and below firstTimestamp (1000).
        for claim in [1000 + 100 * YEAR, 1, 999, 3000] {
            let dir = tempfile::tempdir().unwrap();
            let m = open_manager(dir.path());
            let log = log(&m, LogConfig::default());
            let sent = lying(honest.clone(), claim);
            log.append_as_leader(sent.clone(), 0).unwrap();
            let stored = log.read(0, 1, true, None).unwrap().records;
            // RecordBatch::new checks the CRC-32C.
            let batch = RecordBatch::new(stored.clone()).expect("stored batch has a valid CRC");
            assert_eq!(batch.max_timestamp(), 3000, "{name} claim {claim}");
            assert_eq!(batch.first_timestamp(), 1000, "{name} claim {claim}");
            // Only maxTimestamp and the CRC changed (besides baseOffset and partitionLeaderEpoch, bytes 0..16).
            assert_eq!(stored[43..], sent[43..], "{name} claim {claim}");
            assert_eq!(stored[21..35], sent[21..35], "{name} claim {claim}");
            if claim == 3000 {
                assert_eq!(
                    stored[16..],
                    sent[16..],
                    "an honest batch is stored as sent"
                );
            }
            // The time index and ListOffsets(MAX_TIMESTAMP) use the records' max and its first holder.
            assert_eq!(
                log.max_timestamp_and_offset(),
                Some((3000, 1)),
                "{name} claim {claim}"
            );
            assert_eq!(
                log.fetch_offset_by_timestamp(2500).unwrap(),
                Some((1, 3000))
            );
            assert_eq!(log.fetch_offset_by_timestamp(3001).unwrap(), None);
            log.roll().unwrap();
            assert_eq!(
                log.fetch_offset_by_timestamp(2500).unwrap(),
                Some((1, 3000))
            );
            // Recovery reads the stored header: the same max (holder: exact for uncompressed batches, the last
            // offset for compressed ones, as Kafka's `LogSegment.recover`).
            drop(log);
            drop(m);
            let m = open_manager(dir.path());
            let log = m.get_log(&tp()).unwrap();
            let holder = if name == "none" { 1 } else { 2 };
            assert_eq!(
                log.max_timestamp_and_offset(),
                Some((3000, holder)),
                "{name} claim {claim}"
            );
        }
    }
}

#[test]
fn far_future_max_timestamp_claim_does_not_keep_a_segment_from_retention() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.retention_ms = 1000;
    let log = log(&m, cfg);
    log.append_as_leader(lying(batch(3, 10), 10 + 100 * YEAR), 0)
        .unwrap();
    m.run_retention(100_000).unwrap();
    assert_eq!(
        log.log_start_offset(),
        3,
        "records stamped 10..12 expire at 1012"
    );
}

#[test]
fn far_future_max_timestamp_claim_does_not_keep_a_segment_from_rolling_by_segment_ms() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.segment_ms = 1000;
    let log = log(&m, cfg);
    log.append_as_leader(lying(batch(1, 10_000), 10_000 + 100 * YEAR), 0)
        .unwrap();
    log.append_as_leader(batch(1, 10_500), 0).unwrap();
    assert_eq!(log.number_of_segments(), 1);
    log.append_as_leader(batch(1, 11_001), 0).unwrap();
    assert_eq!(
        log.number_of_segments(),
        2,
        "the segment rolls 1000 ms after its first record"
    );
}

/// `batch` marked LogAppendTime by its producer (attributes bit 3) with header `maxTimestamp` `max`, CRC valid.
fn marked_log_append_time(batch: Bytes, max: i64) -> Bytes {
    let mut b = lying(batch, max).to_vec();
    b[22] |= 0x08;
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(b)
}

/// Kafka's `LogValidator.validateTimestamp`: a producer may not set LogAppendTime. Every record of such a batch
/// reads as the header's max; on a LogAppendTime topic, or on a CreateTime topic without a timestamp (-1), the
/// batch is INVALID_TIMESTAMP and nothing is appended; on a CreateTime topic a real timestamp is only
/// range-checked, as Kafka does.
#[test]
fn a_producer_marked_log_append_time_batch_is_invalid_timestamp_unless_it_carries_a_create_time() {
    use strata_storage::{Error, TimestampType};
    let now = 10_000_000;
    let refused = [
        (TimestampType::CreateTime, -1),
        (TimestampType::LogAppendTime, now),
        (TimestampType::LogAppendTime, -1),
    ];
    for (topic_type, max) in refused {
        let dir = tempfile::tempdir().unwrap();
        let m = open_manager(dir.path());
        let mut cfg = LogConfig::default();
        cfg.message_timestamp_type = topic_type;
        let log = log(&m, cfg);
        let sent = marked_log_append_time(three_records(), max);
        assert_eq!(
            RecordBatch::new(sent.clone()).unwrap().timestamp_type(),
            TimestampType::LogAppendTime
        );
        let err = log.append_as_leader_at(sent, 0, now).unwrap_err();
        assert!(
            matches!(&err, Error::RecordValidation { timestamp: true, record_errors, .. }
                if record_errors.len() == 3 && record_errors.iter().all(|e|
                    e.message.contains("Producer should not set timestamp type to LogAppendTime"))),
            "{topic_type:?} max {max}: {err}"
        );
        assert_eq!(log.log_end_offset(), 0, "{topic_type:?} max {max}");
    }
    // CreateTime topic, a timestamp within the bounds: appended; outside them: the range error.
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.message_timestamp_before_max_ms = 1000;
    let log = log(&m, cfg);
    let err = log
        .append_as_leader_at(marked_log_append_time(three_records(), now - 5000), 0, now)
        .unwrap_err();
    assert!(
        matches!(&err, Error::RecordValidation { timestamp: true, record_errors, .. }
            if record_errors.len() == 3 && record_errors[2].message.contains("out of range")),
        "{err}"
    );
    assert_eq!(log.log_end_offset(), 0);
    log.append_as_leader_at(marked_log_append_time(three_records(), now), 0, now)
        .unwrap();
    assert_eq!(log.log_end_offset(), 3);
}
