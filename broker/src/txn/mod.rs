//! The transaction coordinator (KIP-98), built bottom-up like the group coordinator: the state of each
//! transactional id and its transitions ([`state`]), and its records in `__transaction_state` in Kafka's format
//! ([`log_format`]), and the [`coordinator::TransactionCoordinator`] that persists them and writes the markers.
//!
//! Not served yet: the request handlers still refuse transactional requests until the whole flow (markers,
//! `__transaction_state` recovery, timeouts) passes the end-to-end test.
pub mod coordinator;
pub mod log_format;
pub mod state;

pub use crate::error::TxnError;
pub use coordinator::{CoordinatorParts, TransactionCoordinator, TxnLogs, TRANSACTION_STATE};
pub use state::{EndTxnAction, TransactionMetadata, TransactionState};
