//! The worker: at start, every `remote.log.manager.task.interval.ms`, when a backoff ends and on
//! [`wake`](super::RemoteLogManager::wake) it starts the copy task and the expiration task of every tiered partition
//! that has them not running; a roll starts its partition's tasks. Every task runs on its own (at most
//! `remote.log.manager.copier.thread.pool.size` copy tasks and `...expiration.thread.pool.size` expiration tasks at
//! once), so a slow upload on one partition holds back neither the other partitions nor its own partition's
//! remote expiry (Kafka's per-partition `RLMCopyTask` / `RLMExpirationTask`). A task asked for while it runs runs
//! once more when it ends (rolls are never lost; ticks and rolls coalesce).
//! Copy task: restore (first task only), copy (unless disabled or backing off), refresh gauges. Expiration task:
//! restore if not done, expire (unless backing off after a failure), refresh gauges.
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use strata_storage::{TopicIdPartition, TopicPartition, UnifiedLog};
use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{copy, expire, pending, tip_of, Inner, PartitionState, TaskLock};

/// The two per-partition tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Copy,
    Expire,
}

impl Kind {
    fn lock(self, state: &PartitionState) -> &TaskLock {
        match self {
            Kind::Copy => &state.copy,
            Kind::Expire => &state.expire,
        }
    }
}

