//! Transactions as the cleaner sees them (Kafka's `CleanedTransactionMetadata`).
//!
//! [`AbortedTransactions::collect`] takes the aborted transactions below the cleanable range's end from every
//! segment's transaction index (`.txnindex`, see [`crate::index::TransactionIndex`]; the active segment's too,
//! since a transaction's data may be cleanable while its ABORT marker is still in the active segment). Walking
//! the batches in offset order, a [`TxnTracker`] tells:
//!
//! * of a data batch, whether it belongs to an aborted transaction (its records are dropped, and not mapped);
//! * of a control batch (a COMMIT/ABORT marker, see [`crate::record::ControlRecordKey`]), whether it may go: an
//!   ABORT marker once no data batch of its transaction was met in this pass (the data went in an earlier one),
//!   a COMMIT marker once no data batch of its transaction was met, an already emptied control batch always. Such
//!   a marker is then removed as a tombstone is: the pass that first finds it removable stamps its delete horizon,
//!   a pass after that horizon drops it (see `retain.rs`).
//!
//! The cleanable range ends at the last stable offset, so data of open transactions is never cleaned.
use std::collections::{HashMap, HashSet, VecDeque};

use crate::index::AbortedTxn;
use crate::log::CleanerView;
use crate::record::{ControlRecordKey, ControlRecordType};
use crate::RecordBatch;

/// The aborted transactions over a range of a log.
#[derive(Debug, Default)]
pub(crate) struct AbortedTransactions {
    /// Sorted by first offset.
    ranges: Vec<AbortedTxn>,
}

impl AbortedTransactions {
    /// The aborted transactions of `view` whose data starts below `to`.
    pub(crate) fn collect(view: &CleanerView, to: i64) -> Self {
        let mut ranges: Vec<AbortedTxn> = view
            .aborted
            .iter()
            .filter(|t| t.first_offset < to)
            .copied()
            .collect();
        ranges.sort_by_key(|t| (t.first_offset, t.last_offset));
        Self { ranges }
    }

    /// A tracker for one walk over the log in offset order.
    pub(crate) fn tracker(&self) -> TxnTracker<'_> {
        TxnTracker {
            pending: self.ranges.iter().collect(),
            ongoing_aborted: HashMap::new(),
            ongoing_committed: HashSet::new(),
        }
    }
}

/// Kafka's `CleanedTransactionMetadata`: the transactions open at the current point of a walk in offset order.
pub(crate) struct TxnTracker<'a> {
    /// Aborted transactions not yet reached.
    pending: VecDeque<&'a AbortedTxn>,
    /// Producer id → whether a data batch of its aborted transaction was met in this walk.
    ongoing_aborted: HashMap<i64, bool>,
    /// Producers with a data batch of a (not aborted) transaction met since their last marker.
    ongoing_committed: HashSet<i64>,
}

impl TxnTracker<'_> {
    fn consume_up_to(&mut self, offset: i64) {
        while self
            .pending
            .front()
            .is_some_and(|t| t.first_offset <= offset)
        {
            let t = self.pending.pop_front().expect("checked");
            self.ongoing_aborted.entry(t.producer_id).or_insert(false);
        }
    }

    /// Kafka's `onBatchRead`: whether the data batch belongs to an aborted transaction (then discarded).
    pub(crate) fn on_batch_read(&mut self, batch: &RecordBatch) -> bool {
        self.consume_up_to(batch.last_offset());
        if !batch.is_transactional() {
            return false;
        }
        match self.ongoing_aborted.get_mut(&batch.producer_id()) {
            Some(observed) => {
                *observed = true;
                true
            }
            None => {
                self.ongoing_committed.insert(batch.producer_id());
                false
            }
        }
    }

    /// Kafka's `onControlBatchRead`: whether the control batch may be discarded (once its delete horizon has
    /// passed). A control batch whose key cannot be read is kept.
    pub(crate) fn on_control_batch_read(&mut self, batch: &RecordBatch) -> bool {
        self.consume_up_to(batch.last_offset());
        if batch.records_count() == 0 {
            // An empty control batch was already cleaned.
            return true;
        }
        let kind = batch
            .records()
            .ok()
            .and_then(|mut it| it.next())
            .and_then(|r| r.ok())
            .and_then(|r| ControlRecordKey::parse(r.key.as_deref()).ok())
            .map(|k| k.kind);
        let pid = batch.producer_id();
        match kind {
            Some(ControlRecordType::Abort) => match self.ongoing_aborted.remove(&pid) {
                // Kept until every batch of the transaction is gone.
                Some(true) => false,
                _ => true,
            },
            Some(ControlRecordType::Commit) => !self.ongoing_committed.remove(&pid),
            _ => false,
        }
    }
}
