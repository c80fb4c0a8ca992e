//! The **RemoteLogManager** (RLM): joins the local log ([`strata_storage::LogManager`]), the metadata plane
//! ([`RemoteLogMetadataManager`]) and the data plane ([`RemoteStorageManager`]), as Kafka's
//! `kafka.log.remote.RemoteLogManager` does.
//!
//! # What it does
//! - **Copy** (on every segment roll and every `remote.log.manager.task.interval.ms`): for each partition with
//!   `remote.storage.enable` (and not `remote.log.copy.disable`; both read from the log's config at each pass, so a topic config change
//!   applies without telling the manager), the rolled segments above
//!   the highest offset in remote storage, in offset order, with `remote.log.manager.copier.thread.pool.size`
//!   segments in flight across partitions: fresh [`RemoteLogSegmentId`](strata_metadata::RemoteLogSegmentId) →
//!   RLMM `COPY_SEGMENT_STARTED` (durable before any upload) → RSM copy → `COPY_SEGMENT_FINISHED` →
//!   `UnifiedLog::update_highest_offset_in_remote_storage` (which lets local retention free the segment). A
//!   failed attempt is cleaned (`DELETE_SEGMENT_STARTED` → RSM delete → `DELETE_SEGMENT_FINISHED`) and the
//!   partition retried with exponential backoff; a warning is logged while uploads fail and local disk is held.
//! - **Restart**: the first pass of each partition restores its highest offset in remote storage and its log
//!   start offset from the RLMM; attempts left in `COPY_SEGMENT_STARTED` are cleaned and the segments copied
//!   again.
//! - **Expiry**: `retention.ms` / `retention.bytes` over local + remote, and DeleteRecords (a log start offset
//!   above a segment): the log start offset advances first (so no reader is sent to a segment being deleted,
//!   as Kafka orders it), then `DELETE_SEGMENT_STARTED` → RSM delete → `DELETE_SEGMENT_FINISHED`.
//! - **Reads** below the local log start: [`RemoteLogManager::read`], [`RemoteLogManager::read_many`]
//!   (partitions in parallel, bounded bytes in flight, `remote.fetch.max.wait.ms` deadline),
//!   [`RemoteLogManager::find_offset_by_timestamp`], [`RemoteLogManager::earliest_local`] (ListOffsets -4) and
//!   [`RemoteLogManager::latest_tiered`] (-5).
//! - **Operations**: [`RemoteLogManager::render_metrics`] (Prometheus text, Kafka's names), [`ops::remote_ls`],
//!   [`ops::remote_verify`].
//!
//! # Ordering rules for the broker
//! - Open the RLMM before [`RemoteLogManager::new`]; apply each topic's config to its log
//!   (`get_or_create_log`) before or soon after [`RemoteLogManager::start`] (a pass skips logs whose config is
//!   not tiered).
//! - Topic deletion: [`RemoteLogManager::delete_topic_remote_data`] first (it needs the local logs to know the
//!   partitions, and the RLMM must still serve them), then `LogManager::delete_log` and
//!   `RemoteLogMetadataManager::on_stop_partitions`.
//! - A remote read error maps to a Kafka code as documented on [`Error`].
//!
//! # Use from the broker
//! ```no_run
//! # async fn demo(props: std::collections::HashMap<String, String>,
//! #   log_manager: std::sync::Arc<strata_storage::LogManager>,
//! #   rlmm: std::sync::Arc<dyn strata_metadata::RemoteLogMetadataManager>)
//! #   -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use strata_storage::TopicPartition;
//! use strata_tiering::rlm::{
//!     ops, validate_topic_config, ConfigChangeAction, MeteredStore, RemoteLogManager, RemoteLogManagerConfig,
//!     RemoteLogMetrics, RemoteReadRequest, TopicRemoteConfig,
//! };
//! use strata_tiering::{build_store, ObjectStoreRsm, RsmConfig};
//! use tokio_util::sync::CancellationToken;
//!
//! // Construction from the broker's property map: `remote.log.*` / `remote.fetch.*` keys for the RLM (others
//! // are ignored), `rsm.config.*` (prefix stripped) for the RSM, whose store is metered for /metrics.
//! let config = RemoteLogManagerConfig::from_props(props.iter())?;
//! let rsm_config = RsmConfig::from_props(
//!     props.iter().filter_map(|(k, v)| Some((k.strip_prefix("rsm.config.")?, v.as_str()))),
//! )?;
//! let metrics = Arc::new(RemoteLogMetrics::default());
//! let store = Arc::new(MeteredStore::new(build_store(&rsm_config)?, metrics.clone()));
//! let rsm = Arc::new(ObjectStoreRsm::with_store(rsm_config, store)?);
//! rsm.validate_connectivity().await?; // refuse to start with its error
//! let shutdown = CancellationToken::new(); // the server's: the manager gets a child
//! let rlm = RemoteLogManager::with_metrics(config, log_manager, rlmm, rsm.clone(), /* broker.id */ 1, metrics,
//!     shutdown.child_token())?;
//! rlm.start(); // registers the roll listener, spawns the copy/expiry worker
//!
//! // Fetch: the partitions whose fetch offset is in [log start, local log start), all at once.
//! let tp = TopicPartition::new("orders", 0);
//! for (tp, result) in rlm.read_many(vec![RemoteReadRequest::new(tp.clone(), 0, 1 << 20, true)]).await {
//!     let _records: bytes::Bytes = result?; // whole batches, as stored
//! #   let _ = tp;
//! }
//! // ListOffsets: -4 / -5 / timestamps that fall in remote segments.
//! let (_earliest_local, _epoch) = rlm.earliest_local(&tp)?;
//! let (_latest_tiered, _epoch) = rlm.latest_tiered(&tp)?;
//! let _hit: Option<(i64, i64)> = rlm.find_offset_by_timestamp(&tp, 1_700_000_000_000).await?;
//! // DeleteRecords moved the log start (UnifiedLog::delete_records): expire remote segments below it now.
//! rlm.wake();
//! // CreateTopics / AlterConfigs: check the tiering rules, apply the configs to the logs (the manager reads
//! // them from there at its next pass), act on a disable.
//! let old = TopicRemoteConfig::from_topic_props([("remote.storage.enable", "true")])?;
//! let new = TopicRemoteConfig::from_topic_props([("remote.storage.enable", "true")])?;
//! let action = validate_topic_config(rlm.config().system_enable, "orders", Some(&old), &new)?;
//! rlm.wake();
//! if action == ConfigChangeAction::DeleteRemoteData {
//!     rlm.delete_topic_remote_data("orders").await?;
//! }
//! // DeleteTopics: remote objects and metadata first, then the local logs.
//! rlm.delete_topic_remote_data("orders").await?;
//! // GET /metrics
//! let _text: String = rlm.render_metrics();
//! // `strata remote ls` / `strata remote verify`
//! let parts = rlm.partitions_of("orders");
//! for row in ops::remote_ls(rlm.rlmm(), &rsm, &parts)? {
//!     println!("{row}");
//! }
//! println!("{}", ops::remote_verify(rlm.rlmm(), &rsm, &parts, &|_, _| {}).await?);
//! // Shutdown: stop copying (an attempt in flight is cleaned at the next start), wait for the worker.
//! shutdown.cancel();
//! rlm.shutdown(std::time::Duration::from_secs(5)).await;
//! # Ok(()) }
//! ```
mod config;
mod copy;
mod expire;
mod index;
mod metered;
mod metrics;
pub mod ops;
mod pending;
mod quota;
mod read;
mod validate;
mod worker;

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use strata_metadata::{RemoteLogMetadataManager, REMOTE_LOG_METADATA_TOPIC_NAME};
use strata_storage::{LogManager, TopicIdPartition, TopicPartition, UnifiedLog};
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use uuid::Uuid;

