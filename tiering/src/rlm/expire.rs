//! The expiry task (Kafka's `RLMExpirationTask`) and partition deletion (`stopPartitions(deleteRemoteLog)`).
use std::sync::Arc;

use strata_metadata::{
    RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate, RemoteLogSegmentState,
    RemotePartitionDeleteMetadata, RemotePartitionDeleteState,
};
use strata_storage::time::now_ms;
use strata_storage::{TopicIdPartition, UnifiedLog};

use super::pending::pending_segments;
use super::{Inner, RemoteLogManager};
use crate::error::{Error, Result};

/// Which remote segments of the partition must go, in start order, and the log start offset after them.
struct Plan {
    /// Retention or DeleteRecords victims (COPY_SEGMENT_FINISHED), oldest first.
    expired: Vec<RemoteLogSegmentMetadata>,
    /// Dangling DELETE_SEGMENT_STARTED and abandoned COPY_SEGMENT_STARTED attempts.
    dangling: Vec<RemoteLogSegmentMetadata>,
}

fn plan(inner: &Inner, log: &UnifiedLog, tip: &TopicIdPartition) -> Result<Plan> {
    let cfg = log.config();
    let segs = inner
        .rlmm
        .list_remote_log_segments(tip)
        .map_err(Error::meta("list segments"))?;
    let now = now_ms();
    let log_start = log.log_start_offset();
    let finished: Vec<_> = segs
        .iter()
        .filter(|s| s.state == RemoteLogSegmentState::CopySegmentFinished)
        .collect();
    // Kafka: total = local bytes not yet in remote storage + remote COPY_SEGMENT_FINISHED bytes.
    let remote_size: u64 = finished.iter().map(|s| s.segment_size_in_bytes).sum();
    // The copy task records COPY_SEGMENT_FINISHED before it raises the log's highest remote offset: a segment in
    // between must not count as both remote and local-only.
    let highest = finished
        .iter()
        .map(|s| s.end_offset)
        .fold(log.highest_offset_in_remote_storage(), i64::max);
    let copied_local: u64 = log
        .rolled_segments()
        .iter()
        .filter(|s| s.next_offset - 1 <= highest)
        .map(|s| s.size_bytes)
        .sum();
    let local_only = log.size_in_bytes().saturating_sub(copied_local);
    let mut breach = if cfg.retention_bytes >= 0 {
        (local_only + remote_size).saturating_sub(cfg.retention_bytes as u64)
    } else {
        0
    };
    let mut expired = Vec::new();
    for s in finished {
        let below_start = s.end_offset < log_start;
        let by_time = cfg.retention_ms >= 0 && s.max_timestamp_ms <= now - cfg.retention_ms;
        let by_size = breach > 0 && breach >= s.segment_size_in_bytes;
        if !(below_start || by_time || by_size) {
            break;
        }
        breach = breach.saturating_sub(s.segment_size_in_bytes);
        expired.push(s.clone());
    }
    // Unfinished attempts not in flight now. The copy task runs beside this one: an attempt is in flight from
    // before its COPY_SEGMENT_STARTED until after its last state update, so one that is not in flight now is
    // over, and its final state is in a list taken after this check (`segs` may predate its COPY_SEGMENT_FINISHED).
    let candidates: std::collections::HashSet<_> = segs
        .iter()
        .filter(|s| {
            matches!(
                s.state,
                RemoteLogSegmentState::CopySegmentStarted
                    | RemoteLogSegmentState::DeleteSegmentStarted
            ) && !inner.is_in_flight(&s.remote_log_segment_id.id)
        })
        .map(|s| s.remote_log_segment_id.id)
        .collect();
    let dangling = if candidates.is_empty() {
        Vec::new()
    } else {
        inner
            .rlmm
            .list_remote_log_segments(tip)
            .map_err(Error::meta("list segments"))?
            .into_iter()
            .filter(|s| {
                candidates.contains(&s.remote_log_segment_id.id)
                    && matches!(
                        s.state,
                        RemoteLogSegmentState::CopySegmentStarted
                            | RemoteLogSegmentState::DeleteSegmentStarted
                    )
            })
            .collect()
    };
    Ok(Plan { expired, dangling })
}

