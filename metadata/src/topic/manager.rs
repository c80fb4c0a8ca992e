//! `TopicBasedRemoteLogMetadataManager`: the RLMM whose durable store is the internal topic
//! `__remote_log_metadata`, an ordinary partition set of the broker's `LogManager`.
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use strata_storage::progress::Progress;
use strata_storage::time::now_ms;
use strata_storage::{
    LogConfig, LogManager, RecordBatch, RecordBatchBuilder, TopicIdPartition, TopicPartition,
    UnifiedLog,
};
use tokio::sync::{oneshot, Semaphore};
use uuid::Uuid;

use super::config::{TopicBasedRemoteLogMetadataManagerConfig, REMOTE_LOG_METADATA_TOPIC_NAME};
use super::partitioner::metadata_partition;
use super::snapshot::{self, Snapshot};
use crate::cache::RemoteLogMetadataCache;
use crate::record::RemoteLogMetadataRecord;
use crate::store::MetadataStore;
use crate::{
    Error, RemoteLogMetadataManager, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    RemotePartitionDeleteMetadata, Result,
};

/// Bytes read from the metadata log per `read` call during replay.
const REPLAY_READ_BYTES: usize = 4 << 20;
/// A start-up that replays at least this many records writes a fresh snapshot.
const SNAPSHOT_AFTER_REPLAYED_RECORDS: u64 = 10_000;
/// Most writes committed together in one group.
const MAX_GROUP_WRITES: usize = 1024;
/// Most writes waiting for a group commit; further callers wait for a slot.
const MAX_QUEUED_WRITES: usize = 4096;
/// Most metadata partitions fsynced at once by one group commit.
const FLUSH_PARALLELISM: usize = 8;
/// Leader epoch the metadata records are appended under (single node).
const LEADER_EPOCH: i32 = 0;

/// What [`TopicBasedRemoteLogMetadataManager::open`] found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayStats {
    /// Whether a valid snapshot was used.
    pub from_snapshot: bool,
    /// Records read from the log after the snapshot (or from the start).
    pub replayed_records: u64,
    /// Segments in the cache after replay.
    pub live_segments: usize,
    /// Wall time of the replay.
    pub elapsed: Duration,
}

/// The topic-based RLMM (Kafka's `TopicBasedRemoteLogMetadataManager`, without the client round trip):
///
/// - **Write**: validate against the cache (a rejected write writes nothing) → encode the records as one
///   uncompressed Kafka v2 record batch per metadata partition [`metadata_partition`](crate::metadata_partition)
///   (null key, a value in Kafka's `RemoteLogMetadataSerde` format, see [`RemoteLogMetadataRecord::to_bytes`];
///   replay also reads the JSON values of earlier versions) → `append_as_leader` →
///   `flush` (fsync) → apply to the cache → return. Concurrent writes are group-committed (see
///   [`write_records`](Self::write_records)). Blocking work runs under `spawn_blocking`; groups are
///   serialized, and a cancelled write is still performed (append, flush, apply) by the next group.
/// - **Read**: from the cache, sync.
/// - **Start**: replay = the snapshot in `snapshot_dir` + every record after it, before `open` returns.
/// - **Snapshot**: at most every `snapshot.interval.ms` (inside a write), on [`close`](Self::close), and
///   after a start-up that replayed a long tail.
///
/// A failed append or flush poisons the manager: later writes fail with `Error::Poisoned`.
#[derive(Debug, Clone)]
pub struct TopicBasedRemoteLogMetadataManager {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: TopicBasedRemoteLogMetadataManagerConfig,
    topic_id: Uuid,
    logs: Vec<Arc<UnifiedLog>>,
    snapshot_dir: PathBuf,
    store: MetadataStore,
    /// Serializes writes; holds the time of the last snapshot.
    writer: Arc<tokio::sync::Mutex<WriterState>>,
    poisoned: Mutex<Option<String>>,
    closed: AtomicBool,
    /// Writes waiting for the next group commit, in arrival order.
    queue: Mutex<VecDeque<PendingWrite>>,
    /// Bounds `queue`: one permit per queued write.
    queue_slots: Semaphore,
    /// Sequence of the last captured snapshot.
    snapshot_seq: AtomicU64,
    /// Sequence of the snapshot on disk; its lock serializes snapshot file writes.
    persisted_snapshot: Mutex<u64>,
}