pub use config::{RemoteLogManagerConfig, RLM_CONFIG, RLM_KEYS};
pub use metered::MeteredStore;
pub use metrics::{MetricsSnapshot, OpTotals, PartitionGauges, RemoteLogMetrics};
pub use read::RemoteReadRequest;
pub use validate::{validate_topic_config, ConfigChangeAction, TopicRemoteConfig};

use crate::error::{Error, Result};
use crate::RemoteStorageManager;
use quota::Quota;

/// Per-partition bookkeeping of the worker.
#[derive(Debug, Default)]
pub(crate) struct PartitionState {
    /// The partition's copy task (restore + uploads), as Kafka's `RLMCopyTask`.
    pub(crate) copy: TaskLock,
    /// The partition's expiration task (remote retention, DeleteRecords, dangling attempts), as Kafka's
    /// `RLMExpirationTask`: it runs beside a long upload instead of after it.
    pub(crate) expire: TaskLock,
    pub(crate) progress: Mutex<Progress>,
    /// Cancelled when the partition's remote data is deleted: an upload in flight stops at once (its objects
    /// and metadata are cleaned up) instead of holding the deletion, and the next pass, until it ends.
    stop: Mutex<CancellationToken>,
}

impl PartitionState {
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.lock().clone()
    }

    pub(crate) fn stop_copying(&self) {
        self.stop_token().cancel();
    }

    /// A fresh token once the deletion that cancelled the old one is over (a token still live keeps guarding the
    /// upload in flight).
    fn allow_copying(&self) {
        let mut stop = self.stop.lock();
        if stop.is_cancelled() {
            *stop = CancellationToken::new();
        }
    }
}

