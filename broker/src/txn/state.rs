//! One transactional id's state and its transitions (Kafka's `TransactionMetadata` and the checks of
//! `TransactionCoordinator`), pure: the coordinator persists each new state to `__transaction_state` and writes
//! the markers a transition asks for.
//!
//! ```text
//!   Empty ──AddPartitions──▶ Ongoing ──EndTxn(commit)──▶ PrepareCommit ──markers written──▶ CompleteCommit
//!     ▲                        │  └────EndTxn(abort)───▶ PrepareAbort  ──markers written──▶ CompleteAbort
//!     └──InitProducerId────────┘ (timeout or InitProducerId while Ongoing: epoch bumped, then PrepareAbort)
//! ```
use std::collections::BTreeSet;

use super::TxnError;

/// Kafka's `TransactionState`, with its status ids as written to `__transaction_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransactionState {
    /// 0: no transaction in progress.
    Empty,
    /// 1: partitions were added; the transaction is open.
    Ongoing,
    /// 2: EndTxn(commit) accepted; markers being written.
    PrepareCommit,
    /// 3: the transaction is being aborted; markers being written.
    PrepareAbort,
    /// 4: committed.
    CompleteCommit,
    /// 5: aborted.
    CompleteAbort,
    /// 6: the id expired.
    Dead,
    /// 7: an open transaction is being fenced by a newer producer (Kafka's `PrepareEpochFence`).
    PrepareEpochFence,
}

impl TransactionState {
    /// The status byte.
    pub fn id(self) -> i8 {
        match self {
            TransactionState::Empty => 0,
            TransactionState::Ongoing => 1,
            TransactionState::PrepareCommit => 2,
            TransactionState::PrepareAbort => 3,
            TransactionState::CompleteCommit => 4,
            TransactionState::CompleteAbort => 5,
            TransactionState::Dead => 6,
            TransactionState::PrepareEpochFence => 7,
        }
    }

    /// The state of a status byte.
    pub fn from_id(id: i8) -> Option<Self> {
        Some(match id {
            0 => TransactionState::Empty,
            1 => TransactionState::Ongoing,
            2 => TransactionState::PrepareCommit,
            3 => TransactionState::PrepareAbort,
            4 => TransactionState::CompleteCommit,
            5 => TransactionState::CompleteAbort,
            6 => TransactionState::Dead,
            7 => TransactionState::PrepareEpochFence,
            _ => return None,
        })
    }

    /// Kafka's name (DescribeTransactions / ListTransactions show it).
    pub fn name(self) -> &'static str {
        match self {
            TransactionState::Empty => "Empty",
            TransactionState::Ongoing => "Ongoing",
            TransactionState::PrepareCommit => "PrepareCommit",
            TransactionState::PrepareAbort => "PrepareAbort",
            TransactionState::CompleteCommit => "CompleteCommit",
            TransactionState::CompleteAbort => "CompleteAbort",
            TransactionState::Dead => "Dead",
            TransactionState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    /// Whether markers are being written (a request must wait: CONCURRENT_TRANSACTIONS).
    pub fn is_preparing(self) -> bool {
        matches!(
            self,
            TransactionState::PrepareCommit
                | TransactionState::PrepareAbort
                | TransactionState::PrepareEpochFence
        )
    }
}

/// What the coordinator knows about one transactional id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionMetadata {
    /// The id.
    pub transactional_id: String,
    /// Its producer id.
    pub producer_id: i64,
    /// The current producer epoch (older epochs are fenced).
    pub producer_epoch: i16,
    /// `transaction.timeout.ms` of the producer.
    pub timeout_ms: i32,
    /// Where the transaction is.
    pub state: TransactionState,
    /// Partitions of the open (or preparing) transaction, `__consumer_offsets` ones included.
    pub partitions: BTreeSet<(String, i32)>,
    /// Last change (ms).
    pub last_update_ms: i64,
    /// When the open transaction started (ms; -1 when none).
    pub start_ms: i64,
    /// The producer id before the last transition (Kafka's `prevProducerId`; -1 when none): a transaction-version-2
    /// EndTxn retried across an epoch overflow still names it.
    pub prev_producer_id: i64,
    /// The producer id the id moves to when the preparing transaction completes (Kafka's `nextProducerId`, set when
    /// a transaction-version-2 EndTxn exhausts the epoch; -1 otherwise).
    pub next_producer_id: i64,
    /// The transaction version of the client's last transition (Kafka's `ClientTransactionVersion`): 2 when it
    /// came through EndTxn v5, Produce v12+ or TxnOffsetCommit v5 (KIP-890 part 2), else 0.
    pub client_transaction_version: i16,
}