/// One caller's write waiting for a group commit.
#[derive(Debug)]
struct PendingWrite {
    records: Vec<RemoteLogMetadataRecord>,
    done: oneshot::Sender<Result<()>>,
}

#[derive(Debug)]
pub(crate) struct WriterState {
    last_snapshot: Instant,
}

impl TopicBasedRemoteLogMetadataManager {
    /// Opens (creating if absent) the internal topic in `log_manager`, then rebuilds the cache from the snapshot
    /// in `snapshot_dir` (created if absent; the broker passes its first log dir) plus the records after it.
    /// Blocking: call it from `spawn_blocking` or before the runtime serves requests.
    ///
    /// Fails when the topic exists with a different partition count than configured (once it holds records),
    /// when its partitions disagree on the topic id, or when a record can not be decoded.
    pub fn open(
        config: TopicBasedRemoteLogMetadataManagerConfig,
        log_manager: Arc<LogManager>,
        snapshot_dir: &Path,
    ) -> Result<(Self, ReplayStats)> {
        config.validate()?;
        let started = Instant::now();
        std::fs::create_dir_all(snapshot_dir).map_err(|source| Error::Io {
            path: snapshot_dir.to_owned(),
            source,
        })?;
        let (topic_id, logs) = open_topic(&config, &log_manager)?;

        let mut stats = ReplayStats::default();
        let snap = snapshot::read(snapshot_dir)?.filter(|s| usable(s, topic_id, &config, &logs));
        let (mut cache, mut next) = match snap {
            Some(s) => {
                stats.from_snapshot = true;
                (RemoteLogMetadataCache::from_image(s.cache), s.next_offsets)
            }
            None => (RemoteLogMetadataCache::default(), vec![0; logs.len()]),
        };
        let to_replay: u64 = logs
            .iter()
            .enumerate()
            .map(|(p, log)| (log.log_end_offset() - next[p]).max(0) as u64)
            .sum();
        let progress = Progress::new("replaying __remote_log_metadata records", to_replay);
        for (p, log) in logs.iter().enumerate() {
            let log_start = log.log_start_offset();
            if next[p] < log_start {
                return Err(Error::Corrupt {
                    what: format!("{}", log.topic_partition()),
                    reason: format!(
                        "records {}..{log_start} were deleted by retention and are not in a snapshot; \
                         the remote log metadata can not be rebuilt",
                        next[p]
                    ),
                });
            }
            stats.replayed_records += replay_partition(log, &mut next[p], &mut cache, &progress)?;
        }
        progress.finish();
        stats.live_segments = cache.segment_count();
        stats.elapsed = started.elapsed();

        let inner = Arc::new(Inner {
            config,
            topic_id,
            logs,
            snapshot_dir: snapshot_dir.to_owned(),
            store: MetadataStore::new(cache),
            writer: Arc::new(tokio::sync::Mutex::new(WriterState {
                last_snapshot: Instant::now(),
            })),
            poisoned: Mutex::new(None),
            closed: AtomicBool::new(false),
            queue: Mutex::new(VecDeque::new()),
            queue_slots: Semaphore::new(MAX_QUEUED_WRITES),
            snapshot_seq: AtomicU64::new(0),
            persisted_snapshot: Mutex::new(0),
        });
        if stats.replayed_records >= SNAPSHOT_AFTER_REPLAYED_RECORDS {
            inner.write_snapshot()?;
        }
        tracing::info!(
            topic_id = %topic_id,
            from_snapshot = stats.from_snapshot,
            replayed_records = stats.replayed_records,
            live_segments = stats.live_segments,
            elapsed_ms = stats.elapsed.as_millis() as u64,
            "remote log metadata cache rebuilt"
        );
        Ok((Self { inner }, stats))
    }

    /// The internal topic's id (stable across restarts: kept in each partition's `partition.metadata`).
    pub fn topic_id(&self) -> Uuid {
        self.inner.topic_id
    }