/// One expiry pass of a partition: advance the log start past expired segments, then delete them and every
/// dangling attempt.
pub(crate) async fn expire(
    inner: &Arc<Inner>,
    log: &UnifiedLog,
    tip: &TopicIdPartition,
) -> Result<()> {
    let plan = plan(inner, log, tip)?;
    if let Some(last) = plan.expired.last() {
        let new_start = (last.end_offset + 1).min(log.high_watermark());
        if new_start > log.log_start_offset() {
            log.maybe_increment_log_start_offset(new_start)
                .map_err(Error::storage(log.topic_partition()))?;
            tracing::info!(tp = %tip.topic_partition, log_start_offset = new_start,
                segments = plan.expired.len(), "remote retention advanced the log start offset");
        }
    }
    inner.metrics.update_gauges(&tip.topic_partition, |g| {
        g.delete_lag_segments = (plan.expired.len() + plan.dangling.len()) as u64;
        g.delete_lag_bytes = plan
            .expired
            .iter()
            .chain(&plan.dangling)
            .map(|s| s.segment_size_in_bytes)
            .sum();
    });
    // Unfinished uploads first; a failed delete (its error names the object) is retried at the next run.
    for s in plan.dangling.iter().chain(plan.expired.iter()) {
        if inner.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if inner.is_deleted(tip) {
            // The partition delete that is waiting for this task deletes the rest.
            return Ok(());
        }
        delete_segment(inner, s).await?;
    }
    Ok(())
}

/// DELETE_SEGMENT_STARTED (unless already) → RSM delete → DELETE_SEGMENT_FINISHED. Idempotent.
pub(crate) async fn delete_segment(inner: &Inner, s: &RemoteLogSegmentMetadata) -> Result<()> {
    let topic = s.topic_id_partition().topic();
    let update = |state| {
        RemoteLogSegmentMetadataUpdate::new(
            s.remote_log_segment_id.clone(),
            now_ms(),
            state,
            inner.broker_id,
        )
    };
    if s.state != RemoteLogSegmentState::DeleteSegmentStarted {
        inner
            .rlmm
            .update_remote_log_segment_metadata(update(RemoteLogSegmentState::DeleteSegmentStarted))
            .await
            .map_err(Error::meta("update DELETE_SEGMENT_STARTED"))?;
    }
    strata_storage::crash_point("rlm.delete.after_started");
    inner.metrics.delete_requested(topic);
    if let Err(e) = inner
        .timed("delete", inner.rsm.delete_log_segment_data(s))
        .await
    {
        inner.metrics.delete_failed(topic);
        return Err(e);
    }
    if let Some(cache) = &inner.index_cache {
        for t in 0..2u8 {
            cache.invalidate(&(s.remote_log_segment_id.id, t)).await;
        }
    }
    strata_storage::crash_point("rlm.delete.before_finished");
    inner
        .rlmm
        .update_remote_log_segment_metadata(update(RemoteLogSegmentState::DeleteSegmentFinished))
        .await
        .map_err(Error::meta("update DELETE_SEGMENT_FINISHED"))?;
    tracing::info!(tp = %s.topic_id_partition().topic_partition, start = s.start_offset, end = s.end_offset,
        segment = %s.remote_log_segment_id.id, "remote segment deleted");
    Ok(())
}

/// Recomputes the partition's copy-lag and size gauges.
pub(crate) fn refresh_gauges(inner: &Inner, log: &UnifiedLog, tip: &TopicIdPartition) {
    let pending = pending_segments(log);
    let segs = inner.rlmm.list_remote_log_segments(tip).unwrap_or_default();
    // One update: the delete-lag fields another task sets meanwhile are kept.
    inner.metrics.update_gauges(&tip.topic_partition, |g| {
        g.copy_lag_bytes = pending.iter().map(|s| s.size_bytes).sum();
        g.copy_lag_segments = pending.len() as u64;
        g.log_size_bytes = segs.iter().map(|s| s.segment_size_in_bytes).sum();
        g.metadata_count = segs.len() as u64;
    });
}

