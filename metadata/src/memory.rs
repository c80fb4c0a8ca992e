//! `InMemoryRemoteLogMetadataManager`: the RLMM for unit tests and examples; nothing survives the process.
use std::collections::HashSet;

use async_trait::async_trait;
use strata_storage::TopicIdPartition;

use crate::cache::RemoteLogMetadataCache;
use crate::record::RemoteLogMetadataRecord;
use crate::store::MetadataStore;
use crate::{
    RemoteLogMetadataManager, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    RemotePartitionDeleteMetadata, Result,
};

/// An RLMM whose "durable" store is the cache itself. Same validation and read semantics as the topic-based
/// manager (both pass [`conformance`](crate::conformance)); a write is durable in the sense that every later
/// read of this instance sees it.
#[derive(Debug, Default)]
pub struct InMemoryRemoteLogMetadataManager {
    store: MetadataStore,
}

impl InMemoryRemoteLogMetadataManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self {
            store: MetadataStore::new(RemoteLogMetadataCache::default()),
        }
    }

    pub(crate) fn write(&self, record: RemoteLogMetadataRecord) -> Result<()> {
        self.store.cache_mut().check_and_apply(record)
    }
}

#[async_trait]
impl RemoteLogMetadataManager for InMemoryRemoteLogMetadataManager {
    async fn add_remote_log_segment_metadata(
        &self,
        metadata: RemoteLogSegmentMetadata,
    ) -> Result<()> {
        self.write(RemoteLogMetadataRecord::Segment(metadata))
    }

    async fn update_remote_log_segment_metadata(
        &self,
        update: RemoteLogSegmentMetadataUpdate,
    ) -> Result<()> {
        self.write(RemoteLogMetadataRecord::SegmentUpdate(update))
    }

    async fn put_remote_partition_delete_metadata(
        &self,
        metadata: RemotePartitionDeleteMetadata,
    ) -> Result<()> {
        self.write(RemoteLogMetadataRecord::PartitionDelete(metadata))
    }

    fn remote_log_segment_metadata(
        &self,
        tp: &TopicIdPartition,
        epoch_for_offset: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>> {
        self.store
            .remote_log_segment_metadata(tp, epoch_for_offset, offset)
    }

    fn highest_offset_for_epoch(
        &self,
        tp: &TopicIdPartition,
        leader_epoch: i32,
    ) -> Result<Option<i64>> {
        self.store.highest_offset_for_epoch(tp, leader_epoch)
    }

    fn list_remote_log_segments(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Vec<RemoteLogSegmentMetadata>> {
        self.store.list(tp)
    }

    fn list_remote_log_segments_for_epoch(
        &self,
        tp: &TopicIdPartition,
        leader_epoch: i32,
    ) -> Result<Vec<RemoteLogSegmentMetadata>> {
        self.store.list_for_epoch(tp, leader_epoch)
    }

    fn next_segment_with_txn_index(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>> {
        self.store.next_segment_with_txn_index(tp, epoch, offset)
    }

    fn remote_partition_delete_metadata(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Option<RemotePartitionDeleteMetadata>> {
        self.store.partition_delete(tp)
    }

    fn is_ready(&self, tp: &TopicIdPartition) -> bool {
        self.store.is_served(tp)
    }

    fn on_partition_leadership_changes(
        &self,
        leaders: &HashSet<TopicIdPartition>,
        followers: &HashSet<TopicIdPartition>,
    ) {
        self.store.resume(leaders.iter().chain(followers))
    }

    fn on_stop_partitions(&self, partitions: &HashSet<TopicIdPartition>) {
        self.store.stop(partitions)
    }
}

#[cfg(test)]
impl InMemoryRemoteLogMetadataManager {
    pub(crate) fn cache_image(&self) -> crate::cache::CacheImage {
        self.store.cache().to_image()
    }
}
