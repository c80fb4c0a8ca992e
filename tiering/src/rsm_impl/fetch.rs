//! The read path: manifest (cached) → the chunks covering the asked range, fetched with ranged GETs
//! (`fetch.concurrency` at a time) through the chunk cache, decoded, sliced; prefetch of the following chunks
//! into the cache; indexes through the index cache.
use std::sync::Arc;

use bytes::Bytes;
use futures::{stream, StreamExt};
use moka::future::Cache;
use moka::policy::EvictionPolicy;
use object_store::{GetOptions, GetResultPayload, ObjectStore, ObjectStoreExt};
use strata_metadata::RemoteLogSegmentMetadata;
use tokio::sync::Semaphore;
use uuid::Uuid;

use super::buffers::{self, BufferPool};
use super::Inner;
use crate::config::RsmConfig;
use crate::crypto::ChunkKind;
use crate::error::{Error, Result};
use crate::key::{ObjectSuffix, SegmentKeys};
use crate::manifest::{ChunkMap, SegmentManifest};
use crate::rsm::{IndexType, SegmentStream};
use crate::transform::{index_chunk_number, ChunkTransform};

/// Background prefetches running at once; further prefetch requests are skipped.
const MAX_PREFETCH_TASKS: usize = 16;

/// A parsed manifest with what reads need.
pub(crate) struct LoadedManifest {
    pub manifest: SegmentManifest,
    pub map: ChunkMap,
    pub transform: ChunkTransform,
    pub keys: SegmentKeys,
}

pub(crate) struct Caches {
    manifests: Option<Cache<Uuid, Arc<LoadedManifest>>>,
    chunks: Option<Cache<(Uuid, u32), Bytes>>,
    indexes: Option<Cache<(Uuid, u32), Bytes>>,
    prefetch_tasks: Arc<Semaphore>,
    buffers: Arc<BufferPool>,
}

impl Caches {
    pub(crate) fn new(c: &RsmConfig) -> Self {
        let weigh = |_: &(Uuid, u32), v: &Bytes| u32::try_from(v.len()).unwrap_or(u32::MAX);
        Self {
            manifests: (c.manifest_cache_size > 0).then(|| Cache::new(c.manifest_cache_size)),
            // LRU, not moka's default TinyLFU: chunks are read in order (a catch-up reads each one a few times
            // and then never again), and TinyLFU's admission refuses a chunk read ahead (seen once) in favour of
            // the chunks just read (seen often), so read-ahead was thrown away and fetched again.
            chunks: (c.chunk_cache_size > 0).then(|| {
                Cache::builder()
                    .max_capacity(c.chunk_cache_size)
                    .weigher(weigh)
                    .eviction_policy(EvictionPolicy::lru())
                    .build()
            }),
            indexes: (c.indexes_cache_size > 0).then(|| {
                Cache::builder()
                    .max_capacity(c.indexes_cache_size)
                    .weigher(weigh)
                    .build()
            }),
            prefetch_tasks: Arc::new(Semaphore::new(MAX_PREFETCH_TASKS)),
            buffers: buffers::pool(),
        }
    }

    /// Drops what is cached about a segment (on delete and before a copy reuses an id).
    pub(crate) async fn forget(&self, segment: &Uuid) {
        if let Some(m) = &self.manifests {
            m.invalidate(segment).await;
        }
        if let Some(i) = &self.indexes {
            for t in IndexType::ALL {
                i.invalidate(&(*segment, index_chunk_number(t))).await;
            }
        }
    }

    /// Bytes held by the chunk cache (after pending maintenance).
    pub(crate) async fn chunk_cache_bytes(&self) -> u64 {
        match &self.chunks {
            Some(c) => {
                c.run_pending_tasks().await;
                c.weighted_size()
            }
            None => 0,
        }
    }

    pub(crate) fn chunk_cached(&self, segment: Uuid, chunk: u32) -> bool {
        self.chunks
            .as_ref()
            .is_some_and(|c| c.contains_key(&(segment, chunk)))
    }
}

