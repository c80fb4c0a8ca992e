//! Tiered storage (KIP-405) wired into the broker: the topic-based RLMM on the broker's `LogManager`, the RSM
//! over `object_store`, the RemoteLogManager and the remote log reader Fetch uses (its metrics, segments and
//! metadata records are served on `http.listener` by [`crate::http`]).
//!
//! Start-up ([`Tiering::start`], on the opened logs and topic registry, before the broker's components are
//! assembled; they reach it through [`TieringHooks`]):
//! 1. open [`TopicBasedRemoteLogMetadataManager`] (replays `__remote_log_metadata`) and register the topic as
//!    internal, so clients can read its records (Kafka's `RemoteLogMetadataSerde` format: kafka-console-consumer's
//!    `RemoteLogMetadataFormatter` prints them);
//! 2. build the RSM (metered for `/metrics`) and run its connectivity probe: an unreachable or misconfigured
//!    store stops start-up with the probe's error;
//! 3. build and start the [`RemoteLogManager`], give it each topic's policy, resume remote deletions a previous
//!    run left pending; its [`RemoteLogReader`] serves Fetch below the local log start.
//!
//! Background work (resumed and new remote deletions) runs on the server's task tracker and ends with the
//! cancellation token the server hands in.
//!
//! Shutdown ([`Tiering::shutdown`], after the server stopped serving, before the logs are flushed):
//! RLM stop → RLMM close (final snapshot); the caller then shuts the `LogManager` down.

mod config;
pub mod ops;
mod properties;
pub mod quotas;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use strata_metadata::{
    RemoteLogMetadataManager, RemotePartitionDeleteMetadata, RemotePartitionDeleteState,
    TopicBasedRemoteLogMetadataManager, REMOTE_LOG_METADATA_TOPIC_NAME,
};
use strata_storage::{LogManager, TopicPartition, UnifiedLog};
use strata_tiering::faults::{FaultyStore, RemoteFaults};
use strata_tiering::rlm::{ConfigChangeAction, MeteredStore, RemoteLogMetrics, RemoteReadRequest};
use strata_tiering::{build_store, ObjectStoreRsm, RemoteLogManager};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, error, info, warn};

pub use config::{
    split_properties, TieringConfig, HTTP_LISTENER_KEY, SYSTEM_ENABLE_DEFAULT, TIERING_KEYS,
};
pub use properties::configs_from_properties;

use crate::remote::hooks::{tiering_error, TieringHooks};
use crate::remote::{BoxFuture, RemoteLogReader, RemoteReadError};
use crate::topics::{register_internal_topic, TopicRegistry};

/// How long shutdown waits for the RemoteLogManager's worker.
const RLM_STOP_DEADLINE: Duration = Duration::from_secs(5);

