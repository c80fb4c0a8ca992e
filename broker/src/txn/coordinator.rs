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
//! appends). Per transactional id, a guard orders the producer's transactional writes against the end of its
//! transaction (Kafka's KIP-890 verification guard): a transactional produce or TxnOffsetCommit holds the guard
//! shared from the check that its partition is in the open transaction until its append returns, and ending the
//! transaction (EndTxn, a fence, the timeout abort) holds it exclusively, so no write can land after a marker and
//! open a transaction nobody will end.
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use strata_storage::record::ControlRecordType;
use strata_storage::time::now_ms;
use strata_storage::{RecordBatch, RecordBatchBuilder, UnifiedLog};
use tokio::sync::Notify;

use super::log_format::{self, partition_for};
use super::state::{EndTxnAction, EndTxnRequest, TransactionMetadata, TransactionState, TV2};
use super::TxnError;
use crate::error::Result;

pub use crate::topics::TRANSACTION_STATE;

/// The partition logs the coordinator writes to.
pub trait TxnLogs: Send + Sync {
    /// The log of `topic`-`partition`.
    fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>>;

    /// Creates `__transaction_state` if absent; returns its partition count.
    fn ensure_state_topic(&self) -> Result<i32>;

    /// A marker of `producer_id` was written to `topic`-`partition` (the offset store applies or drops the
    /// transaction's pending offsets).
    fn marker_written(&self, _topic: &str, _partition: i32, _producer_id: i64, _commit: bool) {}
}

/// The broker's logs for the coordinator: partitions through the topic component, and the offset store told
/// about markers written to `__consumer_offsets`.
pub struct BrokerTxnLogs {
    /// The topic component.
    pub topics: Arc<crate::topics::TopicManager>,
    /// Committed offsets (pending transactional ones become visible at the COMMIT marker).
    pub offsets: Arc<crate::group::offsets::OffsetStore>,
}

impl TxnLogs for BrokerTxnLogs {
    fn log(&self, topic: &str, partition: i32) -> Result<Arc<UnifiedLog>> {
        self.topics.log(topic, partition)
    }

    fn ensure_state_topic(&self) -> Result<i32> {
        self.topics.ensure_transaction_state_topic()?;
        Ok(self
            .topics
            .registry()
            .get(TRANSACTION_STATE)
            .map_or(1, |m| m.partitions))
    }

    fn marker_written(&self, topic: &str, partition: i32, producer_id: i64, commit: bool) {
        if topic == crate::topics::CONSUMER_OFFSETS {
            self.offsets
                .complete_transaction(partition, producer_id, commit);
        }
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
    /// The finalized `transaction.version` picks the `__transaction_state` value version (Kafka: 1 from level 1).
    pub features: Arc<crate::features::Features>,
}

/// The transaction coordinator.
pub struct TransactionCoordinator {
    parts: CoordinatorParts,
    txns: Mutex<HashMap<String, TransactionMetadata>>,
    /// Per transactional id: shared while a transactional write is checked and appended, exclusive while the
    /// transaction ends (see the module docs).
    guards: Mutex<HashMap<String, Arc<RwLock<()>>>>,
    /// `__transaction_state`'s partition count once it exists.
    state_partitions: AtomicI32,
    /// Set once `__transaction_state` exists and was replayed.
    ready: OnceLock<()>,
    starting: Mutex<()>,
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
        let state_partitions = AtomicI32::new(parts.state_partitions);
        Self {
            parts,
            txns: Mutex::new(HashMap::new()),
            guards: Mutex::new(HashMap::new()),
            state_partitions,
            ready: OnceLock::new(),
            starting: Mutex::new(()),
        }
    }

    /// Creates `__transaction_state` if absent and replays it, once (Kafka creates the topic on the first
    /// transactional request). Blocking.
    pub fn ensure_ready(&self) -> Result<()> {
        if self.ready.get().is_some() {
            return Ok(());
        }
        let _starting = self.starting.lock();
        if self.ready.get().is_some() {
            return Ok(());
        }
        let partitions = self.parts.logs.ensure_state_topic()?;
        self.state_partitions.store(partitions, Ordering::SeqCst);
        let loaded = self.load()?;
        tracing::info!(
            transactional_ids = loaded,
            partitions,
            "transaction coordinator loaded __transaction_state"
        );
        let _ = self.ready.set(());
        Ok(())
    }