impl super::ObjectStoreRsm {
    /// Bytes currently held by the chunk cache (bounded by `fetch.chunk.cache.size`).
    pub async fn chunk_cache_bytes(&self) -> u64 {
        self.inner.caches.chunk_cache_bytes().await
    }

    /// Whether chunk `chunk` of the segment is in the chunk cache (for prefetch tests and diagnostics).
    pub fn is_chunk_cached(&self, metadata: &RemoteLogSegmentMetadata, chunk: u32) -> bool {
        self.inner
            .caches
            .chunk_cached(metadata.remote_log_segment_id.id, chunk)
    }
}

pub(crate) async fn manifest(
    inner: &Arc<Inner>,
    meta: &RemoteLogSegmentMetadata,
) -> Result<Arc<LoadedManifest>> {
    let id = meta.remote_log_segment_id.id;
    match &inner.caches.manifests {
        Some(cache) => cache
            .try_get_with(id, load_manifest(inner, meta))
            .await
            .map_err(Error::from_shared),
        None => load_manifest(inner, meta).await,
    }
}

async fn load_manifest(
    inner: &Arc<Inner>,
    meta: &RemoteLogSegmentMetadata,
) -> Result<Arc<LoadedManifest>> {
    let keys = inner.keys(meta);
    let key = keys.key(ObjectSuffix::Manifest);
    let bytes = match inner.store.get(&key).await {
        Ok(r) => r.bytes().await.map_err(|e| Error::store("get", &key, e))?,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(Error::NotFound {
                what: format!("segment {keys} (no manifest: never copied completely, or deleted)"),
            });
        }
        Err(e) => return Err(Error::store("get", &key, e)),
    };
    let manifest = SegmentManifest::from_json(key.as_ref(), &bytes)?;
    let segment = meta.remote_log_segment_id.id;
    let dek = match &manifest.encryption {
        None => None,
        Some(enc) => {
            let kek = inner.kek.as_ref().ok_or_else(|| {
                Error::corrupt(
                    format!("segment {keys}"),
                    "it is encrypted but no encryption key is configured (rsm.config.encryption.key.file)",
                )
            })?;
            if kek.id() != enc.key_id {
                return Err(Error::corrupt(
                    format!("segment {keys}"),
                    format!(
                        "it was encrypted under key id {}, but rsm.config.encryption.key.file holds key id {}",
                        enc.key_id,
                        kek.id()
                    ),
                ));
            }
            Some(kek.unwrap_data_key(&segment, &enc.data_key, &format!("segment {keys}"))?)
        }
    };
    let map = ChunkMap::new(&manifest.chunk_index);
    let transform = ChunkTransform {
        compress: manifest.compression,
        key: dek,
    };
    Ok(Arc::new(LoadedManifest {
        manifest,
        map,
        transform,
        keys,
    }))
}

/// One decoded chunk, through the cache when there is one.
async fn chunk(inner: Arc<Inner>, m: Arc<LoadedManifest>, segment: Uuid, i: u32) -> Result<Bytes> {
    match &inner.caches.chunks {
        Some(cache) => cache
            .try_get_with((segment, i), load_chunk(&inner, &m, i))
            .await
            .map_err(Error::from_shared),
        None => load_chunk(&inner, &m, i).await,
    }
}

async fn load_chunk(inner: &Arc<Inner>, m: &Arc<LoadedManifest>, i: u32) -> Result<Bytes> {
    let key = m.keys.key(ObjectSuffix::Log);
    let stored_range = m.map.stored(i);
    let original_len = m.map.original(i).end - m.map.original(i).start;
    let stored = if stored_range.is_empty() {
        Bytes::new()
    } else {
        get_chunk(inner, &key, stored_range.clone())
            .await
            .map_err(|e| Error::store("get_range", &key, e))?
    };
    if stored.len() as u64 != stored_range.end - stored_range.start {
        return Err(Error::Corrupt {
            what: key.to_string(),
            reason: format!(
                "chunk {i}: got {} bytes for range {}..{}",
                stored.len(),
                stored_range.start,
                stored_range.end
            ),
            source: None,
        });
    }
    decode(
        &m.transform,
        ChunkKind::Log,
        i,
        stored,
        original_len,
        format!("chunk {i} of {key}"),
    )
    .await
}

