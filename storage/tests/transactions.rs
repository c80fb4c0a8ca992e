//! Transactions in the log (KIP-98): COMMIT/ABORT markers, the last stable offset, the `.txnindex` of aborted
//! transactions, and both across clean and unclean restarts.
mod common;

use bytes::Bytes;
use common::*;
use strata_storage::index::{AbortedTxn, ABORTED_TXN_SIZE};
use strata_storage::record::{ControlRecordKey, ControlRecordType};
use strata_storage::{LogConfig, RecordBatch, RecordBatchBuilder, UnifiedLog};

/// A transactional producer's batch of `n` records.
fn txn_batch(pid: i64, epoch: i16, seq: i32, n: usize) -> Bytes {
    let mut b = RecordBatchBuilder::new()
        .producer(pid, epoch, seq)
        .transactional(true);
    // Timestamps of now, so markers (stamped now) do not roll the segment by `segment.ms`.
    let now = strata_storage::time::now_ms();
    for i in 0..n {
        b.append(now + i as i64, Some(b"k"), Some(b"v"), &[]);
    }
    b.build()
}

fn marker(log: &UnifiedLog, kind: ControlRecordType, pid: i64, epoch: i16) -> i64 {
    log.append_transaction_marker(kind, pid, epoch, 3, 0)
        .unwrap()
        .first_offset
}

fn txn_index_files(log: &UnifiedLog) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(log.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txnindex"))
        .collect();
    out.sort();
    out
}

/// Kafka's LSO: the first offset of the oldest open transaction, else the high watermark; a marker closes the
/// producer's transaction.
#[test]
fn last_stable_offset_stops_at_the_oldest_open_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, LogConfig::default());
    log.append_as_leader(batch(2, 0), 0).unwrap(); // 0..1
    assert_eq!(log.last_stable_offset(), 2);
    log.append_as_leader(txn_batch(1, 0, 0, 2), 0).unwrap(); // 2..3, txn of 1
    log.append_as_leader(txn_batch(2, 0, 0, 1), 0).unwrap(); // 4, txn of 2
    log.append_as_leader(batch(1, 0), 0).unwrap(); // 5
    assert_eq!(log.high_watermark(), 6);
    assert_eq!(log.last_stable_offset(), 2);
    assert_eq!(log.ongoing_transactions(), vec![(1, 0, 2), (2, 0, 4)]);
    assert_eq!(marker(&log, ControlRecordType::Commit, 1, 0), 6);
    assert_eq!(log.last_stable_offset(), 4, "producer 2 still open");
    assert_eq!(marker(&log, ControlRecordType::Commit, 2, 0), 7);
    assert_eq!(log.last_stable_offset(), 8);
    assert!(log.ongoing_transactions().is_empty());
    assert!(txn_index_files(&log).is_empty(), "no abort, no .txnindex");
}

/// A marker is a control batch as Kafka writes it: transactional + control attributes, the producer's id and
/// epoch, key version 0 + type, value version 0 + coordinator epoch.
#[test]
fn markers_are_kafka_control_batches() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, LogConfig::default());
    log.append_as_leader(txn_batch(5, 2, 0, 1), 0).unwrap();
    marker(&log, ControlRecordType::Abort, 5, 2);
    let read = log.read(1, 1 << 20, true, None).unwrap().records;
    let b = RecordBatch::iter(&read).next().unwrap().unwrap();
    assert!(b.is_control() && b.is_transactional());
    assert_eq!(
        (b.producer_id(), b.producer_epoch(), b.base_sequence()),
        (5, 2, -1)
    );
    let r = b.records().unwrap().next().unwrap().unwrap();
    assert_eq!(
        ControlRecordKey::parse(r.key.as_deref()).unwrap().kind,
        ControlRecordType::Abort
    );
    assert_eq!(r.value.as_deref(), Some(&[0u8, 0, 0, 0, 0, 3][..]));
    // Not a marker type, and an older epoch than the producer's: refused, nothing written.
    let end = log.log_end_offset();
    assert!(log
        .append_transaction_marker(ControlRecordType::LeaderChange, 5, 2, 3, 0)
        .is_err());
    assert!(matches!(
        log.append_transaction_marker(ControlRecordType::Commit, 5, 1, 3, 0),
        Err(strata_storage::Error::InvalidProducerEpoch { .. })
    ));
    assert_eq!(log.log_end_offset(), end);
}

/// Kafka's `.txnindex`: an ABORT marker writes one 34-byte entry (producer, first offset, marker offset, LSO) to
/// the segment holding the marker; a COMMIT writes none. `collect_aborted` returns the entries overlapping a range.
#[test]
fn an_abort_is_indexed_in_the_markers_segment_and_collected_for_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, LogConfig::default());
    log.append_as_leader(txn_batch(1, 0, 0, 3), 0).unwrap(); // 0..2
    log.append_as_leader(txn_batch(2, 0, 0, 1), 0).unwrap(); // 3
    assert_eq!(marker(&log, ControlRecordType::Abort, 1, 0), 4);
    log.append_as_leader(txn_batch(1, 0, 3, 1), 0).unwrap(); // 5, new txn of 1
    assert_eq!(marker(&log, ControlRecordType::Commit, 2, 0), 6);
    assert_eq!(marker(&log, ControlRecordType::Abort, 1, 0), 7);
    let first = AbortedTxn {
        producer_id: 1,
        first_offset: 0,
        last_offset: 4,
        last_stable_offset: 3,
    };
    let second = AbortedTxn {
        producer_id: 1,
        first_offset: 5,
        last_offset: 7,
        last_stable_offset: 8,
    };
    assert_eq!(log.collect_aborted(0, 8).unwrap(), vec![first, second]);
    assert_eq!(log.collect_aborted(5, 8).unwrap(), vec![second]);
    assert_eq!(log.collect_aborted(0, 5).unwrap(), vec![first]);
    let files = txn_index_files(&log);
    assert_eq!(files.len(), 1);
    let bytes = std::fs::read(&files[0]).unwrap();
    assert_eq!(bytes.len(), 2 * ABORTED_TXN_SIZE);
    assert_eq!(&bytes[..ABORTED_TXN_SIZE], &first.encode());
    log.roll().unwrap();
    let rolled = log.rolled_segments();
    assert_eq!(
        rolled[0].txn_index_file.as_deref(),
        Some(files[0].as_path())
    );
}