/// Transaction version 2 (KIP-890 part 2): the epoch is bumped at every transaction end.
pub const TV2: i16 = 2;

/// What an EndTxn asks the coordinator to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndTxnAction {
    /// Persist the Prepare state, write the markers, then [`TransactionMetadata::complete`].
    WriteMarkers,
    /// A retry of an EndTxn already completed: answer success.
    AlreadyDone,
}

/// What an EndTxn asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndTxnRequest {
    /// The producer id sent.
    pub producer_id: i64,
    /// The epoch sent.
    pub epoch: i16,
    /// Commit (else abort).
    pub commit: bool,
    /// The client's transaction version: 2 for EndTxn v5+ (the epoch is bumped), else 0.
    pub transaction_version: i16,
}

/// The largest epoch handed out before a new producer id is taken (Kafka: `Short.MaxValue - 1`, leaving room for
/// the bump a fencing abort makes).
const MAX_EPOCH: i16 = i16::MAX - 1;

impl TransactionMetadata {
    /// A new id's metadata: state Empty, epoch `epoch`.
    pub fn new(
        transactional_id: String,
        producer_id: i64,
        epoch: i16,
        timeout_ms: i32,
        now_ms: i64,
    ) -> Self {
        Self {
            transactional_id,
            producer_id,
            producer_epoch: epoch,
            timeout_ms,
            state: TransactionState::Empty,
            partitions: BTreeSet::new(),
            last_update_ms: now_ms,
            start_ms: -1,
            prev_producer_id: -1,
            next_producer_id: -1,
            client_transaction_version: 0,
        }
    }

    fn check_producer(&self, producer_id: i64, epoch: i16) -> Result<(), TxnError> {
        if producer_id != self.producer_id {
            return Err(TxnError::InvalidProducerIdMapping {
                transactional_id: self.transactional_id.clone(),
                producer_id,
                current: self.producer_id,
            });
        }
        if epoch != self.producer_epoch {
            return Err(TxnError::ProducerFenced {
                transactional_id: self.transactional_id.clone(),
                epoch,
                current: self.producer_epoch,
            });
        }
        Ok(())
    }

    fn concurrent(&self) -> TxnError {
        TxnError::ConcurrentTransactions {
            transactional_id: self.transactional_id.clone(),
            state: self.state.name(),
        }
    }

    fn invalid_state(&self, action: &'static str) -> TxnError {
        TxnError::InvalidTxnState {
            transactional_id: self.transactional_id.clone(),
            state: self.state.name(),
            action,
        }
    }

    /// Bumps the epoch; past [`MAX_EPOCH`] the id takes `new_producer_id()` with epoch 0.
    fn bump_epoch(
        &mut self,
        new_producer_id: impl FnOnce() -> Result<i64, TxnError>,
    ) -> Result<(), TxnError> {
        if self.producer_epoch >= MAX_EPOCH {
            self.producer_id = new_producer_id()?;
            self.producer_epoch = 0;
        } else {
            self.producer_epoch = (self.producer_epoch + 1).max(0);
        }
        Ok(())
    }