/// Errors of starting, running and stopping tiered storage. Messages name the property, component and cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TieringError {
    /// A tiering property has a bad value or is unknown.
    #[error("bad config {key}={value:?}: {reason}")]
    Config {
        /// The property.
        key: String,
        /// The value given.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
    /// Tiered storage failed: the RemoteLogManager (its config, a remote read or delete, a topic config rule) or
    /// the remote storage manager (its config, the connectivity probe).
    #[error(transparent)]
    Tiering(#[from] strata_tiering::Error),
    /// The remote log metadata manager failed (its config, replay of `__remote_log_metadata`).
    #[error(transparent)]
    Rlmm(#[from] strata_metadata::Error),
    /// The broker failed (opening its logs or topics, registering the internal topic).
    #[error(transparent)]
    Broker(#[from] crate::Error),
    /// A local I/O error (the `/metrics` listener, a blocking task).
    #[error("i/o error on {context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl TieringError {
    fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        TieringError::Io {
            context: context.into(),
            source,
        }
    }
}

fn joined<T>(r: Result<T, tokio::task::JoinError>, what: &str) -> Result<T, TieringError> {
    r.map_err(|e| TieringError::io(what, std::io::Error::other(e.to_string())))
}

impl From<TieringError> for crate::Error {
    /// Config and rule violations become [`crate::Error::Config`] (INVALID_CONFIG), a broker error stays itself,
    /// anything else is [`crate::Error::Tiering`] (KAFKA_STORAGE_ERROR).
    fn from(e: TieringError) -> Self {
        match e {
            TieringError::Broker(e) => e,
            TieringError::Config { key, value, reason } => crate::Error::config(key, value, reason),
            TieringError::Tiering(e) => tiering_error(e),
            other @ (TieringError::Rlmm(_) | TieringError::Io { .. }) => {
                crate::Error::tiering("in tiered storage", other)
            }
        }
    }
}

/// What tiering starts on, handed in by the server.
struct Started {
    logs: Arc<LogManager>,
    registry: Arc<TopicRegistry>,
    node_id: i32,
    tasks: TaskTracker,
    cancel: CancellationToken,
}

/// Running tiered storage of one broker. See the [module docs](self).
pub struct Tiering {
    rlm: RemoteLogManager,
    rlmm: Arc<TopicBasedRemoteLogMetadataManager>,
    rsm: Arc<ObjectStoreRsm>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    broker_id: i32,
    remote_faults: Arc<RemoteFaults>,
}

impl std::fmt::Debug for Tiering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiering")
            .field("rsm", &self.rsm)
            .finish_non_exhaustive()
    }
}

/// Serves Fetch below the local log start through [`RemoteLogManager::read_many`]: bounded readers and bytes in
/// flight, and `remote.fetch.max.wait.ms` per read. A read that times out or finds the reader queue full returns
/// no records (the consumer fetches again), as Kafka's delayed remote fetch does; other failures are errors.
struct RlmReader(RemoteLogManager);

impl RemoteLogReader for RlmReader {
    fn read(
        &self,
        log: Arc<UnifiedLog>,
        offset: i64,
        max_bytes: usize,
    ) -> BoxFuture<Result<Bytes, RemoteReadError>> {
        let rlm = self.0.clone();
        Box::pin(async move {
            let tp = log.topic_partition().clone();
            let req = RemoteReadRequest::new(tp.clone(), offset, max_bytes, true);
            match rlm.read_many(vec![req]).await.pop().map(|(_, r)| r) {
                Some(Ok(records)) => Ok(records),
                Some(Err(e)) => read_failed(&tp, offset, e),
                None => Ok(Bytes::new()),
            }
        })
    }

    fn aborted(
        &self,
        log: Arc<UnifiedLog>,
        from: i64,
        to: i64,
    ) -> BoxFuture<Result<Vec<strata_storage::index::AbortedTxn>, RemoteReadError>> {
        let rlm = self.0.clone();
        Box::pin(async move {
            let tp = log.topic_partition().clone();
            rlm.aborted_transactions(&tp, from, to)
                .await
                .map_err(read_error)
        })
    }
}