/// One kind of per-partition task: held while it runs (and by a partition delete).
#[derive(Debug, Default)]
pub(crate) struct TaskLock {
    pub(crate) busy: Arc<tokio::sync::Mutex<()>>,
    /// Set when the worker found the task running: it runs again when it ends (a roll that came while it ran is
    /// not lost).
    pub(crate) rerun: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// The first pass after start restored the offsets from the RLMM.
    pub(crate) restored: bool,
    /// Consecutive failed copy attempts.
    pub(crate) failures: u32,
    /// No copy before this instant (backoff).
    pub(crate) retry_at: Option<Instant>,
    /// Consecutive failed expiry passes.
    pub(crate) expire_failures: u32,
    /// No expiry before this instant (backoff).
    pub(crate) expire_retry_at: Option<Instant>,
}

pub(crate) struct Inner {
    pub(crate) config: RemoteLogManagerConfig,
    pub(crate) log_manager: Arc<LogManager>,
    pub(crate) rlmm: Arc<dyn RemoteLogMetadataManager>,
    pub(crate) rsm: Arc<dyn RemoteStorageManager>,
    pub(crate) broker_id: i32,
    pub(crate) metrics: Arc<RemoteLogMetrics>,
    pub(crate) partitions: Mutex<HashMap<TopicIdPartition, Arc<PartitionState>>>,
    /// Partitions whose remote data was deleted: never copied again (a re-created topic has a new id).
    pub(crate) deleted: Mutex<HashSet<TopicIdPartition>>,
    /// Segment ids of copy attempts in flight (the expiry pass cleans every other `COPY_SEGMENT_STARTED`).
    pub(crate) in_flight: Mutex<HashSet<Uuid>>,
    /// Wakes the worker: for a pass over every partition when `wake_all` is set (a config change, DeleteRecords),
    /// else over the partitions in `wanted` (a roll, a pass to run again).
    pub(crate) wake: Notify,
    pub(crate) wake_all: std::sync::atomic::AtomicBool,
    pub(crate) wanted: Mutex<HashSet<TopicPartition>>,
    /// A partition pass set a backoff: the worker re-arms its timer (no pass).
    pub(crate) backoff_set: Notify,
    pub(crate) copy_slots: Semaphore,
    /// Copy tasks the worker runs at once (`remote.log.manager.copier.thread.pool.size`; each partition in its
    /// own task, so a slow upload on one does not hold back the others).
    pub(crate) copy_task_slots: Semaphore,
    /// Expiration tasks the worker runs at once (`remote.log.manager.expiration.thread.pool.size`).
    pub(crate) expire_task_slots: Semaphore,
    pub(crate) read_slots: Semaphore,
    pub(crate) read_queue: Semaphore,
    pub(crate) read_bytes: Semaphore,
    pub(crate) copy_quota: Quota,
    pub(crate) fetch_quota: Quota,
    pub(crate) index_cache: Option<moka::future::Cache<(Uuid, u8), Bytes>>,
    /// The manager's tasks (the worker, its partition tasks, reads left running past their deadline), waited for
    /// by [`RemoteLogManager::shutdown`].
    pub(crate) tracker: TaskTracker,
    /// Handed in at construction (the server's child token): cancelled, every task ends.
    pub(crate) cancel: CancellationToken,
}