    /// InitProducerId for an existing id (Kafka's `handleInitProducerId`): with no transaction open, bumps the
    /// epoch (fencing the older producer) and returns to Empty. An open transaction is fenced first: the epoch is
    /// bumped, the state becomes PrepareAbort (the coordinator aborts it) and the caller answers
    /// CONCURRENT_TRANSACTIONS so the producer retries. While markers are written: CONCURRENT_TRANSACTIONS.
    pub fn init_producer(
        &mut self,
        timeout_ms: i32,
        now_ms: i64,
        new_producer_id: impl FnOnce() -> Result<i64, TxnError>,
    ) -> Result<(), TxnError> {
        match self.state {
            s if s.is_preparing() => Err(self.concurrent()),
            TransactionState::Ongoing => {
                self.fence_and_abort(now_ms, new_producer_id)?;
                Err(self.concurrent())
            }
            _ => {
                self.prev_producer_id = self.producer_id;
                self.bump_epoch(new_producer_id)?;
                self.timeout_ms = timeout_ms;
                self.state = TransactionState::Empty;
                self.partitions.clear();
                self.start_ms = -1;
                self.last_update_ms = now_ms;
                Ok(())
            }
        }
    }

    /// Bumps the epoch of an open transaction and moves it to PrepareAbort (Kafka's epoch fence, used by
    /// InitProducerId and the timeout abort): the old producer's next request is PRODUCER_FENCED.
    pub fn fence_and_abort(
        &mut self,
        now_ms: i64,
        new_producer_id: impl FnOnce() -> Result<i64, TxnError>,
    ) -> Result<(), TxnError> {
        self.prev_producer_id = self.producer_id;
        if self.producer_epoch < MAX_EPOCH {
            self.bump_epoch(new_producer_id)?;
        }
        self.state = TransactionState::PrepareAbort;
        self.last_update_ms = now_ms;
        Ok(())
    }

    /// Whether the id is idle past `expiration_ms` with no transaction open (Kafka: Empty / CompleteCommit /
    /// CompleteAbort).
    pub fn is_expired(&self, now_ms: i64, expiration_ms: i64) -> bool {
        matches!(
            self.state,
            TransactionState::Empty
                | TransactionState::CompleteCommit
                | TransactionState::CompleteAbort
        ) && now_ms.saturating_sub(self.last_update_ms) >= expiration_ms
    }

    /// Whether the open transaction ran past its timeout at `now_ms`.
    pub fn is_timed_out(&self, now_ms: i64) -> bool {
        self.state == TransactionState::Ongoing
            && self.start_ms >= 0
            && now_ms > self.start_ms.saturating_add(self.timeout_ms as i64)
    }

    /// AddPartitionsToTxn / AddOffsetsToTxn: opens the transaction (or extends it). Returns whether the state
    /// changed (then it is persisted).
    pub fn add_partitions(
        &mut self,
        producer_id: i64,
        epoch: i16,
        partitions: impl IntoIterator<Item = (String, i32)>,
        now_ms: i64,
    ) -> Result<bool, TxnError> {
        self.add_partitions_as(producer_id, epoch, partitions, now_ms, 0)
    }

    /// [`Self::add_partitions`] by a client of `transaction_version` (2 when the partition is added implicitly by
    /// Produce v12+ or TxnOffsetCommit v5, KIP-890 part 2).
    pub fn add_partitions_as(
        &mut self,
        producer_id: i64,
        epoch: i16,
        partitions: impl IntoIterator<Item = (String, i32)>,
        now_ms: i64,
        transaction_version: i16,
    ) -> Result<bool, TxnError> {
        self.check_producer(producer_id, epoch)?;
        if self.state.is_preparing() {
            return Err(self.concurrent());
        }
        if self.state == TransactionState::Dead {
            return Err(self.invalid_state("add partitions to"));
        }
        let before = self.partitions.len();
        self.partitions.extend(partitions);
        let changed = self.state != TransactionState::Ongoing || self.partitions.len() != before;
        if self.state != TransactionState::Ongoing {
            self.state = TransactionState::Ongoing;
            self.start_ms = now_ms;
        }
        if changed {
            self.last_update_ms = now_ms;
            self.prev_producer_id = self.producer_id;
            self.client_transaction_version = transaction_version;
        }
        Ok(changed)
    }

