//! Remote reads (Kafka's `RemoteLogReader` / `RLM.read`, `findOffsetByTimestamp`) and the ListOffsets helpers.
//!
//! A read finds the `COPY_SEGMENT_FINISHED` segment holding the offset, looks the offset up in the segment's
//! offset index (fetched through the RSM once and cached), fetches a bounded byte range (never the rest of the
//! segment) and returns whole batches from the batch that contains the offset. One read serves one segment, as
//! Kafka's does; the consumer's next fetch continues in the next segment.
use std::time::Duration;

use bytes::Bytes;
use strata_metadata::{RemoteLogSegmentMetadata, RemoteLogSegmentState};
use strata_storage::record::BatchHeader;
use strata_storage::{TopicIdPartition, TopicPartition, UnifiedLog};

use super::index;
use super::{tip_of, Inner, RemoteLogManager};
use crate::error::{Deferral, Error, Result};
use crate::{IndexType, RemoteStorageManagerExt};

/// Bytes read per step while scanning for the batch that holds an offset or a timestamp.
const SCAN_WINDOW: u64 = 64 * 1024;

/// One partition of a remote fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteReadRequest {
    /// The partition.
    pub tp: TopicPartition,
    /// The fetch offset (below the local log start).
    pub fetch_offset: i64,
    /// The partition's byte budget (FetchRequest `partition_max_bytes`, capped by what is left of `max_bytes`).
    pub max_bytes: usize,
    /// Return the first batch even when it is larger than `max_bytes` (Kafka: true for the first partition of
    /// a response that has no data yet).
    pub min_one_message: bool,
}

impl RemoteReadRequest {
    /// Joins the fields.
    pub fn new(
        tp: TopicPartition,
        fetch_offset: i64,
        max_bytes: usize,
        min_one_message: bool,
    ) -> Self {
        Self {
            tp,
            fetch_offset,
            max_bytes,
            min_one_message,
        }
    }
}

impl RemoteLogManager {
    /// Reads whole batches from `fetch_offset` out of remote storage: at most `max_bytes`, except that with
    /// `min_one_message` the first batch is returned whatever its size. Empty bytes when the first batch does not
    /// fit and `min_one_message` is false.
    ///
    /// Errors: [`Error::OffsetOutOfRange`] below the log start offset or where no remote segment holds the offset;
    /// [`Error::Unavailable`] while the RLMM is not serving the partition; [`Error::Deferred`] when the fetch quota
    /// is used up ([`Deferral::Quota`]) or `remote.log.reader.max.pending.tasks` reads wait already
    /// ([`Deferral::QueueFull`]).
    pub async fn read(
        &self,
        tp: &TopicPartition,
        fetch_offset: i64,
        max_bytes: usize,
        min_one_message: bool,
    ) -> Result<Bytes> {
        let inner = &self.inner;
        let topic = tp.topic.as_str();
        // The quota gates the start of a read (Kafka's `isRemoteLogFetchQuotaExceeded`); a read that starts runs
        // unthrottled and is charged afterwards, so it never outlives `remote.fetch.max.wait.ms` because of it.
        if inner.fetch_quota.exceeded() {
            inner.metrics.quota_deferred();
            return Err(Error::Deferred {
                tp: tp.clone(),
                reason: Deferral::Quota,
            });
        }
        let _queued = inner
            .read_queue
            .try_acquire()
            .map_err(|_| Error::Deferred {
                tp: tp.clone(),
                reason: Deferral::QueueFull {
                    pending: inner.config.reader_max_pending_tasks,
                },
            })?;
        inner.metrics.fetch_requested(topic);
        let r = async {
            let want = (max_bytes.max(1) as u64)
                .min(inner.config.fetch_max_bytes_in_flight)
                .min(u64::from(u32::MAX)) as u32;
            let _bytes = inner
                .read_bytes
                .acquire_many(want)
                .await
                .map_err(|_| Error::Cancelled)?;
            let _slot = inner
                .read_slots
                .acquire()
                .await
                .map_err(|_| Error::Cancelled)?;
            read_partition(inner, tp, fetch_offset, max_bytes, min_one_message).await
        }
        .await;
        match &r {
            Ok(b) => {
                inner.metrics.fetch_bytes(topic, b.len() as u64);
                inner.fetch_quota.take(b.len() as u64);
            }
            Err(Error::OffsetOutOfRange { .. }) => {}
            Err(_) => inner.metrics.fetch_failed(topic),
        }
        r
    }

