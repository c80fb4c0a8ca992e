//! Timestamps, roll triggers, durability knobs and the manager's partition lifecycle.
mod common;

use std::sync::Arc;

use common::*;
use strata_storage::{
    Error, LogConfig, LogManager, LogManagerConfig, RecordBatch, TimestampType, TopicPartition,
    UnifiedLog,
};

#[test]
fn log_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<UnifiedLog>();
    check::<LogManager>();
}

#[test]
fn log_append_time_rewrites_max_timestamp_and_crc() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.message_timestamp_type = TimestampType::LogAppendTime;
    let log = log(&m, cfg);
    let info = log.append_as_leader_at(batch(2, 5), 0, 123_456).unwrap();
    assert_eq!(info.log_append_time_ms, 123_456);
    let got = log.read(0, 1 << 20, true, None).unwrap().records;
    let b = RecordBatch::new(got).unwrap(); // CRC valid after the rewrite
    assert_eq!(b.max_timestamp(), 123_456);
    assert_eq!(b.first_timestamp(), 5);
    assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
    let recs: Vec<_> = b.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert!(recs.iter().all(|r| r.timestamp == 123_456));
}

#[test]
fn timestamp_lookup_finds_first_batch_at_or_after_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, small_segments());
    // Batches of 2 records with timestamps (100i, 100i+1); offsets 0-1, 2-3, ...
    for i in 1..=10 {
        log.append_as_leader(sized_batch(2, 100, i * 100), 0)
            .unwrap();
    }
    assert!(log.number_of_segments() > 2);
    assert_eq!(log.fetch_offset_by_timestamp(0).unwrap(), Some((0, 100)));
    assert_eq!(log.fetch_offset_by_timestamp(450).unwrap(), Some((8, 500)));
    assert_eq!(log.fetch_offset_by_timestamp(501).unwrap(), Some((9, 501)));
    assert_eq!(log.fetch_offset_by_timestamp(502).unwrap(), Some((10, 600)));
    assert_eq!(log.fetch_offset_by_timestamp(2000).unwrap(), None);
    assert_eq!(log.max_timestamp_and_offset(), Some((1001, 19)));
}

/// A batch of `n` records with timestamps `ts0 + 10 * i`, compressed with `codec`, as a client would send it.
fn compressed_batch(codec: kafka_protocol::records::Compression, n: i64, ts0: i64) -> bytes::Bytes {
    client_batch(
        codec,
        (0..n).map(|i| {
            let value = format!("value-{i}-{}", "x".repeat(40));
            (ts0 + 10 * i, None, Some(bytes::Bytes::from(value)))
        }),
    )
}

/// Kafka's lookup answers the exact record, also inside compressed batches (they are decompressed for it) and
/// when the start offset falls inside a batch.
#[test]
fn timestamp_lookup_finds_the_record_inside_compressed_batches() {
    use kafka_protocol::records::Compression as C;
    for codec in [C::None, C::Gzip, C::Snappy, C::Lz4, C::Zstd] {
        let dir = tempfile::tempdir().unwrap();
        let m = open_manager(dir.path());
        let log = log(&m, LogConfig::default());
        // Offsets 0..99 with timestamps 1000, 1010, ..., 1990; then 100..199 with 2000, ..., 2990.
        for b in 0..2 {
            log.append_as_leader(compressed_batch(codec, 100, 1000 + 1000 * b), 0)
                .unwrap();
        }
        let batch = RecordBatch::new(log.read(0, 1, true, None).unwrap().records).unwrap();
        assert_eq!(batch.records_count(), 100, "{codec:?}");
        for (ts, want) in [
            (0, Some((0, 1000))),
            (1005, Some((1, 1010))),
            (1990, Some((99, 1990))),
            (1991, Some((100, 2000))),
            (2555, Some((156, 2560))),
            (2990, Some((199, 2990))),
            (2991, None),
        ] {
            assert_eq!(
                log.fetch_offset_by_timestamp(ts).unwrap(),
                want,
                "{codec:?} ts {ts}"
            );
        }
        assert_eq!(
            batch.find_timestamp(1005, 50).unwrap(),
            Some((50, 1500)),
            "{codec:?}"
        );
    }
}

#[test]
fn max_timestamp_offset_is_the_record_carrying_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, LogConfig::default());
    let mut b = strata_storage::RecordBatchBuilder::new();
    for ts in [10, 50, 20] {
        b.append(ts, None, Some(b"v"), &[]);
    }
    log.append_as_leader(b.build(), 0).unwrap();
    log.append_as_leader(batch(2, 30), 0).unwrap();
    assert_eq!(log.max_timestamp_and_offset(), Some((50, 1)));
    assert_eq!(log.fetch_offset_by_timestamp(15).unwrap(), Some((1, 50)));
    assert_eq!(log.fetch_offset_by_timestamp(31).unwrap(), Some((1, 50)));
    m.shutdown().unwrap();
    drop(log);
    let m = open_manager(dir.path());
    assert_eq!(
        m.get_log(&tp()).unwrap().max_timestamp_and_offset(),
        Some((50, 1))
    );
}

