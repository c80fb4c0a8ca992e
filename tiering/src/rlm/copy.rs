//! The copy task (Kafka's `RLMCopyTask`): restore offsets after a start, then copy rolled segments in order.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use strata_metadata::{
    RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
};
use strata_storage::time::now_ms;
use strata_storage::{RolledSegment, TopicIdPartition, UnifiedLog};
use tokio_util::sync::CancellationToken;

use super::pending::pending_segments;
use super::{expire, Inner};
use crate::error::{Error, Result};
use crate::LogSegmentData;

/// First pass after start: the highest offset in remote storage and the log start offset from the RLMM
/// (Kafka's `findHighestRemoteOffset` / `findLogStartOffset`). Attempts left in `COPY_SEGMENT_STARTED` are
/// cleaned by the expiry pass that follows (they are not in flight), and their segments copied again because the
/// highest offset ignores them.
pub(crate) fn restore(inner: &Inner, log: &UnifiedLog, tip: &TopicIdPartition) -> Result<()> {
    let segs = inner
        .rlmm
        .list_remote_log_segments(tip)
        .map_err(Error::meta("list segments"))?;
    let finished = segs
        .iter()
        .filter(|s| s.state == RemoteLogSegmentState::CopySegmentFinished);
    if let Some(highest) = finished.clone().map(|s| s.end_offset).max() {
        if highest > log.highest_offset_in_remote_storage() {
            log.update_highest_offset_in_remote_storage(highest);
        }
    }
    // The log starts at the earliest data that exists: the first finished remote segment or the first local
    // offset, whichever is lower (Kafka's findLogStartOffset). Segments in DELETE_SEGMENT_STARTED say nothing
    // about it: they are expired segments whose deletion was interrupted, but also failed copy attempts whose
    // cleanup could not delete their objects — and those hold offsets that are still local only.
    // Without a finished segment the checkpointed log start stands.
    if let Some(first) = finished.map(|s| s.start_offset).min() {
        let start = first
            .min(log.local_log_start_offset())
            .min(log.high_watermark());
        if start > log.log_start_offset() {
            log.maybe_increment_log_start_offset(start)
                .map_err(Error::storage(log.topic_partition()))?;
        }
    }
    tracing::info!(
        tp = %tip.topic_partition,
        highest_offset_in_remote_storage = log.highest_offset_in_remote_storage(),
        log_start_offset = log.log_start_offset(),
        remote_segments = segs.len(),
        "restored remote log offsets"
    );
    Ok(())
}

/// Copies every pending segment of the partition, one at a time, in order; stops at the first failure.
pub(crate) async fn copy_segments(
    inner: &Arc<Inner>,
    log: &UnifiedLog,
    tip: &TopicIdPartition,
) -> Result<usize> {
    let mut copied = 0;
    loop {
        if inner.cancel.is_cancelled() || inner.is_deleted(tip) {
            return Ok(copied);
        }
        let pending = pending_segments(log);
        // Copy lag as it stands now, not only at the end of the pass: a pass that drains a backlog (or waits
        // on a slow store) would otherwise show the lag it had before it started.
        inner.metrics.update_gauges(&tip.topic_partition, |g| {
            g.copy_lag_segments = pending.len() as u64;
            g.copy_lag_bytes = pending.iter().map(|s| s.size_bytes).sum();
        });
        let Some(seg) = pending.into_iter().next() else {
            return Ok(copied);
        };
        match copy_one(inner, log, tip, &seg).await {
            Ok(()) => copied += 1,
            // The partition's remote data is being deleted: the attempt was cleaned up, nothing failed.
            Err(Error::Cancelled) if inner.is_deleted(tip) => return Ok(copied),
            Err(e) => return Err(e),
        }
    }
}