    /// Reads several partitions at once (a FetchRequest's partitions below their local log start), each as
    /// [`read`](Self::read), bounded by `remote.log.reader.threads` readers and the bytes-in-flight budget. A
    /// partition not done within `remote.fetch.max.wait.ms` gets [`Error::Deferred`] ([`Deferral::Timeout`]); its read is not cancelled but
    /// finishes in the background (still holding its reader and bytes), so the chunks it loads are in the cache
    /// when the consumer fetches again — as Kafka's `DelayedRemoteFetch` lets an expired read run on. Without
    /// that, a store slower than the deadline would never serve a partition. Results are in request order.
    pub async fn read_many(
        &self,
        requests: Vec<RemoteReadRequest>,
    ) -> Vec<(TopicPartition, Result<Bytes>)> {
        let wait = Duration::from_millis(self.inner.config.fetch_max_wait_ms);
        let deadline = tokio::time::Instant::now() + wait;
        let reads = requests.into_iter().map(|r| {
            let rlm = self.clone();
            let tp = r.tp.clone();
            // On the RLM's tracker: a read left running past the deadline ends before shutdown returns.
            let task = self.inner.tracker.spawn(async move {
                rlm.read(&r.tp, r.fetch_offset, r.max_bytes, r.min_one_message)
                    .await
            });
            async move {
                let res = match tokio::time::timeout_at(deadline, task).await {
                    Ok(Ok(res)) => res,
                    Ok(Err(_)) => Err(Error::Cancelled), // the read task panicked or the runtime stops
                    Err(_) => {
                        // Not a failure: the read goes on and its result is counted when it ends.
                        self.inner.metrics.fetch_expired();
                        Err(Error::Deferred {
                            tp: tp.clone(),
                            reason: Deferral::Timeout {
                                wait_ms: wait.as_millis() as u64,
                            },
                        })
                    }
                };
                (tp, res)
            }
        });
        futures::future::join_all(reads).await
    }

    /// The first offset whose batch max timestamp is >= `ts`, with that timestamp, searching the remote
    /// segments below the local log start first and then the local log (Kafka's `fetchOffsetByTimestamp` with
    /// remote storage on). `None` when no record is that recent.
    pub async fn find_offset_by_timestamp(
        &self,
        tp: &TopicPartition,
        ts: i64,
    ) -> Result<Option<(i64, i64)>> {
        let inner = &self.inner;
        let log = inner.log(tp)?;
        let tip = tip_of(&log);
        let log_start = log.log_start_offset();
        let local_start = log.local_log_start_offset();
        if log_start < local_start && inner.rlmm.is_ready(&tip) {
            for s in finished_segments(inner, &tip)? {
                if s.end_offset < log_start
                    || s.start_offset >= local_start
                    || s.max_timestamp_ms < ts
                {
                    continue;
                }
                if let Some(hit) = timestamp_in_segment(inner, &s, ts, log_start).await? {
                    return Ok(Some(hit));
                }
            }
        }
        log.fetch_offset_by_timestamp(ts)
            .map_err(Error::storage(tp))
    }