    /// The internal topic's name, [`REMOTE_LOG_METADATA_TOPIC_NAME`].
    pub fn topic_name(&self) -> &'static str {
        REMOTE_LOG_METADATA_TOPIC_NAME
    }

    /// The internal topic's partition count.
    pub fn num_partitions(&self) -> u32 {
        self.inner.config.num_partitions
    }

    /// The metadata partition `tp`'s records go to.
    pub fn metadata_partition_for(&self, tp: &TopicIdPartition) -> i32 {
        metadata_partition(tp, self.inner.config.num_partitions)
    }

    /// Segments currently in the cache (Kafka's `RemoteLogMetadataCount` source).
    pub fn live_segment_count(&self) -> usize {
        self.inner.store.cache().segment_count()
    }

    /// Every user partition with remote metadata (segments or a pending delete), sorted.
    pub fn partitions(&self) -> Vec<TopicIdPartition> {
        self.inner.store.cache().partitions()
    }

    /// Validates `records` as a sequence, then writes them durably and applies them. Nothing is written
    /// when any record is rejected. A crash mid-call may leave a prefix of each metadata partition's share
    /// written; each record stays whole.
    ///
    /// Group commit: writes that arrive while another is being flushed are validated in arrival order and
    /// written together (one batch and one fsync per metadata partition touched), each still all or nothing
    /// on its own. A cancelled caller's write is still performed by the next group.
    pub async fn write_records(&self, records: Vec<RemoteLogMetadataRecord>) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let inner = &self.inner;
        let _slot = inner
            .queue_slots
            .acquire()
            .await
            .map_err(|_| Error::Closed)?;
        let (done, mut result) = oneshot::channel();
        inner.lock_queue().push_back(PendingWrite { records, done });
        loop {
            let guard = Arc::clone(&inner.writer).lock_owned().await;
            match result.try_recv() {
                Ok(r) => return r,
                Err(oneshot::error::TryRecvError::Closed) => {
                    return Err(Error::Poisoned {
                        reason: "the metadata write task failed".to_owned(),
                    })
                }
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            let group: Vec<PendingWrite> = {
                let mut q = inner.lock_queue();
                let n = q.len().min(MAX_GROUP_WRITES);
                q.drain(..n).collect()
            };
            let task_inner = Arc::clone(inner);
            // The guard moves into the blocking task: a cancelled caller can not let the next group in early.
            let joined = tokio::task::spawn_blocking(move || {
                let mut guard = guard;
                let due = task_inner.commit_group(group, &mut guard);
                drop(guard); // the next group may run while the snapshot is encoded and written
                if let Some((seq, snap)) = due {
                    // A failed snapshot costs only replay time: log it, keep the writes' success.
                    if let Err(e) = task_inner.persist_snapshot(seq, snap) {
                        tracing::warn!(error = %e, "remote log metadata snapshot failed");
                    }
                }
            })
            .await;
            if let Err(e) = joined {
                return Err(inner.poison(format!("metadata write task failed: {e}")));
            }
        }
    }

    /// Writes a snapshot now, after in-flight and queued writes.
    pub async fn snapshot(&self) -> Result<()> {
        let guard = Arc::clone(&self.inner.writer).lock_owned().await;
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let mut guard = guard;
            // Writes whose callers went away before their group ran are committed first.
            loop {
                let group: Vec<PendingWrite> = {
                    let mut q = inner.lock_queue();
                    let n = q.len().min(MAX_GROUP_WRITES);
                    q.drain(..n).collect()
                };
                if group.is_empty() {
                    break;
                }
                // A snapshot due here is superseded by the one written below.
                let _superseded = inner.commit_group(group, &mut guard);
            }
            if let Some(reason) = inner.poisoned() {
                return Err(Error::Poisoned { reason });
            }
            inner.write_snapshot()?;
            guard.last_snapshot = Instant::now();
            Ok(())
        })
        .await
        .map_err(|e| Error::Storage {
            context: "snapshot task".to_owned(),
            source: Box::new(e),
        })?
    }

    /// Waits for in-flight writes, writes a final snapshot and refuses later writes (`Error::Closed`). Reads
    /// keep working. Idempotent.
    pub async fn close(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        let result = if self.inner.poisoned().is_none() {
            self.snapshot().await
        } else {
            Ok(())
        };
        self.inner.closed.store(true, Ordering::Release);
        result
    }
}