/// Leader epochs within `[base, next)`: epoch → first offset in the segment, the first clamped to `base`
/// (Kafka's `epochEntriesInRange`). Never empty (epoch 0 at `base` when the log has no entries).
pub(crate) fn segment_epochs(entries: &[(i32, i64)], base: i64, next: i64) -> BTreeMap<i32, i64> {
    let mut m = BTreeMap::new();
    let mut at_base = None;
    for &(epoch, start) in entries.iter().filter(|(e, _)| *e >= 0) {
        if start <= base {
            at_base = Some(epoch);
        } else if start < next {
            m.insert(epoch, start);
        }
    }
    match at_base {
        Some(e) => {
            m.insert(e, base);
        }
        None => match m.iter().next().map(|(e, _)| *e) {
            Some(first) => {
                m.insert(first, base);
            }
            None => {
                m.insert(0, base);
            }
        },
    }
    m
}

/// Kafka's leader-epoch checkpoint text (version 0) with every entry below `next`.
pub(crate) fn epoch_checkpoint(entries: &[(i32, i64)], next: i64) -> Bytes {
    let below: Vec<_> = entries.iter().filter(|(_, s)| *s < next).collect();
    let mut s = format!("0\n{}\n", below.len());
    for (e, o) in below {
        s.push_str(&format!("{e} {o}\n"));
    }
    Bytes::from(s)
}

/// An empty producer snapshot for segments that have none (Kafka refuses those: Aiven #707; an empty snapshot
/// restores no producer state, which is what such a segment had).
fn empty_snapshot() -> std::io::Result<PathBuf> {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    let p = PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("strata-rlm-{}-empty.snapshot", std::process::id()))
    });
    if !p.exists() {
        std::fs::write(p, b"")?;
    }
    Ok(p.clone())
}

async fn copy_one(
    inner: &Arc<Inner>,
    log: &UnifiedLog,
    tip: &TopicIdPartition,
    seg: &RolledSegment,
) -> Result<()> {
    let stop = inner.state(tip).stop_token();
    let _slot = tokio::select! {
        slot = inner.copy_slots.acquire() => slot.map_err(|_| Error::Cancelled)?,
        _ = stop.cancelled() => return Err(Error::Cancelled),
    };
    tokio::select! {
        _ = inner.copy_quota.acquire(seg.size_bytes) => {}
        _ = stop.cancelled() => return Err(Error::Cancelled),
    }
    let entries = log.leader_epoch_entries();
    let id = RemoteLogSegmentId::generate_new(tip.clone());
    let mut meta = RemoteLogSegmentMetadata::new(
        id.clone(),
        seg.base_offset,
        seg.next_offset - 1,
        seg.max_timestamp_ms,
        inner.broker_id,
        now_ms(),
        seg.size_bytes,
        segment_epochs(&entries, seg.base_offset, seg.next_offset),
    )
    .map_err(Error::meta("build segment metadata"))?;
    // KIP-405: readers skip fetching the transaction index of a segment recorded without one.
    meta.txn_idx_empty = seg.txn_index_file.is_none();
    let producer_snapshot = match &seg.producer_snapshot_file {
        Some(p) => p.clone(),
        None => {
            empty_snapshot().map_err(|source| Error::local_io(&std::env::temp_dir(), source))?
        }
    };
    let data = LogSegmentData {
        log_segment: seg.log_file.clone(),
        offset_index: seg.offset_index_file.clone(),
        time_index: seg.time_index_file.clone(),
        transaction_index: seg.txn_index_file.clone(),
        producer_snapshot,
        leader_epoch_index: epoch_checkpoint(&entries, seg.next_offset),
    };
    inner.in_flight_insert(id.id);
    let r = copy_attempt(inner, log, tip, &meta, data, &stop).await;
    inner.in_flight_remove(&id.id);
    r
}

