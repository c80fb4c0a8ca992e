//! The aborted transaction ranges the cleaner drops records of.
//!
//! [`AbortedTransactions::collect`] takes the aborted transactions overlapping the cleaned range from the
//! segments' transaction indexes (`.txnindex`, see [`crate::index::TransactionIndex`]), and the cleaner drops the
//! data batches inside them (Kafka's `CleanedTransactionMetadata`). Control batches (COMMIT/ABORT markers, see
//! [`crate::record::ControlRecordKey`]) are kept whole. The cleanable range ends at the last stable offset, so
//! data of open transactions is never cleaned.
use crate::index::AbortedTxn;
use crate::log::CleanerView;
use crate::RecordBatch;

/// The aborted transactions over a range of a log.
#[derive(Debug, Default)]
pub(crate) struct AbortedTransactions {
    ranges: Vec<AbortedTxn>,
}

impl AbortedTransactions {
    /// The aborted transactions of `view` overlapping `[from, to)`.
    pub(crate) fn collect(view: &CleanerView, from: i64, to: i64) -> Self {
        Self {
            ranges: view
                .aborted
                .iter()
                .filter(|t| t.last_offset >= from && t.first_offset < to)
                .copied()
                .collect(),
        }
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
