//! The copy path: `.log` streamed chunk by chunk through the transform into a bounded multipart upload, then
//! `.indexes`, then the manifest. Any failure, or dropping the future, removes what the attempt wrote.
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use strata_metadata::RemoteLogSegmentMetadata;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::upload::ObjectWriter;
use super::{delete_keys, Inner};
use crate::crypto::ChunkKind;
use crate::custom::SegmentCustomMetadata;
use crate::error::{Error, Result};
use crate::key::{KeyLayout, ObjectSuffix, SegmentKeys};
use crate::manifest::{
    ChunkMap, EncryptionMetadata, IndexRange, SegmentIndexes, SegmentManifest, MANIFEST_VERSION,
};
use crate::rsm::{IndexType, LogSegmentData};
use crate::transform::{first_batch_is_compressed, index_chunk_number, ChunkTransform};

/// Deletes the attempt's objects if the copy did not finish, also when the copy future is dropped.
struct CleanupGuard {
    store: Arc<dyn ObjectStore>,
    keys: Option<SegmentKeys>,
    /// Where the cleanup of a dropped copy runs (the RSM's tracker).
    tasks: TaskTracker,
}

impl CleanupGuard {
    async fn cleanup_now(mut self) {
        if let Some(keys) = self.keys.take() {
            if let Err(e) = delete_keys(self.store.as_ref(), &keys).await {
                tracing::warn!(segment = %keys, error = %crate::Report(&e), "removing objects of a failed copy failed");
            }
        }
    }

    fn disarm(mut self) {
        self.keys = None;
    }
}

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        if let Some(keys) = self.keys.take() {
            let store = self.store.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                // Not cancelled at shutdown (what it does not remove stays in the bucket): shutdown waits for it
                // within its deadline.
                self.tasks.spawn_on(
                    async move {
                        tracing::info!(segment = %keys, "removing objects of a cancelled copy");
                        if let Err(e) = delete_keys(store.as_ref(), &keys).await {
                            tracing::warn!(segment = %keys, error = %crate::Report(&e), "removing objects of a cancelled copy failed");
                        }
                    },
                    &handle,
                );
            }
        }
    }
}

pub(super) async fn copy_segment(
    inner: &Arc<Inner>,
    meta: &RemoteLogSegmentMetadata,
    data: LogSegmentData,
) -> Result<SegmentCustomMetadata> {
    // Always the configured prefix and the current layout: the returned custom metadata records both for later
    // reads and deletes.
    let keys = inner.keys_with(meta, KeyLayout::CURRENT, &inner.config.key_prefix);
    let segment_id = meta.remote_log_segment_id.id;
    inner.caches.forget(&segment_id).await;
    let guard = CleanupGuard {
        store: inner.store.clone(),
        keys: Some(keys.clone()),
        tasks: inner.tasks.clone(),
    };
    let span = tracing::info_span!("copy_log_segment_data", segment = %keys);
    let mut writer = ObjectWriter::new(
        inner.store.clone(),
        keys.key(ObjectSuffix::Log),
        inner.config.upload_part_size() as usize,
        inner.config.upload_concurrency,
        inner.tasks.clone(),
    );
    let result = copy_objects(inner, meta, &data, &keys, &mut writer)
        .instrument(span)
        .await;
    match result {
        Ok(remote_size) => {
            guard.disarm();
            tracing::debug!(segment = %keys, remote_size, "segment copied");
            Ok(SegmentCustomMetadata {
                remote_size,
                object_prefix: Some(inner.config.key_prefix.clone()),
                key_layout: Some(KeyLayout::CURRENT),
            })
        }
        Err(e) => {
            tracing::warn!(segment = %keys, error = %crate::Report(&e), "segment copy failed; removing what it wrote");
            writer.abort().await;
            guard.cleanup_now().await;
            Err(e)
        }
    }
}

