//! Consumer catch-up throughput from the remote tier (RemoteLogManager::read through ObjectStoreRsm against the
//! in-process S3 server over loopback) vs from the local log, in the same run, over the same bytes; plus
//! `read_many` over four partitions at once. `cargo bench -p strata-tiering --bench rlm_read` prints criterion's
//! figures, then a summary with MB/s and the remote/local ratio (issue target: >= 50 %). Every remote
//! iteration uses a fresh RSM (cold chunk/manifest/index caches), so it measures a real catch-up over S3.
#[path = "../tests/common/s3.rs"]
mod s3;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput};
use strata_metadata::{
    TopicBasedRemoteLogMetadataManager, TopicBasedRemoteLogMetadataManagerConfig,
};
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatch, RecordBatchBuilder, TopicPartition,
    UnifiedLog,
};
use strata_tiering::rlm::{RemoteLogManager, RemoteLogManagerConfig, RemoteReadRequest};
use strata_tiering::ObjectStoreRsm;

const MIB: usize = 1024 * 1024;
/// Bytes per partition.
const DATA: usize = 32 * MIB;
/// Consumer fetch size per partition (librdkafka's default max.partition.fetch.bytes is 1 MiB).
const FETCH: usize = MIB;
const PARTITIONS: i32 = 4;

struct Env {
    rt: tokio::runtime::Runtime,
    rlm: RemoteLogManager,
    logs: Vec<Arc<UnifiedLog>>,
    log_manager: Arc<LogManager>,
    rlmm: Arc<TopicBasedRemoteLogMetadataManager>,
    server: s3::S3Server,
    /// Kept alive for the run.
    _dir: tempfile::TempDir,
}

/// The RSM as a broker configures it (4 MiB chunks, 64 MiB chunk cache) plus an 8 MiB read-ahead.
fn rsm_props(server: &s3::S3Server) -> Vec<(String, String)> {
    let mut props = server.props();
    props.push((
        "fetch.chunk.cache.prefetch.max.size".into(),
        (8 * MIB).to_string(),
    ));
    props
}

impl Env {
    /// A manager over a fresh RSM (empty chunk, manifest and index caches): a cold catch-up read.
    fn fresh_rlm(&self) -> RemoteLogManager {
        let rsm = Arc::new(ObjectStoreRsm::from_props(rsm_props(&self.server)).expect("rsm"));
        let config =
            RemoteLogManagerConfig::from_props([("remote.log.storage.system.enable", "true")])
                .expect("config");
        RemoteLogManager::new(config, self.log_manager.clone(), self.rlmm.clone(), rsm, 1)
            .expect("rlm")
    }
}

fn log_config() -> LogConfig {
    let mut c = LogConfig::default();
    c.segment_bytes = 8 * MIB as u64;
    c.remote_storage_enable = true;
    c.retention_ms = -1;
    c.local_retention_bytes = -2;
    c
}

fn next_offset(chunk: &Bytes) -> i64 {
    RecordBatch::iter(chunk)
        .map(|b| b.expect("valid").last_offset() + 1)
        .last()
        .expect("non-empty read")
}

fn setup() -> Env {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let server = rt.block_on(s3::S3Server::start("bench"));
    let mut lm = LogManagerConfig::new(vec![dir.path().join("logs")]);
    lm.default_log_config = log_config();
    let log_manager = Arc::new(LogManager::open(lm).expect("log manager"));
    let (rlmm, _) = TopicBasedRemoteLogMetadataManager::open(
        TopicBasedRemoteLogMetadataManagerConfig::default().with_num_partitions(1),
        log_manager.clone(),
        &dir.path().join("rlmm"),
    )
    .expect("rlmm");
    let rlmm = Arc::new(rlmm);
    let rsm = Arc::new(ObjectStoreRsm::from_props(rsm_props(&server)).expect("rsm"));
    let config = RemoteLogManagerConfig::from_props([("remote.log.storage.system.enable", "true")])
        .expect("config");
    let rlm =
        RemoteLogManager::new(config, log_manager.clone(), rlmm.clone(), rsm, 1).expect("rlm");
    let value = vec![b'v'; 1000];
    let mut logs = Vec::new();
    for p in 0..PARTITIONS {
        let log = log_manager
            .get_or_create_log(
                &TopicPartition::new("bench", p),
                uuid::Uuid::from_u128(7),
                log_config(),
            )
            .expect("log");
        while log.size_in_bytes() < DATA as u64 {
            let mut b = RecordBatchBuilder::new();
            for _ in 0..16 {
                b.append(1_700_000_000_000, None, Some(&value), &[]);
            }
            log.append_as_leader(b.build(), 0).expect("append");
        }
        log.roll().expect("roll");
        logs.push(log);
    }
    rt.block_on(rlm.run_once());
    for log in &logs {
        assert_eq!(
            log.highest_offset_in_remote_storage(),
            log.log_end_offset() - 1,
            "everything offloaded"
        );
    }
    Env {
        rt,
        rlm,
        logs,
        log_manager,
        rlmm,
        server,
        _dir: dir,
    }
}