/// A ranged GET of one stored chunk. A streamed body is collected into a pooled buffer (see `buffers`); a local
/// file is read in one go as `get_range` does.
async fn get_chunk(
    inner: &Arc<Inner>,
    key: &object_store::path::Path,
    range: std::ops::Range<u64>,
) -> object_store::Result<Bytes> {
    let len = (range.end - range.start) as usize;
    let r = inner
        .store
        .get_opts(key, GetOptions::new().with_range(Some(range)))
        .await?;
    if matches!(r.payload, GetResultPayload::File(..)) {
        return r.bytes().await;
    }
    buffers::collect(&inner.caches.buffers, len, r.into_stream()).await
}

async fn decode(
    t: &ChunkTransform,
    kind: ChunkKind,
    n: u32,
    stored: Bytes,
    len: u64,
    what: String,
) -> Result<Bytes> {
    if t.is_identity() {
        return t.undo(kind, n, stored, len, &|| what.clone());
    }
    let t = t.clone();
    let task_what = what.clone();
    tokio::task::spawn_blocking(move || t.undo(kind, n, stored, len, &|| what.clone()))
        .await
        .map_err(|e| Error::task(task_what, e))?
}

pub(super) async fn fetch_range(
    inner: &Arc<Inner>,
    meta: &RemoteLogSegmentMetadata,
    start: u64,
    end: Option<u64>,
) -> Result<SegmentStream> {
    let m = manifest(inner, meta).await?;
    let size = m.map.file_size;
    let invalid = || Error::InvalidRange {
        segment: m.keys.to_string(),
        start,
        end: end.map_or(-1, |e| e as i64),
        size,
    };
    if end.is_some_and(|e| e < start) {
        return Err(invalid());
    }
    if size == 0 && start == 0 {
        return Ok(stream::empty().boxed());
    }
    if start >= size {
        return Err(invalid());
    }
    let last_byte = end.map_or(size - 1, |e| e.min(size - 1));
    let first_chunk = m.map.chunk_of(start);
    let last_chunk = m.map.chunk_of(last_byte);
    let segment = meta.remote_log_segment_id.id;
    prefetch(
        inner,
        &m,
        segment,
        last_chunk + 1,
        inner.config.chunk_cache_prefetch_max_size,
    );
    let concurrency = inner.config.fetch_concurrency;
    let inner = inner.clone();
    let s = stream::iter(first_chunk..=last_chunk)
        .map(move |i| {
            let inner = inner.clone();
            let m = m.clone();
            async move {
                let bytes = chunk(inner, m.clone(), segment, i).await?;
                let range = m.map.original(i);
                let from = start.max(range.start) - range.start;
                let to = (last_byte + 1).min(range.end) - range.start;
                Ok(bytes.slice(from as usize..to as usize))
            }
        })
        .buffered(concurrency);
    Ok(s.boxed())
}

/// The read-ahead into the following segment: `fetch.chunk.cache.prefetch.max.size` counted from the end of
/// the read in `current`; what the window holds past the end of `current` is loaded from the start of `next`
/// (its manifest first, in the background), through the same bounded prefetch as within a segment.
pub(super) fn prefetch_next(
    inner: &Arc<Inner>,
    current: &RemoteLogSegmentMetadata,
    end_position: u64,
    next: &RemoteLogSegmentMetadata,
) {
    let budget = inner.config.chunk_cache_prefetch_max_size;
    let left = current
        .segment_size_in_bytes
        .saturating_sub(end_position.saturating_add(1));
    if budget <= left || inner.caches.chunks.is_none() {
        return;
    }
    let spill = budget - left;
    let segment = next.remote_log_segment_id.id;
    if inner.caches.chunk_cached(segment, 0) && spill <= inner.config.chunk_size {
        return;
    }
    let (inner, next) = (inner.clone(), next.clone());
    let cancel = inner.cancel.clone();
    inner.clone().tasks.spawn(async move {
        let loaded = tokio::select! {
            _ = cancel.cancelled() => return,
            m = manifest(&inner, &next) => m,
        };
        match loaded {
            Ok(m) => prefetch(&inner, &m, segment, 0, spill),
            Err(e) => tracing::debug!(
                segment = %segment,
                error = %crate::Report(&e),
                "prefetch of the next segment failed"
            ),
        }
    });
}