    /// The guard of `transactional_id` (see the module docs).
    fn guard(&self, transactional_id: &str) -> Arc<RwLock<()>> {
        let mut guards = self.guards.lock();
        guards
            .entry(transactional_id.to_string())
            .or_default()
            .clone()
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<String, TransactionMetadata>> {
        self.txns.lock()
    }

    fn new_producer_id(&self) -> std::result::Result<i64, TxnError> {
        (self.parts.producer_ids)().map_err(|e| TxnError::CorruptStateRecord {
            reason: format!("no producer id could be allocated: {e}"),
        })
    }

    fn partitions(&self) -> i32 {
        self.state_partitions.load(Ordering::SeqCst)
    }

    /// Writes `meta` to its `__transaction_state` partition.
    pub(super) fn persist(&self, meta: &TransactionMetadata) -> Result<()> {
        let partition = partition_for(&meta.transactional_id, self.partitions());
        let log = self.parts.logs.log(TRANSACTION_STATE, partition)?;
        let mut b = RecordBatchBuilder::new();
        b.append(
            now_ms(),
            Some(&log_format::encode_key(&meta.transactional_id)),
            Some(&log_format::encode_value(
                meta,
                self.parts.features.transaction_version().min(1),
            )),
            &[],
        );
        strata_storage::crash_point("txn.state.before_append");
        log.append_as_leader(b.build(), 0)?;
        strata_storage::crash_point("txn.state.after_append");
        Ok(())
    }

    /// Replays `__transaction_state` (latest record per id wins, a tombstone removes it) and completes every
    /// transaction found in PrepareCommit / PrepareAbort. Returns the ids loaded.
    pub fn load(&self) -> Result<usize> {
        let mut loaded: HashMap<String, TransactionMetadata> = HashMap::new();
        for partition in 0..self.partitions() {
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
    /// CONCURRENT_TRANSACTIONS, so the producer retries). `expected` is the producer id and epoch a KIP-360 client
    /// sends to bump its own epoch: it must be the id's current pair (or the pair just handed out, a retry of the
    /// same request, answered again), else PRODUCER_FENCED. Returns (producer id, epoch).
    pub fn init_producer_id(
        &self,
        transactional_id: &str,
        timeout_ms: i32,
        expected: Option<(i64, i16)>,
    ) -> Result<(i64, i16)> {
        if timeout_ms <= 0 || timeout_ms > self.parts.max_timeout_ms {
            return Err(TxnError::InvalidTransactionTimeout {
                timeout_ms,
                max_ms: self.parts.max_timeout_ms,
            }
            .into());
        }
        let guard = self.guard(transactional_id);
        let _ending = guard.write();
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
        if let Some((pid, epoch)) = expected {
            let current = (meta.producer_id, meta.producer_epoch);
            let retry = meta.state == TransactionState::Empty
                && pid == meta.producer_id
                && epoch.checked_add(1) == Some(meta.producer_epoch);
            if retry {
                return Ok(current);
            }
            if (pid, epoch) != current {
                return Err(TxnError::ProducerFenced {
                    transactional_id: transactional_id.to_string(),
                    epoch,
                    current: meta.producer_epoch,
                }
                .into());
            }
        }
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

    /// The transactional id's state; an id no producer initialised is INVALID_PRODUCER_ID_MAPPING, as Kafka's
    /// coordinator answers AddPartitionsToTxn, AddOffsetsToTxn and EndTxn for it (TRANSACTIONAL_ID_NOT_FOUND is
    /// DescribeTransactions' answer).
    fn get<'a>(
        txns: &'a mut HashMap<String, TransactionMetadata>,
        transactional_id: &str,
        producer_id: i64,
    ) -> std::result::Result<&'a mut TransactionMetadata, TxnError> {
        txns.get_mut(transactional_id)
            .ok_or_else(|| TxnError::InvalidProducerIdMapping {
                transactional_id: transactional_id.to_string(),
                producer_id,
                current: -1,
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
        self.add_locked(
            &mut txns,
            transactional_id,
            (producer_id, epoch),
            partitions,
            0,
        )
    }

    /// Adds `partitions` with the coordinator's lock held, by a client of `transaction_version`.
    fn add_locked(
        &self,
        txns: &mut HashMap<String, TransactionMetadata>,
        transactional_id: &str,
        (producer_id, epoch): (i64, i16),
        partitions: Vec<(String, i32)>,
        transaction_version: i16,
    ) -> Result<()> {
        let meta = Self::get(txns, transactional_id, producer_id)?;
        let mut next = meta.clone();
        if next.add_partitions_as(
            producer_id,
            epoch,
            partitions,
            now_ms(),
            transaction_version,
        )? {
            self.persist(&next)?;
            *meta = next;
        }
        Ok(())
    }

    /// AddPartitionsToTxn v4+ verify-only: `partition` is in the producer's open transaction (see
    /// [`TransactionMetadata::verify_partition`]).
    pub fn verify_partition(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        partition: &(String, i32),
    ) -> Result<()> {
        let mut txns = self.lock();
        let meta = Self::get(&mut txns, transactional_id, producer_id)?;
        Ok(meta.verify_partition(producer_id, epoch, partition)?)
    }

    /// Runs `write` (a transactional append to `partition`) if `partition` is in the producer's open transaction,
    /// holding the id's guard so the transaction cannot end before the append returns (see the module docs).
    /// A partition not added is INVALID_TXN_STATE, a stale epoch PRODUCER_FENCED; nothing is written then.
    /// With `add` (transaction version 2: Produce v12+, TxnOffsetCommit v5) the partition joins the transaction
    /// first, opening it if needed, as AddPartitionsToTxn would.
    pub fn write_in_transaction<T>(
        &self,
        transactional_id: &str,
        (producer_id, epoch): (i64, i16),
        partition: &(String, i32),
        add: bool,
        write: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let guard = self.guard(transactional_id);
        let _writing = guard.read();
        {
            let mut txns = self.lock();
            if add {
                let tv = TV2;
                let parts = vec![partition.clone()];
                self.add_locked(&mut txns, transactional_id, (producer_id, epoch), parts, tv)?;
            }
            // Kafka's verification answers an unknown id INVALID_PRODUCER_ID_MAPPING.
            let meta = txns.get_mut(transactional_id).ok_or_else(|| {
                TxnError::InvalidProducerIdMapping {
                    transactional_id: transactional_id.to_string(),
                    producer_id,
                    current: -1,
                }
            })?;
            meta.verify_partition(producer_id, epoch, partition)?;
        }
        write()
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
    /// state. A retry of a completed EndTxn succeeds again. Returns the producer id and epoch the producer goes on
    /// with (EndTxn v5 answers them: under transaction version 2 the epoch was bumped, or a new producer id taken).
    pub fn end_txn(&self, transactional_id: &str, req: EndTxnRequest) -> Result<(i64, i16)> {
        let guard = self.guard(transactional_id);
        let _ending = guard.write();
        let mut txns = self.lock();
        let meta = Self::get(&mut txns, transactional_id, req.producer_id)?;
        let mut next = meta.clone();
        match next.end_txn(req, now_ms(), || self.new_producer_id())? {
            EndTxnAction::AlreadyDone => {}
            EndTxnAction::WriteMarkers => {
                self.persist(&next)?;
                *meta = next;
                self.write_markers_and_complete(meta)?;
            }
        }
        Ok((meta.producer_id, meta.producer_epoch))
    }

    /// Writes one COMMIT or ABORT marker as a partition leader answering WriteTxnMarkers (what
    /// `Admin.abortTransaction` / `kafka-transactions.sh abort` send to close a hanging transaction): appended as
    /// the coordinator's own markers are, checked by the log against the producer's epoch and coordinator epoch,
    /// whatever this coordinator knows of the producer.
    pub fn write_marker(
        &self,
        topic: &str,
        partition: i32,
        commit: bool,
        producer_id: i64,
        producer_epoch: i16,
        coordinator_epoch: i32,
    ) -> Result<()> {
        let kind = if commit {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        };
        let log = self.parts.logs.log(topic, partition)?;
        log.append_transaction_marker(kind, producer_id, producer_epoch, coordinator_epoch, 0)?;
        self.parts
            .logs
            .marker_written(topic, partition, producer_id, commit);
        self.parts.appended.notify_waiters();
        Ok(())
    }

    /// Aborts every transaction open longer than its timeout (the old producer is fenced by the epoch bump).
    /// Returns how many.
    pub fn abort_timed_out(&self, now_ms: i64) -> Result<usize> {
        let ids: Vec<String> = self
            .lock()
            .values()
            .filter(|m| m.is_timed_out(now_ms))
            .map(|m| m.transactional_id.clone())
            .collect();
        let mut aborted = 0;
        for id in &ids {
            let guard = self.guard(id);
            let _ending = guard.write();
            let mut txns = self.lock();
            // Looked at again under the guard: the producer may have ended it meanwhile.
            let Some(meta) = txns.get_mut(id).filter(|m| m.is_timed_out(now_ms)) else {
                continue;
            };
            let mut next = meta.clone();
            next.fence_and_abort(now_ms, || self.new_producer_id())?;
            self.persist(&next)?;
            *meta = next;
            tracing::info!(transactional_id = %id, timeout_ms = meta.timeout_ms, "aborting a timed-out transaction");
            self.write_markers_and_complete(meta)?;
            aborted += 1;
        }
        Ok(aborted)
    }

    /// Kafka's `removeExpiredTransactionalIds`: every transactional id with no transaction open and no update for
    /// `expiration_ms` (`transactional.id.expiration.ms`) is removed, with a tombstone in `__transaction_state` so
    /// it stays removed after a restart. Returns how many.
    pub fn remove_expired_transactional_ids(
        &self,
        now_ms: i64,
        expiration_ms: i64,
    ) -> Result<usize> {
        let ids: Vec<String> = self
            .lock()
            .values()
            .filter(|m| m.is_expired(now_ms, expiration_ms))
            .map(|m| m.transactional_id.clone())
            .collect();
        let mut removed = 0;
        for id in &ids {
            let guard = self.guard(id);
            let _ending = guard.write();
            let mut txns = self.lock();
            // Looked at again under the guard: the producer may have used it meanwhile.
            if !txns
                .get(id)
                .is_some_and(|m| m.is_expired(now_ms, expiration_ms))
            {
                continue;
            }
            let partition = partition_for(id, self.partitions());
            let log = self.parts.logs.log(TRANSACTION_STATE, partition)?;
            let mut b = RecordBatchBuilder::new();
            b.append(now_ms, Some(&log_format::encode_key(id)), None, &[]);
            log.append_as_leader(b.build(), 0)?;
            txns.remove(id);
            tracing::info!(transactional_id = %id, "transactional id expired");
            removed += 1;
        }
        Ok(removed)
    }

    /// Every known transactional id's state (ListTransactions, DescribeTransactions).
    pub fn list(&self) -> Vec<TransactionMetadata> {
        self.lock().values().cloned().collect()
    }

    /// Whether `__transaction_state` was loaded (no transactional request came yet otherwise).
    pub fn is_ready(&self) -> bool {
        self.ready.get().is_some()
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
        strata_storage::crash_point("txn.markers.before_first");
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
            strata_storage::crash_point("txn.markers.after_each");
            self.parts.logs.marker_written(
                topic,
                *partition,
                meta.producer_id,
                kind == ControlRecordType::Commit,
            );
        }
        self.parts.appended.notify_waiters();
        strata_storage::crash_point("txn.markers.before_complete");
        let mut next = meta.clone();
        next.complete(now_ms());
        self.persist(&next)?;
        *meta = next;
        Ok(())
    }
}
