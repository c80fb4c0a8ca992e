//! `ObjectStoreRsm`: the [`RemoteStorageManager`] over any `object_store` backend.
mod buffers;
mod copy;
mod fetch;
mod upload;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::{ObjectStore, ObjectStoreExt};
use strata_metadata::{CustomMetadata, RemoteLogSegmentMetadata};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::backend::{build_store, BackendDescription};
use crate::config::RsmConfig;
use crate::crypto::KeyEncryptionKey;
use crate::custom::SegmentCustomMetadata;
use crate::error::{Error, Result};
use crate::key::{KeyLayout, SegmentKeys};
use crate::rsm::{IndexType, LogSegmentData, RemoteStorageManager, SegmentStream};

use fetch::Caches;

/// The [`RemoteStorageManager`] of strata: Aiven's object layout (chunked `.log`, `.indexes`, `.rsm-manifest`
/// last) over `object_store` (S3, a local directory, or memory), with zstd, AES-256-GCM, bounded multipart
/// uploads, ranged chunk reads, a chunk cache with prefetch, and manifest and index caches.
///
/// A copy returns [`crate::SegmentCustomMetadata`] (stored size, key prefix and key layout) as Kafka custom
/// metadata; reads and deletes of metadata carrying it use the recorded prefix and layout, so a changed
/// `key.prefix` or key layout keeps old segments reachable.
///
/// Cheap to clone; clones share the store and caches.
#[derive(Clone)]
pub struct ObjectStoreRsm {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) config: RsmConfig,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) kek: Option<KeyEncryptionKey>,
    pub(crate) backend: BackendDescription,
    pub(crate) caches: Caches,
    /// Background work (read-ahead of chunks, removal of a dropped upload's objects): on the tracker handed in
    /// (the server's), read-ahead stopped by `cancel`.
    pub(crate) tasks: TaskTracker,
    pub(crate) cancel: CancellationToken,
}

impl std::fmt::Debug for ObjectStoreRsm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStoreRsm")
            .field("backend", &self.inner.backend)
            .field("store", &self.inner.store.to_string())
            .field("key_prefix", &self.inner.config.key_prefix)
            .finish_non_exhaustive()
    }
}

impl ObjectStoreRsm {
    /// Builds the RSM from the broker's `rsm.config.*` properties with the prefix stripped (Kafka's
    /// `RemoteStorageManager.configure`). Unknown keys and bad values are errors naming the key.
    pub fn from_props<K: AsRef<str>, V: AsRef<str>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self> {
        Self::new(RsmConfig::from_props(props)?)
    }

    /// Builds the RSM and its backend from `config`.
    pub fn new(config: RsmConfig) -> Result<Self> {
        config.validate()?;
        let store = build_store(&config)?;
        Self::with_store(config, store)
    }

    /// Builds the RSM over a given store (a wrapper such as `testing::FaultyStore`, or a store built
    /// elsewhere); `config.backend` only names it in errors.
    pub fn with_store(config: RsmConfig, store: Arc<dyn ObjectStore>) -> Result<Self> {
        Self::in_tree(config, store, TaskTracker::new(), CancellationToken::new())
    }

    /// [`with_store`](Self::with_store) with its background tasks on `tasks`, read-ahead ended by `cancel`: the
    /// broker hands in its shutdown tree (its tracker and a child token), so shutdown waits for them.
    pub fn in_tree(
        config: RsmConfig,
        store: Arc<dyn ObjectStore>,
        tasks: TaskTracker,
        cancel: CancellationToken,
    ) -> Result<Self> {
        config.validate()?;
        let kek = config.key_encryption_key()?;
        let backend = BackendDescription::of(&config);
        let caches = Caches::new(&config);
        tracing::info!(config = ?config.describe(), "remote storage manager configured");
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                store,
                kek,
                backend,
                caches,
                tasks,
                cancel,
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &RsmConfig {
        &self.inner.config
    }

    /// The underlying store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.inner.store
    }

    /// Where the data lives, as error messages name it.
    pub fn backend(&self) -> &BackendDescription {
        &self.inner.backend
    }

    /// The object keys of a segment (under the prefix recorded in its custom metadata, if any).
    pub fn segment_keys(&self, metadata: &RemoteLogSegmentMetadata) -> SegmentKeys {
        self.inner.keys(metadata)
    }