async fn copy_objects(
    inner: &Arc<Inner>,
    meta: &RemoteLogSegmentMetadata,
    data: &LogSegmentData,
    keys: &SegmentKeys,
    writer: &mut ObjectWriter,
) -> Result<u64> {
    let log_path = &data.log_segment;
    let io = |source| Error::local_io(log_path, source);
    let file = tokio::fs::File::open(log_path)
        .await
        .map_err(io)?
        .into_std()
        .await;
    let (file, first) = read_chunk(file, inner.config.chunk_size as usize)
        .await
        .map_err(io)?;
    let (transform, encryption) = chunk_transform(inner, meta, &first);
    let log = upload_log(inner, keys, log_path, file, first, &transform, writer).await?;
    let (segment_indexes, indexes_size) = upload_indexes(inner, data, keys, &transform).await?;
    // The manifest, last.
    let manifest = SegmentManifest {
        version: MANIFEST_VERSION,
        chunk_index: ChunkMap::index_for(
            inner.config.chunk_size,
            log.original_size,
            &log.stored_sizes,
        ),
        segment_indexes,
        compression: transform.compress,
        encryption,
        remote_log_segment_metadata: serde_json::to_value(meta).unwrap_or(serde_json::Value::Null),
    };
    let manifest_key = keys.key(ObjectSuffix::Manifest);
    let manifest_json = manifest.to_json();
    let manifest_size = manifest_json.len() as u64;
    inner
        .store
        .put(&manifest_key, PutPayload::from(manifest_json))
        .await
        .map_err(|e| Error::store("put", &manifest_key, e))?;
    Ok(log.stored_size + indexes_size + manifest_size)
}

/// How a segment's chunks are stored: compressed unless off (or, with the heuristic, when its first batch is
/// already compressed), encrypted under a fresh data key when encryption is on (with the key's metadata for the
/// manifest).
fn chunk_transform(
    inner: &Inner,
    meta: &RemoteLogSegmentMetadata,
    first: &[u8],
) -> (ChunkTransform, Option<EncryptionMetadata>) {
    let cfg = &inner.config;
    let compress =
        cfg.compression_enabled && !(cfg.compression_heuristic && first_batch_is_compressed(first));
    let (key, encryption) = match (&inner.kek, cfg.encryption_enabled) {
        (Some(kek), true) => {
            let (dek, wrapped) = kek.new_data_key(&meta.remote_log_segment_id.id);
            (
                Some(dek),
                Some(EncryptionMetadata {
                    key_id: kek.id().to_string(),
                    data_key: wrapped,
                }),
            )
        }
        _ => (None, None),
    };
    (ChunkTransform { compress, key }, encryption)
}

/// What the `.log` upload wrote.
struct UploadedLog {
    /// Bytes of the segment file.
    original_size: u64,
    /// Stored size of each chunk, in order (the manifest's chunk index).
    stored_sizes: Vec<u64>,
    /// Bytes of the `.log` object.
    stored_size: u64,
}

/// The `.log` object: chunks are read in order, transformed `upload.concurrency` at a time on blocking threads
/// (the identity transform needs no thread), and written in order; at most that many chunks are read ahead.
async fn upload_log(
    inner: &Inner,
    keys: &SegmentKeys,
    log_path: &std::path::Path,
    file: std::fs::File,
    first: BytesMut,
    transform: &ChunkTransform,
    writer: &mut ObjectWriter,
) -> Result<UploadedLog> {
    let cfg = &inner.config;
    let chunk_size = cfg.chunk_size as usize;
    let log_name = keys.key(ObjectSuffix::Log).to_string();
    let io_path = log_path.to_path_buf();
    let chunks =
        futures::stream::try_unfold((file, Some(first)), move |(file, pending)| async move {
            let (file, chunk) = match pending {
                Some(c) => (file, c),
                None => read_chunk(file, chunk_size).await?,
            };
            if chunk.is_empty() {
                return Ok(None);
            }
            Ok(Some((chunk.freeze(), (file, None))))
        });
    let parallel = if transform.is_identity() {
        1
    } else {
        cfg.upload_concurrency
    };
    let mut stored_chunks = chunks
        .enumerate()
        .map(|(n, chunk)| {
            let transform = transform.clone();
            let log_name = log_name.clone();
            let io_path = io_path.clone();
            async move {
                let chunk = chunk.map_err(|source| Error::local_io(&io_path, source))?;
                let len = chunk.len() as u64;
                let stored =
                    transform_chunk(&transform, ChunkKind::Log, n as u32, chunk, &log_name).await?;
                Ok::<_, Error>((len, stored))
            }
        })
        .buffered(parallel)
        .boxed();
    let mut stored_sizes = Vec::new();
    let mut original_size = 0u64;
    while let Some((len, stored)) = stored_chunks.try_next().await? {
        original_size += len;
        stored_sizes.push(stored.len() as u64);
        writer.write(stored).await?;
    }
    let stored_size = writer.finish().await?;
    strata_storage::crash_point("rsm.upload.after_object");
    Ok(UploadedLog {
        original_size,
        stored_sizes,
        stored_size,
    })
}

