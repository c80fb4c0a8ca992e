//! `MetadataStore`: the cache plus the served/stopped partition set, shared by both managers' read paths.
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::collections::HashSet;

use strata_storage::TopicIdPartition;

use crate::cache::RemoteLogMetadataCache;
use crate::{Error, RemoteLogSegmentMetadata, RemotePartitionDeleteMetadata, Result};

/// Cache + stopped partitions. Locks are held only for in-memory work, never across I/O or `.await`.
#[derive(Debug, Default)]
pub(crate) struct MetadataStore {
    cache: RwLock<RemoteLogMetadataCache>,
    stopped: RwLock<HashSet<TopicIdPartition>>,
}

impl MetadataStore {
    pub(crate) fn new(cache: RemoteLogMetadataCache) -> Self {
        Self {
            cache: RwLock::new(cache),
            stopped: RwLock::default(),
        }
    }

    pub(crate) fn cache(&self) -> RwLockReadGuard<'_, RemoteLogMetadataCache> {
        // A panic while holding the lock can only come from a bug in pure in-memory code; keep serving.
        self.cache.read()
    }

    pub(crate) fn cache_mut(&self) -> RwLockWriteGuard<'_, RemoteLogMetadataCache> {
        self.cache.write()
    }

    fn served(&self, tp: &TopicIdPartition) -> Result<RwLockReadGuard<'_, RemoteLogMetadataCache>> {
        if self.stopped.read().contains(tp) {
            return Err(Error::PartitionStopped { tp: tp.clone() });
        }
        Ok(self.cache())
    }

    pub(crate) fn remote_log_segment_metadata(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>> {
        Ok(self
            .served(tp)?
            .remote_log_segment_metadata(tp, epoch, offset))
    }

    pub(crate) fn highest_offset_for_epoch(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
    ) -> Result<Option<i64>> {
        Ok(self.served(tp)?.highest_offset_for_epoch(tp, epoch))
    }

    pub(crate) fn list(&self, tp: &TopicIdPartition) -> Result<Vec<RemoteLogSegmentMetadata>> {
        Ok(self.served(tp)?.list(tp))
    }

    pub(crate) fn list_for_epoch(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
    ) -> Result<Vec<RemoteLogSegmentMetadata>> {
        Ok(self.served(tp)?.list_for_epoch(tp, epoch))
    }

    pub(crate) fn next_segment_with_txn_index(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>> {
        Ok(self
            .served(tp)?
            .next_segment_with_txn_index(tp, epoch, offset))
    }

    pub(crate) fn partition_delete(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Option<RemotePartitionDeleteMetadata>> {
        Ok(self.served(tp)?.partition_delete(tp))
    }

    pub(crate) fn is_served(&self, tp: &TopicIdPartition) -> bool {
        !self.stopped.read().contains(tp)
    }

    pub(crate) fn resume<'a>(&self, tps: impl IntoIterator<Item = &'a TopicIdPartition>) {
        let mut stopped = self.stopped.write();
        for tp in tps {
            stopped.remove(tp);
        }
    }

    pub(crate) fn stop<'a>(&self, tps: impl IntoIterator<Item = &'a TopicIdPartition>) {
        self.stopped.write().extend(tps.into_iter().cloned());
    }
}