    /// Kafka's partition verification (`handleVerifyPartitionsInTransaction`, KIP-890): the producer id and epoch
    /// must be current, no transaction may be completing, and `partition` must be in the transaction
    /// ([`TxnError::PartitionNotInTransaction`], TRANSACTION_ABORTABLE to clients that know it).
    pub fn verify_partition(
        &self,
        producer_id: i64,
        epoch: i16,
        partition: &(String, i32),
    ) -> Result<(), TxnError> {
        self.check_producer(producer_id, epoch)?;
        if matches!(
            self.state,
            TransactionState::PrepareCommit | TransactionState::PrepareAbort
        ) {
            return Err(self.concurrent());
        }
        if self.partitions.contains(partition) {
            return Ok(());
        }
        Err(TxnError::PartitionNotInTransaction {
            transactional_id: self.transactional_id.clone(),
            topic: partition.0.clone(),
            partition: partition.1,
        })
    }

    /// EndTxn (Kafka's `endTransaction` checks): an open transaction moves to PrepareCommit / PrepareAbort; a retry
    /// of the completed one is answered again; anything else is INVALID_TXN_STATE or CONCURRENT_TRANSACTIONS.
    ///
    /// Transaction version 2 (EndTxn v5, KIP-890 part 2): the Prepare state carries the epoch bumped by one (the
    /// markers are written with it, fencing the transaction's own late writes); at epoch 32766 a new producer id is
    /// taken from `new_producer_id`, which the id moves to at epoch 0 when the transaction completes. A retry is
    /// recognised by the epoch one below the current one (or the previous producer id at 32766 after an overflow);
    /// the same epoch on a completed transaction is the next transaction, which may abort without partitions.
    pub fn end_txn(
        &mut self,
        req: EndTxnRequest,
        now_ms: i64,
        new_producer_id: impl FnOnce() -> Result<i64, TxnError>,
    ) -> Result<EndTxnAction, TxnError> {
        use TransactionState::*;
        let EndTxnRequest {
            producer_id,
            epoch,
            commit,
            transaction_version,
        } = req;
        let tv2 = transaction_version >= TV2;
        let state_tv2 = self.client_transaction_version >= TV2;
        let retry_on_overflow = state_tv2
            && producer_id != self.producer_id
            && self.prev_producer_id == producer_id
            && epoch == MAX_EPOCH
            && self.producer_epoch == 0;
        let retry_on_bump = state_tv2
            && producer_id == self.producer_id
            && epoch.checked_add(1) == Some(self.producer_epoch);
        let retry = retry_on_bump || retry_on_overflow;
        if producer_id != self.producer_id && !retry_on_overflow {
            return Err(TxnError::InvalidProducerIdMapping {
                transactional_id: self.transactional_id.clone(),
                producer_id,
                current: self.producer_id,
            });
        }
        let valid_epoch = if state_tv2 {
            match self.state {
                PrepareCommit | PrepareAbort => retry_on_bump,
                CompleteCommit | CompleteAbort => retry || epoch == self.producer_epoch,
                _ => epoch == self.producer_epoch,
            }
        } else {
            epoch == self.producer_epoch
        };
        if !valid_epoch {
            return Err(TxnError::ProducerFenced {
                transactional_id: self.transactional_id.clone(),
                epoch,
                current: self.producer_epoch,
            });
        }
        let invalid = |m: &Self| m.invalid_state(if commit { "commit" } else { "abort" });
        let empty_abort = !commit && tv2 && !retry;
        match (self.state, commit) {
            (Ongoing, _) => {}
            (CompleteCommit, true) | (CompleteAbort, false) if retry || !state_tv2 => {
                return Ok(EndTxnAction::AlreadyDone)
            }
            // Transaction version 2 may abort a transaction that added nothing (its producer cannot know whether
            // a Produce added a partition before failing).
            (Empty | CompleteCommit | CompleteAbort, false) if empty_abort => {
                self.partitions.clear();
                self.start_ms = now_ms;
            }
            (PrepareCommit, true) | (PrepareAbort, false) => return Err(self.concurrent()),
            _ => return Err(invalid(self)),
        }
        self.prepare_end(commit, transaction_version, now_ms, new_producer_id)?;
        Ok(EndTxnAction::WriteMarkers)
    }