    /// ListOffsets -3 (MAX_TIMESTAMP) over the whole partition: (largest timestamp, offset of the first record
    /// carrying it), looking at the remote segments below the local log start as well as the local log (Kafka
    /// looked at local segments only until KAFKA-17552, so the answer changed once data was tiered). `None` for
    /// an empty partition.
    pub async fn max_timestamp(&self, tp: &TopicPartition) -> Result<Option<(i64, i64)>> {
        let inner = &self.inner;
        let log = inner.log(tp)?;
        let local = log.max_timestamp_and_offset();
        let tip = tip_of(&log);
        let log_start = log.log_start_offset();
        let local_start = log.local_log_start_offset();
        if log_start >= local_start || !inner.rlmm.is_ready(&tip) {
            return Ok(local);
        }
        let mut remote: Vec<RemoteLogSegmentMetadata> = finished_segments(inner, &tip)?
            .into_iter()
            .filter(|s| {
                s.end_offset >= log_start
                    && s.start_offset < local_start
                    && s.max_timestamp_ms >= local.map_or(0, |(ts, _)| ts)
            })
            .collect();
        // The largest timestamp first; on a tie the older segment (its record comes first).
        remote.sort_by_key(|s| (std::cmp::Reverse(s.max_timestamp_ms), s.start_offset));
        for s in &remote {
            // The segment's largest timestamp may belong to a record below the log start (DeleteRecords): then
            // the next segment is tried.
            if let Some((off, ts)) =
                timestamp_in_segment(inner, s, s.max_timestamp_ms, log_start).await?
            {
                if ts == s.max_timestamp_ms {
                    return Ok(Some((ts, off)));
                }
            }
        }
        Ok(local)
    }

    /// The aborted transactions of the remote segments overlapping `[from, to)` (their marker at or after
    /// `from`, their first offset before `to`), from each segment's transaction index fetched through the RSM
    /// (cached like the offset index); segments recorded with `txn_idx_empty` are skipped. Kafka's
    /// `collectAbortedTransactions` for a read_committed fetch served from the remote tier; the caller adds the
    /// local segments' ones.
    pub async fn aborted_transactions(
        &self,
        tp: &TopicPartition,
        from: i64,
        to: i64,
    ) -> Result<Vec<strata_storage::index::AbortedTxn>> {
        let inner = &self.inner;
        let log = inner.log(tp)?;
        let tip = tip_of(&log);
        let mut out = Vec::new();
        for seg in finished_segments(inner, &tip)?
            .iter()
            .filter(|s| !s.txn_idx_empty && s.end_offset >= from)
        {
            let bytes = cached_index(inner, seg, IndexType::Transaction).await?;
            let name = std::path::PathBuf::from(format!(
                "remote segment {} .txnindex",
                seg.remote_log_segment_id.id
            ));
            let entries = strata_storage::index::parse_aborted_txns(&name, &bytes)
                .map_err(|e| corrupt(seg, e.to_string()))?;
            out.extend(
                entries
                    .into_iter()
                    .filter(|t| t.last_offset >= from && t.first_offset < to),
            );
        }
        Ok(out)
    }

    /// ListOffsets -4 (EARLIEST_LOCAL_TIMESTAMP): the local log start offset and the leader epoch of that offset
    /// (-1 when unknown).
    pub fn earliest_local(&self, tp: &TopicPartition) -> Result<(i64, i32)> {
        let log = self.inner.log(tp)?;
        let off = log.local_log_start_offset();
        Ok((off, epoch_of(&log, off)))
    }

    /// ListOffsets -5 (LATEST_TIERED_TIMESTAMP): the highest offset in remote storage and its leader epoch, or
    /// (-1, -1) when nothing is tiered.
    pub fn latest_tiered(&self, tp: &TopicPartition) -> Result<(i64, i32)> {
        let log = self.inner.log(tp)?;
        let off = log.highest_offset_in_remote_storage();
        // Kafka answers -1 for a log without remote storage, also once tiering was turned off (and the remote
        // data deleted) while the highest offset copied is still remembered.
        if off < 0 || !log.config().remote_storage_enable {
            return Ok((-1, -1));
        }
        let tip = tip_of(&log);
        let epoch = finished_segments(&self.inner, &tip)?
            .iter()
            .find(|s| s.start_offset <= off && off <= s.end_offset)
            .and_then(|s| {
                s.segment_leader_epochs
                    .range(..)
                    .rev()
                    .find(|(_, &o)| o <= off)
                    .map(|(e, _)| *e)
            })
            .unwrap_or_else(|| epoch_of(&log, off));
        Ok((off, epoch))
    }
}