/// A failed remote read as the fetch answers it: a deferred read returns no records this time (the consumer
/// fetches again, as after Kafka's delayed remote fetch), anything else the typed error. A consumer retries every
/// failed fetch: at most one log line per 10 s of each kind, with a count.
fn read_failed(
    tp: &TopicPartition,
    offset: i64,
    e: strata_tiering::Error,
) -> Result<Bytes, RemoteReadError> {
    use strata_tiering::{Deferral, ErrorClass};
    let suppressed = |limit: &RateLimit| limit.admit();
    match e.class() {
        // Throttling by a configured quota is normal operation, not worth a warning.
        ErrorClass::Deferred
            if matches!(
                e,
                strata_tiering::Error::Deferred {
                    reason: Deferral::Quota,
                    ..
                }
            ) =>
        {
            debug!(%tp, offset, error = %e, "remote fetch returns no records this time");
            return Ok(Bytes::new());
        }
        // A slow store: worth knowing, but once per consumer fetch per partition floods the log.
        ErrorClass::Deferred => {
            if let Some(suppressed) = suppressed(&SLOW_READ_WARNINGS) {
                warn!(%tp, offset, error = %e, suppressed,
                    "remote fetch returns no records this time (the read completes into the cache; at most one such warning per 10 s)");
            } else {
                debug!(%tp, offset, error = %e, "remote fetch returns no records this time");
            }
            return Ok(Bytes::new());
        }
        // No finished remote segment holds the offset: OFFSET_OUT_OF_RANGE (Kafka's RemoteLogManager), so the
        // consumer resets by auto.offset.reset instead of retrying forever.
        ErrorClass::OffsetOutOfRange => {
            if let Some(suppressed) = suppressed(&OUT_OF_RANGE_ERRORS) {
                warn!(%tp, offset, error = %e, suppressed, "remote fetch: no remote segment holds the offset (OFFSET_OUT_OF_RANGE to the client)");
            }
        }
        ErrorClass::Missing | ErrorClass::Unreadable => {
            if let Some(suppressed) = suppressed(&MISSING_DATA_ERRORS) {
                error!(%tp, offset, error = %strata_tiering::Report(&e), suppressed, "remote fetch failed: the data is missing or unreadable in remote storage (UNKNOWN_SERVER_ERROR to the client)");
            }
        }
        ErrorClass::Unavailable | ErrorClass::UnknownPartition | ErrorClass::Config => {
            if let Some(suppressed) = suppressed(&STORE_ERRORS) {
                warn!(%tp, offset, error = %strata_tiering::Report(&e), suppressed, "remote fetch failed (KAFKA_STORAGE_ERROR to the client, which retries)");
            }
        }
    }
    Err(read_error(e))
}

/// The tier's error as the typed error of a remote read, by its class. A partition the manager does not know
/// (created or deleted while the fetch ran) and a config error (none is expected on a read) are retriable, as an
/// unavailable tier; a deferred read that reaches here (the aborted-transactions index) too.
fn read_error(e: strata_tiering::Error) -> RemoteReadError {
    use strata_tiering::ErrorClass;
    match e.class() {
        ErrorClass::OffsetOutOfRange => RemoteReadError::OffsetOutOfRange(Box::new(e)),
        ErrorClass::Missing => RemoteReadError::Missing(Box::new(e)),
        ErrorClass::Unreadable => RemoteReadError::Unreadable(Box::new(e)),
        ErrorClass::Unavailable
        | ErrorClass::UnknownPartition
        | ErrorClass::Config
        | ErrorClass::Deferred => RemoteReadError::Unavailable(Box::new(e)),
    }
}

static SLOW_READ_WARNINGS: RateLimit = RateLimit::new(10_000);
static MISSING_DATA_ERRORS: RateLimit = RateLimit::new(10_000);
static STORE_ERRORS: RateLimit = RateLimit::new(10_000);
static OUT_OF_RANGE_ERRORS: RateLimit = RateLimit::new(10_000);

/// Lets one event through per interval; counts the ones held back in between.
struct RateLimit {
    interval_ms: u64,
    last_ms: std::sync::atomic::AtomicU64,
    suppressed: std::sync::atomic::AtomicU64,
}