/// Runs until the future is dropped (the caller selects on cancellation); the tasks it spawns stop with
/// `cancel` or the manager's own token.
pub(crate) async fn run(inner: Arc<Inner>, cancel: CancellationToken) {
    let interval = inner.config.task_interval();
    let mut next_tick = tokio::time::Instant::now();
    let mut everything = true;
    loop {
        if everything {
            // Whatever was asked for one partition is covered.
            inner.wanted.lock().clear();
            dispatch(&inner, &cancel, None);
        } else {
            let wanted = std::mem::take(&mut *inner.wanted.lock());
            dispatch(&inner, &cancel, Some(&wanted));
        }
        let now = tokio::time::Instant::now();
        if now >= next_tick {
            next_tick = now + interval;
        }
        everything = loop {
            // Wake at the next tick, or earlier when a partition's backoff ends (both: every partition); a task
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

/// Starts the copy and expiration tasks of every tiered partition (or those in `only`) that are not running;
/// marks the running ones to run again when they end.
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
        for kind in [Kind::Copy, Kind::Expire] {
            let lock = kind.lock(&state);
            let guard = match lock.busy.clone().try_lock_owned() {
                Ok(g) => g,
                Err(_) => {
                    lock.rerun.store(true, Ordering::SeqCst);
                    // The task may have ended (and checked `rerun`) between the two: then run it here.
                    match lock.busy.clone().try_lock_owned() {
                        Ok(g) => {
                            lock.rerun.store(false, Ordering::SeqCst);
                            g
                        }
                        Err(_) => continue,
                    }
                }
            };
            let (inner, cancel, log, state) =
                (inner.clone(), cancel.clone(), log.clone(), state.clone());
            inner.clone().tracker.spawn(async move {
                tokio::select! {
                    _ = run_task(&inner, kind, log, guard, &state) => {}
                    _ = inner.cancel.cancelled() => {}
                    _ = cancel.cancelled() => {}
                }
            });
        }
    }
}

async fn run_task(
    inner: &Arc<Inner>,
    kind: Kind,
    log: Arc<UnifiedLog>,
    guard: OwnedMutexGuard<()>,
    state: &PartitionState,
) {
    // Waiting for a slot holds the task's lock: a partition delete (which cancels the token) must not wait for
    // other partitions' tasks to free one.
    let stop = state.stop_token();
    let slots = match kind {
        Kind::Copy => &inner.copy_task_slots,
        Kind::Expire => &inner.expire_task_slots,
    };
    let _slot = tokio::select! {
        slot = slots.acquire() => match slot {
            Ok(s) => s,
            Err(_) => return,
        },
        _ = stop.cancelled() => return,
    };
    let tp = log.topic_partition().clone();
    match kind {
        Kind::Copy => copy_task(inner, log, guard).await,
        Kind::Expire => expire_task(inner, log, guard).await,
    }
    // The guard is released: a run asked for while this one ran can start now.
    if kind.lock(state).rerun.swap(false, Ordering::SeqCst) {
        inner.wake_partition(&tp);
    }
    let now = Instant::now();
    let backing_off = {
        let p = state.progress.lock();
        earliest_future([p.retry_at, p.expire_retry_at].into_iter(), now).is_some()
    };
    if backing_off {
        inner.backoff_set.notify_one();
    }
}

fn earliest_retry(inner: &Inner) -> Option<Instant> {
    let parts = inner.partitions.lock();
    earliest_future(
        parts.values().flat_map(|p| {
            let p = p.progress.lock();
            [p.retry_at, p.expire_retry_at]
        }),
        Instant::now(),
    )
}

/// The earliest instant in the future. Past instants are stale (the task that just ran saw them, or skipped the
/// partition: deleted, copy disabled, metadata not ready) and must not wake the worker, else it spins.
fn earliest_future(
    instants: impl Iterator<Item = Option<Instant>>,
    now: Instant,
) -> Option<Instant> {
    instants.flatten().filter(|t| *t > now).min()
}

/// Runs the copy task then the expiration task of every tiered partition, returning when all are done
/// ([`RemoteLogManager::run_once`]); a task that is running already is skipped.
///
/// [`RemoteLogManager::run_once`]: super::RemoteLogManager::run_once
pub(crate) async fn pass(inner: &Arc<Inner>) {
    let logs = inner.tiered_logs();
    let width = inner
        .config
        .expiration_pool_size
        .max(inner.config.copier_pool_size)
        .max(1);
    futures::StreamExt::for_each_concurrent(futures::stream::iter(logs), width, |log| async move {
        let state = inner.state(&tip_of(&log));
        if let Ok(guard) = state.copy.busy.clone().try_lock_owned() {
            copy_task(inner, log.clone(), guard).await;
        }
        if let Ok(guard) = state.expire.busy.clone().try_lock_owned() {
            expire_task(inner, log, guard).await;
        }
    })
    .await;
}

/// The checks both tasks start with, and the restore of the partition's remote offsets from the RLMM (once).
/// False when the task has nothing to do now.
fn ready(inner: &Inner, log: &UnifiedLog, tip: &TopicIdPartition, state: &PartitionState) -> bool {
    if inner.is_deleted(tip) {
        return false;
    }
    if !inner.rlmm.is_ready(tip) {
        tracing::debug!(tp = %tip.topic_partition, "remote log metadata not ready; skipping");
        return false;
    }
    // Under the progress lock, so the two tasks never restore at once.
    let mut p = state.progress.lock();
    if !p.restored {
        if let Err(e) = copy::restore(inner, log, tip) {
            tracing::warn!(tp = %tip.topic_partition, error = %crate::Report(&e), "could not restore remote offsets; will retry");
            return false;
        }
        p.restored = true;
    }
    true
}

/// Restore, copy (unless disabled or backing off), gauges. The caller holds the copy lock (`_busy`).
async fn copy_task(inner: &Arc<Inner>, log: Arc<UnifiedLog>, _busy: OwnedMutexGuard<()>) {
    let span = tracing::info_span!("rlm_copy", tp = %log.topic_partition());
    async move {
        let tip = tip_of(&log);
        let state = inner.state(&tip);
        if !ready(inner, &log, &tip, &state) {
            return;
        }
        // The topic's remote.log.copy.disable as the log has it now (AlterConfigs updates the log's config).
        let copy_disabled = log.config().remote_log_copy_disable;
        let backing_off = {
            let p = state.progress.lock();
            p.retry_at.is_some_and(|t| t > Instant::now())
        };
        if copy_disabled || backing_off {
            expire::refresh_gauges(inner, &log, &tip);
            return;
        }
        let copied = copy::copy_segments(inner, &log, &tip).await;
        if inner.is_deleted(&tip) || log.is_closed() {
            // Its remote data is being deleted (the upload was cancelled), or the local log is gone: nothing
            // more to do here.
            return;
        }
        match copied {
            Ok(_) => {
                let mut p = state.progress.lock();
                if p.failures > 0 {
                    tracing::info!(tp = %tip.topic_partition, failures = p.failures, "uploads to remote storage recovered");
                }
                p.failures = 0;
                p.retry_at = None;
                inner.metrics.set_local_bytes_held(&tip.topic_partition, 0);
            }
            Err(e) => {
                let (failures, wait) = {
                    let mut p = state.progress.lock();
                    p.failures += 1;
                    let wait = inner.config.backoff(p.failures);
                    p.retry_at = Some(Instant::now() + wait);
                    (p.failures, wait)
                };
                let held = pending::local_only_rolled_bytes(&log);
                inner
                    .metrics
                    .set_local_bytes_held(&tip.topic_partition, held);
                tracing::warn!(
                    tp = %tip.topic_partition,
                    failures,
                    retry_in_ms = wait.as_millis() as u64,
                    local_bytes_held = held,
                    error = %crate::Report(&e),
                    "upload to remote storage failed; local segments are kept until they are copied"
                );
            }
        }
        expire::refresh_gauges(inner, &log, &tip);
    }
    .instrument(span)
    .await
}

/// Restore if not done, expire (unless backing off after a failure), gauges. The caller holds the expiration
/// lock (`_busy`).
async fn expire_task(inner: &Arc<Inner>, log: Arc<UnifiedLog>, _busy: OwnedMutexGuard<()>) {
    let span = tracing::info_span!("rlm_expire", tp = %log.topic_partition());
    async move {
        let tip = tip_of(&log);
        let state = inner.state(&tip);
        if !ready(inner, &log, &tip, &state) {
            return;
        }
        let backing_off = {
            let p = state.progress.lock();
            p.expire_retry_at.is_some_and(|t| t > Instant::now())
        };
        if backing_off {
            expire::refresh_gauges(inner, &log, &tip);
            return;
        }
        // Not cancelled midway (a dropped metadata write could still land after the partition delete's own):
        // it stops between segments once the partition is being deleted.
        let result = expire::expire(inner, &log, &tip).await;
        if inner.is_deleted(&tip) {
            return;
        }
        {
            let mut p = state.progress.lock();
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
                        error = %crate::Report(&e),
                        "remote deletion (retention or cleanup of a failed upload) failed; will retry"
                    );
                }
            }
        }
        expire::refresh_gauges(inner, &log, &tip);
    }
    .instrument(span)
    .await
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