/// Creates or opens the partitions; returns the topic id and the logs in partition order.
fn open_topic(
    config: &TopicBasedRemoteLogMetadataManagerConfig,
    log_manager: &LogManager,
) -> Result<(Uuid, Vec<Arc<UnifiedLog>>)> {
    let existing: BTreeMap<i32, Arc<UnifiedLog>> = log_manager
        .all_logs()
        .into_iter()
        .filter(|l| l.topic_partition().topic == REMOTE_LOG_METADATA_TOPIC_NAME)
        .map(|l| (l.topic_partition().partition, l))
        .collect();
    let n = config.num_partitions as i32;
    let ids: HashSet<Uuid> = existing.values().map(|l| l.topic_id()).collect();
    if ids.len() > 1 {
        return Err(Error::Corrupt {
            what: format!("topic {REMOTE_LOG_METADATA_TOPIC_NAME}"),
            reason: format!("its partitions carry different topic ids: {ids:?}"),
        });
    }
    let beyond = existing.keys().any(|&p| p >= n || p < 0);
    let missing = (0..n).any(|p| !existing.contains_key(&p));
    let has_data = existing.values().any(|l| l.log_end_offset() > 0);
    if beyond || (missing && has_data) {
        return Err(Error::InvalidConfig {
            key: super::config::NUM_PARTITIONS_KEY,
            value: n.to_string(),
            reason: format!(
                "{REMOTE_LOG_METADATA_TOPIC_NAME} already has partitions {:?} holding records; the count can not change",
                existing.keys().collect::<Vec<_>>()
            ),
        });
    }
    let topic_id = ids.into_iter().next().unwrap_or_else(Uuid::new_v4);
    let mut log_config = LogConfig::default();
    // The manager applies rlmm.config...retention.ms itself (see `apply_retention`), never past a snapshot.
    log_config.retention_ms = -1;
    log_config.retention_bytes = -1;
    log_config.remote_storage_enable = false;
    let mut logs = Vec::with_capacity(n as usize);
    for p in 0..n {
        let tp = TopicPartition::new(REMOTE_LOG_METADATA_TOPIC_NAME, p);
        let log = log_manager
            .get_or_create_log(&tp, topic_id, log_config.clone())
            .map_err(|e| storage(&tp, "open", e))?;
        logs.push(log);
    }
    Ok((topic_id, logs))
}

/// Whether a snapshot can seed the replay of this topic.
fn usable(
    s: &Snapshot,
    topic_id: Uuid,
    config: &TopicBasedRemoteLogMetadataManagerConfig,
    logs: &[Arc<UnifiedLog>],
) -> bool {
    let reason = if s.topic_id != topic_id {
        Some(format!(
            "it is for topic id {}, the topic is {topic_id}",
            s.topic_id
        ))
    } else if s.num_partitions != config.num_partitions || s.next_offsets.len() != logs.len() {
        Some(format!("it is for {} partitions", s.num_partitions))
    } else {
        s.next_offsets
            .iter()
            .zip(logs)
            .find(|(&o, l)| o > l.log_end_offset())
            .map(|(o, l)| {
                format!(
                    "it covers {} up to offset {o}, past the log end {}",
                    l.topic_partition(),
                    l.log_end_offset()
                )
            })
    };
    if let Some(reason) = &reason {
        tracing::warn!(%reason, "ignoring the remote log metadata snapshot; replaying the whole log");
    }
    reason.is_none()
}

/// Applies every record of `log` from `*next` to its end; advances `*next`. Returns the records read.
fn replay_partition(
    log: &UnifiedLog,
    next: &mut i64,
    cache: &mut RemoteLogMetadataCache,
    progress: &Progress,
) -> Result<u64> {
    let tp = log.topic_partition().clone();
    let end = log.log_end_offset();
    let mut count = 0;
    while *next < end {
        let data = log
            .read(*next, REPLAY_READ_BYTES, true, None)
            .map_err(|e| storage(&tp, "read", e))?;
        let before = *next;
        for batch in RecordBatch::iter(&data.records) {
            let batch = batch.map_err(|e| storage(&tp, "read", e))?;
            for record in batch.records().map_err(|e| storage(&tp, "decode", e))? {
                let record = record.map_err(|e| storage(&tp, "decode", e))?;
                if record.offset < *next {
                    continue;
                }
                let what = || format!("record at offset {} of {tp}", record.offset);
                let value = record.value.as_deref().ok_or_else(|| Error::Corrupt {
                    what: what(),
                    reason: "null value".to_owned(),
                })?;
                let decoded = RemoteLogMetadataRecord::from_bytes(value, what)?;
                if let Err(e) = cache.check_and_apply(decoded) {
                    // Only validated records are written, so this means a second writer or a bug; keep the
                    // cache as Kafka's consumer task would (it logs and skips) and say so.
                    tracing::warn!(offset = record.offset, partition = %tp, error = %e, "skipping remote log metadata record the cache rejects");
                }
                count += 1;
            }
            *next = (*next).max(batch.next_offset());
        }
        progress.advance((*next - before).max(0) as u64);
        if *next == before {
            return Err(Error::Corrupt {
                what: format!("{tp} at offset {before}"),
                reason: format!("the log ends at {end} but a read returned no batch"),
            });
        }
    }
    Ok(count)
}

