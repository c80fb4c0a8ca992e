//! The worker loop: a pass at start, on every roll (coalesced) and every `remote.log.manager.task.interval.ms`.
//! A pass runs inline, so ticks and rolls that come while it runs are merged into one later pass (Kafka's
//! "skip a tick when the last one still runs"). A pass visits every tiered partition concurrently: restore (first
//! pass only), copy (unless disabled or backing off), expire, refresh gauges.
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use strata_storage::UnifiedLog;
use tracing::Instrument;

use super::{copy, expire, tip_of, Inner};

/// Runs until the future is dropped (the caller selects on cancellation).
pub(crate) async fn run(inner: Arc<Inner>) {
    let interval = inner.config.task_interval();
    let mut next_tick = tokio::time::Instant::now();
    loop {
        let now = tokio::time::Instant::now();
        if now >= next_tick {
            next_tick = now + interval;
        }
        // Wake at the next tick, or earlier when a partition's backoff ends.
        let wake_at = earliest_retry(&inner)
            .map(tokio::time::Instant::from_std)
            .map_or(next_tick, |r| r.min(next_tick));
        tokio::select! {
            _ = tokio::time::sleep_until(wake_at) => {}
            _ = inner.wake.notified() => {}
        }
        pass(&inner).await;
    }
}

fn earliest_retry(inner: &Inner) -> Option<Instant> {
    let parts = inner.partitions.lock().unwrap_or_else(|e| e.into_inner());
    parts
        .values()
        .filter_map(|p| {
            p.progress
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retry_at
        })
        .min()
}

/// One pass over every tiered partition.
pub(crate) async fn pass(inner: &Arc<Inner>) {
    let logs = inner.tiered_logs();
    let width = inner
        .config
        .expiration_pool_size
        .max(inner.config.copier_pool_size);
    futures::stream::iter(logs)
        .for_each_concurrent(width, |log| partition_pass(inner, log))
        .await;
}

async fn partition_pass(inner: &Arc<Inner>, log: Arc<UnifiedLog>) {
    let span = tracing::info_span!("rlm_partition", tp = %log.topic_partition());
    partition_pass_inner(inner, log).instrument(span).await
}

async fn partition_pass_inner(inner: &Arc<Inner>, log: Arc<UnifiedLog>) {
    let tip = tip_of(&log);
    let state = inner.state(&tip);
    // Another pass (or a partition delete) holds it: this one has nothing to add.
    let Ok(_busy) = state.busy.try_lock() else {
        return;
    };
    if inner.is_deleted(&tip) {
        return;
    }
    if !inner.rlmm.is_ready(&tip) {
        tracing::debug!(tp = %tip.topic_partition, "remote log metadata not ready; skipping");
        return;
    }
    let restored = state
        .progress
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .restored;
    if !restored {
        match copy::restore(inner, &log, &tip) {
            Ok(()) => {
                state
                    .progress
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .restored = true
            }
            Err(e) => {
                tracing::warn!(tp = %tip.topic_partition, error = %e, "could not restore remote offsets; will retry");
                return;
            }
        }
    }
    let policy = inner.policy(tip.topic());
    let backing_off = {
        let p = state.progress.lock().unwrap_or_else(|e| e.into_inner());
        p.retry_at.is_some_and(|t| t > Instant::now())
    };
    if !policy.copy_disabled && !backing_off {
        match copy::copy_segments(inner, &log, &tip).await {
            Ok(_) => {
                let mut p = state.progress.lock().unwrap_or_else(|e| e.into_inner());
                if p.failures > 0 {
                    tracing::info!(tp = %tip.topic_partition, failures = p.failures, "uploads to remote storage recovered");
                }
                p.failures = 0;
                p.retry_at = None;
                inner.metrics.set_local_bytes_held(&tip.topic_partition, 0);
            }
            Err(e) => {
                let (failures, wait) = {
                    let mut p = state.progress.lock().unwrap_or_else(|e| e.into_inner());
                    p.failures += 1;
                    let wait = inner.config.backoff(p.failures);
                    p.retry_at = Some(Instant::now() + wait);
                    (p.failures, wait)
                };
                let held = copy::local_only_rolled_bytes(&log);
                inner
                    .metrics
                    .set_local_bytes_held(&tip.topic_partition, held);
                tracing::warn!(
                    tp = %tip.topic_partition,
                    failures,
                    retry_in_ms = wait.as_millis() as u64,
                    local_bytes_held = held,
                    error = %e,
                    "upload to remote storage failed; local segments are kept until they are copied"
                );
            }
        }
    }
    if let Err(e) = expire::expire(inner, &log, &tip).await {
        tracing::warn!(tp = %tip.topic_partition, error = %e, "remote expiry failed; will retry");
    }
    expire::refresh_gauges(inner, &log, &tip);
}
