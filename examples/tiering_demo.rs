//! Tiered storage end to end at the library level, in a few seconds: append to a tiered partition, roll,
//! wait for the RemoteLogManager to upload (RLMM COPY_SEGMENT_STARTED → RSM copy → COPY_SEGMENT_FINISHED),
//! let local retention drop the local copies, read from offset 0 (served from the remote tier), and print the
//! `__remote_log_metadata` records and the object keys.
//!
//! Run: `cargo run --example tiering_demo` (remote tier: the filesystem backend in a temp dir, the default of
//! `strata` without S3 settings).
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::{Bytes, BytesMut};
use strata_metadata::{
    TopicBasedRemoteLogMetadataManager, TopicBasedRemoteLogMetadataManagerConfig,
};
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatch, RecordBatchBuilder, TopicPartition,
};
use strata_tiering::rlm::{ops, RemoteLogManager, RemoteLogManagerConfig};
use strata_tiering::ObjectStoreRsm;
use tokio_util::sync::CancellationToken;

fn tiered_config() -> LogConfig {
    let mut c = LogConfig::default();
    c.segment_bytes = 64 * 1024; // small segments so the demo rolls a few
    c.remote_storage_enable = true; // remote.storage.enable=true
    c.local_retention_bytes = 0; // local.retention.bytes=0: drop local copies once uploaded
    c.retention_ms = -1;
    c.file_delete_delay_ms = 0;
    c
}

fn next_offset(chunk: &Bytes) -> anyhow::Result<i64> {
    let mut next = None;
    for b in RecordBatch::iter(chunk) {
        next = Some(b?.last_offset() + 1);
    }
    next.context("empty read")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    println!("data dir: {}", dir.path().display());

    // The three parts: the local log, the metadata plane (RLMM) and the data plane (RSM).
    let mut lm_config = LogManagerConfig::new(vec![dir.path().join("logs")]);
    lm_config.default_log_config = tiered_config();
    let log_manager = Arc::new(LogManager::open(lm_config)?);
    let (rlmm, _) = TopicBasedRemoteLogMetadataManager::open(
        TopicBasedRemoteLogMetadataManagerConfig::default().with_num_partitions(1),
        log_manager.clone(),
        &dir.path().join("logs"),
    )?;
    let rlmm = Arc::new(rlmm);
    let remote_root = dir.path().join("remote");
    let rsm = Arc::new(ObjectStoreRsm::from_props([
        ("storage.backend", "filesystem"),
        (
            "storage.filesystem.root",
            remote_root.to_str().context("utf-8 path")?,
        ),
    ])?);
    rsm.validate_connectivity().await?;
    let config = RemoteLogManagerConfig::from_props([
        ("remote.log.storage.system.enable", "true"),
        ("remote.log.manager.task.interval.ms", "500"),
    ])?;
    let rlm = RemoteLogManager::new(config, log_manager.clone(), rlmm.clone(), rsm.clone(), 1)?;
    let shutdown = CancellationToken::new();
    rlm.start(shutdown.clone());

    // Produce: 400 batches of 10 records (about 480 KB), rolling every 64 KiB.
    let tp = TopicPartition::new("demo", 0);
    let log = log_manager.get_or_create_log(&tp, uuid::Uuid::new_v4(), tiered_config())?;
    for b in 0..400i64 {
        let mut batch = RecordBatchBuilder::new();
        for r in 0..10 {
            let value = format!("record {:>6} {}", b * 10 + r, "x".repeat(80));
            batch.append(
                1_700_000_000_000 + b,
                Some(b"key"),
                Some(value.as_bytes()),
                &[],
            );
        }
        log.append_as_leader(batch.build(), 0)?;
    }
    let rolled = log.rolled_segments();
    let last_rolled = rolled.last().context("nothing rolled")?.next_offset - 1;
    println!(
        "produced offsets 0..{} into {} segments ({} rolled)",
        log.log_end_offset(),
        rolled.len() + 1,
        rolled.len()
    );
    let mut expected = BytesMut::new();
    let mut off = 0;
    while off < log.log_end_offset() {
        let chunk = log.read(off, 1 << 20, true, None)?.records;
        off = next_offset(&chunk)?;
        expected.extend_from_slice(&chunk);
    }

    // Wait for the upload of every rolled segment.
    let deadline = Instant::now() + Duration::from_secs(20);
    while log.highest_offset_in_remote_storage() < last_rolled {
        if Instant::now() > deadline {
            bail!(
                "upload did not finish: highest offset in remote storage {}",
                log.highest_offset_in_remote_storage()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "uploaded: highest offset in remote storage = {}",
        log.highest_offset_in_remote_storage()
    );

    // Local retention (the broker runs it every log.retention.check.interval.ms) drops the uploaded copies.
    log_manager.run_retention(i64::MAX / 2)?;
    println!(
        "local retention ran: log start offset = {}, local log start offset = {} (offsets below it are remote only)",
        log.log_start_offset(),
        log.local_log_start_offset()
    );

    // Consume from offset 0: remote below the local log start, local above.
    let mut got = BytesMut::new();
    let (mut off, mut remote_reads, mut remote_bytes) = (0i64, 0, 0);
    while off < log.log_end_offset() {
        let chunk = if off < log.local_log_start_offset() {
            remote_reads += 1;
            let c = rlm.read(&tp, off, 64 * 1024, true).await?;
            remote_bytes += c.len();
            c
        } else {
            log.read(off, 64 * 1024, true, None)?.records
        };
        off = next_offset(&chunk)?;
        got.extend_from_slice(&chunk);
    }
    if got != expected {
        bail!(
            "read back {} bytes that differ from the {} produced",
            got.len(),
            expected.len()
        );
    }
    println!(
        "consumed offsets 0..{} byte-identical: {remote_bytes} bytes in {remote_reads} remote reads, the rest local",
        log.log_end_offset()
    );

    println!("\n__remote_log_metadata records:");
    for r in ops::metadata_records(&log_manager)? {
        println!("  {r}");
    }
    println!("\nremote segments and object keys (strata remote ls):");
    println!("  {}", ops::RemoteSegmentListing::HEADER);
    for row in ops::remote_ls(rlmm.as_ref(), &rsm, &rlm.partitions_of("demo"))? {
        println!("  {row}");
    }
    let report = ops::remote_verify(rlmm.as_ref(), &rsm, &rlm.partitions_of("demo")).await?;
    println!("\nstrata remote verify:\n{report}");
    println!("\nmetrics (excerpt):");
    for line in rlm
        .render_metrics()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("demo"))
    {
        println!("  {line}");
    }

    shutdown.cancel();
    rlm.shutdown(Duration::from_secs(5)).await;
    rlmm.close().await?;
    log_manager.shutdown()?;
    println!("\ndone in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
