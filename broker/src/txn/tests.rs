//! Unit tests of the transaction coordinator on real logs in a temp dir.
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use strata_storage::time::now_ms;
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatchBuilder, TopicPartition, UnifiedLog,
};
use tokio::sync::Notify;

use super::coordinator::{CoordinatorParts, TransactionCoordinator, TxnLogs};
use super::state::{EndTxnRequest, TransactionState};
use super::TxnError;
use crate::error::Result;
struct TestLogs(LogManager);

impl TxnLogs for TestLogs {
    fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>> {
        let tp = TopicPartition::new(topic, partition);
        Ok(self
            .0
            .get_or_create_log(&tp, uuid::Uuid::from_u128(1), LogConfig::default())?)
    }

    fn ensure_state_topic(&self) -> Result<i32> {
        Ok(3)
    }
}

fn tv1(producer_id: i64, epoch: i16, commit: bool) -> EndTxnRequest {
    EndTxnRequest {
        producer_id,
        epoch,
        commit,
        transaction_version: 0,
    }
}

fn coordinator(logs: Arc<TestLogs>) -> TransactionCoordinator {
    let next = Arc::new(AtomicI64::new(1000));
    TransactionCoordinator::new(CoordinatorParts {
        logs,
        producer_ids: Arc::new(move || Ok(next.fetch_add(1, Ordering::SeqCst))),
        state_partitions: 3,
        max_timeout_ms: 900_000,
        appended: Arc::new(Notify::new()),
        features: Arc::new(crate::features::Features::in_memory()),
    })
}

fn txn_data(log: &UnifiedLog, pid: i64, epoch: i16, seq: i32) {
    let mut b = RecordBatchBuilder::new()
        .producer(pid, epoch, seq)
        .transactional(true);
    b.append(now_ms(), None, Some(b"v"), &[]);
    log.append_as_leader(b.build(), 0).unwrap();
}

/// Kafka's flow: InitProducerId, AddPartitionsToTxn, data, EndTxn(commit) writes a COMMIT marker to each
/// partition (the LSO reaches the high watermark); the state survives a restart of the coordinator.
#[test]
fn commit_writes_markers_and_the_state_is_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let logs = Arc::new(TestLogs(
        LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap(),
    ));
    let c = coordinator(logs.clone());
    assert_eq!(c.load().unwrap(), 0);
    let (pid, epoch) = c.init_producer_id("tx", 60_000, None).unwrap();
    assert_eq!((pid, epoch), (1000, 0));
    c.add_partitions("tx", pid, epoch, vec![("a".into(), 0), ("a".into(), 1)])
        .unwrap();
    let (a0, a1) = (logs.log("a", 0).unwrap(), logs.log("a", 1).unwrap());
    txn_data(&a0, pid, epoch, 0);
    txn_data(&a1, pid, epoch, 0);
    assert_eq!(a0.last_stable_offset(), 0);
    c.end_txn("tx", tv1(pid, epoch, true)).unwrap();
    for log in [&a0, &a1] {
        assert_eq!(log.log_end_offset(), 2, "data + marker");
        assert_eq!(log.last_stable_offset(), 2);
    }
    c.end_txn("tx", tv1(pid, epoch, true)).unwrap(); // a retry
    assert_eq!(a0.log_end_offset(), 2, "a retry writes nothing");
    let again = coordinator(logs.clone());
    assert_eq!(again.load().unwrap(), 1);
    let meta = again.describe("tx").unwrap();
    assert_eq!(
        (meta.state, meta.producer_id),
        (TransactionState::CompleteCommit, pid)
    );
}