/// Loads chunks from `from` on into the cache in the background, up to `budget` original bytes, within this
/// segment, in chunk order with `fetch.concurrency` GETs in flight. At most `MAX_PREFETCH_TASKS` prefetches
/// run at once (others are skipped), so prefetch holds at most that many times `fetch.concurrency` chunks
/// beyond the chunk cache.
fn prefetch(inner: &Arc<Inner>, m: &Arc<LoadedManifest>, segment: Uuid, from: u32, budget: u64) {
    if budget == 0 || inner.caches.chunks.is_none() || from >= m.map.count() {
        return;
    }
    let Ok(permit) = inner.caches.prefetch_tasks.clone().try_acquire_owned() else {
        return;
    };
    let mut wanted = Vec::new();
    let mut bytes = 0u64;
    let mut i = from;
    while i < m.map.count() && bytes < budget {
        let r = m.map.original(i);
        bytes += r.end - r.start;
        if !inner.caches.chunk_cached(segment, i) {
            wanted.push(i);
        }
        i += 1;
    }
    if wanted.is_empty() {
        return;
    }
    let inner = inner.clone();
    let m = m.clone();
    let concurrency = inner.config.fetch_concurrency;
    let cancel = inner.cancel.clone();
    inner.clone().tasks.spawn(async move {
        let _permit = permit;
        let mut loads = stream::iter(wanted)
            .map(|i| chunk(inner.clone(), m.clone(), segment, i))
            .buffer_unordered(concurrency);
        loop {
            let r = tokio::select! {
                _ = cancel.cancelled() => return,
                r = loads.next() => r,
            };
            match r {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!(segment = %m.keys, error = %crate::Report(&e), "prefetch failed");
                    return;
                }
                None => return,
            }
        }
    });
}

pub(super) async fn fetch_index(
    inner: &Arc<Inner>,
    meta: &RemoteLogSegmentMetadata,
    t: IndexType,
) -> Result<Bytes> {
    let m = manifest(inner, meta).await?;
    let idx = &m.manifest.segment_indexes;
    let range = match t {
        IndexType::Offset => Some(idx.offset),
        IndexType::Timestamp => Some(idx.timestamp),
        IndexType::ProducerSnapshot => Some(idx.producer_snapshot),
        IndexType::LeaderEpoch => Some(idx.leader_epoch),
        IndexType::Transaction => idx.transaction,
    };
    let Some(range) = range else {
        return Err(Error::NotFound {
            what: format!("{} index of segment {}", t.as_str(), m.keys),
        });
    };
    let segment = meta.remote_log_segment_id.id;
    let n = index_chunk_number(t);
    let load = async {
        let key = m.keys.key(ObjectSuffix::Indexes);
        let stored = if range.size == 0 {
            Bytes::new()
        } else {
            inner
                .store
                .get_range(&key, range.position..range.position + range.size)
                .await
                .map_err(|e| Error::store("get_range", &key, e))?
        };
        if stored.len() as u64 != range.size {
            return Err(Error::Corrupt {
                what: key.to_string(),
                reason: format!(
                    "{} index: got {} bytes, expected {}",
                    t.as_str(),
                    stored.len(),
                    range.size
                ),
                source: None,
            });
        }
        decode(
            &m.transform,
            ChunkKind::Index,
            n,
            stored,
            range.original_size,
            format!("{} index of {key}", t.as_str()),
        )
        .await
    };
    match &inner.caches.indexes {
        Some(cache) => cache
            .try_get_with((segment, n), load)
            .await
            .map_err(Error::from_shared),
        None => load.await,
    }
}