#[test]
fn segment_ms_rolls_on_batch_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.segment_ms = 1000;
    let log = log(&m, cfg);
    log.append_as_leader(batch(1, 10_000), 0).unwrap();
    log.append_as_leader(batch(1, 10_500), 0).unwrap();
    assert_eq!(log.number_of_segments(), 1);
    log.append_as_leader(batch(1, 11_001), 0).unwrap();
    assert_eq!(log.number_of_segments(), 2);
    assert_eq!(log.rolled_segments()[0].next_offset, 2);
}

#[test]
fn full_offset_index_rolls_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.index_interval_bytes = 1;
    cfg.segment_index_bytes = 8 * 3 + 4; // three offset entries, two time entries
    let log = log(&m, cfg);
    for i in 0..12 {
        log.append_as_leader(batch(1, i), 0).unwrap();
    }
    assert!(
        log.number_of_segments() >= 3,
        "{}",
        log.number_of_segments()
    );
    for s in log.rolled_segments() {
        let len = std::fs::metadata(&s.offset_index_file).unwrap().len();
        assert!(
            len <= 24 && len % 8 == 0,
            "rolled index trimmed to its entries: {len}"
        );
    }
}

#[test]
fn flush_messages_advances_the_recovery_point() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.flush_messages = 3;
    let log = log(&m, cfg);
    log.append_as_leader(batch(2, 0), 0).unwrap();
    assert_eq!(log.recovery_point(), 0);
    log.append_as_leader(batch(1, 0), 0).unwrap();
    assert_eq!(log.recovery_point(), 3);
}

#[test]
fn flush_ms_flushes_on_the_periodic_pass_and_writes_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.flush_ms = 1000;
    let log = log(&m, cfg);
    log.append_as_leader(batch(2, 0), 0).unwrap();
    let now = strata_storage_now();
    m.flush_dirty_and_checkpoint(now - 10_000).unwrap();
    assert_eq!(log.recovery_point(), 0, "flush.ms not elapsed yet");
    m.flush_dirty_and_checkpoint(now + 10_000).unwrap();
    assert_eq!(log.recovery_point(), 2);
    let text =
        std::fs::read_to_string(dir.path().join("recovery-point-offset-checkpoint")).unwrap();
    assert_eq!(text, "0\n1\nt 0 2\n");
    let text = std::fs::read_to_string(dir.path().join("log-start-offset-checkpoint")).unwrap();
    assert_eq!(text, "0\n1\nt 0 0\n");
}

fn strata_storage_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn manager_spreads_partitions_and_deletes_them() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![
        a.path().to_path_buf(),
        b.path().to_path_buf(),
    ]))
    .unwrap();
    let id = uuid::Uuid::from_u128(0xabc);
    for p in 0..4 {
        m.get_or_create_log(&TopicPartition::new("orders", p), id, LogConfig::default())
            .unwrap();
    }
    let in_a = std::fs::read_dir(a.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(in_a, 2, "least loaded dir first");
    assert_eq!(m.all_logs().len(), 4);
    let tp = TopicPartition::new("orders", 1);
    let log = m.get_log(&tp).unwrap();
    let meta = std::fs::read_to_string(log.dir().join("partition.metadata")).unwrap();
    assert_eq!(
        meta,
        format!(
            "version: 0\ntopic_id: {}\n",
            strata_storage::kafka_uuid_string(id)
        )
    );
    let other = uuid::Uuid::from_u128(0xdef);
    assert!(matches!(
        m.get_or_create_log(&tp, other, LogConfig::default()),
        Err(Error::InconsistentTopicId { .. })
    ));
    let mut bad = LogConfig::default();
    bad.segment_bytes = 1;
    assert!(matches!(
        m.get_or_create_log(&TopicPartition::new("x", 0), id, bad),
        Err(Error::InvalidConfig { .. })
    ));

    log.append_as_leader(batch(1, 0), 0).unwrap();
    let dir = log.dir().to_path_buf();
    m.delete_log(&tp).unwrap();
    assert!(!dir.exists());
    assert!(m.get_log(&tp).is_none());
    assert!(matches!(
        log.append_as_leader(batch(1, 0), 0),
        Err(Error::Storage { .. })
    ));
    assert!(matches!(
        m.delete_log(&tp),
        Err(Error::UnknownTopicOrPartition { .. })
    ));
    m.shutdown().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![
        a.path().to_path_buf(),
        b.path().to_path_buf(),
    ]))
    .unwrap();
    assert_eq!(m.all_logs().len(), 3);
    assert_eq!(
        m.get_log(&TopicPartition::new("orders", 0))
            .unwrap()
            .topic_id(),
        id
    );
}

#[test]
fn concurrent_appends_and_reads_see_consistent_batches() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, small_segments());
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0..50 {
                    log.append_as_leader(sized_batch(2, 30, i), 0).unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || {
            for _ in 0..200 {
                let end = log.log_end_offset();
                if end > 0 {
                    let got = log.read(end - 1, 10_000, true, None).unwrap().records;
                    for b in RecordBatch::iter(&got) {
                        b.unwrap();
                    }
                }
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    assert_eq!(log.log_end_offset(), 400);
}