/// A second InitProducerId fences the first producer (PRODUCER_FENCED on its EndTxn) and aborts its open
/// transaction; a timeout above transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT; unknown ids are
/// TRANSACTIONAL_ID_NOT_FOUND.
#[test]
fn a_new_producer_fences_the_old_one_and_aborts_its_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let logs = Arc::new(TestLogs(
        LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap(),
    ));
    let c = coordinator(logs.clone());
    c.load().unwrap();
    assert!(matches!(
        c.init_producer_id("tx", 900_001, None),
        Err(crate::error::Error::Txn(
            TxnError::InvalidTransactionTimeout { .. }
        ))
    ));
    assert!(matches!(
        c.end_txn("nope", tv1(1, 0, true)),
        Err(crate::error::Error::Txn(
            TxnError::InvalidProducerIdMapping { current: -1, .. }
        ))
    ));
    let (pid, e0) = c.init_producer_id("tx", 60_000, None).unwrap();
    c.add_partitions("tx", pid, e0, vec![("a".into(), 0)])
        .unwrap();
    let a0 = logs.log("a", 0).unwrap();
    txn_data(&a0, pid, e0, 0);
    // The zombie's successor: the open transaction is aborted, the caller retries.
    assert!(matches!(
        c.init_producer_id("tx", 60_000, None),
        Err(crate::error::Error::Txn(
            TxnError::ConcurrentTransactions { .. }
        ))
    ));
    assert_eq!(a0.last_stable_offset(), a0.log_end_offset());
    assert_eq!(a0.collect_aborted(0, 10).unwrap().len(), 1);
    let (pid2, e2) = c.init_producer_id("tx", 60_000, None).unwrap();
    assert_eq!((pid2, e2), (pid, 2));
    assert!(matches!(
        c.end_txn("tx", tv1(pid, e0, true)),
        Err(crate::error::Error::Txn(TxnError::ProducerFenced { .. }))
    ));
}

/// A transaction past transaction.timeout.ms is aborted by the broker; one found in PrepareCommit at
/// start-up is completed.
#[test]
fn timed_out_transactions_are_aborted_and_prepared_ones_completed_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let logs = Arc::new(TestLogs(
        LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap(),
    ));
    let c = coordinator(logs.clone());
    c.load().unwrap();
    let (pid, e) = c.init_producer_id("slow", 1_000, None).unwrap();
    c.add_partitions("slow", pid, e, vec![("a".into(), 0)])
        .unwrap();
    txn_data(&logs.log("a", 0).unwrap(), pid, e, 0);
    assert_eq!(c.abort_timed_out(now_ms()).unwrap(), 0);
    assert_eq!(c.abort_timed_out(now_ms() + 2_000).unwrap(), 1);
    let meta = c.describe("slow").unwrap();
    assert_eq!(
        (meta.state, meta.producer_epoch),
        (TransactionState::CompleteAbort, 1)
    );
    // A PrepareCommit left by a crash.
    let (pid, e) = c.init_producer_id("crash", 60_000, None).unwrap();
    c.add_partitions("crash", pid, e, vec![("b".into(), 0)])
        .unwrap();
    let b0 = logs.log("b", 0).unwrap();
    txn_data(&b0, pid, e, 0);
    let mut prepared = c.describe("crash").unwrap();
    prepared
        .end_txn(tv1(pid, e, true), now_ms(), || unreachable!())
        .unwrap();
    c.persist(&prepared).unwrap();
    let again = coordinator(logs.clone());
    again.load().unwrap();
    assert_eq!(
        again.describe("crash").unwrap().state,
        TransactionState::CompleteCommit
    );
    assert_eq!(b0.last_stable_offset(), b0.log_end_offset());
    assert_eq!(b0.log_end_offset(), 2, "data + COMMIT marker");
}

/// WriteTxnMarkers from an admin client (a hanging transaction the coordinator does not know): the ABORT marker
/// closes it, the LSO moves past it; a marker with an older producer epoch is refused by the log.
#[test]
fn write_marker_aborts_a_hanging_transaction_and_refuses_an_old_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let logs = Arc::new(TestLogs(
        LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap(),
    ));
    let c = coordinator(logs.clone());
    c.load().unwrap();
    let log = logs.log("hanging", 0).unwrap();
    txn_data(&log, 77, 3, 0);
    assert_eq!(log.last_stable_offset(), 0, "held at the open transaction");
    c.write_marker("hanging", 0, false, 77, 3, 0).unwrap();
    assert_eq!(log.log_end_offset(), 2, "data + marker");
    assert_eq!(log.last_stable_offset(), 2);
    let refused = c.write_marker("hanging", 0, false, 77, 2, 0).unwrap_err();
    assert_eq!(
        crate::error_code::name(crate::error_code::code(&refused)),
        "INVALID_PRODUCER_EPOCH",
        "{refused}"
    );
}