/// Kafka's RemoteLogManager; see the [module docs](self). Cheap to clone (clones share everything).
#[derive(Clone)]
pub struct RemoteLogManager {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for RemoteLogManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLogManager")
            .field("broker_id", &self.inner.broker_id)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl RemoteLogManager {
    /// Builds a manager of its own (nothing runs until [`start`](Self::start); [`shutdown`](Self::shutdown)
    /// stops it): for tools and tests. A broker hands its token in with [`with_metrics`](Self::with_metrics).
    /// `rsm` may be any `Arc<impl RemoteStorageManager>`; the RLMM should already be open (its cache loaded).
    pub fn new(
        config: RemoteLogManagerConfig,
        log_manager: Arc<LogManager>,
        rlmm: Arc<dyn RemoteLogMetadataManager>,
        rsm: Arc<dyn RemoteStorageManager>,
        broker_id: i32,
    ) -> Result<Self> {
        Self::with_metrics(
            config,
            log_manager,
            rlmm,
            rsm,
            broker_id,
            Arc::default(),
            CancellationToken::new(),
        )
    }

    /// [`new`](Self::new) recording into `metrics`, shared with a [`MeteredStore`] under the RSM so `/metrics`
    /// also shows object-store request counts and latency, and stopped by `cancel` (a child of the server's
    /// token: the manager belongs to the server's shutdown tree and owns no token of its own).
    pub fn with_metrics(
        config: RemoteLogManagerConfig,
        log_manager: Arc<LogManager>,
        rlmm: Arc<dyn RemoteLogMetadataManager>,
        rsm: Arc<dyn RemoteStorageManager>,
        broker_id: i32,
        metrics: Arc<RemoteLogMetrics>,
        cancel: CancellationToken,
    ) -> Result<Self> {
        config.validate()?;
        let index_cache = (config.index_cache_total_size_bytes > 0).then(|| {
            moka::future::Cache::builder()
                .max_capacity(config.index_cache_total_size_bytes)
                .weigher(|_: &(Uuid, u8), v: &Bytes| v.len().min(u32::MAX as usize) as u32)
                .build()
        });
        let bytes_permits = config
            .fetch_max_bytes_in_flight
            .min(Semaphore::MAX_PERMITS as u64) as usize;
        let inner = Inner {
            copy_slots: Semaphore::new(config.copier_pool_size),
            copy_task_slots: Semaphore::new(config.copier_pool_size.max(1)),
            expire_task_slots: Semaphore::new(config.expiration_pool_size.max(1)),
            read_slots: Semaphore::new(config.reader_threads),
            read_queue: Semaphore::new(config.reader_threads + config.reader_max_pending_tasks),
            read_bytes: Semaphore::new(bytes_permits),
            copy_quota: Quota::new(config.copy_max_bytes_per_second),
            fetch_quota: Quota::new(config.fetch_max_bytes_per_second),
            config,
            log_manager,
            rlmm,
            rsm,
            broker_id,
            metrics,
            partitions: Mutex::default(),
            deleted: Mutex::default(),
            in_flight: Mutex::default(),
            wake: Notify::new(),
            wake_all: std::sync::atomic::AtomicBool::new(false),
            wanted: Mutex::default(),
            backoff_set: Notify::new(),
            index_cache,
            tracker: TaskTracker::new(),
            cancel,
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// Registers a roll listener on the log manager (a roll wakes the worker) and spawns the worker, which runs a
    /// copy + expiry pass at once, on every roll and every `remote.log.manager.task.interval.ms` until the token
    /// handed in fires or [`shutdown`](Self::shutdown) is called. Call it once, inside a tokio runtime.
    pub fn start(&self) {
        let weak = Arc::downgrade(&self.inner);
        self.inner
            .log_manager
            .add_roll_listener(Arc::new(move |tp, _seg| {
                if let Some(inner) = weak.upgrade() {
                    inner.wake_partition(tp);
                }
            }));
        let inner = self.inner.clone();
        let cancel = self.inner.cancel.clone();
        self.inner.tracker.spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = worker::run(inner, cancel.clone()) => {}
            }
        });
        tracing::info!(
            broker_id = self.inner.broker_id,
            interval_ms = self.inner.config.task_interval_ms,
            copiers = self.inner.config.copier_pool_size,
            "remote log manager started"
        );
    }

