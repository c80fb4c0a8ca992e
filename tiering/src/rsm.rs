//! Kafka's `RemoteStorageManager` (KIP-405 data plane) as a minimal async trait.
use std::path::PathBuf;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::TryStreamExt;
use strata_metadata::{CustomMetadata, RemoteLogSegmentMetadata};

use crate::error::Result;

/// The bytes of a remote segment range, chunk by chunk, in order. Dropping it cancels the remaining reads.
pub type SegmentStream = BoxStream<'static, Result<Bytes>>;

/// Kafka's `RemoteStorageManager.IndexType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexType {
    /// The `.index` file.
    Offset,
    /// The `.timeindex` file.
    Timestamp,
    /// The producer-state `.snapshot` taken at the next segment's base offset.
    ProducerSnapshot,
    /// The `.txnindex` file (optional).
    Transaction,
    /// The leader-epoch checkpoint text up to the next segment's base offset.
    LeaderEpoch,
}

impl IndexType {
    /// Every index type, in `.indexes` order.
    pub const ALL: [IndexType; 5] = [
        IndexType::Offset,
        IndexType::Timestamp,
        IndexType::ProducerSnapshot,
        IndexType::LeaderEpoch,
        IndexType::Transaction,
    ];

    /// Kafka's name (`OFFSET`, `TIMESTAMP`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            IndexType::Offset => "OFFSET",
            IndexType::Timestamp => "TIMESTAMP",
            IndexType::ProducerSnapshot => "PRODUCER_SNAPSHOT",
            IndexType::Transaction => "TRANSACTION",
            IndexType::LeaderEpoch => "LEADER_EPOCH",
        }
    }
}

/// Kafka's `LogSegmentData`: the local files of a rolled segment, handed to
/// [`RemoteStorageManager::copy_log_segment_data`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSegmentData {
    /// The `.log` file. Streamed, never read whole.
    pub log_segment: PathBuf,
    /// The `.index` file.
    pub offset_index: PathBuf,
    /// The `.timeindex` file.
    pub time_index: PathBuf,
    /// The `.txnindex` file, `None` when the segment has none.
    pub transaction_index: Option<PathBuf>,
    /// The producer-state snapshot at the next segment's base offset.
    pub producer_snapshot: PathBuf,
    /// Leader-epoch checkpoint text (version 0) with every entry up to the next segment's base offset.
    pub leader_epoch_index: Bytes,
}

/// Kafka's `RemoteStorageManager`: moves a rolled segment's bytes and indexes to remote storage and back.
///
/// # Contract
/// - **Copy** ([`copy_log_segment_data`](Self::copy_log_segment_data)) stores the segment and all its indexes
///   under the metadata's `RemoteLogSegmentId`. It is idempotent: copying the same id again overwrites and
///   succeeds. The caller uses a new id for every attempt. On error (or when the returned future is dropped)
///   whatever the attempt wrote is removed on a best-effort basis, and a segment is only readable once the copy
///   returned `Ok` (the manifest is written last). The returned custom metadata, if any, is at most
///   [`strata_metadata::CUSTOM_METADATA_MAX_BYTES`] and must be stored with the segment metadata.
/// - **Fetch** ([`fetch_log_segment`](Self::fetch_log_segment)) returns the original bytes
///   `[start_position, end_position]`, both inclusive; `end_position = None` (or past the end) means "to the end
///   of the segment". A start at or past the end of a non-empty segment, or an end before the start, is
///   [`Error::InvalidRange`](crate::Error::InvalidRange). A segment that was never completely copied or was
///   deleted is [`Error::NotFound`](crate::Error::NotFound).
/// - **Index** ([`fetch_index`](Self::fetch_index)) returns the original index file bytes. A segment copied
///   without a transaction index returns `NotFound` for [`IndexType::Transaction`] (Kafka's
///   `RemoteResourceNotFoundException`), never empty bytes.
/// - **Delete** ([`delete_log_segment_data`](Self::delete_log_segment_data)) removes every object of the
///   segment. It is idempotent: deleting a missing or half-copied segment succeeds.
/// - **Cancellation**: all futures may be dropped at any point; a dropped copy cleans up in the background, a
///   dropped fetch stream stops reading.
/// - Implementations are `Send + Sync` and shared as `Arc<dyn RemoteStorageManager>`.
#[async_trait]
pub trait RemoteStorageManager: Send + Sync + std::fmt::Debug {
    /// Copies a rolled segment and its indexes (Kafka's `copyLogSegmentData`).
    async fn copy_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: LogSegmentData,
    ) -> Result<Option<CustomMetadata>>;

    /// Streams original segment bytes `[start_position, end_position]` (inclusive; Kafka's `fetchLogSegment`).
    async fn fetch_log_segment(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        start_position: u64,
        end_position: Option<u64>,
    ) -> Result<SegmentStream>;

    /// Returns one index of the segment (Kafka's `fetchIndex`).
    async fn fetch_index(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        index_type: IndexType,
    ) -> Result<Bytes>;

    /// Deletes every object of the segment (Kafka's `deleteLogSegmentData`).
    async fn delete_log_segment_data(&self, metadata: &RemoteLogSegmentMetadata) -> Result<()>;

    /// A hint from the remote reader (no Kafka counterpart): a read of `current` ended at byte `end_position`
    /// and `next` is the segment that follows it, so a consumer catching up reads `next` soon. An
    /// implementation with a read-ahead may start loading the start of `next` in the background; the hint must
    /// return at once and never fail. The default ignores it.
    fn prefetch_next_segment(
        &self,
        _current: &RemoteLogSegmentMetadata,
        _end_position: u64,
        _next: &RemoteLogSegmentMetadata,
    ) {
    }
}

/// Conveniences over [`RemoteStorageManager`].
#[async_trait]
pub trait RemoteStorageManagerExt: RemoteStorageManager {
    /// [`RemoteStorageManager::fetch_log_segment`] collected into one buffer.
    async fn fetch_log_segment_bytes(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        start_position: u64,
        end_position: Option<u64>,
    ) -> Result<Bytes> {
        let stream = self
            .fetch_log_segment(metadata, start_position, end_position)
            .await?;
        let parts: Vec<Bytes> = stream.try_collect().await?;
        if parts.len() == 1 {
            return Ok(parts.into_iter().next().unwrap_or_default());
        }
        let mut out = BytesMut::with_capacity(parts.iter().map(Bytes::len).sum());
        for p in parts {
            out.extend_from_slice(&p);
        }
        Ok(out.freeze())
    }
}

impl<T: RemoteStorageManager + ?Sized> RemoteStorageManagerExt for T {}