/// `transactional.id.expiration.ms` (Kafka's `removeExpiredTransactionalIds`): an id with no open transaction
/// and no update for the expiration is removed, with a tombstone, so a reload does not bring it back; an id with
/// a transaction open is kept.
#[test]
fn idle_transactional_ids_expire_and_stay_removed_after_a_reload() {
    const EXPIRATION: i64 = 60_000;
    let dir = tempfile::tempdir().unwrap();
    let logs = Arc::new(TestLogs(
        LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap(),
    ));
    let c = coordinator(logs.clone());
    c.load().unwrap();
    let (pid, epoch) = c.init_producer_id("idle", 60_000, None).unwrap();
    c.add_partitions("idle", pid, epoch, vec![("a".into(), 0)])
        .unwrap();
    txn_data(&logs.log("a", 0).unwrap(), pid, epoch, 0);
    c.end_txn("idle", tv1(pid, epoch, true)).unwrap();
    let (open_pid, open_epoch) = c.init_producer_id("open", 900_000, None).unwrap();
    c.add_partitions("open", open_pid, open_epoch, vec![("a".into(), 1)])
        .unwrap();
    let idle_since = c.describe("idle").unwrap().last_update_ms;
    assert_eq!(
        c.remove_expired_transactional_ids(idle_since + EXPIRATION - 1, EXPIRATION)
            .unwrap(),
        0
    );
    let later = idle_since.max(c.describe("open").unwrap().last_update_ms) + EXPIRATION;
    assert_eq!(
        c.remove_expired_transactional_ids(later, EXPIRATION)
            .unwrap(),
        1,
        "only the id without an open transaction"
    );
    assert!(c.describe("idle").is_none());
    assert!(c.describe("open").is_some());
    let again = coordinator(logs.clone());
    assert_eq!(again.load().unwrap(), 1, "the tombstone keeps it removed");
    assert!(again.describe("idle").is_none());
}

/// Transaction version 2 across a crash: a PrepareAbort left at epoch 32766 with its next producer id (the
/// overflow) is read back from `__transaction_state` (value version 1 keeps the next producer id and the client's
/// transaction version), completed at load with markers at epoch 32767, and the id moves to the new producer id at
/// epoch 0; a retry of the EndTxn with the old pair is then answered with the new one.
#[test]
fn tv2_overflow_prepared_before_a_crash_completes_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let logs = Arc::new(TestLogs(
        LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap(),
    ));
    let c = coordinator(logs.clone());
    c.load().unwrap();
    let (pid, _) = c.init_producer_id("tv2", 60_000, None).unwrap();
    let max = i16::MAX - 1;
    let mut meta = c.describe("tv2").unwrap();
    meta.producer_epoch = max;
    meta.add_partitions_as(pid, max, [("c".to_string(), 0)], now_ms(), super::TV2)
        .unwrap();
    c.persist(&meta).unwrap();
    let c0 = logs.log("c", 0).unwrap();
    txn_data(&c0, pid, max, 0);
    let req = EndTxnRequest {
        producer_id: pid,
        epoch: max,
        commit: false,
        transaction_version: super::TV2,
    };
    meta.end_txn(req, now_ms(), || Ok(4242)).unwrap();
    assert_eq!(
        (meta.producer_epoch, meta.next_producer_id),
        (i16::MAX, 4242)
    );
    c.persist(&meta).unwrap();

    let again = coordinator(logs.clone());
    again.load().unwrap();
    let done = again.describe("tv2").unwrap();
    assert_eq!(
        (done.state, done.producer_id, done.producer_epoch),
        (TransactionState::CompleteAbort, 4242, 0)
    );
    assert_eq!(c0.log_end_offset(), 2, "data + ABORT marker");
    assert_eq!(c0.last_stable_offset(), 2);
    let producers = c0.active_producers();
    assert_eq!(
        (producers[0].producer_id, producers[0].producer_epoch),
        (pid, i16::MAX),
        "the marker carries the bumped epoch"
    );
    assert_eq!(again.end_txn("tv2", req).unwrap(), (4242, 0));
}