fn storage(tp: &TopicPartition, op: &str, e: strata_storage::Error) -> Error {
    Error::Storage {
        context: format!("{op} {tp}"),
        source: Box::new(e),
    }
}

impl Inner {
    fn poisoned(&self) -> Option<String> {
        self.poisoned.lock().clone()
    }

    fn poison(&self, reason: String) -> Error {
        let mut p = self.poisoned.lock();
        tracing::error!(%reason, "remote log metadata manager poisoned");
        p.get_or_insert(reason.clone());
        Error::Poisoned { reason }
    }

    fn lock_queue(&self) -> parking_lot::MutexGuard<'_, VecDeque<PendingWrite>> {
        self.queue.lock()
    }

    /// Validates, writes, flushes and applies one group of writes; answers every write of the group. Returns
    /// a snapshot captured when one is due (`snapshot.interval.ms`), for the caller to persist after
    /// releasing the writer lock.
    fn commit_group(
        &self,
        group: Vec<PendingWrite>,
        writer: &mut WriterState,
    ) -> Option<(u64, Snapshot)> {
        let refuse = |group: Vec<PendingWrite>, err: &dyn Fn() -> Error| {
            for w in group {
                let _ = w.done.send(Err(err())); // the caller may have gone: nothing to tell
            }
        };
        if self.closed.load(Ordering::Acquire) {
            refuse(group, &|| Error::Closed);
            return None;
        }
        if let Some(reason) = self.poisoned() {
            refuse(group, &|| Error::Poisoned {
                reason: reason.clone(),
            });
            return None;
        }

        // Validate in arrival order, each write all or nothing, each seeing the accepted ones before it.
        let mut accepted = Vec::with_capacity(group.len());
        {
            let cache = self.store.cache();
            let mut overlay = cache.overlay();
            for w in group {
                let checked = if let [one] = w.records.as_slice() {
                    overlay.check_and_apply(one) // a rejected record leaves the overlay unchanged
                } else {
                    let mut trial = overlay.clone();
                    let r = w.records.iter().try_for_each(|r| trial.check_and_apply(r));
                    if r.is_ok() {
                        overlay = trial;
                    }
                    r
                };
                match checked {
                    Ok(()) => accepted.push(w),
                    Err(e) => {
                        let _ = w.done.send(Err(e));
                    }
                }
            }
        }
        if accepted.is_empty() {
            return None;
        }

        let by_partition = match self.batches(&accepted) {
            Ok(b) => b,
            Err(e) => {
                // Validation refuses what Kafka's format can not hold, so this is a bug; nothing was written.
                let reason = e.to_string();
                refuse(accepted, &|| Error::Corrupt {
                    what: "remote log metadata being written".to_owned(),
                    reason: reason.clone(),
                });
                return None;
            }
        };
        if let Err(e) = self.append_and_flush(by_partition) {
            // Records of other metadata partitions may already be durable: the cache no longer matches.
            let reason = e.to_string();
            self.poison(reason.clone());
            let mut first = Some(e);
            for w in accepted {
                let err = first.take().unwrap_or_else(|| Error::Poisoned {
                    reason: reason.clone(),
                });
                let _ = w.done.send(Err(err));
            }
            return None;
        }
        let mut answers = Vec::with_capacity(accepted.len());
        {
            let mut cache = self.store.cache_mut();
            for w in accepted {
                for r in w.records {
                    cache.apply(r);
                }
                answers.push(w.done);
            }
        }
        let interval = Duration::from_millis(self.config.snapshot_interval_ms);
        let due = (writer.last_snapshot.elapsed() >= interval).then(|| {
            writer.last_snapshot = Instant::now();
            self.capture_snapshot()
        });
        for done in answers {
            let _ = done.send(Ok(()));
        }
        due
    }

    /// One batch per metadata partition: each record with a null key and Kafka's serialization as its value,
    /// as Kafka's `TopicBasedRemoteLogMetadataManager` writes them.
    fn batches(&self, accepted: &[PendingWrite]) -> Result<BTreeMap<i32, RecordBatchBuilder>> {
        let n = self.config.num_partitions;
        let mut by_partition: BTreeMap<i32, RecordBatchBuilder> = BTreeMap::new();
        let ts = now_ms();
        for r in accepted.iter().flat_map(|w| &w.records) {
            let p = metadata_partition(r.topic_id_partition(), n);
            let value = r.to_bytes()?;
            by_partition
                .entry(p)
                .or_default()
                .append(ts, None, Some(&value), &[]);
        }
        Ok(by_partition)
    }

    /// Appends each batch to its metadata partition, then fsyncs the touched partitions, up to
    /// [`FLUSH_PARALLELISM`] at a time (the file system can share one journal commit between them).
    fn append_and_flush(&self, by_partition: BTreeMap<i32, RecordBatchBuilder>) -> Result<()> {
        let mut touched = Vec::with_capacity(by_partition.len());
        for (p, builder) in by_partition {
            let log = &self.logs[p as usize];
            strata_storage::crash_point("rlmm.before_append");
            log.append_as_leader(builder.build(), LEADER_EPOCH)
                .map_err(|e| storage(log.topic_partition(), "append to", e))?;
            touched.push(log);
        }
        strata_storage::crash_point("rlmm.before_flush");
        let flush = |log: &Arc<UnifiedLog>| {
            log.flush()
                .map_err(|e| storage(log.topic_partition(), "flush", e))
        };
        if touched.len() == 1 {
            return flush(touched[0]);
        }
        let per_thread = touched.len().div_ceil(FLUSH_PARALLELISM);
        std::thread::scope(|scope| {
            let handles: Vec<_> = touched
                .chunks(per_thread)
                .map(|chunk| scope.spawn(move || chunk.iter().try_for_each(|log| flush(log))))
                .collect();
            handles.into_iter().try_for_each(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::Storage {
                        context: "flush thread".to_owned(),
                        source: "panicked".into(),
                    })
                })
            })
        })
    }

    /// Writes the snapshot now; the caller holds the writer lock.
    fn write_snapshot(&self) -> Result<()> {
        let (seq, snap) = self.capture_snapshot();
        self.persist_snapshot(seq, snap)
    }

    /// The cache and the log ends it covers; the caller holds the writer lock, so they agree.
    fn capture_snapshot(&self) -> (u64, Snapshot) {
        let seq = self.snapshot_seq.fetch_add(1, Ordering::AcqRel) + 1;
        let snap = Snapshot {
            topic_id: self.topic_id,
            num_partitions: self.config.num_partitions,
            next_offsets: self.logs.iter().map(|l| l.log_end_offset()).collect(),
            cache: self.store.cache().to_image(),
        };
        (seq, snap)
    }

    /// Writes a captured snapshot unless a later one is already on disk, then applies retention.
    fn persist_snapshot(&self, seq: u64, snap: Snapshot) -> Result<()> {
        let mut persisted = self.persisted_snapshot.lock();
        if *persisted >= seq {
            return Ok(());
        }
        let started = Instant::now();
        let bytes = snapshot::write(&self.snapshot_dir, &snap)?;
        *persisted = seq;
        tracing::debug!(
            bytes,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "remote log metadata snapshot written"
        );
        self.apply_retention(&snap.next_offsets, now_ms());
        Ok(())
    }

    /// `rlmm.config.remote.log.metadata.topic.retention.ms`: moves each partition's log start offset to its
    /// first record younger than the retention, but never past `covered` (what the snapshot just written
    /// holds). Failures are logged: retention is best effort, the snapshot is already safe.
    fn apply_retention(&self, covered: &[i64], now_ms: i64) {
        if self.config.retention_ms < 0 {
            return;
        }
        let cutoff = now_ms.saturating_sub(self.config.retention_ms);
        for (log, &covered) in self.logs.iter().zip(covered) {
            let young = match log.fetch_offset_by_timestamp(cutoff) {
                Ok(Some((offset, _))) => offset,
                Ok(None) => log.log_end_offset(),
                Err(e) => {
                    tracing::warn!(partition = %log.topic_partition(), error = %e, "remote log metadata retention lookup failed");
                    continue;
                }
            };
            let new_start = young.min(covered);
            if new_start > log.log_start_offset() {
                if let Err(e) = log.delete_records(new_start) {
                    tracing::warn!(partition = %log.topic_partition(), new_start, error = %e, "remote log metadata retention failed");
                }
            }
        }
    }
}