/// The LSO and the `.txnindex` survive a clean restart (open transactions are in the producer snapshot) and an
/// unclean one (recovery replays the log and rebuilds the index).
#[test]
fn open_transactions_and_aborts_survive_clean_and_unclean_restarts() {
    for clean in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let expected = {
            let m = open_manager(dir.path());
            let log = log(&m, small_segments());
            for seq in 0..3 {
                log.append_as_leader(txn_batch(1, 0, seq * 4, 4), 0)
                    .unwrap();
            }
            marker(&log, ControlRecordType::Abort, 1, 0);
            log.append_as_leader(txn_batch(2, 0, 0, 2), 0).unwrap(); // open
            log.append_as_leader(batch(30, 0), 0).unwrap();
            assert!(log.number_of_segments() > 1, "the test needs a roll");
            let expected = (
                log.last_stable_offset(),
                log.collect_aborted(0, i64::MAX).unwrap(),
            );
            assert_eq!(expected.0, 13);
            assert_eq!(expected.1.len(), 1);
            if clean {
                m.shutdown().unwrap();
            } else {
                // Dropped without shutdown; the index files are gone as if never written.
                for f in txn_index_files(&log) {
                    std::fs::remove_file(f).unwrap();
                }
            }
            expected
        };
        let m = open_manager(dir.path());
        let log = m.get_log(&tp()).unwrap();
        assert_eq!(log.last_stable_offset(), expected.0, "clean={clean}");
        assert_eq!(
            log.collect_aborted(0, i64::MAX).unwrap(),
            expected.1,
            "clean={clean}"
        );
        marker(&log, ControlRecordType::Commit, 2, 0);
        assert_eq!(log.last_stable_offset(), log.high_watermark());
    }
}

/// Deleting a segment (retention) deletes its `.txnindex` with it.
#[test]
fn a_deleted_segment_takes_its_txnindex_along() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = small_segments();
    cfg.file_delete_delay_ms = 0;
    let log = log(&m, cfg);
    log.append_as_leader(txn_batch(1, 0, 0, 2), 0).unwrap();
    marker(&log, ControlRecordType::Abort, 1, 0);
    log.roll().unwrap();
    log.append_as_leader(batch(3, 0), 0).unwrap();
    assert_eq!(txn_index_files(&log).len(), 1);
    log.delete_records(3).unwrap();
    log.delete_old_segments(i64::MAX).unwrap();
    log.remove_deleted_files_now();
    assert!(txn_index_files(&log).is_empty());
    assert!(log.collect_aborted(0, i64::MAX).unwrap().is_empty());
}

/// Kafka's cleaner drops the data of aborted transactions, found through the `.txnindex` (the cleanable range
/// also ends at the last stable offset, so an open transaction's data is never cleaned).
#[test]
fn the_cleaner_drops_the_data_of_aborted_transactions() {
    use std::sync::Arc;
    use strata_storage::{CleanerConfig, CleanupPolicy, LogCleaner};
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(open_manager(dir.path()));
    let mut cfg = LogConfig::default();
    cfg.cleanup_policy = CleanupPolicy::Compact;
    cfg.min_cleanable_dirty_ratio = 0.01;
    let log = m
        .get_or_create_log(&tp(), uuid::Uuid::from_u128(7), cfg)
        .unwrap();
    log.append_as_leader(txn_batch(1, 0, 0, 2), 0).unwrap(); // 0..1 aborted
    marker(&log, ControlRecordType::Abort, 1, 0); // 2
    log.append_as_leader(batch(2, strata_storage::time::now_ms()), 0)
        .unwrap(); // 3..4, keys k0 k1
    log.roll().unwrap();
    log.append_as_leader(batch(1, strata_storage::time::now_ms()), 0)
        .unwrap();
    let mut c = CleanerConfig::default();
    c.dedupe_buffer_size = 1 << 20;
    LogCleaner::new(c, m.clone())
        .unwrap()
        .clean_once()
        .unwrap()
        .expect("dirty");
    let read = log.read(0, 1 << 20, true, None).unwrap().records;
    let batches: Vec<RecordBatch> = RecordBatch::iter(&read).map(Result::unwrap).collect();
    // The producer's last batch stays, emptied, for its sequence state (Kafka keeps it the same way).
    let aborted_records: i32 = batches
        .iter()
        .filter(|b| b.producer_id() == 1 && !b.is_control())
        .map(|b| b.records_count())
        .sum();
    assert_eq!(aborted_records, 0, "aborted data dropped");
    assert!(batches.iter().any(|b| b.is_control()), "marker kept");
}