impl RemoteLogManager {
    /// Deletes every remote segment of a partition (topic deletion, or turning `remote.storage.enable` off with
    /// `remote.log.delete.on.disable=true`): DELETE_PARTITION_MARKED → DELETE_PARTITION_STARTED → for each
    /// segment DELETE_SEGMENT_STARTED → RSM delete → DELETE_SEGMENT_FINISHED → DELETE_PARTITION_FINISHED. The
    /// partition is never copied again by this manager (a re-created topic has a new topic id). Idempotent: call it
    /// again after an error (or after a restart, for a deletion the RLMM shows as pending).
    pub async fn delete_partition_remote_data(&self, tip: &TopicIdPartition) -> Result<()> {
        let inner = &self.inner;
        inner.deleted.lock().insert(tip.clone());
        let state = inner.state(tip);
        state.stop_copying();
        // Wait for the partition's tasks in progress (an upload is cancelled; an expiry stops between segments).
        let _copying = state.copy.busy.lock().await;
        let _expiring = state.expire.busy.lock().await;
        let put =
            |st| RemotePartitionDeleteMetadata::new(tip.clone(), st, now_ms(), inner.broker_id);
        let already = inner
            .rlmm
            .remote_partition_delete_metadata(tip)
            .map_err(Error::meta("read partition delete state"))?
            .map(|m| m.state);
        if already != Some(RemotePartitionDeleteState::DeletePartitionStarted) {
            inner
                .rlmm
                .put_remote_partition_delete_metadata(put(
                    RemotePartitionDeleteState::DeletePartitionMarked,
                ))
                .await
                .map_err(Error::meta("put DELETE_PARTITION_MARKED"))?;
            inner
                .rlmm
                .put_remote_partition_delete_metadata(put(
                    RemotePartitionDeleteState::DeletePartitionStarted,
                ))
                .await
                .map_err(Error::meta("put DELETE_PARTITION_STARTED"))?;
        }
        let segs = inner
            .rlmm
            .list_remote_log_segments(tip)
            .map_err(Error::meta("list segments"))?;
        for s in &segs {
            delete_segment(inner, s).await?;
        }
        inner
            .rlmm
            .put_remote_partition_delete_metadata(put(
                RemotePartitionDeleteState::DeletePartitionFinished,
            ))
            .await
            .map_err(Error::meta("put DELETE_PARTITION_FINISHED"))?;
        inner.metrics.forget_partition(&tip.topic_partition);
        tracing::info!(tp = %tip.topic_partition, segments = segs.len(), "remote data of partition deleted");
        Ok(())
    }

    /// [`delete_partition_remote_data`](Self::delete_partition_remote_data) for every partition of `topic` this
    /// broker has a log for (call it before deleting the local logs). Returns the partitions deleted.
    pub async fn delete_topic_remote_data(&self, topic: &str) -> Result<Vec<TopicIdPartition>> {
        let parts = self.partitions_of(topic);
        for tip in &parts {
            self.delete_partition_remote_data(tip).await?;
        }
        Ok(parts)
    }

    /// Resumes remote deletions a previous run left pending (`DELETE_PARTITION_MARKED` / `STARTED` in the
    /// RLMM) for the given partitions (e.g. those of `__remote_log_metadata`'s known partitions the broker
    /// tracks). Returns how many were finished.
    pub async fn resume_partition_deletes(&self, partitions: &[TopicIdPartition]) -> Result<usize> {
        let mut n = 0;
        for tip in partitions {
            let pending = self
                .inner
                .rlmm
                .remote_partition_delete_metadata(tip)
                .map_err(Error::meta("read partition delete state"))?;
            if pending.is_some() {
                self.delete_partition_remote_data(tip).await?;
                n += 1;
            }
        }
        Ok(n)
    }
}