#[async_trait]
impl RemoteLogMetadataManager for TopicBasedRemoteLogMetadataManager {
    async fn add_remote_log_segment_metadata(
        &self,
        metadata: RemoteLogSegmentMetadata,
    ) -> Result<()> {
        self.write_records(vec![RemoteLogMetadataRecord::Segment(metadata)])
            .await
    }

    async fn update_remote_log_segment_metadata(
        &self,
        update: RemoteLogSegmentMetadataUpdate,
    ) -> Result<()> {
        self.write_records(vec![RemoteLogMetadataRecord::SegmentUpdate(update)])
            .await
    }

    async fn put_remote_partition_delete_metadata(
        &self,
        metadata: RemotePartitionDeleteMetadata,
    ) -> Result<()> {
        self.write_records(vec![RemoteLogMetadataRecord::PartitionDelete(metadata)])
            .await
    }

    fn remote_log_segment_metadata(
        &self,
        tp: &TopicIdPartition,
        epoch_for_offset: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>> {
        self.inner
            .store
            .remote_log_segment_metadata(tp, epoch_for_offset, offset)
    }

    fn highest_offset_for_epoch(
        &self,
        tp: &TopicIdPartition,
        leader_epoch: i32,
    ) -> Result<Option<i64>> {
        self.inner.store.highest_offset_for_epoch(tp, leader_epoch)
    }

    fn list_remote_log_segments(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Vec<RemoteLogSegmentMetadata>> {
        self.inner.store.list(tp)
    }

    fn list_remote_log_segments_for_epoch(
        &self,
        tp: &TopicIdPartition,
        leader_epoch: i32,
    ) -> Result<Vec<RemoteLogSegmentMetadata>> {
        self.inner.store.list_for_epoch(tp, leader_epoch)
    }

    fn next_segment_with_txn_index(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<RemoteLogSegmentMetadata>> {
        self.inner
            .store
            .next_segment_with_txn_index(tp, epoch, offset)
    }

    fn remote_partition_delete_metadata(
        &self,
        tp: &TopicIdPartition,
    ) -> Result<Option<RemotePartitionDeleteMetadata>> {
        self.inner.store.partition_delete(tp)
    }

    fn is_ready(&self, tp: &TopicIdPartition) -> bool {
        // The cache is complete once `open` returns.
        self.inner.store.is_served(tp)
    }

    fn on_partition_leadership_changes(
        &self,
        leaders: &HashSet<TopicIdPartition>,
        followers: &HashSet<TopicIdPartition>,
    ) {
        self.inner.store.resume(leaders.iter().chain(followers))
    }

    fn on_stop_partitions(&self, partitions: &HashSet<TopicIdPartition>) {
        self.inner.store.stop(partitions)
    }
}

#[cfg(test)]
impl TopicBasedRemoteLogMetadataManager {
    pub(crate) fn cache_image(&self) -> crate::cache::CacheImage {
        self.inner.store.cache().to_image()
    }

    /// Blocks every group commit until the guard drops.
    pub(crate) async fn hold_writer(&self) -> tokio::sync::OwnedMutexGuard<WriterState> {
        Arc::clone(&self.inner.writer).lock_owned().await
    }

    /// Writes waiting for a group commit.
    pub(crate) fn queued_writes(&self) -> usize {
        self.inner.lock_queue().len()
    }

    /// Runs retention as if the clock read `now_ms`, against the snapshot offsets `covered`.
    pub(crate) fn apply_retention_at(&self, covered: &[i64], now_ms: i64) {
        self.inner.apply_retention(covered, now_ms)
    }
}