impl RateLimit {
    const fn new(interval_ms: u64) -> Self {
        Self {
            interval_ms,
            last_ms: std::sync::atomic::AtomicU64::new(0),
            suppressed: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// `Some(events held back since the last one let through)` when this one may be logged.
    fn admit(&self) -> Option<u64> {
        use std::sync::atomic::Ordering::Relaxed;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let last = self.last_ms.load(Relaxed);
        if now.saturating_sub(last) >= self.interval_ms
            && self
                .last_ms
                .compare_exchange(last, now, Relaxed, Relaxed)
                .is_ok()
        {
            Some(self.suppressed.swap(0, Relaxed))
        } else {
            self.suppressed.fetch_add(1, Relaxed);
            None
        }
    }
}

impl Tiering {
    /// Starts tiered storage on the broker's opened `logs` and topic `registry` (see the [module docs](self));
    /// `Ok(None)` when `remote.log.storage.system.enable=false`. Background work is spawned on `tasks` and ends
    /// when `cancel` is cancelled (or at [`shutdown`](Self::shutdown)).
    pub async fn start(
        logs: Arc<LogManager>,
        registry: Arc<TopicRegistry>,
        node_id: i32,
        config: TieringConfig,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> Result<Option<Arc<Tiering>>, TieringError> {
        if !config.rlm.system_enable {
            info!("tiered storage off (remote.log.storage.system.enable=false)");
            return Ok(None);
        }
        let rlmm_logs = logs.clone();
        let rlmm_config = config.rlmm.clone();
        let dir = config.snapshot_dir.clone();
        let (rlmm, stats) = joined(
            tokio::task::spawn_blocking(move || {
                TopicBasedRemoteLogMetadataManager::open(rlmm_config, rlmm_logs, &dir)
            })
            .await,
            "opening the remote log metadata manager",
        )??;
        let rlmm = Arc::new(rlmm);
        info!(
            live_segments = stats.live_segments,
            replayed_records = stats.replayed_records,
            "remote log metadata loaded"
        );
        let started = Self::start_rest(
            Started {
                logs,
                registry,
                node_id,
                tasks: tasks.clone(),
                cancel,
            },
            config,
            rlmm.clone(),
        )
        .await;
        match started {
            Ok(t) => Ok(Some(t)),
            Err(e) => {
                if let Err(c) = rlmm.close().await {
                    warn!(error = %c, "closing the remote log metadata manager after a failed start");
                }
                Err(e)
            }
        }
    }

    async fn start_rest(
        on: Started,
        config: TieringConfig,
        rlmm: Arc<TopicBasedRemoteLogMetadataManager>,
    ) -> Result<Arc<Tiering>, TieringError> {
        let Started {
            logs,
            registry,
            node_id,
            tasks,
            cancel,
        } = on;
        let (r, l) = (registry.clone(), logs.clone());
        joined(
            tokio::task::spawn_blocking(move || {
                register_internal_topic(&r, &l, REMOTE_LOG_METADATA_TOPIC_NAME)
            })
            .await,
            "registering the metadata topic",
        )??;

        let metrics = Arc::new(RemoteLogMetrics::default());
        // Faults on demand of the remote tier (`/api/v1/faults`) sit under the RSM, above the metered store.
        let remote_faults = Arc::new(RemoteFaults::default());
        let store = Arc::new(FaultyStore::with_faults(
            Arc::new(MeteredStore::new(
                build_store(&config.rsm)?,
                metrics.clone(),
            )),
            remote_faults.clone(),
        ));
        // Its background work (read-ahead, cleanup of a dropped upload) runs in the server's shutdown tree.
        let rsm = Arc::new(ObjectStoreRsm::in_tree(
            config.rsm.clone(),
            store,
            tasks.clone(),
            cancel.child_token(),
        )?);
        rsm.validate_connectivity().await?;

        // The RLM reads each topic's tiering configs from its logs; it stops with a child of the server's token.
        let rlm = RemoteLogManager::with_metrics(
            config.rlm.clone(),
            logs,
            rlmm.clone(),
            rsm.clone(),
            node_id,
            metrics,
            cancel.child_token(),
        )?;
        rlm.start();
        // Deletions (topic deletes, remote.storage.enable turned off) a previous run did not finish.
        let resume = rlm.clone();
        let parts = rlmm.partitions();
        let stop = cancel.clone();
        tasks.spawn(async move {
            let resumed = tokio::select! {
                _ = stop.cancelled() => return,
                r = resume.resume_partition_deletes(&parts) => r,
            };
            match resumed {
                Ok(0) => {}
                Ok(n) => info!(
                    partitions = n,
                    "finished pending remote partition deletions"
                ),
                Err(e) => warn!(error = %e, "resuming remote partition deletions failed"),
            }
        });
        info!(
            backend = rsm.backend().backend,
            location = %rsm.backend().bucket,
            "tiered storage started"
        );
        Ok(Arc::new(Tiering {
            rlm,
            rlmm,
            rsm,
            cancel,
            tasks,
            broker_id: node_id,
            remote_faults,
        }))
    }

    /// The RemoteLogManager.
    pub fn rlm(&self) -> &RemoteLogManager {
        &self.rlm
    }

    /// The remote log metadata manager.
    pub fn rlmm(&self) -> &Arc<TopicBasedRemoteLogMetadataManager> {
        &self.rlmm
    }

    /// The faults set on demand on the remote tier (applied under the RSM).
    pub fn remote_faults(&self) -> &Arc<RemoteFaults> {
        &self.remote_faults
    }

    /// The remote storage manager.
    pub fn rsm(&self) -> &Arc<ObjectStoreRsm> {
        &self.rsm
    }

    /// After a topic's configs were applied (CreateTopics, AlterConfigs): its policy reaches the RLM; a disable
    /// with `remote.log.delete.on.disable=true` ([`ConfigChangeAction::DeleteRemoteData`]) records the deletion
    /// of its remote data (`DELETE_PARTITION_MARKED`), then deletes it, in a task of the shutdown tree (as Kafka,
    /// the request is answered without waiting for either; what a stop interrupts is finished at the next start);
    /// remote storage turned (back) on resumes copying. Call it from within the runtime (a blocking task is fine).
    pub fn topic_config_applied(
        &self,
        topic: &str,
        remote_enabled: bool,
        action: ConfigChangeAction,
    ) {
        // The RLM reads the new configs from the topic's logs at its next pass: wake it for one now.
        if remote_enabled {
            self.rlm.resume_copying(topic);
        } else {
            self.rlm.wake();
        }
        if action != ConfigChangeAction::DeleteRemoteData {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            warn!(
                topic,
                "no runtime to delete the remote data on; it is deleted at the next start"
            );
            return;
        };
        let parts = self.rlm.partitions_of(topic);
        let marking = self.mark_deleting(parts);
        let rlm = self.rlm.clone();
        let topic = topic.to_string();
        let cancel = self.cancel.clone();
        self.tasks.spawn_on(
            async move {
                if let Err(e) = marking.await {
                    warn!(topic, error = %e, "recording the deletion of the remote data failed; deleting it anyway");
                }
                let deleted = tokio::select! {
                    _ = cancel.cancelled() => return,
                    r = rlm.delete_topic_remote_data(&topic) => r,
                };
                match deleted {
                    Ok(parts) => info!(topic, partitions = parts.len(), "remote storage disabled: remote data deleted"),
                    Err(e) => warn!(topic, error = %e, "deleting remote data after remote.storage.enable=false failed; retried at the next start"),
                }
            },
            &handle,
        );
    }

    /// Whether a remote deletion of one of the topic's partitions is recorded and not finished.
    pub fn remote_delete_pending(&self, topic: &str) -> bool {
        self.rlm
            .partitions_of(topic)
            .iter()
            .any(|tip| matches!(self.rlmm.remote_partition_delete_metadata(tip), Ok(Some(_))))
    }

    /// Records `DELETE_PARTITION_MARKED` for each partition (resumed at the next start if not finished). The
    /// future owns what it uses, so a hook can hand it out.
    fn mark_deleting(
        &self,
        parts: Vec<strata_metadata::TopicIdPartition>,
    ) -> impl std::future::Future<Output = Result<(), TieringError>> + Send + 'static {
        let (rlmm, broker_id) = (self.rlmm.clone(), self.broker_id);
        async move {
            // All at once: the metadata log commits concurrent writes in groups (one append and sync for many
            // partitions), where one write at a time cost a sync per partition (DeleteTopics of thousands of
            // partitions then outlasted clients' request timeouts).
            let now = strata_storage::time::now_ms();
            let marks = parts.into_iter().map(|tip| {
                let mark = RemotePartitionDeleteMetadata::new(
                    tip,
                    RemotePartitionDeleteState::DeletePartitionMarked,
                    now,
                    broker_id,
                );
                rlmm.put_remote_partition_delete_metadata(mark)
            });
            futures::future::try_join_all(marks).await?;
            Ok(())
        }
    }

    /// DeleteTopics: records the deletion of every partition's remote data (`DELETE_PARTITION_MARKED`) and
    /// deletes the objects and metadata in the background, as Kafka does (call it before deleting the local
    /// logs). The request does not wait for an upload in flight or for the store: a failed deletion is retried
    /// with backoff, and at the next start. If recording fails the error is returned and the caller keeps the
    /// topic.
    pub async fn delete_topic(&self, topic: &str) -> Result<(), TieringError> {
        self.delete_topic_future(topic).await
    }

    /// [`delete_topic`](Self::delete_topic) as a future that owns what it uses (the hook hands it out).
    fn delete_topic_future(
        &self,
        topic: &str,
    ) -> impl std::future::Future<Output = Result<(), TieringError>> + Send + 'static {
        let parts = self.rlm.partitions_of(topic);
        let marked = self.mark_deleting(parts.clone());
        let (rlm, rlmm, cancel) = (self.rlm.clone(), self.rlmm.clone(), self.cancel.clone());
        let tasks = self.tasks.clone();
        let topic = topic.to_string();
        async move {
            marked.await?;
            tasks.spawn(Self::delete_in_background(rlm, rlmm, cancel, topic, parts));
            Ok(())
        }
    }

    /// Deletes the recorded partitions' remote data, retrying with backoff until done or cancelled.
    async fn delete_in_background(
        rlm: RemoteLogManager,
        rlmm: Arc<TopicBasedRemoteLogMetadataManager>,
        cancel: CancellationToken,
        topic: String,
        parts: Vec<strata_metadata::TopicIdPartition>,
    ) {
        {
            let mut delay = Duration::ZERO;
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(delay) => {}
                }
                let resumed = tokio::select! {
                    _ = cancel.cancelled() => return,
                    r = rlm.resume_partition_deletes(&parts) => r,
                };
                match resumed {
                    Ok(_) => {
                        rlmm.on_stop_partitions(&parts.into_iter().collect());
                        info!(topic, "remote data of the deleted topic deleted");
                        return;
                    }
                    Err(e) => {
                        delay = (delay * 2).clamp(Duration::from_secs(1), Duration::from_secs(60));
                        warn!(topic, error = %e, retry_in_s = delay.as_secs(), "deleting remote data of the deleted topic failed");
                    }
                }
            }
        }
    }

    /// ListOffsets by timestamp: the first offset whose batch max timestamp is >= `ts` (remote segments first,
    /// then the local log), with that timestamp.
    pub async fn offset_for_timestamp(
        &self,
        tp: &strata_storage::TopicPartition,
        ts: i64,
    ) -> Result<Option<(i64, i64)>, TieringError> {
        Ok(self.rlm.find_offset_by_timestamp(tp, ts).await?)
    }

    /// Stops in Kafka's order: the RLM (copies in flight are abandoned and cleaned at the next start), then the
    /// RLMM (final snapshot). The caller flushes the logs afterwards.
    pub async fn shutdown(&self) -> Result<(), TieringError> {
        self.cancel.cancel();
        self.rlm.shutdown(RLM_STOP_DEADLINE).await;
        self.rlmm.close().await?;
        info!("tiered storage stopped");
        Ok(())
    }
}

