//! Log cleaner throughput: MB/s of dirty log cleaned (Kafka's compaction), and peak RSS.
//!
//! Off unless `STRATA_CLEANER_BENCH_MB` is set (so `cargo test --benches` and CI skip it):
//!
//! ```text
//! STRATA_CLEANER_BENCH_MB=1024 STRATA_CLEANER_BENCH_KEYS=1000000 \
//!   /usr/bin/time -v cargo bench -p strata-storage --bench cleaner
//! ```
//!
//! The log: `STRATA_CLEANER_BENCH_KEYS` distinct keys (default 1 M), each written twice (so half the records are
//! superseded), uncompressed batches of 16 records, values sized so the log holds `STRATA_CLEANER_BENCH_MB`
//! MiB, in 256 MiB segments, then rolled (the cleaner never touches the active segment). It is written once
//! into a template directory; every measured cleaning runs on a fresh copy whose `.log` files are hard links
//! (the cleaner only reads and renames old segments, never writes them) and whose other files are copies.
//! The throughput counted is the dirty bytes of each cleaning (criterion prints it as MiB/s); one cleaning's
//! stats and the process's peak RSS (VmHWM) are printed too. Everything lives in a temporary directory
//! removed at the end. Offset map: Kafka's default `log.cleaner.dedupe.buffer.size` (128 MiB).
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use strata_storage::{
    CleanStats, CleanerConfig, CleanupPolicy, LogCleaner, LogConfig, LogManager, LogManagerConfig,
    RecordBatchBuilder, TopicPartition,
};

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn config() -> LogConfig {
    let mut c = LogConfig::default();
    c.cleanup_policy = CleanupPolicy::Compact;
    c.segment_bytes = 256 << 20;
    c
}

fn tp() -> TopicPartition {
    TopicPartition::new("bench-compacted", 0)
}

/// Writes the dirty log into `dir` and shuts the manager down cleanly.
fn write_template(dir: &Path, total_bytes: u64, keys: u64) {
    let manager = LogManager::open(LogManagerConfig::new(vec![dir.to_path_buf()])).unwrap();
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), config())
        .unwrap();
    let records = 2 * keys;
    let value_len = (total_bytes / records).saturating_sub(40).max(8) as usize;
    let value: Vec<u8> = (0..value_len).map(|i| b'a' + (i % 26) as u8).collect();
    let ts = 1_700_000_000_000i64;
    for round in 0..2u64 {
        let mut k = 0;
        while k < keys {
            let mut b = RecordBatchBuilder::new();
            for _ in 0..16.min(keys - k) {
                let key = format!("key-{k:010}");
                b.append(ts + round as i64, Some(key.as_bytes()), Some(&value), &[]);
                k += 1;
            }
            log.append_as_leader(b.build(), 0).unwrap();
        }
    }
    log.roll().unwrap();
    manager.shutdown().unwrap();
}

/// A fresh copy of `template` in `to`: `.log` files hard-linked, the rest copied.
fn fresh_copy(template: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(template).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            fresh_copy(&src, &dst);
        } else if entry.file_name().to_string_lossy().ends_with(".log") {
            std::fs::hard_link(&src, &dst).unwrap();
        } else if entry.file_name() != ".lock" {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn clean_copy(template: &Path, scratch: &Path) -> (CleanStats, Duration) {
    let _ = std::fs::remove_dir_all(scratch);
    fresh_copy(template, scratch);
    let manager =
        Arc::new(LogManager::open(LogManagerConfig::new(vec![scratch.to_path_buf()])).unwrap());
    manager
        .get_log(&tp())
        .expect("loaded")
        .update_config(config())
        .unwrap();
    let cleaner = LogCleaner::new(CleanerConfig::default(), manager.clone()).unwrap();
    let started = Instant::now();
    let stats = cleaner.clean_once().unwrap().expect("the log is dirty");
    let took = started.elapsed();
    drop(cleaner);
    drop(manager);
    std::fs::remove_dir_all(scratch).unwrap();
    (stats, took)
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map_or(-1.0, |kb| kb / 1024.0)
}

fn main() {
    let Some(mb) = env("STRATA_CLEANER_BENCH_MB") else {
        eprintln!("cleaner bench skipped: set STRATA_CLEANER_BENCH_MB (e.g. 1024) to run it");
        return;
    };
    let keys = env("STRATA_CLEANER_BENCH_KEYS").unwrap_or(1_000_000);
    let root = tempfile::tempdir().unwrap();
    let template = root.path().join("template");
    let scratch = root.path().join("scratch");
    let t = Instant::now();
    write_template(&template, mb << 20, keys);
    eprintln!(
        "wrote a {mb} MiB log of {keys} keys x 2 in {:.1} s (peak RSS so far {:.0} MiB)",
        t.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
    let (stats, took) = clean_copy(&template, &scratch);
    eprintln!(
        "one cleaning: {:.1} MB/s of dirty log ({} dirty bytes in {:.2} s), map read {} B, read {} B, written {} B, \
         {} records removed, recopy {:.1}%, map utilization {:.1}%; peak RSS {:.0} MiB",
        stats.dirty_bytes as f64 / took.as_secs_f64() / 1e6,
        stats.dirty_bytes,
        took.as_secs_f64(),
        stats.map_bytes_read,
        stats.bytes_read,
        stats.bytes_written,
        stats.records_removed,
        stats.recopy_percent(),
        100.0 * stats.buffer_utilization,
        peak_rss_mib()
    );
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1));
    let mut group = c.benchmark_group("cleaner");
    group.throughput(Throughput::Bytes(stats.dirty_bytes));
    group.bench_function(format!("clean_{mb}MiB_{keys}_keys"), |b| {
        b.iter_custom(|iters| (0..iters).map(|_| clean_copy(&template, &scratch).1).sum())
    });
    group.finish();
    c.final_summary();
    eprintln!("peak RSS {:.0} MiB", peak_rss_mib());
    drop(root); // the template and every copy are removed
}