fn epoch_of(log: &UnifiedLog, offset: i64) -> i32 {
    log.leader_epoch_entries()
        .iter()
        .rev()
        .find(|(_, s)| *s <= offset)
        .map_or(-1, |(e, _)| *e)
}

fn finished_segments(
    inner: &Inner,
    tip: &TopicIdPartition,
) -> Result<Vec<RemoteLogSegmentMetadata>> {
    Ok(inner
        .rlmm
        .list_remote_log_segments(tip)
        .map_err(Error::meta("list segments"))?
        .into_iter()
        .filter(|s| s.state == RemoteLogSegmentState::CopySegmentFinished)
        .collect())
}

async fn read_partition(
    inner: &Inner,
    tp: &TopicPartition,
    offset: i64,
    max_bytes: usize,
    min_one_message: bool,
) -> Result<Bytes> {
    let log = inner.log(tp)?;
    let tip = tip_of(&log);
    if !inner.rlmm.is_ready(&tip) {
        return Err(Error::Unavailable {
            operation: "remote read",
            what: tp.to_string(),
            source: "the remote log metadata of the partition is not ready".into(),
        });
    }
    let segs = finished_segments(inner, &tip)?;
    let out_of_range = || Error::OffsetOutOfRange {
        tp: tp.clone(),
        offset,
        range: match (segs.first(), segs.last()) {
            (Some(a), Some(b)) => format!(
                "{}..={}",
                a.start_offset.max(log.log_start_offset()),
                b.end_offset
            ),
            _ => "none".to_string(),
        },
    };
    if offset < log.log_start_offset() {
        return Err(out_of_range());
    }
    let Some(seg) = segs
        .iter()
        .rev()
        .find(|s| s.start_offset <= offset && offset <= s.end_offset)
    else {
        return Err(out_of_range());
    };
    let idx = cached_index(inner, seg, IndexType::Offset).await?;
    let pos = index::offset_index_lookup(&idx, seg.start_offset, offset);
    // The batch is found by its headers in small windows (a batch that is not it is skipped unread), then its
    // bytes on are read once. The index entry is that of the batch before (Kafka indexes a batch by its last
    // offset), so a window of `max_bytes` from it read up to twice the bytes returned.
    let Some((bpos, first, buf)) =
        scan(inner, seg, pos, SCAN_WINDOW, |f| f.last_offset >= offset).await?
    else {
        return Ok(Bytes::new());
    };
    let size = seg.segment_size_in_bytes;
    if first.size > max_bytes && !min_one_message {
        return Ok(Bytes::new());
    }
    // The bytes from the batch on: what the scan already holds, or one bounded range read.
    let need = (max_bytes.max(first.size) as u64).min(size - bpos) as usize;
    let buf = if buf.len() >= need {
        buf
    } else {
        fetch(inner, seg, bpos, bpos + need as u64 - 1).await?
    };
    let mut end = 0usize;
    while let Some(f) = BatchHeader::parse(&buf[end..]).map_err(|e| corrupt(seg, e.to_string()))? {
        if end + f.size > buf.len() || (end > 0 && end + f.size > max_bytes) {
            break;
        }
        end += f.size;
    }
    // A consumer catching up reads the next segment soon: let the RSM's read-ahead run into it.
    if let Some(next) = segs
        .iter()
        .filter(|s| s.start_offset > seg.end_offset)
        .min_by_key(|s| s.start_offset)
    {
        inner
            .rsm
            .prefetch_next_segment(seg, bpos + end.max(1) as u64 - 1, next);
    }
    Ok(buf.slice(..end))
}

