//! The worker: at start, every `remote.log.manager.task.interval.ms`, when a backoff ends and on
//! [`wake`](super::RemoteLogManager::wake) it starts a pass on every tiered partition that has none running; a roll
//! starts one on its partition. Each pass runs in its own task (at most `max(copier, expiration pool size)` at
//! once), so a slow upload on one partition does not hold back the others (Kafka's per-partition `RLMTask`s). A
//! partition that is busy when asked again runs once more after its pass (rolls are never lost; ticks and rolls
//! coalesce). A pass: restore (first pass only), copy (unless disabled or backing off), expire (unless backing off
//! after a failure), refresh gauges.
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use strata_storage::{TopicPartition, UnifiedLog};
use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{copy, expire, tip_of, Inner, PartitionState};

/// Runs until the future is dropped (the caller selects on cancellation); the partition passes it spawns stop
/// with `cancel` or the manager's own token.
pub(crate) async fn run(inner: Arc<Inner>, cancel: CancellationToken) {
    let interval = inner.config.task_interval();
    let mut next_tick = tokio::time::Instant::now();
    let mut everything = true;
    loop {
        if everything {
            // Whatever was asked for one partition is covered.
            inner
                .wanted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            dispatch(&inner, &cancel, None);
        } else {
            let wanted =
                std::mem::take(&mut *inner.wanted.lock().unwrap_or_else(|e| e.into_inner()));
            dispatch(&inner, &cancel, Some(&wanted));
        }
        let now = tokio::time::Instant::now();
        if now >= next_tick {
            next_tick = now + interval;
        }
        everything = loop {
            // Wake at the next tick, or earlier when a partition's backoff ends (both: every partition); a pass
            // that set a backoff re-arms this timer (`backoff_set`); a roll wakes it for its partition.
            let wake_at = earliest_retry(&inner)
                .map(tokio::time::Instant::from_std)
                .map_or(next_tick, |r| r.min(next_tick));
            tokio::select! {
                _ = tokio::time::sleep_until(wake_at) => break true,
                _ = inner.wake.notified() => break inner.wake_all.swap(false, Ordering::SeqCst),
                _ = inner.backoff_set.notified() => {}
            }
        };
    }
}

/// Starts a pass, in its own task, on every tiered partition (or those in `only`) that has none running; marks
/// the busy ones to run again when their pass ends.
fn dispatch(
    inner: &Arc<Inner>,
    cancel: &CancellationToken,
    only: Option<&HashSet<TopicPartition>>,
) {
    if only.is_some_and(|o| o.is_empty()) {
        return;
    }
    for log in inner.tiered_logs() {
        if only.is_some_and(|o| !o.contains(log.topic_partition())) {
            continue;
        }
        let state = inner.state(&tip_of(&log));
        let Ok(guard) = state.busy.clone().try_lock_owned() else {
            state.rerun.store(true, Ordering::SeqCst);
            continue;
        };
        let (inner, cancel) = (inner.clone(), cancel.clone());
        inner.clone().tracker.spawn(async move {
            tokio::select! {
                _ = run_partition(&inner, log, guard, &state) => {}
                _ = inner.cancel.cancelled() => {}
                _ = cancel.cancelled() => {}
            }
        });
    }
}

async fn run_partition(
    inner: &Arc<Inner>,
    log: Arc<UnifiedLog>,
    guard: OwnedMutexGuard<()>,
    state: &PartitionState,
) {
    // Waiting for a slot holds the partition's lock: a partition delete (which cancels the token) must not wait
    // for other partitions' passes to free one.
    let stop = state.stop_token();
    let _slot = tokio::select! {
        slot = inner.pass_slots.acquire() => match slot {
            Ok(s) => s,
            Err(_) => return,
        },
        _ = stop.cancelled() => return,
    };
    let tp = log.topic_partition().clone();
    partition_pass(inner, log, guard).await;
    // The guard is released: a pass asked for while this one ran can start now.
    if state.rerun.swap(false, Ordering::SeqCst) {
        inner.wake_partition(&tp);
    }
    let now = Instant::now();
    let backing_off = {
        let p = state.progress.lock().unwrap_or_else(|e| e.into_inner());
        earliest_future([p.retry_at, p.expire_retry_at].into_iter(), now).is_some()
    };
    if backing_off {
        inner.backoff_set.notify_one();
    }
}

