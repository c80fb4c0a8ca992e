//! The cleaner's delete horizon per batch (KIP-534, Kafka 2.8+: `DefaultRecordBatch.deleteHorizonMs`): the first
//! pass that keeps a tombstone (or a transaction marker with no data left) stamps `now + delete.retention.ms` into
//! the batch (`baseTimestamp`, attributes bit 6), a restart keeps it, and only a pass after it removes them.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::records::RecordBatchDecoder;
use strata_storage::record::ControlRecordType;
use strata_storage::{
    CleanerConfig, CleanupPolicy, LogCleaner, LogConfig, LogManager, LogManagerConfig, RecordBatch,
    RecordBatchBuilder, TopicPartition, UnifiedLog,
};

const HOUR: i64 = 3_600_000;

fn now() -> i64 {
    strata_storage::time::now_ms()
}

fn config() -> LogConfig {
    let mut c = LogConfig::default();
    c.cleanup_policy = CleanupPolicy::Compact;
    c.min_cleanable_dirty_ratio = 0.01;
    c.delete_retention_ms = HOUR;
    c
}

fn open(dir: &Path) -> Arc<LogManager> {
    Arc::new(LogManager::open(LogManagerConfig::new(vec![dir.to_path_buf()])).unwrap())
}

fn tp() -> TopicPartition {
    TopicPartition::new("compacted", 0)
}

fn cleaner(m: &Arc<LogManager>) -> LogCleaner {
    let mut c = CleanerConfig::default();
    c.dedupe_buffer_size = 1 << 20;
    LogCleaner::new(c, m.clone()).unwrap()
}

fn one(key: &str, value: Option<&str>, ts: i64) -> Bytes {
    let mut b = RecordBatchBuilder::new();
    b.append(ts, Some(key.as_bytes()), value.map(str::as_bytes), &[]);
    b.build()
}

fn batches(log: &UnifiedLog) -> Vec<RecordBatch> {
    RecordBatch::iter(&log.read(0, 1 << 20, true, None).unwrap().records)
        .map(Result::unwrap)
        .collect()
}

/// offset → (key, value, timestamp) of every data record, decoded by the kafka-protocol crate as a client would.
fn records(log: &UnifiedLog) -> BTreeMap<i64, (String, Option<String>, i64)> {
    let mut buf = log.read(0, 1 << 20, true, None).unwrap().records;
    let mut out = BTreeMap::new();
    for set in RecordBatchDecoder::decode_all(&mut buf).unwrap() {
        for r in set.records.into_iter().filter(|r| !r.control) {
            let k = String::from_utf8(r.key.unwrap().to_vec()).unwrap();
            let v = r.value.map(|v| String::from_utf8(v.to_vec()).unwrap());
            out.insert(r.offset, (k, v, r.timestamp));
        }
    }
    out
}

/// Appends a record of a new key and rolls, so the log is dirty enough for another pass.
fn dirty(log: &UnifiedLog, key: &str) {
    log.append_as_leader(one(key, Some("v"), now()), 0).unwrap();
    log.roll().unwrap();
}