    /// Moves the transaction to PrepareCommit / PrepareAbort (Kafka's `prepareAbortOrCommit`).
    fn prepare_end(
        &mut self,
        commit: bool,
        transaction_version: i16,
        now_ms: i64,
        new_producer_id: impl FnOnce() -> Result<i64, TxnError>,
    ) -> Result<(), TxnError> {
        self.next_producer_id = -1;
        if transaction_version >= TV2 {
            if self.producer_epoch >= MAX_EPOCH && self.producer_epoch != i16::MAX {
                self.next_producer_id = new_producer_id()?;
            }
            // An epoch already at i16::MAX (only reachable through a bug) aborts without overflowing.
            self.producer_epoch = self.producer_epoch.saturating_add(1);
        }
        self.prev_producer_id = self.producer_id;
        self.state = if commit {
            TransactionState::PrepareCommit
        } else {
            TransactionState::PrepareAbort
        };
        self.client_transaction_version = transaction_version;
        self.last_update_ms = now_ms;
        Ok(())
    }

    /// The markers were written: PrepareCommit → CompleteCommit, PrepareAbort → CompleteAbort; the partitions are
    /// forgotten. After a transaction-version-2 epoch overflow the id moves to its next producer id at epoch 0.
    pub fn complete(&mut self, now_ms: i64) {
        self.state = match self.state {
            TransactionState::PrepareCommit => TransactionState::CompleteCommit,
            TransactionState::PrepareAbort | TransactionState::PrepareEpochFence => {
                TransactionState::CompleteAbort
            }
            other => other,
        };
        self.prev_producer_id = self.producer_id;
        if self.client_transaction_version >= TV2 && self.next_producer_id >= 0 {
            self.producer_id = self.next_producer_id;
            self.producer_epoch = 0;
        }
        self.next_producer_id = -1;
        self.partitions.clear();
        self.last_update_ms = now_ms;
    }