    /// Checks at start-up that the backend works: puts a probe object under `key.prefix`, reads a range of it
    /// back, lists it and deletes it. The error names the backend, bucket, endpoint, region and failing call.
    pub async fn validate_connectivity(&self) -> Result<()> {
        let inner = &self.inner;
        crate::validate::check(
            inner.store.as_ref(),
            &inner.config.key_prefix,
            &inner.backend,
        )
        .await
    }
}

impl Inner {
    /// The segment's keys: under the prefix and in the key layout recorded in its custom metadata when there is
    /// one (so a changed `key.prefix` still finds old segments), else under the configured prefix; without a
    /// recorded layout, the layout of the versions that recorded none ([`KeyLayout::V1`]).
    pub(crate) fn keys(&self, m: &RemoteLogSegmentMetadata) -> SegmentKeys {
        let custom = m
            .custom_metadata
            .as_ref()
            .and_then(SegmentCustomMetadata::decode);
        let prefix = custom.as_ref().and_then(|c| c.object_prefix.clone());
        let layout = custom.and_then(|c| c.key_layout).unwrap_or(KeyLayout::V1);
        self.keys_with(
            m,
            layout,
            prefix.as_deref().unwrap_or(&self.config.key_prefix),
        )
    }

    /// Every key set the segment's objects may be under: the recorded one; for a segment without custom
    /// metadata (a copy that never finished, so nothing recorded where it wrote) both layouts.
    pub(crate) fn keys_for_delete(&self, m: &RemoteLogSegmentMetadata) -> Vec<SegmentKeys> {
        let recorded = self.keys(m);
        if m.custom_metadata.is_some() {
            return vec![recorded];
        }
        let current = self.keys_with(m, KeyLayout::CURRENT, &self.config.key_prefix);
        if current == recorded {
            vec![recorded]
        } else {
            vec![current, recorded]
        }
    }

    pub(crate) fn keys_with(
        &self,
        m: &RemoteLogSegmentMetadata,
        layout: KeyLayout,
        prefix: &str,
    ) -> SegmentKeys {
        SegmentKeys::with_layout(
            layout,
            prefix,
            m.topic_id_partition(),
            m.start_offset,
            &m.remote_log_segment_id.id,
        )
    }
}

#[async_trait]
impl RemoteStorageManager for ObjectStoreRsm {
    async fn copy_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: LogSegmentData,
    ) -> Result<Option<CustomMetadata>> {
        let custom = copy::copy_segment(&self.inner, metadata, data).await?;
        Ok(Some(custom.encode()))
    }

    async fn fetch_log_segment(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        start_position: u64,
        end_position: Option<u64>,
    ) -> Result<SegmentStream> {
        fetch::fetch_range(&self.inner, metadata, start_position, end_position).await
    }

    async fn fetch_index(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        index_type: IndexType,
    ) -> Result<Bytes> {
        fetch::fetch_index(&self.inner, metadata, index_type).await
    }

    /// With `fetch.chunk.cache.prefetch.max.size` > 0: the part of the read-ahead window that runs past the
    /// end of `current` is loaded from the start of `next` into the chunk cache.
    fn prefetch_next_segment(
        &self,
        current: &RemoteLogSegmentMetadata,
        end_position: u64,
        next: &RemoteLogSegmentMetadata,
    ) {
        fetch::prefetch_next(&self.inner, current, end_position, next);
    }

    async fn delete_log_segment_data(&self, metadata: &RemoteLogSegmentMetadata) -> Result<()> {
        self.inner
            .caches
            .forget(&metadata.remote_log_segment_id.id)
            .await;
        for keys in self.inner.keys_for_delete(metadata) {
            delete_keys(self.inner.store.as_ref(), &keys).await?;
        }
        Ok(())
    }
}

/// Deletes the segment's objects, manifest first; missing objects are fine.
pub(crate) async fn delete_keys(store: &dyn ObjectStore, keys: &SegmentKeys) -> Result<()> {
    for key in keys.all() {
        match store.delete(&key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                strata_storage::crash_point("rsm.delete.after_object")
            }
            Err(e) => return Err(Error::store("delete", &key, e)),
        }
    }
    Ok(())
}