async fn copy_attempt(
    inner: &Arc<Inner>,
    log: &UnifiedLog,
    tip: &TopicIdPartition,
    meta: &RemoteLogSegmentMetadata,
    data: LogSegmentData,
    stop: &CancellationToken,
) -> Result<()> {
    let topic = tip.topic();
    // Durable before any byte is uploaded.
    inner
        .rlmm
        .add_remote_log_segment_metadata(meta.clone())
        .await
        .map_err(Error::meta("add COPY_SEGMENT_STARTED"))?;
    strata_storage::crash_point("rlm.copy.after_started");
    inner.metrics.copy_requested(topic);
    tracing::debug!(tp = %tip.topic_partition, start = meta.start_offset, end = meta.end_offset,
        size = meta.segment_size_in_bytes, "copying segment");
    let copied = tokio::select! {
        r = inner.timed("copy", inner.rsm.copy_log_segment_data(meta, data)) => r,
        _ = stop.cancelled() => {
            // Dropping the upload aborts its multipart upload; the partition delete that cancelled it deletes
            // this COPY_SEGMENT_STARTED segment's objects with the others (a store that hangs holds it no more).
            tracing::info!(tp = %tip.topic_partition, start = meta.start_offset,
                "upload cancelled: the partition's remote data is being deleted");
            return Err(Error::Cancelled);
        }
    };
    let custom = match copied {
        Ok(c) => c,
        Err(_) if log.is_closed() => {
            // The log was deleted (or the broker stops) under the upload, which then failed reading its files:
            // not a failure of the store, nothing to retry.
            tracing::info!(tp = %tip.topic_partition, start = meta.start_offset,
                "upload abandoned: the local log was deleted or closed");
            clean_failed_attempt(inner, meta).await;
            return Err(Error::Cancelled);
        }
        Err(e) => {
            inner.metrics.copy_failed(topic);
            clean_failed_attempt(inner, meta).await;
            return Err(e);
        }
    };
    let mut update = RemoteLogSegmentMetadataUpdate::new(
        meta.remote_log_segment_id.clone(),
        now_ms(),
        RemoteLogSegmentState::CopySegmentFinished,
        inner.broker_id,
    );
    update.custom_metadata = custom;
    strata_storage::crash_point("rlm.copy.before_finished");
    if let Err(e) = inner.rlmm.update_remote_log_segment_metadata(update).await {
        inner.metrics.copy_failed(topic);
        clean_failed_attempt(inner, meta).await;
        return Err(Error::meta("update COPY_SEGMENT_FINISHED")(e));
    }
    strata_storage::crash_point("rlm.copy.after_finished");
    log.update_highest_offset_in_remote_storage(meta.end_offset);
    inner
        .metrics
        .copy_finished(topic, meta.segment_size_in_bytes);
    tracing::info!(tp = %tip.topic_partition, start = meta.start_offset, end = meta.end_offset,
        size = meta.segment_size_in_bytes, segment = %meta.remote_log_segment_id.id, "segment copied to remote storage");
    Ok(())
}

/// Best-effort cleanup of a failed attempt: DELETE_SEGMENT_STARTED → RSM delete → DELETE_SEGMENT_FINISHED.
/// When it fails the segment stays in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED and a later expiry pass
/// finishes it.
async fn clean_failed_attempt(inner: &Inner, meta: &RemoteLogSegmentMetadata) {
    if let Err(e) = expire::delete_segment(inner, meta).await {
        tracing::warn!(segment = %meta.remote_log_segment_id.id, error = %e,
            "could not clean a failed copy attempt; a later pass retries");
    }
}

impl Inner {
    fn in_flight_insert(&self, id: uuid::Uuid) {
        self.in_flight.lock().insert(id);
    }
    fn in_flight_remove(&self, id: &uuid::Uuid) {
        self.in_flight.lock().remove(id);
    }
    pub(crate) fn is_in_flight(&self, id: &uuid::Uuid) -> bool {
        self.in_flight.lock().contains(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_epochs_clamp_the_first_epoch_to_the_base() {
        let entries = [(0, 0), (2, 150), (5, 260)];
        assert_eq!(
            segment_epochs(&entries, 100, 200),
            BTreeMap::from([(0, 100), (2, 150)])
        );
        assert_eq!(
            segment_epochs(&entries, 260, 300),
            BTreeMap::from([(5, 260)])
        );
        assert_eq!(segment_epochs(&[], 7, 9), BTreeMap::from([(0, 7)]));
        assert_eq!(
            segment_epochs(&[(3, 50)], 10, 60),
            BTreeMap::from([(3, 10)])
        );
    }

    #[test]
    fn checkpoint_text_lists_entries_below_next() {
        let text = epoch_checkpoint(&[(0, 0), (1, 40), (2, 90)], 90);
        assert_eq!(&text[..], b"0\n2\n0 0\n1 40\n");
    }
}
