//! The hook through which Fetch serves offsets that live only in remote storage (KIP-405): the tiering layer
//! implements [`RemoteLogReader`] ([`crate::remote::hooks::TieringHooks::remote_reader`]); the server hands it to the broker
//! at start-up.

pub mod hooks;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use strata_storage::UnifiedLog;

pub use crate::error::RemoteReadError;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Reads record batches of a partition from remote storage.
///
/// # Contract
/// - Called only for `log.log_start_offset() <= offset < log.local_log_start_offset()`.
/// - Returns whole batches starting with the batch that contains `offset`, at most `max_bytes` unless the first
///   batch alone is larger (it is then returned whole, as Kafka does); an empty `Bytes` when nothing is found.
/// - Errors are failures of the remote tier, as a [`RemoteReadError`] (the broker picks the Kafka code by its
///   variant, [`crate::error_code::remote_read_code`]).
/// - Cancellation: the future may be dropped (client gone, shutdown); it must not leave state behind.
pub trait RemoteLogReader: Send + Sync + 'static {
    /// Reads from `offset` of `log`.
    fn read(
        &self,
        log: Arc<UnifiedLog>,
        offset: i64,
        max_bytes: usize,
    ) -> BoxFuture<Result<Bytes, RemoteReadError>>;

    /// The aborted transactions of `log`'s remote segments overlapping `[from, to)`, which a read_committed fetch
    /// served from remote storage carries (Kafka's `collectAbortedTransactions`). The default is for tiers that
    /// never hold transactional data (test readers).
    fn aborted(
        &self,
        _log: Arc<UnifiedLog>,
        _from: i64,
        _to: i64,
    ) -> BoxFuture<Result<Vec<strata_storage::index::AbortedTxn>, RemoteReadError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
