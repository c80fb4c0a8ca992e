//! The hook through which Fetch serves offsets that live only in remote storage (KIP-405): the tiering layer
//! implements [`RemoteLogReader`] ([`crate::remote::hooks::TieringHooks::remote_reader`]); the server hands it to the broker
//! at start-up.

pub mod hooks;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use strata_storage::UnifiedLog;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Reads record batches of a partition from remote storage.
///
/// # Contract
/// - Called only for `log.log_start_offset() <= offset < log.local_log_start_offset()`.
/// - Returns whole batches starting with the batch that contains `offset`, at most `max_bytes` unless the first
///   batch alone is larger (it is then returned whole, as Kafka does); an empty `Bytes` when nothing is found.
/// - Errors are failures of the remote tier. `ErrorKind::InvalidData` means the data is missing or unreadable
///   (retrying cannot help): the broker answers UNKNOWN_SERVER_ERROR, which clients report; any other error
///   KAFKA_STORAGE_ERROR, which clients retry.
/// - Cancellation: the future may be dropped (client gone, shutdown); it must not leave state behind.
pub trait RemoteLogReader: Send + Sync + 'static {
    /// Reads from `offset` of `log`.
    fn read(
        &self,
        log: Arc<UnifiedLog>,
        offset: i64,
        max_bytes: usize,
    ) -> BoxFuture<std::io::Result<Bytes>>;

    /// The aborted transactions of `log`'s remote segments overlapping `[from, to)`, which a read_committed fetch
    /// served from remote storage carries (Kafka's `collectAbortedTransactions`). The default is for tiers that
    /// never hold transactional data (test readers).
    fn aborted(
        &self,
        _log: Arc<UnifiedLog>,
        _from: i64,
        _to: i64,
    ) -> BoxFuture<std::io::Result<Vec<strata_storage::index::AbortedTxn>>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