impl TieringHooks for Tiering {
    fn remote_reader(&self) -> Arc<dyn RemoteLogReader> {
        Arc::new(RlmReader(self.rlm.clone()))
    }

    fn remote_delete_pending(&self, topic: &str) -> bool {
        Tiering::remote_delete_pending(self, topic)
    }

    fn topic_config_applied(&self, topic: &str, remote_enabled: bool, action: ConfigChangeAction) {
        Tiering::topic_config_applied(self, topic, remote_enabled, action)
    }

    fn topic_deleted(&self, topic: &str) -> BoxFuture<crate::Result<()>> {
        let deleted = self.delete_topic_future(topic);
        Box::pin(async move { Ok(deleted.await?) })
    }

    fn earliest_local(&self, tp: &TopicPartition) -> crate::Result<(i64, i32)> {
        self.rlm.earliest_local(tp).map_err(tiering_error)
    }

    fn latest_tiered(&self, tp: &TopicPartition) -> crate::Result<(i64, i32)> {
        self.rlm.latest_tiered(tp).map_err(tiering_error)
    }

    fn max_timestamp(&self, tp: &TopicPartition) -> BoxFuture<crate::Result<Option<(i64, i64)>>> {
        let (rlm, tp) = (self.rlm.clone(), tp.clone());
        Box::pin(async move { rlm.max_timestamp(&tp).await.map_err(tiering_error) })
    }