/// Kafka's `MemoryRecords.filterTo` / `Cleaner.shouldRetainRecord`: the first pass stamps the tombstone's batch
/// with `now + delete.retention.ms` (baseTimestamp = horizon, attributes bit 6) and keeps every record's timestamp;
/// the horizon is in the file, so a restart keeps it; a pass before it keeps the tombstone, a pass after it removes
/// the tombstone.
#[test]
fn a_tombstone_keeps_its_batch_delete_horizon_across_a_restart_and_goes_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let topic_id = uuid::Uuid::new_v4();
    let t0 = now();
    {
        let m = open(dir.path());
        let log = m.get_or_create_log(&tp(), topic_id, config()).unwrap();
        log.append_as_leader(one("a", Some("1"), t0 - 50), 0)
            .unwrap();
        log.append_as_leader(one("b", Some("1"), t0 - 40), 0)
            .unwrap();
        // 2: a's tombstone, 3: x, in one batch.
        let mut b = RecordBatchBuilder::new();
        b.append(t0 - 30, Some(b"a"), None, &[]);
        b.append(t0 - 20, Some(b"x"), Some(b"1"), &[]);
        log.append_as_leader(b.build(), 0).unwrap();
        log.roll().unwrap();
        cleaner(&m).clean_once_at(t0).unwrap().expect("dirty");
        let tomb = batches(&log)
            .into_iter()
            .find(|b| b.base_offset() == 2)
            .expect("tombstone kept on the first pass");
        assert!(tomb.has_delete_horizon());
        assert_eq!(tomb.delete_horizon_ms(), Some(t0 + HOUR));
        assert_eq!(tomb.attributes() & 0x40, 0x40);
        assert_eq!(tomb.max_timestamp(), t0 - 20);
        let recs = records(&log);
        assert_eq!(
            recs.get(&2),
            Some(&("a".into(), None, t0 - 30)),
            "timestamp kept"
        );
        assert_eq!(recs.get(&3).map(|r| r.2), Some(t0 - 20));
        assert_eq!(recs.get(&1).map(|r| r.2), Some(t0 - 40));
        assert!(!recs.contains_key(&0), "the older value of a went");
        // A later pass before the horizon that re-encodes the batch (x is overwritten) keeps its horizon.
        log.append_as_leader(one("x", Some("2"), now()), 0).unwrap();
        log.roll().unwrap();
        cleaner(&m)
            .clean_once_at(t0 + HOUR / 2)
            .unwrap()
            .expect("dirty");
        let again = batches(&log)
            .into_iter()
            .find(|b| b.base_offset() == 2)
            .unwrap();
        assert_eq!(again.records_count(), 1, "x's older value went");
        assert_eq!(
            again.delete_horizon_ms(),
            Some(t0 + HOUR),
            "not stamped again"
        );
        assert_eq!(records(&log).get(&2), Some(&("a".into(), None, t0 - 30)));
        // The process stops (no clean shutdown).
    }
    let m = open(dir.path());
    let log = m.get_or_create_log(&tp(), topic_id, config()).unwrap();
    let tomb = batches(&log).into_iter().find(|b| b.base_offset() == 2);
    assert_eq!(tomb.and_then(|b| b.delete_horizon_ms()), Some(t0 + HOUR));
    // Before the horizon (a fresh cleaner, as after a restart: nothing in memory): kept.
    dirty(&log, "d");
    cleaner(&m)
        .clean_once_at(t0 + HOUR - 1)
        .unwrap()
        .expect("dirty");
    assert!(records(&log).contains_key(&2), "kept until its horizon");
    // At the horizon: removed, and the key with it.
    dirty(&log, "e");
    cleaner(&m)
        .clean_once_at(t0 + HOUR)
        .unwrap()
        .expect("dirty");
    let recs = records(&log);
    assert!(!recs.contains_key(&2), "removed once the horizon passed");
    assert!(recs.values().all(|r| r.0 != "a"));
    assert_eq!(recs.get(&1).map(|r| r.1.clone()), Some(Some("1".into())));
}

/// Kafka's `CleanedTransactionMetadata`: the data of an aborted transaction goes at once; its ABORT marker stays
/// while a pass still meets data of the transaction, then gets a delete horizon like a tombstone and goes after
/// it. A COMMIT marker whose transaction still has data stays (a reader needs it to know the data committed).
#[test]
fn an_abort_marker_goes_after_its_horizon_once_its_data_is_gone_and_a_commit_marker_stays() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    let log = m
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), config())
        .unwrap();
    let txn = |seq: i32, key: &str| {
        let mut b = RecordBatchBuilder::new()
            .producer(5, 0, seq)
            .transactional(true);
        b.append(now(), Some(key.as_bytes()), Some(b"t"), &[]);
        b.build()
    };
    log.append_as_leader(txn(0, "a"), 0).unwrap(); // 0: aborted
    let abort = log
        .append_transaction_marker(ControlRecordType::Abort, 5, 0, 1, 0)
        .unwrap()
        .first_offset; // 1
    log.append_as_leader(txn(1, "b"), 0).unwrap(); // 2: committed
    let commit = log
        .append_transaction_marker(ControlRecordType::Commit, 5, 0, 1, 0)
        .unwrap()
        .first_offset; // 3
    log.roll().unwrap();
    let marker = |log: &UnifiedLog, offset: i64| {
        batches(log)
            .into_iter()
            .find(|b| b.is_control() && b.base_offset() == offset)
    };
    let t0 = now();
    let c = cleaner(&m);
    c.clean_once_at(t0).unwrap().expect("dirty");
    assert!(!records(&log).contains_key(&0), "aborted data dropped");
    let first = marker(&log, abort).expect("kept: this pass met its data");
    assert_eq!(first.delete_horizon_ms(), None);
    // The next pass finds no data of the aborted transaction: the marker gets its horizon.
    dirty(&log, "c");
    c.clean_once_at(t0 + 1).unwrap().expect("dirty");
    let stamped = marker(&log, abort).expect("kept until its horizon");
    assert_eq!(stamped.delete_horizon_ms(), Some(t0 + 1 + HOUR));
    dirty(&log, "d");
    c.clean_once_at(t0 + HOUR).unwrap().expect("dirty");
    assert!(marker(&log, abort).is_some(), "before its horizon");
    dirty(&log, "e");
    c.clean_once_at(t0 + 1 + HOUR).unwrap().expect("dirty");
    assert!(marker(&log, abort).is_none(), "removed after its horizon");
    let commit_marker = marker(&log, commit).expect("its transaction's data is still there");
    assert_eq!(commit_marker.delete_horizon_ms(), None);
    assert_eq!(
        records(&log).get(&2).map(|r| r.0.clone()),
        Some("b".to_string())
    );
}