/// Scans batches from `pos` for the first one matching `hit`; returns its position, its frame and the bytes
/// read from it on (at least its header).
async fn scan(
    inner: &Inner,
    seg: &RemoteLogSegmentMetadata,
    mut pos: u64,
    window: u64,
    hit: impl Fn(&BatchHeader) -> bool,
) -> Result<Option<(u64, BatchHeader, Bytes)>> {
    let size = seg.segment_size_in_bytes;
    while pos < size {
        let end = (pos + window).min(size) - 1;
        let buf = fetch(inner, seg, pos, end).await?;
        let mut p = 0usize;
        loop {
            match BatchHeader::parse(&buf[p..]).map_err(|e| corrupt(seg, e.to_string()))? {
                Some(f) if hit(&f) => return Ok(Some((pos + p as u64, f, buf.slice(p..)))),
                Some(f) => {
                    p += f.size;
                    if p >= buf.len() {
                        break;
                    }
                }
                None if pos + (buf.len() as u64) < size => break, // header cut by the window
                None => return Ok(None),
            }
        }
        if p == 0 {
            return Err(corrupt(seg, format!("no batch header at position {pos}")));
        }
        pos += p as u64;
    }
    Ok(None)
}

async fn timestamp_in_segment(
    inner: &Inner,
    seg: &RemoteLogSegmentMetadata,
    ts: i64,
    log_start: i64,
) -> Result<Option<(i64, i64)>> {
    let tidx = cached_index(inner, seg, IndexType::Timestamp).await?;
    let from = index::time_index_lookup(&tidx, seg.start_offset, ts).max(log_start);
    let oidx = cached_index(inner, seg, IndexType::Offset).await?;
    let mut pos = index::offset_index_lookup(&oidx, seg.start_offset, from);
    // Kafka answers the exact record: the first batch that may hold one is read whole (decompressed when
    // needed, see `RecordBatch::find_timestamp`); if none of its records qualifies, the search goes on.
    loop {
        let Some((at, f, head)) = scan(inner, seg, pos, SCAN_WINDOW, |f| {
            f.max_timestamp >= ts && f.last_offset >= log_start
        })
        .await?
        else {
            return Ok(None);
        };
        let bytes = if head.len() >= f.size {
            head.slice(..f.size)
        } else {
            fetch(inner, seg, at, at + f.size as u64 - 1).await?
        };
        let batch = strata_storage::RecordBatch::new_unchecked_crc(bytes)
            .map_err(|e| corrupt(seg, format!("batch at position {at}: {e}")))?;
        if let Some(hit) = batch
            .find_timestamp(ts, log_start)
            .map_err(|e| corrupt(seg, format!("batch at position {at}: {e}")))?
        {
            return Ok(Some(hit));
        }
        pos = at + f.size as u64;
    }
}

async fn fetch(
    inner: &Inner,
    seg: &RemoteLogSegmentMetadata,
    start: u64,
    end: u64,
) -> Result<Bytes> {
    inner
        .timed(
            "fetch",
            inner.rsm.fetch_log_segment_bytes(seg, start, Some(end)),
        )
        .await
}

async fn cached_index(
    inner: &Inner,
    seg: &RemoteLogSegmentMetadata,
    t: IndexType,
) -> Result<Bytes> {
    let load = || inner.timed("fetch_index", inner.rsm.fetch_index(seg, t));
    let tag = match t {
        IndexType::Offset => 0u8,
        IndexType::Transaction => 2u8,
        _ => 1u8,
    };
    match &inner.index_cache {
        None => load().await,
        Some(cache) => {
            let key = (seg.remote_log_segment_id.id, tag);
            if let Some(b) = cache.get(&key).await {
                return Ok(b);
            }
            let b = load().await?;
            cache.insert(key, b.clone()).await;
            Ok(b)
        }
    }
}

fn corrupt(seg: &RemoteLogSegmentMetadata, reason: String) -> Error {
    Error::corrupt(
        format!(
            "segment {} of {}",
            seg.remote_log_segment_id.id,
            seg.topic_id_partition().topic_partition
        ),
        reason,
    )
}
