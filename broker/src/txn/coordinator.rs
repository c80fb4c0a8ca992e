//! [`TransactionCoordinator`]: Kafka's `TransactionCoordinator` for one broker. It is handed what it uses — the
//! partition logs ([`TxnLogs`]), the producer id source, the `__transaction_state` partition count, the
//! `transaction.max.timeout.ms` bound and the notifier that wakes waiting fetches — never the broker.
//!
//! Every transition is written to `__transaction_state` (see [`super::log_format`]) before it is answered. Ending a
//! transaction: the Prepare state is written, then a COMMIT or ABORT marker to every partition of the transaction
//! (`__consumer_offsets` ones included), then the Complete state. [`TransactionCoordinator::load`] replays
//! `__transaction_state` at start-up and finishes a transaction found in Prepare (the broker died between the two
//! writes); markers are idempotent for the log (a second marker for a closed transaction changes nothing).
//!
//! One lock serialises the coordinator's transitions (a single broker; the markers of one EndTxn are a handful of
//! appends).
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use strata_storage::record::ControlRecordType;
use strata_storage::time::now_ms;
use strata_storage::{RecordBatch, RecordBatchBuilder, UnifiedLog};
use tokio::sync::Notify;

use super::log_format::{self, partition_for};
use super::state::{EndTxnAction, TransactionMetadata, TransactionState};
use super::TxnError;
use crate::error::Result;

/// The internal topic holding the coordinator's state.
pub const TRANSACTION_STATE: &str = "__transaction_state";

/// The partition logs the coordinator writes to.
pub trait TxnLogs: Send + Sync {
    /// The log of `topic`-`partition`.
    fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>>;
}

impl TxnLogs for crate::topics::TopicManager {
    fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>> {
        crate::topics::TopicManager::log(self, topic, partition)
    }
}

/// A source of new producer ids.
pub type ProducerIdSource = Arc<dyn Fn() -> Result<i64> + Send + Sync>;

/// What the coordinator is handed.
pub struct CoordinatorParts {
    /// The partition logs (`__transaction_state` and the data partitions).
    pub logs: Arc<dyn TxnLogs>,
    /// New producer ids.
    pub producer_ids: ProducerIdSource,
    /// `transaction.state.log.num.partitions`.
    pub state_partitions: i32,
    /// `transaction.max.timeout.ms`.
    pub max_timeout_ms: i32,
    /// Woken after markers are written.
    pub appended: Arc<Notify>,
}

/// The transaction coordinator.
pub struct TransactionCoordinator {
    parts: CoordinatorParts,
    txns: Mutex<HashMap<String, TransactionMetadata>>,
}

impl std::fmt::Debug for TransactionCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransactionCoordinator")
            .field("state_partitions", &self.parts.state_partitions)
            .finish_non_exhaustive()
    }
}

