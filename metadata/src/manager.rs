//! `trait RemoteLogMetadataManager`: the KIP-405 metadata plane as the tiering layer sees it.
use std::collections::HashSet;

use async_trait::async_trait;
use strata_storage::TopicIdPartition;

use crate::{
    RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata, Result,
};

/// Kafka's `RemoteLogMetadataManager` (RLMM): which remote segments exist, their offsets, leader epochs and
/// lifecycle state.
///
/// # Contract
///
/// **Writes are async and durable.** [`add_remote_log_segment_metadata`](Self::add_remote_log_segment_metadata),
/// [`update_remote_log_segment_metadata`](Self::update_remote_log_segment_metadata) and
/// [`put_remote_partition_delete_metadata`](Self::put_remote_partition_delete_metadata) return `Ok` only once
/// the record is durable (for the topic-based manager: appended to `__remote_log_metadata` and fsynced) *and*
/// applied to the in-memory cache, so a read that starts after the write returns sees it. Writes of one
/// manager are applied in the order they complete. A write is validated first; when it is rejected
/// ([`Error::InvalidMetadata`](crate::Error::InvalidMetadata),
/// [`Error::InvalidStateTransition`](crate::Error::InvalidStateTransition),
/// [`Error::InvalidPartitionDeleteTransition`](crate::Error::InvalidPartitionDeleteTransition),
/// [`Error::UnknownSegment`](crate::Error::UnknownSegment)) nothing is written and the cache is unchanged.
/// Self-transitions are legal, so retrying a write that failed or timed out is safe (idempotent).
/// Cancelling a write future (dropping it) may leave the record either written or not, never half-written;
/// retry it to find out. A failed durable write poisons the topic-based manager: later writes fail with
/// [`Error::Poisoned`](crate::Error::Poisoned).
///
/// Segment lifecycle, Kafka's rules: add takes metadata in `COPY_SEGMENT_STARTED` (and re-adding a segment
/// that is still `COPY_SEGMENT_STARTED` replaces it); update takes any state but `COPY_SEGMENT_STARTED`, of a
/// known segment, along [`RemoteLogSegmentState::is_valid_transition`](crate::RemoteLogSegmentState::is_valid_transition).
/// A segment that reaches `DELETE_SEGMENT_FINISHED` is forgotten (a later update of it is `UnknownSegment`).
/// Recording `DELETE_PARTITION_FINISHED` forgets the partition: its segments and its delete state.
///
/// **Reads are sync** and served from the in-memory cache only; they never block on I/O, so they may be
/// called from async code. "Not found" is `Ok(None)` / an empty list / `0`, never an error. A read of a
/// partition passed to [`on_stop_partitions`](Self::on_stop_partitions) (and not resumed since by
/// [`on_partition_leadership_changes`](Self::on_partition_leadership_changes)) fails with
/// [`Error::PartitionStopped`](crate::Error::PartitionStopped), as Kafka's RLMM refuses unassigned partitions;
/// writes are still accepted for it, so a topic deletion can finish after the stop.
///
/// Which states each read sees (Kafka's `RemoteLogMetadataCache`):
///
/// | read | COPY_STARTED | COPY_FINISHED | DELETE_STARTED |
/// |---|---|---|---|
/// | `remote_log_segment_metadata` | no | yes | no |
/// | `highest_offset_for_epoch` | no | yes | no (a deleted segment's offsets still count) |
/// | `list_remote_log_segments*`, `remote_log_size` | yes | yes | yes |
///
/// Managers are `Send + Sync` and shared as `Arc<dyn RemoteLogMetadataManager>`.
#[async_trait]
pub trait RemoteLogMetadataManager: Send + Sync + std::fmt::Debug {
    /// Records a new segment copy attempt; `metadata.state` must be `COPY_SEGMENT_STARTED`.
    /// Durable before it returns (write it before uploading any byte).
    async fn add_remote_log_segment_metadata(
        &self,
        metadata: RemoteLogSegmentMetadata,
    ) -> Result<()>;

    /// Moves a known segment to `update.state` (never `COPY_SEGMENT_STARTED`). Durable before it returns.
    async fn update_remote_log_segment_metadata(
        &self,
        update: RemoteLogSegmentMetadataUpdate,
    ) -> Result<()>;

    /// Records a step of a partition's remote deletion. Durable before it returns.
    async fn put_remote_partition_delete_metadata(
        &self,
        metadata: RemotePartitionDeleteMetadata,
    ) -> Result<()>;

    /// The `COPY_SEGMENT_FINISHED` segment holding `offset` within leader epoch `epoch_for_offset`: the segment
    /// whose epoch range `[epoch start, epoch end]` contains `offset` (the latest such upload wins).
    fn remote_log_segment_metadata(
        &self,
        tp: &TopicIdPartition,
        epoch_for_offset: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>>;

    /// The highest offset of `leader_epoch` copied to remote storage (`COPY_SEGMENT_FINISHED`), used to
    /// resume copying; `None` when nothing of that epoch was ever finished.
    fn highest_offset_for_epoch(
        &self,
        tp: &TopicIdPartition,
        leader_epoch: i32,
    ) -> Result<Option<i64>>;

    /// Every segment of the partition not yet `DELETE_SEGMENT_FINISHED`, sorted by start offset (then end
    /// offset, then id).
    fn list_remote_log_segments(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Vec<RemoteLogSegmentMetadata>>;

    /// The segments holding offsets of `leader_epoch` and not yet `DELETE_SEGMENT_FINISHED`, sorted as
    /// [`list_remote_log_segments`](Self::list_remote_log_segments).
    fn list_remote_log_segments_for_epoch(
        &self,
        tp: &TopicIdPartition,
        leader_epoch: i32,
    ) -> Result<Vec<RemoteLogSegmentMetadata>>;

    /// Sum of `segment_size_in_bytes` over
    /// [`list_remote_log_segments_for_epoch`](Self::list_remote_log_segments_for_epoch), Kafka's `remoteLogSize`.
    fn remote_log_size(&self, tp: &TopicIdPartition, leader_epoch: i32) -> Result<u64> {
        Ok(self
            .list_remote_log_segments_for_epoch(tp, leader_epoch)?
            .iter()
            .map(|m| m.segment_size_in_bytes)
            .sum())
    }

    /// KIP-1058: the first `COPY_SEGMENT_FINISHED` segment at or after `offset` (from epoch `epoch` on) whose
    /// transaction index is not empty; `None` when there is none.
    fn next_segment_with_txn_index(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>>;

    /// The partition's pending remote deletion (`MARKED` or `STARTED`), if any, so a restarted broker can
    /// finish a topic deletion.
    fn remote_partition_delete_metadata(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Option<RemotePartitionDeleteMetadata>>;

    /// Whether reads for `tp` are served: the cache is loaded and the partition is not stopped. While false
    /// the broker answers `REPLICA_NOT_AVAILABLE` for remote reads of it.
    fn is_ready(&self, tp: &TopicIdPartition) -> bool;

    /// The broker now leads `leaders` and follows `followers`; both sets become (again) served.
    fn on_partition_leadership_changes(
        &self,
        leaders: &HashSet<TopicIdPartition>,
        followers: &HashSet<TopicIdPartition>,
    );

    /// The partitions moved away or were deleted: reads of them fail with `PartitionStopped` until a
    /// leadership change names them again. Their metadata stays (in the log and the cache).
    fn on_stop_partitions(&self, partitions: &HashSet<TopicIdPartition>);
}