/// The `.indexes` object (each index one chunk): where each index is in it, and its size.
async fn upload_indexes(
    inner: &Inner,
    data: &LogSegmentData,
    keys: &SegmentKeys,
    transform: &ChunkTransform,
) -> Result<(SegmentIndexes, u64)> {
    let indexes_key = keys.key(ObjectSuffix::Indexes);
    let mut blob: Vec<Bytes> = Vec::new();
    let mut position = 0u64;
    let mut ranges: Vec<(IndexType, Option<IndexRange>)> = Vec::new();
    for t in IndexType::ALL {
        let Some(original) = index_bytes(data, t).await? else {
            ranges.push((t, None));
            continue;
        };
        let original_size = original.len() as u64;
        let what = format!("{} index of {}", t.as_str(), indexes_key);
        let stored = transform_chunk(
            transform,
            ChunkKind::Index,
            index_chunk_number(t),
            original,
            &what,
        )
        .await?;
        let size = stored.len() as u64;
        ranges.push((
            t,
            Some(IndexRange {
                position,
                size,
                original_size,
            }),
        ));
        position += size;
        blob.push(stored);
    }
    let payload: PutPayload = blob.into_iter().collect();
    inner
        .store
        .put(&indexes_key, payload)
        .await
        .map_err(|e| Error::store("put", &indexes_key, e))?;
    let find = |t: IndexType| ranges.iter().find(|(x, _)| *x == t).and_then(|(_, r)| *r);
    let required = |t: IndexType| {
        find(t).ok_or_else(|| Error::Corrupt {
            what: indexes_key.to_string(),
            reason: format!("missing {} index", t.as_str()),
            source: None,
        })
    };
    let indexes = SegmentIndexes {
        offset: required(IndexType::Offset)?,
        timestamp: required(IndexType::Timestamp)?,
        producer_snapshot: required(IndexType::ProducerSnapshot)?,
        leader_epoch: required(IndexType::LeaderEpoch)?,
        transaction: find(IndexType::Transaction),
    };
    Ok((indexes, position))
}

/// The bytes of index `t` of a segment (`None`: the segment has no transaction index).
async fn index_bytes(data: &LogSegmentData, t: IndexType) -> Result<Option<Bytes>> {
    Ok(match t {
        IndexType::Offset => Some(read_file(&data.offset_index).await?),
        IndexType::Timestamp => Some(read_file(&data.time_index).await?),
        IndexType::ProducerSnapshot => Some(read_file(&data.producer_snapshot).await?),
        IndexType::LeaderEpoch => Some(data.leader_epoch_index.clone()),
        IndexType::Transaction => match &data.transaction_index {
            Some(p) => Some(read_file(p).await?),
            None => None,
        },
    })
}

/// Reads up to `chunk_size` bytes (less only at end of file) with one blocking-pool hop and no extra copy.
async fn read_chunk(
    mut file: std::fs::File,
    chunk_size: usize,
) -> std::io::Result<(std::fs::File, BytesMut)> {
    tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut buf = BytesMut::zeroed(chunk_size);
        let mut filled = 0;
        while filled < chunk_size {
            match file.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(filled);
        Ok((file, buf))
    })
    .await
    .map_err(std::io::Error::other)?
}

async fn read_file(path: &std::path::Path) -> Result<Bytes> {
    tokio::fs::read(path)
        .await
        .map(Bytes::from)
        .map_err(|source| Error::local_io(path, source))
}

async fn transform_chunk(
    t: &ChunkTransform,
    kind: ChunkKind,
    n: u32,
    plain: Bytes,
    what: &str,
) -> Result<Bytes> {
    if t.is_identity() {
        return Ok(plain);
    }
    let t = t.clone();
    let what = what.to_string();
    let task_what = what.clone();
    tokio::task::spawn_blocking(move || t.apply(kind, n, plain, &|| format!("chunk {n} of {what}")))
        .await
        .map_err(|e| Error::task(task_what, e))?
}
