//! Real parts for RemoteLogManager tests: a storage `LogManager` in a tempdir, the topic-based RLMM on it, and
//! `ObjectStoreRsm` against the in-process S3 server (optionally through a `FaultyStore`).
#![allow(dead_code)]
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use strata_metadata::{
    RemoteLogMetadataManager, RemoteLogSegmentMetadata, TopicBasedRemoteLogMetadataManager,
    TopicBasedRemoteLogMetadataManagerConfig,
};
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatch, RecordBatchBuilder, TopicIdPartition,
    TopicPartition, UnifiedLog,
};
use strata_tiering::rlm::{
    MeteredStore, RemoteLogManager, RemoteLogManagerConfig, RemoteLogMetrics,
};
use strata_tiering::testing::{Fault, FaultyStore, Op};
use strata_tiering::{build_store, ObjectStoreRsm, RsmConfig};
use tokio_util::sync::CancellationToken;

use crate::common::s3::S3Server;

/// A broker's tiering parts over one data dir.
pub struct Harness {
    pub log_manager: Arc<LogManager>,
    pub rlmm: Arc<TopicBasedRemoteLogMetadataManager>,
    pub rsm: Arc<ObjectStoreRsm>,
    pub faulty: FaultyStore,
    pub rlm: RemoteLogManager,
    pub cancel: CancellationToken,
}

/// A config that reacts fast: 200 ms interval, short backoff.
pub fn fast_config() -> RemoteLogManagerConfig {
    config_with(&[
        ("remote.log.manager.task.interval.ms", "200"),
        ("remote.log.manager.task.retry.backoff.ms", "50"),
        ("remote.log.manager.task.retry.backoff.max.ms", "200"),
        ("remote.fetch.max.wait.ms", "5000"),
    ])
}

/// A config with tiering on and `props` on top of the defaults.
pub fn config_with(props: &[(&str, &str)]) -> RemoteLogManagerConfig {
    RemoteLogManagerConfig::from_props(
        [("remote.log.storage.system.enable", "true")]
            .iter()
            .chain(props)
            .copied(),
    )
    .expect("valid rlm config")
}

/// Small segments (about 6 batches of 10 records each), tiered, local copies dropped once uploaded.
pub fn tiered_log_config() -> LogConfig {
    let mut c = LogConfig::default();
    c.segment_bytes = 8 * 1024;
    c.index_interval_bytes = 512;
    c.remote_storage_enable = true;
    c.retention_ms = -1;
    c.retention_bytes = -1;
    c.local_retention_bytes = 0;
    c.file_delete_delay_ms = 0;
    c
}

impl Harness {
    /// Opens (or reopens) everything over `dir`, tiering to `s3`, and starts the manager unless `start` is false.
    pub async fn open(
        dir: &Path,
        s3: &S3Server,
        config: RemoteLogManagerConfig,
        start: bool,
    ) -> Self {
        // Logs load with the default config (topic configs are re-applied by get_or_create_log); it must be the
        // tiered one so the loader keeps log start offsets below the local segments (NOTE-rlm-to-storage.md).
        let mut lm_config = LogManagerConfig::new(vec![dir.join("logs")]);
        lm_config.default_log_config = tiered_log_config();
        let log_manager = Arc::new(LogManager::open(lm_config).expect("open log manager"));
        let (rlmm, _stats) = TopicBasedRemoteLogMetadataManager::open(
            TopicBasedRemoteLogMetadataManagerConfig::default().with_num_partitions(2),
            log_manager.clone(),
            &dir.join("rlmm"),
        )
        .expect("open rlmm");
        let rlmm = Arc::new(rlmm);
        let mut props = s3.props();
        props.push(("key.prefix".into(), "tiered/".into()));
        let rsm_config = RsmConfig::from_props(props).expect("rsm config");
        let faulty = FaultyStore::new(build_store(&rsm_config).expect("store"));
        let metrics = Arc::new(RemoteLogMetrics::default());
        let metered = MeteredStore::new(Arc::new(faulty.clone()), metrics.clone());
        let rsm = Arc::new(ObjectStoreRsm::with_store(rsm_config, Arc::new(metered)).expect("rsm"));
        let cancel = CancellationToken::new();
        let rlm = RemoteLogManager::with_metrics(
            config,
            log_manager.clone(),
            rlmm.clone(),
            rsm.clone(),
            1,
            metrics,
            cancel.child_token(),
        )
        .expect("rlm");
        if start {
            rlm.start();
        }
        Self {
            log_manager,
            rlmm,
            rsm,
            faulty,
            rlm,
            cancel,
        }
    }