    /// Stops the worker (a copy in flight is abandoned: the RSM removes what it wrote and the next start cleans
    /// its `COPY_SEGMENT_STARTED` record) and waits up to `deadline` for it to exit.
    pub async fn shutdown(&self, deadline: Duration) {
        self.inner.cancel.cancel();
        self.inner.tracker.close();
        if tokio::time::timeout(deadline, self.inner.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                deadline_ms = deadline.as_millis() as u64,
                "remote log manager did not stop in time"
            );
        }
    }

    /// Runs a copy + expiry pass soon (after a DeleteRecords, a config change, ...). Cheap; coalesces.
    pub fn wake(&self) {
        self.inner
            .wake_all
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.inner.wake.notify_one();
    }

    /// Runs one copy + expiry pass over every tiered partition now and returns when it is done (tests, the
    /// demo, and `strata` admin commands; the worker does the same on its own).
    pub async fn run_once(&self) {
        worker::pass(&self.inner).await;
    }

    /// The copy and fetch quotas in force, bytes per second (`i64::MAX` or more: none). They start as
    /// [`RemoteLogManagerConfig`]'s and change with [`set_quotas`](Self::set_quotas).
    pub fn quotas(&self) -> (u64, u64) {
        (self.inner.copy_quota.rate(), self.inner.fetch_quota.rate())
    }

    /// Changes the copy and fetch quotas at once (Kafka's dynamic `remote.log.manager.{copy,fetch}.max.bytes.
    /// per.second`): copies and reads waiting on a quota recompute their wait at the new rate.
    pub fn set_quotas(&self, copy_bytes_per_second: u64, fetch_bytes_per_second: u64) {
        self.inner.copy_quota.set_rate(copy_bytes_per_second);
        self.inner.fetch_quota.set_rate(fetch_bytes_per_second);
    }

    /// The configuration.
    pub fn config(&self) -> &RemoteLogManagerConfig {
        &self.inner.config
    }

    /// The metadata manager (for [`ops`]).
    pub fn rlmm(&self) -> &dyn RemoteLogMetadataManager {
        self.inner.rlmm.as_ref()
    }

    /// The metrics registry.
    pub fn metrics(&self) -> &RemoteLogMetrics {
        &self.inner.metrics
    }

    /// Prometheus text of every tiering metric (the broker serves it on `/metrics`).
    pub fn render_metrics(&self) -> String {
        self.inner.metrics.render()
    }

    /// Copies the topic's partitions again after their remote data was deleted by turning
    /// `remote.storage.enable` off (call it when the topic turns it back on, once that deletion finished):
    /// the next pass uploads its rolled segments as for a newly tiered topic.
    pub fn resume_copying(&self, topic: &str) {
        let parts = self.partitions_of(topic);
        let mut deleted = self.inner.deleted.lock();
        for tip in &parts {
            deleted.remove(tip);
        }
        drop(deleted);
        for tip in &parts {
            self.inner.state(tip).allow_copying();
        }
        self.wake();
    }

    /// The partitions of `topic` this broker has logs for, with their topic id, in partition order.
    pub fn partitions_of(&self, topic: &str) -> Vec<TopicIdPartition> {
        let mut v: Vec<TopicIdPartition> = self
            .inner
            .log_manager
            .all_logs()
            .iter()
            .filter(|l| l.topic_partition().topic == topic)
            .map(|l| tip_of(l))
            .collect();
        v.sort_by_key(|t| t.partition());
        v
    }
}

/// The partition of a log, with its topic id.
pub(crate) fn tip_of(log: &UnifiedLog) -> TopicIdPartition {
    TopicIdPartition::new(log.topic_id(), log.topic_partition().clone())
}

impl Inner {
    pub(crate) fn state(&self, tip: &TopicIdPartition) -> Arc<PartitionState> {
        self.partitions
            .lock()
            .entry(tip.clone())
            .or_default()
            .clone()
    }

    /// Asks the worker for a pass over one partition (a roll, or a pass asked for while it was busy).
    pub(crate) fn wake_partition(&self, tp: &TopicPartition) {
        self.wanted.lock().insert(tp.clone());
        self.wake.notify_one();
    }

    pub(crate) fn is_deleted(&self, tip: &TopicIdPartition) -> bool {
        self.deleted.lock().contains(tip)
    }

    /// Logs the worker tiers: `remote.storage.enable`, the system switch on, not the metadata topic.
    pub(crate) fn tiered_logs(&self) -> Vec<Arc<UnifiedLog>> {
        if !self.config.system_enable {
            return Vec::new();
        }
        self.log_manager
            .all_logs()
            .into_iter()
            .filter(|l| {
                l.config().remote_storage_enable
                    && l.topic_partition().topic != REMOTE_LOG_METADATA_TOPIC_NAME
                    && !self.is_deleted(&tip_of(l))
            })
            .collect()
    }

    pub(crate) fn log(&self, tp: &TopicPartition) -> Result<Arc<UnifiedLog>> {
        self.log_manager
            .get_log(tp)
            .ok_or_else(|| Error::UnknownPartition { tp: tp.clone() })
    }

    /// Times one RSM call into the storage metrics.
    pub(crate) async fn timed<T>(
        &self,
        operation: &'static str,
        f: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let t = Instant::now();
        let r = f.await;
        self.metrics.storage_call(operation, t.elapsed(), r.is_ok());
        r
    }
}