fn earliest_retry(inner: &Inner) -> Option<Instant> {
    let parts = inner.partitions.lock().unwrap_or_else(|e| e.into_inner());
    earliest_future(
        parts.values().flat_map(|p| {
            let p = p.progress.lock().unwrap_or_else(|e| e.into_inner());
            [p.retry_at, p.expire_retry_at]
        }),
        Instant::now(),
    )
}

/// The earliest instant in the future. Past instants are stale (the pass that just ran saw them, or skipped the
/// partition: deleted, copy disabled, metadata not ready) and must not wake the worker, else it spins.
fn earliest_future(
    instants: impl Iterator<Item = Option<Instant>>,
    now: Instant,
) -> Option<Instant> {
    instants.flatten().filter(|t| *t > now).min()
}

/// One pass over every tiered partition, returning when all are done ([`RemoteLogManager::run_once`]); a
/// partition whose pass is running already is skipped.
///
/// [`RemoteLogManager::run_once`]: super::RemoteLogManager::run_once
pub(crate) async fn pass(inner: &Arc<Inner>) {
    let logs = inner.tiered_logs();
    let width = inner
        .config
        .expiration_pool_size
        .max(inner.config.copier_pool_size);
    futures::stream::iter(logs)
        .for_each_concurrent(width, |log| async move {
            let state = inner.state(&tip_of(&log));
            if let Ok(guard) = state.busy.clone().try_lock_owned() {
                partition_pass(inner, log, guard).await;
            }
        })
        .await;
}

/// Restore (first pass only), copy (unless disabled or backing off), expire (unless backing off), gauges. The
/// caller holds the partition's `busy` lock (`_busy`) for the whole pass.
async fn partition_pass(inner: &Arc<Inner>, log: Arc<UnifiedLog>, _busy: OwnedMutexGuard<()>) {
    let span = tracing::info_span!("rlm_partition", tp = %log.topic_partition());
    partition_pass_inner(inner, log).instrument(span).await
}

async fn partition_pass_inner(inner: &Arc<Inner>, log: Arc<UnifiedLog>) {
    let tip = tip_of(&log);
    let state = inner.state(&tip);
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
        let copied = copy::copy_segments(inner, &log, &tip).await;
        if inner.is_deleted(&tip) {
            // Its remote data is being deleted (the upload was cancelled): nothing more to do here.
            return;
        }
        match copied {
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
    let expiry_backing_off = {
        let p = state.progress.lock().unwrap_or_else(|e| e.into_inner());
        p.expire_retry_at.is_some_and(|t| t > Instant::now())
    };
    if !expiry_backing_off {
        let result = expire::expire(inner, &log, &tip).await;
        let mut p = state.progress.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(()) => {
                if p.expire_failures > 0 {
                    tracing::info!(tp = %tip.topic_partition, failures = p.expire_failures, "remote expiry recovered");
                }
                p.expire_failures = 0;
                p.expire_retry_at = None;
            }
            Err(e) => {
                p.expire_failures += 1;
                let wait = inner.config.backoff(p.expire_failures);
                p.expire_retry_at = Some(Instant::now() + wait);
                tracing::warn!(
                    tp = %tip.topic_partition,
                    failures = p.expire_failures,
                    retry_in_ms = wait.as_millis() as u64,
                    error = %e,
                    "remote expiry failed; will retry"
                );
            }
        }
    }
    expire::refresh_gauges(inner, &log, &tip);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn past_backoffs_do_not_wake_the_worker() {
        let now = Instant::now();
        let past = now - Duration::from_millis(10);
        let soon = now + Duration::from_millis(50);
        let later = now + Duration::from_millis(500);
        // A deleted or copy-disabled partition keeps its last backoff: it must not make the worker spin.
        assert_eq!(earliest_future([Some(past), None].into_iter(), now), None);
        assert_eq!(
            earliest_future([Some(past), Some(later), Some(soon)].into_iter(), now),
            Some(soon)
        );
    }
}
