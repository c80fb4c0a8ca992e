//! The hook for transactional data: the aborted transaction ranges the cleaner drops records of.
//!
//! Empty today: strata does not index transactions yet. Once the `.txnindex` and the last stable offset exist
//! (issue 13), [`AbortedTransactions::collect`] reads the aborted ranges overlapping the cleaned range from the
//! segments' transaction indexes, and the cleaner drops the data batches inside them (Kafka's
//! `CleanedTransactionMetadata`). Control batches (COMMIT/ABORT markers, see
//! [`crate::record::ControlRecordKey`]) are kept whole until then.
use crate::log::CleanerView;
use crate::RecordBatch;

/// One aborted transaction: the producer and its offsets (Kafka's `AbortedTxn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AbortedTxn {
    pub(crate) producer_id: i64,
    pub(crate) first_offset: i64,
    /// Offset of the ABORT marker.
    pub(crate) last_offset: i64,
}

/// The aborted transactions over a range of a log.
#[derive(Debug, Default)]
pub(crate) struct AbortedTransactions {
    ranges: Vec<AbortedTxn>,
}

impl AbortedTransactions {
    /// The aborted transactions of `view` overlapping `[from, to)`: none until transactions are indexed.
    pub(crate) fn collect(_view: &CleanerView, _from: i64, _to: i64) -> Self {
        Self::default()
    }

    /// Whether `batch` is data of an aborted transaction (its records are then dropped, and not mapped).
    pub(crate) fn is_aborted(&self, batch: &RecordBatch) -> bool {
        batch.is_transactional()
            && !batch.is_control()
            && self.ranges.iter().any(|t| {
                t.producer_id == batch.producer_id()
                    && batch.base_offset() >= t.first_offset
                    && batch.last_offset() < t.last_offset
            })
    }
}