    /// Starts the manager with the first PUT hanging forever and waits until an upload is stuck on it.
    pub async fn start_with_a_hanging_upload(&self) {
        self.faulty.inject(Op::Put, 1, Fault::Hang);
        self.rlm.start();
        wait_until(Duration::from_secs(20), "the first upload to hang", || {
            self.faulty.calls(Op::Put) >= 1
        })
        .await;
    }

    pub fn create_log(&self, topic: &str, partition: i32, topic_id: u128) -> Arc<UnifiedLog> {
        self.log_manager
            .get_or_create_log(
                &TopicPartition::new(topic, partition),
                uuid::Uuid::from_u128(topic_id),
                tiered_log_config(),
            )
            .expect("create log")
    }

    /// Stops the manager, closes the RLMM and shuts the log manager down (a clean broker stop).
    pub async fn close(self) {
        self.cancel.cancel();
        self.rlm.shutdown(Duration::from_secs(10)).await;
        self.rlmm.close().await.expect("close rlmm");
        self.log_manager.shutdown().expect("shutdown log manager");
    }

    /// Every object key under the RSM's prefix.
    pub async fn object_keys(&self) -> Vec<String> {
        use futures::TryStreamExt;
        let prefix = object_store::path::Path::from("tiered");
        self.faulty
            .inner()
            .list(Some(&prefix))
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .expect("list objects")
    }

    pub fn segments(&self, tip: &TopicIdPartition) -> Vec<RemoteLogSegmentMetadata> {
        self.rlmm
            .list_remote_log_segments(tip)
            .expect("list segments")
    }
}

/// Whether every rolled segment of `log` is in remote storage (false while none rolled).
pub fn all_rolled_copied(log: &UnifiedLog) -> bool {
    log.rolled_segments().last().map(|s| s.next_offset - 1)
        == Some(log.highest_offset_in_remote_storage())
}

pub fn tip(log: &UnifiedLog) -> TopicIdPartition {
    TopicIdPartition::new(log.topic_id(), log.topic_partition().clone())
}

/// Appends `batches` batches of 10 records (about 1.2 KiB each) with timestamps `ts0 + i`.
pub fn append(log: &UnifiedLog, batches: usize, ts0: i64) {
    for b in 0..batches {
        let mut builder = RecordBatchBuilder::new();
        for r in 0..10 {
            let value = format!("{:0>100}", b * 10 + r);
            builder.append(
                ts0 + b as i64,
                Some(format!("k{r}").as_bytes()),
                Some(value.as_bytes()),
                &[],
            );
        }
        log.append_as_leader(builder.build(), 0).expect("append");
    }
}

/// Polls `f` every 20 ms until it is true, panicking with `what` after `limit`.
pub async fn wait_until(limit: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every batch of the local log from `from` to the end, concatenated.
pub fn read_local_all(log: &UnifiedLog, from: i64) -> Bytes {
    let mut out = BytesMut::new();
    let mut offset = from;
    while offset < log.log_end_offset() {
        let chunk = log
            .read(offset, 64 * 1024, true, None)
            .expect("local read")
            .records;
        offset = next_offset(&chunk);
        out.extend_from_slice(&chunk);
    }
    out.freeze()
}

/// Reads the partition from `from` to the end like a consumer: remotely below the local log start, locally
/// above it.
pub async fn read_all(
    rlm: &RemoteLogManager,
    log: &UnifiedLog,
    from: i64,
    max_bytes: usize,
) -> Bytes {
    let mut out = BytesMut::new();
    let mut offset = from;
    let mut remote_reads = 0;
    while offset < log.log_end_offset() {
        let chunk = if offset < log.local_log_start_offset() {
            remote_reads += 1;
            rlm.read(log.topic_partition(), offset, max_bytes, true)
                .await
                .expect("remote read")
        } else {
            log.read(offset, max_bytes, true, None)
                .expect("local read")
                .records
        };
        assert!(!chunk.is_empty(), "empty read at offset {offset}");
        let next = next_offset(&chunk);
        assert!(next > offset, "no progress at {offset}");
        offset = next;
        out.extend_from_slice(&chunk);
        assert!(remote_reads < 10_000, "too many reads");
    }
    out.freeze()
}

/// Last offset + 1 of the batches in `chunk`.
pub fn next_offset(chunk: &Bytes) -> i64 {
    RecordBatch::iter(chunk)
        .map(|b| b.expect("valid batch").last_offset() + 1)
        .last()
        .expect("at least one batch")
}