    /// Whether the state's markers are COMMIT markers (PrepareCommit) rather than ABORT ones.
    pub fn commits(&self) -> bool {
        self.state == TransactionState::PrepareCommit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> TransactionMetadata {
        TransactionMetadata::new("tx".into(), 7, 0, 60_000, 0)
    }

    fn no_new_id() -> Result<i64, TxnError> {
        panic!("no new producer id expected")
    }

    fn tv1(producer_id: i64, epoch: i16, commit: bool) -> EndTxnRequest {
        EndTxnRequest {
            producer_id,
            epoch,
            commit,
            transaction_version: 0,
        }
    }

    fn tv2(producer_id: i64, epoch: i16, commit: bool) -> EndTxnRequest {
        EndTxnRequest {
            transaction_version: TV2,
            ..tv1(producer_id, epoch, commit)
        }
    }

    /// Kafka's happy path: add partitions → Ongoing, EndTxn(commit) → PrepareCommit → CompleteCommit; a retried
    /// EndTxn(commit) is answered again, an abort after a commit is INVALID_TXN_STATE.
    #[test]
    fn commit_path_and_retries_follow_kafka() {
        let mut m = meta();
        assert!(m.add_partitions(7, 0, [("a".into(), 0)], 10).unwrap());
        assert_eq!((m.state, m.start_ms), (TransactionState::Ongoing, 10));
        assert!(!m.add_partitions(7, 0, [("a".into(), 0)], 11).unwrap());
        assert_eq!(
            m.end_txn(tv1(7, 0, true), 20, no_new_id).unwrap(),
            EndTxnAction::WriteMarkers
        );
        assert!(matches!(
            m.add_partitions(7, 0, [("b".into(), 0)], 21),
            Err(TxnError::ConcurrentTransactions { .. })
        ));
        assert!(m.commits());
        m.complete(30);
        assert_eq!(m.state, TransactionState::CompleteCommit);
        assert!(m.partitions.is_empty());
        assert_eq!(
            m.end_txn(tv1(7, 0, true), 31, no_new_id).unwrap(),
            EndTxnAction::AlreadyDone
        );
        assert!(matches!(
            m.end_txn(tv1(7, 0, false), 31, no_new_id),
            Err(TxnError::InvalidTxnState { .. })
        ));
    }

    /// EndTxn without a transaction is INVALID_TXN_STATE; wrong ids and epochs are refused before anything.
    #[test]
    fn wrong_state_id_or_epoch_is_refused() {
        let mut m = meta();
        assert!(matches!(
            m.end_txn(tv1(7, 0, true), 1, no_new_id),
            Err(TxnError::InvalidTxnState { .. })
        ));
        assert!(matches!(
            m.add_partitions(8, 0, [("a".into(), 0)], 1),
            Err(TxnError::InvalidProducerIdMapping { .. })
        ));
        assert!(matches!(
            m.add_partitions(7, 1, [("a".into(), 0)], 1),
            Err(TxnError::ProducerFenced {
                epoch: 1,
                current: 0,
                ..
            })
        ));
        assert_eq!(m.state, TransactionState::Empty);
    }

    /// A new producer with the same transactional id fences the old one: the epoch is bumped; an open
    /// transaction is aborted first (CONCURRENT_TRANSACTIONS until the abort completes).
    #[test]
    fn init_producer_fences_the_older_producer_and_aborts_its_transaction() {
        let mut m = meta();
        m.init_producer(30_000, 1, no_new_id).unwrap();
        assert_eq!((m.producer_epoch, m.timeout_ms), (1, 30_000));
        m.add_partitions(7, 1, [("a".into(), 0)], 2).unwrap();
        assert!(matches!(
            m.init_producer(30_000, 3, no_new_id),
            Err(TxnError::ConcurrentTransactions { .. })
        ));
        assert_eq!(
            (m.state, m.producer_epoch),
            (TransactionState::PrepareAbort, 2)
        );
        assert!(!m.commits());
        assert!(matches!(
            m.end_txn(tv1(7, 1, true), 4, no_new_id),
            Err(TxnError::ProducerFenced { .. })
        ));
        m.complete(5);
        m.init_producer(30_000, 6, no_new_id).unwrap();
        assert_eq!((m.state, m.producer_epoch), (TransactionState::Empty, 3));
    }

    /// Past epoch 32766 the id takes a new producer id at epoch 0 (Kafka's epoch exhaustion).
    #[test]
    fn epoch_exhaustion_takes_a_new_producer_id() {
        let mut m = meta();
        m.producer_epoch = i16::MAX - 1;
        m.init_producer(1, 1, || Ok(99)).unwrap();
        assert_eq!((m.producer_id, m.producer_epoch), (99, 0));
    }

    /// `transaction.timeout.ms` counts from the transaction's start.
    #[test]
    fn timeout_counts_from_the_start() {
        let mut m = meta();
        m.add_partitions(7, 0, [("a".into(), 0)], 1_000).unwrap();
        assert!(!m.is_timed_out(61_000));
        assert!(m.is_timed_out(61_001));
        m.fence_and_abort(61_001, no_new_id).unwrap();
        assert_eq!(
            (m.state, m.producer_epoch),
            (TransactionState::PrepareAbort, 1)
        );
    }

    /// Transaction version 2 (KIP-890 part 2): every end bumps the epoch (the markers carry it); a retry is the
    /// epoch one below; the same epoch again is the next transaction (commit without partitions is
    /// INVALID_TXN_STATE, abort is allowed); an older epoch is fenced.
    #[test]
    fn tv2_end_bumps_the_epoch_and_recognises_retries() {
        let mut m = meta();
        m.add_partitions_as(7, 0, [("a".into(), 0)], 1, TV2)
            .unwrap();
        assert_eq!(
            m.end_txn(tv2(7, 0, true), 2, no_new_id).unwrap(),
            EndTxnAction::WriteMarkers
        );
        assert_eq!(
            (m.state, m.producer_epoch),
            (TransactionState::PrepareCommit, 1)
        );
        // A retry while the markers are written waits.
        assert!(matches!(
            m.end_txn(tv2(7, 0, true), 3, no_new_id),
            Err(TxnError::ConcurrentTransactions { .. })
        ));
        m.complete(4);
        assert_eq!(
            (m.state, m.producer_id, m.producer_epoch),
            (TransactionState::CompleteCommit, 7, 1)
        );
        assert_eq!(
            m.end_txn(tv2(7, 0, true), 5, no_new_id).unwrap(),
            EndTxnAction::AlreadyDone
        );
        assert!(matches!(
            m.end_txn(tv2(7, 0, false), 5, no_new_id),
            Err(TxnError::InvalidTxnState { .. })
        ));
        assert!(matches!(
            m.end_txn(tv2(7, 1, true), 5, no_new_id),
            Err(TxnError::InvalidTxnState { .. })
        ));
        // An abort of a transaction that added nothing bumps the epoch too.
        assert_eq!(
            m.end_txn(tv2(7, 1, false), 6, no_new_id).unwrap(),
            EndTxnAction::WriteMarkers
        );
        assert_eq!(
            (m.state, m.producer_epoch, m.start_ms),
            (TransactionState::PrepareAbort, 2, 6)
        );
        assert!(m.partitions.is_empty());
        m.complete(7);
        assert!(matches!(
            m.end_txn(tv2(7, 0, false), 8, no_new_id),
            Err(TxnError::ProducerFenced {
                epoch: 0,
                current: 2,
                ..
            })
        ));
        assert!(matches!(
            m.add_partitions_as(7, 1, [("a".into(), 0)], 8, TV2),
            Err(TxnError::ProducerFenced { .. })
        ));
    }

    /// Transaction version 2 at epoch 32766: the markers carry 32767, then the id moves to a new producer id at
    /// epoch 0; a retry with the old id at 32766 is answered with the new pair.
    #[test]
    fn tv2_epoch_overflow_moves_to_a_new_producer_id() {
        let mut m = meta();
        m.producer_epoch = i16::MAX - 1;
        m.add_partitions_as(7, i16::MAX - 1, [("a".into(), 0)], 1, TV2)
            .unwrap();
        m.end_txn(tv2(7, i16::MAX - 1, false), 2, || Ok(99))
            .unwrap();
        assert_eq!(
            (m.producer_id, m.producer_epoch, m.next_producer_id),
            (7, i16::MAX, 99)
        );
        m.complete(3);
        assert_eq!(
            (m.producer_id, m.producer_epoch, m.prev_producer_id),
            (99, 0, 7)
        );
        assert_eq!(
            m.end_txn(tv2(7, i16::MAX - 1, false), 4, no_new_id)
                .unwrap(),
            EndTxnAction::AlreadyDone
        );
        assert!(matches!(
            m.end_txn(tv2(8, 0, false), 4, no_new_id),
            Err(TxnError::InvalidProducerIdMapping { .. })
        ));
    }

    /// A transaction-version-1 EndTxn keeps the epoch, as before KIP-890 part 2.
    #[test]
    fn tv1_end_keeps_the_epoch() {
        let mut m = meta();
        m.add_partitions(7, 0, [("a".into(), 0)], 1).unwrap();
        m.end_txn(tv1(7, 0, false), 2, no_new_id).unwrap();
        m.complete(3);
        assert_eq!((m.producer_id, m.producer_epoch), (7, 0));
        assert_eq!(
            m.end_txn(tv1(7, 0, false), 4, no_new_id).unwrap(),
            EndTxnAction::AlreadyDone
        );
        assert!(matches!(
            m.end_txn(tv1(7, 0, true), 4, no_new_id),
            Err(TxnError::InvalidTxnState { .. })
        ));
    }
}
