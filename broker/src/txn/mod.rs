//! The transaction coordinator (KIP-98), built bottom-up like the group coordinator: the state of each
//! transactional id and its transitions ([`state`]), and its records in `__transaction_state` in Kafka's format
//! ([`log_format`]), and the [`coordinator::TransactionCoordinator`] that persists them and writes the markers.
//!
//! The handlers (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
//! DescribeTransactions, ListTransactions, and Produce's check of transactional batches) reach it through
//! [`crate::broker::Broker::txn`]; the server aborts timed-out transactions every
//! `transaction.abort.timed.out.transaction.cleanup.interval.ms`.
pub mod coordinator;
pub mod log_format;
pub mod producer_ids;
pub mod state;
#[cfg(test)]
mod tests;

pub use crate::error::TxnError;
pub use coordinator::{
    BrokerTxnLogs, CoordinatorParts, TransactionCoordinator, TxnLogs, TRANSACTION_STATE,
};
pub use state::{EndTxnAction, EndTxnRequest, TransactionMetadata, TransactionState, TV2};