impl TransactionCoordinator {
    /// A coordinator with no state; call [`TransactionCoordinator::load`] before serving.
    pub fn new(parts: CoordinatorParts) -> Self {
        Self {
            parts,
            txns: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TransactionMetadata>> {
        self.txns.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn new_producer_id(&self) -> std::result::Result<i64, TxnError> {
        (self.parts.producer_ids)().map_err(|e| TxnError::CorruptStateRecord {
            reason: format!("no producer id could be allocated: {e}"),
        })
    }

    /// Writes `meta` to its `__transaction_state` partition.
    fn persist(&self, meta: &TransactionMetadata) -> Result<()> {
        let partition = partition_for(&meta.transactional_id, self.parts.state_partitions);
        let log = self.parts.logs.log(TRANSACTION_STATE, partition)?;
        let mut b = RecordBatchBuilder::new();
        b.append(
            now_ms(),
            Some(&log_format::encode_key(&meta.transactional_id)),
            Some(&log_format::encode_value(meta)),
            &[],
        );
        log.append_as_leader(b.build(), 0)?;
        Ok(())
    }

    /// Replays `__transaction_state` (latest record per id wins, a tombstone removes it) and completes every
    /// transaction found in PrepareCommit / PrepareAbort. Returns the ids loaded.
    pub fn load(&self) -> Result<usize> {
        let mut loaded: HashMap<String, TransactionMetadata> = HashMap::new();
        for partition in 0..self.parts.state_partitions {
            let log = self.parts.logs.log(TRANSACTION_STATE, partition)?;
            let mut offset = log.log_start_offset().max(log.local_log_start_offset());
            while offset < log.log_end_offset() {
                let data = log.read(offset, 1 << 20, true, None)?.records;
                if data.is_empty() {
                    break;
                }
                for batch in RecordBatch::iter(&data) {
                    let batch = batch?;
                    offset = batch.next_offset();
                    if batch.is_control() {
                        continue;
                    }
                    for record in batch.records()? {
                        let record = record?;
                        let Some(key) = record.key.as_deref() else {
                            continue;
                        };
                        let id = match log_format::decode_key(key) {
                            Ok(id) => id,
                            Err(e) => {
                                tracing::warn!(error = %e, "skipping a __transaction_state record");
                                continue;
                            }
                        };
                        match record.value.as_deref() {
                            None => {
                                loaded.remove(&id);
                            }
                            Some(v) => match log_format::decode_value(&id, v) {
                                Ok(meta) => {
                                    loaded.insert(id, meta);
                                }
                                Err(e) => {
                                    tracing::warn!(error = %e, transactional_id = %id, "skipping a __transaction_state record")
                                }
                            },
                        }
                    }
                }
            }
        }
        let count = loaded.len();
        let mut txns = self.lock();
        *txns = loaded;
        let preparing: Vec<String> = txns
            .values()
            .filter(|m| m.state.is_preparing())
            .map(|m| m.transactional_id.clone())
            .collect();
        for id in preparing {
            let meta = txns.get_mut(&id).expect("listed");
            tracing::info!(transactional_id = %id, state = meta.state.name(), "completing a transaction found preparing at start-up");
            self.write_markers_and_complete(meta)?;
        }
        Ok(count)
    }

    /// InitProducerId with a transactional id: a new id gets a new producer id at epoch 0; a known one has its
    /// epoch bumped (fencing the older producer; an open transaction is aborted first and the answer is
    /// CONCURRENT_TRANSACTIONS, so the producer retries). Returns (producer id, epoch).
    pub fn init_producer_id(&self, transactional_id: &str, timeout_ms: i32) -> Result<(i64, i16)> {
        if timeout_ms <= 0 || timeout_ms > self.parts.max_timeout_ms {
            return Err(TxnError::InvalidTransactionTimeout {
                timeout_ms,
                max_ms: self.parts.max_timeout_ms,
            }
            .into());
        }
        let now = now_ms();
        let mut txns = self.lock();
        let Some(meta) = txns.get_mut(transactional_id) else {
            let pid = self.new_producer_id()?;
            let meta =
                TransactionMetadata::new(transactional_id.to_string(), pid, 0, timeout_ms, now);
            self.persist(&meta)?;
            txns.insert(transactional_id.to_string(), meta);
            return Ok((pid, 0));
        };
        let mut next = meta.clone();
        match next.init_producer(timeout_ms, now, || self.new_producer_id()) {
            Ok(()) => {
                self.persist(&next)?;
                *meta = next;
                Ok((meta.producer_id, meta.producer_epoch))
            }
            Err(e @ TxnError::ConcurrentTransactions { .. }) if next.state != meta.state => {
                // The open transaction was fenced: abort it now; the producer retries.
                self.persist(&next)?;
                *meta = next;
                self.write_markers_and_complete(meta)?;
                Err(e.into())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn get<'a>(
        txns: &'a mut HashMap<String, TransactionMetadata>,
        transactional_id: &str,
    ) -> std::result::Result<&'a mut TransactionMetadata, TxnError> {
        txns.get_mut(transactional_id)
            .ok_or_else(|| TxnError::TransactionalIdNotFound {
                transactional_id: transactional_id.to_string(),
            })
    }

    /// AddPartitionsToTxn: the partitions join the transaction (which opens if needed).
    pub fn add_partitions(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        partitions: Vec<(String, i32)>,
    ) -> Result<()> {
        let mut txns = self.lock();
        let meta = Self::get(&mut txns, transactional_id)?;
        let mut next = meta.clone();
        if next.add_partitions(producer_id, epoch, partitions, now_ms())? {
            self.persist(&next)?;
            *meta = next;
        }
        Ok(())
    }

    /// AddPartitionsToTxn v4 verify-only: whether `partition` is in the producer's open transaction.
    pub fn verify_partition(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        partition: &(String, i32),
    ) -> Result<bool> {
        let mut txns = self.lock();
        let meta = Self::get(&mut txns, transactional_id)?;
        meta.check_ongoing(producer_id, epoch, "verify partitions of")?;
        Ok(meta.partitions.contains(partition))
    }

    /// AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction.
    pub fn add_offsets(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        offsets_partition: i32,
    ) -> Result<()> {
        self.add_partitions(
            transactional_id,
            producer_id,
            epoch,
            vec![(
                crate::topics::CONSUMER_OFFSETS.to_string(),
                offsets_partition,
            )],
        )
    }

    /// EndTxn: PrepareCommit / PrepareAbort is written, the markers go to every partition, then the Complete
    /// state. A retry of a completed EndTxn succeeds again.
    pub fn end_txn(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        commit: bool,
    ) -> Result<()> {
        let mut txns = self.lock();
        let meta = Self::get(&mut txns, transactional_id)?;
        let mut next = meta.clone();
        match next.end_txn(producer_id, epoch, commit, now_ms())? {
            EndTxnAction::AlreadyDone => Ok(()),
            EndTxnAction::WriteMarkers => {
                self.persist(&next)?;
                *meta = next;
                self.write_markers_and_complete(meta)
            }
        }
    }

    /// Aborts every transaction open longer than its timeout (the old producer is fenced by the epoch bump).
    /// Returns how many.
    pub fn abort_timed_out(&self, now_ms: i64) -> Result<usize> {
        let mut txns = self.lock();
        let ids: Vec<String> = txns
            .values()
            .filter(|m| m.is_timed_out(now_ms))
            .map(|m| m.transactional_id.clone())
            .collect();
        for id in &ids {
            let meta = txns.get_mut(id).expect("listed");
            let mut next = meta.clone();
            next.fence_and_abort(now_ms, || self.new_producer_id())?;
            self.persist(&next)?;
            *meta = next;
            tracing::info!(transactional_id = %id, "aborting a timed-out transaction");
            self.write_markers_and_complete(meta)?;
        }
        Ok(ids.len())
    }

    /// The state of `transactional_id`, if known.
    pub fn describe(&self, transactional_id: &str) -> Option<TransactionMetadata> {
        self.lock().get(transactional_id).cloned()
    }

    /// Writes the markers of a Prepare state to every partition, then persists the Complete state.
    fn write_markers_and_complete(&self, meta: &mut TransactionMetadata) -> Result<()> {
        let kind = if meta.commits() {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        };
        debug_assert!(matches!(
            meta.state,
            TransactionState::PrepareCommit
                | TransactionState::PrepareAbort
                | TransactionState::PrepareEpochFence
        ));
        for (topic, partition) in &meta.partitions {
            // A partition deleted meanwhile gets no marker (Kafka drops markers of unknown partitions too).
            let log = match self.parts.logs.log(topic, *partition) {
                Ok(log) => log,
                Err(e @ crate::error::Error::UnknownTopicOrPartition(_)) => {
                    tracing::warn!(error = %e, "no marker for a partition that is gone");
                    continue;
                }
                Err(e) => return Err(e),
            };
            log.append_transaction_marker(kind, meta.producer_id, meta.producer_epoch, 0, 0)?;
        }
        self.parts.appended.notify_waiters();
        let mut next = meta.clone();
        next.complete(now_ms());
        self.persist(&next)?;
        *meta = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};
    use strata_storage::{LogConfig, LogManager, LogManagerConfig, TopicPartition};

    struct TestLogs(LogManager);

    impl TxnLogs for TestLogs {
        fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>> {
            let tp = TopicPartition::new(topic, partition);
            Ok(self
                .0
                .get_or_create_log(&tp, uuid::Uuid::from_u128(1), LogConfig::default())?)
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
        let (pid, epoch) = c.init_producer_id("tx", 60_000).unwrap();
        assert_eq!((pid, epoch), (1000, 0));
        c.add_partitions("tx", pid, epoch, vec![("a".into(), 0), ("a".into(), 1)])
            .unwrap();
        let (a0, a1) = (logs.log("a", 0).unwrap(), logs.log("a", 1).unwrap());
        txn_data(&a0, pid, epoch, 0);
        txn_data(&a1, pid, epoch, 0);
        assert_eq!(a0.last_stable_offset(), 0);
        c.end_txn("tx", pid, epoch, true).unwrap();
        for log in [&a0, &a1] {
            assert_eq!(log.log_end_offset(), 2, "data + marker");
            assert_eq!(log.last_stable_offset(), 2);
        }
        c.end_txn("tx", pid, epoch, true).unwrap(); // a retry
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
            c.init_producer_id("tx", 900_001),
            Err(crate::error::Error::Txn(
                TxnError::InvalidTransactionTimeout { .. }
            ))
        ));
        assert!(matches!(
            c.end_txn("nope", 1, 0, true),
            Err(crate::error::Error::Txn(
                TxnError::TransactionalIdNotFound { .. }
            ))
        ));
        let (pid, e0) = c.init_producer_id("tx", 60_000).unwrap();
        c.add_partitions("tx", pid, e0, vec![("a".into(), 0)])
            .unwrap();
        let a0 = logs.log("a", 0).unwrap();
        txn_data(&a0, pid, e0, 0);
        // The zombie's successor: the open transaction is aborted, the caller retries.
        assert!(matches!(
            c.init_producer_id("tx", 60_000),
            Err(crate::error::Error::Txn(
                TxnError::ConcurrentTransactions { .. }
            ))
        ));
        assert_eq!(a0.last_stable_offset(), a0.log_end_offset());
        assert_eq!(a0.collect_aborted(0, 10).unwrap().len(), 1);
        let (pid2, e2) = c.init_producer_id("tx", 60_000).unwrap();
        assert_eq!((pid2, e2), (pid, 2));
        assert!(matches!(
            c.end_txn("tx", pid, e0, true),
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
        let (pid, e) = c.init_producer_id("slow", 1_000).unwrap();
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
        let (pid, e) = c.init_producer_id("crash", 60_000).unwrap();
        c.add_partitions("crash", pid, e, vec![("b".into(), 0)])
            .unwrap();
        let b0 = logs.log("b", 0).unwrap();
        txn_data(&b0, pid, e, 0);
        let mut prepared = c.describe("crash").unwrap();
        prepared.end_txn(pid, e, true, now_ms()).unwrap();
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
}
