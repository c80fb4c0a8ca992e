//! RLMM benchmarks: restart replay of 100 000 segment lifecycles (with a snapshot, and without), replay of
//! 100 000 live segments from a snapshot, and the latency of one durable metadata write.
//!
//! `cargo bench -p strata-metadata`
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use strata_metadata::conformance::{fresh_partition, segment, update};
use strata_metadata::{
    RemoteLogMetadataManager, RemoteLogMetadataRecord, RemoteLogSegmentState,
    TopicBasedRemoteLogMetadataManager, TopicBasedRemoteLogMetadataManagerConfig,
    SNAPSHOT_FILE_NAME,
};
use strata_storage::{LogManager, LogManagerConfig};

const SEGMENTS: i64 = 100_000;
const USER_PARTITIONS: i64 = 100;
const CHUNK: i64 = 2_000;

fn config() -> TopicBasedRemoteLogMetadataManagerConfig {
    TopicBasedRemoteLogMetadataManagerConfig::default().with_snapshot_interval_ms(86_400_000)
}

fn open(lm: &Arc<LogManager>, dir: &Path) -> TopicBasedRemoteLogMetadataManager {
    TopicBasedRemoteLogMetadataManager::open(config(), Arc::clone(lm), dir)
        .unwrap()
        .0
}

/// Writes `SEGMENTS` segments over `USER_PARTITIONS` partitions; full lifecycles (4 records each) when
/// `delete`, else left COPY_SEGMENT_FINISHED (2 records each). Then closes (which snapshots).
async fn populate(lm: &Arc<LogManager>, dir: &Path, delete: bool) {
    let rlmm = open(lm, dir);
    let tps: Vec<_> = (0..USER_PARTITIONS)
        .map(|p| fresh_partition("bench", p as i32))
        .collect();
    let per_partition = SEGMENTS / USER_PARTITIONS;
    let mut records = Vec::new();
    for s in 0..per_partition {
        for tp in &tps {
            let m = segment(tp, s * 1000, s * 1000 + 999, &[(0, s * 1000)]);
            records.push(RemoteLogMetadataRecord::Segment(m.clone()));
            records.push(RemoteLogMetadataRecord::SegmentUpdate(update(
                &m,
                RemoteLogSegmentState::CopySegmentFinished,
            )));
            if delete {
                for st in [
                    RemoteLogSegmentState::DeleteSegmentStarted,
                    RemoteLogSegmentState::DeleteSegmentFinished,
                ] {
                    records.push(RemoteLogMetadataRecord::SegmentUpdate(update(&m, st)));
                }
            }
        }
        if (s + 1) * USER_PARTITIONS % CHUNK == 0 {
            rlmm.write_records(std::mem::take(&mut records))
                .await
                .unwrap();
        }
    }
    rlmm.write_records(records).await.unwrap();
    rlmm.close().await.unwrap();
}

fn replay(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("rlmm_replay");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));

    // 100 000 full lifecycles (400 000 records).
    let dir = tempfile::tempdir().unwrap();
    let lm =
        Arc::new(LogManager::open(LogManagerConfig::new(vec![dir.path().to_owned()])).unwrap());
    rt.block_on(populate(&lm, dir.path(), true));
    group.bench_function("100k_lifecycles_with_snapshot", |b| {
        b.iter(|| {
            let (rlmm, stats) =
                TopicBasedRemoteLogMetadataManager::open(config(), Arc::clone(&lm), dir.path())
                    .unwrap();
            assert!(stats.from_snapshot && stats.replayed_records == 0);
            rlmm
        })
    });
    group.bench_function("100k_lifecycles_without_snapshot", |b| {
        b.iter(|| {
            std::fs::remove_file(dir.path().join(SNAPSHOT_FILE_NAME)).unwrap();
            let (rlmm, stats) =
                TopicBasedRemoteLogMetadataManager::open(config(), Arc::clone(&lm), dir.path())
                    .unwrap();
            assert!(!stats.from_snapshot && stats.replayed_records == 4 * SEGMENTS as u64);
            rlmm
        })
    });
    drop(lm);

    // 100 000 live segments: the snapshot holds them all.
    let dir = tempfile::tempdir().unwrap();
    let lm =
        Arc::new(LogManager::open(LogManagerConfig::new(vec![dir.path().to_owned()])).unwrap());
    rt.block_on(populate(&lm, dir.path(), false));
    group.bench_function("100k_live_segments_with_snapshot", |b| {
        b.iter(|| {
            let (rlmm, stats) =
                TopicBasedRemoteLogMetadataManager::open(config(), Arc::clone(&lm), dir.path())
                    .unwrap();
            assert!(stats.from_snapshot && stats.live_segments == SEGMENTS as usize);
            rlmm
        })
    });
    // What a periodic snapshot costs the writer that takes it (writes wait meanwhile).
    let rlmm = open(&lm, dir.path());
    group.bench_function("snapshot_of_100k_live_segments", |b| {
        b.iter(|| rt.block_on(rlmm.snapshot()).unwrap())
    });
    group.finish();
}

fn write_latency(c: &mut Criterion) {
    // Run with `-- rlmm_write` to skip the replay group.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let lm =
        Arc::new(LogManager::open(LogManagerConfig::new(vec![dir.path().to_owned()])).unwrap());
    let rlmm = open(&lm, dir.path());
    let tp = fresh_partition("latency", 0);
    let mut next = 0i64;
    let mut group = c.benchmark_group("rlmm_write");
    group.sample_size(50);
    group.bench_function("one_durable_record", |b| {
        b.iter(|| {
            let m = segment(&tp, next, next + 9, &[(0, next)]);
            next += 10;
            rt.block_on(rlmm.add_remote_log_segment_metadata(m))
                .unwrap();
        })
    });
    // 32 callers at once (e.g. the copier finishing many partitions): group commit shares the fsyncs.
    let tps: Vec<_> = (0..32).map(|p| fresh_partition("concurrent", p)).collect();
    let mut base = 0i64;
    group.bench_function("32_concurrent_durable_records", |b| {
        b.iter(|| {
            base += 10;
            rt.block_on(async {
                let writes = tps.iter().map(|tp| {
                    let r = rlmm.clone();
                    let m = segment(tp, base, base + 9, &[(0, base)]);
                    tokio::spawn(async move { r.add_remote_log_segment_metadata(m).await })
                });
                for w in futures_join(writes.collect()).await {
                    w.unwrap();
                }
            })
        })
    });
    group.finish();
}

async fn futures_join<T: Send + 'static>(handles: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

criterion_group!(benches, replay, write_latency);
criterion_main!(benches);