fn read_local(log: &UnifiedLog) -> usize {
    let (mut off, mut n) = (0, 0);
    while off < log.log_end_offset() {
        let c = log.read(off, FETCH, true, None).expect("read").records;
        n += c.len();
        off = next_offset(&c);
    }
    n
}

async fn read_remote(rlm: &RemoteLogManager, log: &UnifiedLog) -> usize {
    let (mut off, mut n) = (0, 0);
    while off < log.log_end_offset() {
        let c = rlm
            .read(log.topic_partition(), off, FETCH, true)
            .await
            .expect("remote read");
        n += c.len();
        off = next_offset(&c);
    }
    n
}

async fn read_remote_many(rlm: &RemoteLogManager, logs: &[Arc<UnifiedLog>]) -> usize {
    let mut offs = vec![0i64; logs.len()];
    let mut n = 0;
    while offs.iter().zip(logs).any(|(o, l)| *o < l.log_end_offset()) {
        let reqs = offs
            .iter()
            .zip(logs)
            .filter(|(o, l)| **o < l.log_end_offset())
            .map(|(o, l)| RemoteReadRequest::new(l.topic_partition().clone(), *o, FETCH, true))
            .collect();
        for (tp, r) in rlm.read_many(reqs).await {
            let c = r.expect("read_many");
            n += c.len();
            offs[tp.partition as usize] = next_offset(&c);
        }
    }
    n
}

fn main() {
    let env = setup();
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let total = env.logs[0].size_in_bytes();
    let mut g = c.benchmark_group("catchup");
    g.throughput(Throughput::Bytes(total));
    g.bench_function("local_1p", |b| b.iter(|| read_local(&env.logs[0])));
    g.bench_function("remote_1p_cold", |b| {
        b.iter_batched(
            || env.fresh_rlm(),
            |rlm| env.rt.block_on(read_remote(&rlm, &env.logs[0])),
            BatchSize::PerIteration,
        )
    });
    g.throughput(Throughput::Bytes(total * PARTITIONS as u64));
    g.bench_function("remote_read_many_4p_cold", |b| {
        b.iter_batched(
            || env.fresh_rlm(),
            |rlm| env.rt.block_on(read_remote_many(&rlm, &env.logs)),
            BatchSize::PerIteration,
        )
    });
    g.finish();

    // Summary over one more pass each, MB/s.
    let mbps = |bytes: usize, t: Duration| bytes as f64 / t.as_secs_f64() / 1e6;
    let t = Instant::now();
    let n = read_local(&env.logs[0]);
    let local = mbps(n, t.elapsed());
    let rlm = env.fresh_rlm();
    let t = Instant::now();
    let n = env.rt.block_on(read_remote(&rlm, &env.logs[0]));
    let remote = mbps(n, t.elapsed());
    let rlm = env.fresh_rlm();
    let t = Instant::now();
    let n = env.rt.block_on(read_remote_many(&rlm, &env.logs));
    let many = mbps(n, t.elapsed());
    let _ = &env.rlm;
    println!(
        "\nsummary ({} MiB per partition, {} KiB fetches):",
        DATA / MIB,
        FETCH / 1024
    );
    println!("  local read, 1 partition:            {local:8.1} MB/s");
    println!(
        "  remote read (cold), 1 partition:    {remote:8.1} MB/s  ({:.0} % of local)",
        100.0 * remote / local
    );
    println!(
        "  remote read_many (cold), {PARTITIONS} partitions: {many:8.1} MB/s  ({:.0} % of local)",
        100.0 * many / local
    );
    c.final_summary();
}