    fn offset_for_timestamp(
        &self,
        tp: &TopicPartition,
        ts: i64,
    ) -> BoxFuture<crate::Result<Option<(i64, i64)>>> {
        let (rlm, tp) = (self.rlm.clone(), tp.clone());
        Box::pin(async move {
            rlm.find_offset_by_timestamp(&tp, ts)
                .await
                .map_err(tiering_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_remote_object_is_the_typed_missing_error_and_unknown_server_error() {
        let tp = TopicPartition::new("t", 0);
        let missing = strata_tiering::Error::NotFound {
            what: "t/0/00000000000000000000-abc.log".into(),
        };
        let e = read_failed(&tp, 5, missing).expect_err("a missing object fails the read");
        assert!(matches!(e, RemoteReadError::Missing(_)), "{e:?}");
        assert!(
            strata_tiering::Report(&e)
                .to_string()
                .contains("00000000000000000000-abc.log"),
            "the cause names the object: {}",
            strata_tiering::Report(&e)
        );
        assert_eq!(
            crate::error_code::remote_read_code(&e, 5, 0),
            -1 // UNKNOWN_SERVER_ERROR
        );
        // Shared through the chunk cache: the same class.
        let shared = strata_tiering::Error::Shared(Arc::new(strata_tiering::Error::NotFound {
            what: "x".into(),
        }));
        assert!(matches!(read_error(shared), RemoteReadError::Missing(_)));
        let unavailable = read_error(strata_tiering::Error::Cancelled);
        assert_eq!(
            crate::error_code::remote_read_code(&unavailable, 5, 0),
            56 // KAFKA_STORAGE_ERROR
        );
        let gone = read_error(strata_tiering::Error::OffsetOutOfRange {
            tp: tp.clone(),
            offset: 5,
            range: "none".into(),
        });
        assert_eq!(
            crate::error_code::remote_read_code(&gone, 5, 0),
            1 // OFFSET_OUT_OF_RANGE
        );
        // A deferred read is no records this time, not an error.
        let deferred = strata_tiering::Error::Deferred {
            tp: tp.clone(),
            reason: strata_tiering::Deferral::Timeout { wait_ms: 500 },
        };
        assert_eq!(read_failed(&tp, 5, deferred).expect("no error").len(), 0);
    }

    #[test]
    fn rate_limit_lets_one_through_per_interval_and_counts_the_rest() {
        let limit = RateLimit::new(60_000);
        assert_eq!(limit.admit(), Some(0), "the first one passes");
        for _ in 0..5 {
            assert_eq!(limit.admit(), None);
        }
        // A new interval: the next one passes and reports the five held back.
        limit.last_ms.store(0, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(limit.admit(), Some(5));
        assert_eq!(limit.admit(), None);
    }
}
