//! RemoteLogManager end to end with real parts: offload on roll, local deletion, remote reads byte-identical
//! from offset 0, restart, timestamp lookups on remote data, several partitions in one `read_many`, metrics,
//! `remote ls` / `remote verify`.
mod common;
mod rlm_support;

use std::collections::BTreeMap;
use std::time::Duration;

use strata_metadata::{
    RemoteLogMetadataManager, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentState,
};
use strata_storage::TopicPartition;
use strata_tiering::rlm::{ops, RemoteReadRequest};
use strata_tiering::RemoteStorageManager;
use strata_tiering::{Deferral, Error};

use common::s3::S3Server;
use rlm_support::*;

const WAIT: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offload_then_local_deletion_then_remote_read_from_zero_is_byte_identical_across_restart() {
    let s3 = S3Server::start("offload").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), true).await;
    let log = h.create_log("orders", 0, 0xA1);
    let tip = tip(&log);

    // Produce: about 8 segments, rolled as they fill (each roll wakes the manager).
    append(&log, 50, 1_000_000);
    let expected = read_local_all(&log, 0);
    let rolled = log.rolled_segments();
    assert!(rolled.len() >= 5, "only {} segments rolled", rolled.len());
    let last_rolled_end = rolled.last().expect("rolled").next_offset - 1;

    // Expect offloaded: every rolled segment COPY_SEGMENT_FINISHED, highest offset in remote storage advanced.
    wait_until(WAIT, "every rolled segment in remote storage", || {
        log.highest_offset_in_remote_storage() == last_rolled_end
    })
    .await;
    let segs = h.segments(&tip);
    assert_eq!(segs.len(), rolled.len());
    assert!(segs
        .iter()
        .all(|s| s.state == RemoteLogSegmentState::CopySegmentFinished));
    assert_eq!(segs[0].start_offset, 0);
    assert_eq!(
        h.object_keys().await.len(),
        3 * segs.len(),
        "3 objects per segment"
    );

    // Expect local start: local retention (local.retention.bytes=0) drops every uploaded segment.
    wait_until(WAIT, "local segments deleted", || {
        h.log_manager
            .run_retention(i64::MAX / 2)
            .expect("retention");
        log.local_log_start_offset() == last_rolled_end + 1
    })
    .await;
    assert_eq!(
        log.log_start_offset(),
        0,
        "the log still starts at 0 (remotely)"
    );
    assert!(matches!(
        log.read(0, 1024, true, None),
        Err(strata_storage::Error::OffsetOutOfRange { .. })
    ));

    // Consume from 0: remote below the local start, then local; byte-identical. Small and large reads.
    assert_eq!(
        read_all(&h.rlm, &log, 0, 1).await,
        expected,
        "min one message reads"
    );
    assert_eq!(
        read_all(&h.rlm, &log, 0, 5_000).await,
        expected,
        "5 KB reads"
    );
    assert_eq!(
        read_all(&h.rlm, &log, 0, 1 << 20).await,
        expected,
        "1 MiB reads"
    );
    // A read inside a batch starts at that batch; without min_one_message a too-small budget gives nothing.
    let mid = h
        .rlm
        .read(log.topic_partition(), 15, 1 << 20, true)
        .await
        .expect("read 15");
    assert_eq!(
        rlm_support::next_offset(&mid) - 1,
        segs[0].end_offset,
        "one segment per read"
    );
    assert_eq!(
        strata_storage::RecordBatch::iter(&mid)
            .next()
            .expect("batch")
            .expect("ok")
            .base_offset(),
        10
    );
    assert!(h
        .rlm
        .read(log.topic_partition(), 15, 10, false)
        .await
        .expect("read")
        .is_empty());

    // ListOffsets helpers.
    assert_eq!(
        h.rlm.earliest_local(log.topic_partition()).expect("-4").0,
        last_rolled_end + 1
    );
    assert_eq!(
        h.rlm.latest_tiered(log.topic_partition()).expect("-5"),
        (last_rolled_end, 0)
    );

    // Metrics with Kafka's names.
    let text = h.rlm.render_metrics();
    let total_size: u64 = segs.iter().map(|s| s.segment_size_in_bytes).sum();
    assert!(
        text.contains(&format!("kafka_server_BrokerTopicMetrics_RemoteCopyBytesPerSec{{topic=\"orders\"}} {total_size}")),
        "{text}"
    );
    assert!(text.contains(&format!(
        "kafka_server_BrokerTopicMetrics_RemoteLogSizeBytes{{topic=\"orders\"}} {total_size}"
    )));
    assert!(
        text.contains("kafka_server_BrokerTopicMetrics_RemoteCopyLagSegments{topic=\"orders\"} 0")
    );
    assert!(
        h.rlm
            .metrics()
            .meter_total("RemoteFetchBytesPerSec", Some("orders"))
            .expect("meter")
            > 0
    );
    assert!(h.rlm.metrics().storage_requests("fetch").0 > 0);
    assert!(h.rlm.metrics().object_store_requests("get").0 > 0);
    assert!(h.rlm.metrics().object_store_requests("put").0 >= 3 * segs.len() as u64);
    assert!(
        text.contains("strata_object_store_requests_total{operation=\"put\"}"),
        "{text}"
    );

    // remote ls / verify.
    let parts = h.rlm.partitions_of("orders");
    let rows = ops::remote_ls(h.rlmm.as_ref(), &h.rsm, &parts).expect("ls");
    assert_eq!(rows.len(), segs.len());
    assert!(rows
        .iter()
        .all(|r| r.state == "COPY_SEGMENT_FINISHED" && r.object_keys.len() == 3));
    let report = ops::remote_verify(h.rlmm.as_ref(), &h.rsm, &parts, &|_, _| {})
        .await
        .expect("verify");
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.segments_checked, segs.len());

    // Stop the manager, then leave an abandoned attempt in COPY_SEGMENT_STARTED with its objects, as a crash
    // mid-copy would.
    h.cancel.cancel();
    h.rlm.shutdown(Duration::from_secs(10)).await;
    let orphan_id = RemoteLogSegmentId::generate_new(tip.clone());
    let orphan = RemoteLogSegmentMetadata::new(
        orphan_id.clone(),
        segs[1].start_offset,
        segs[1].end_offset,
        segs[1].max_timestamp_ms,
        1,
        0,
        segs[1].segment_size_in_bytes,
        BTreeMap::from([(0, segs[1].start_offset)]),
    )
    .expect("metadata");
    h.rlmm
        .add_remote_log_segment_metadata(orphan.clone())
        .await
        .expect("add");
    let active = log.rolled_segments(); // nothing local is rolled any more; copy a fresh file set instead
    assert!(active.is_empty());
    let files = strata_tiering::testing::write_segment_files(
        &dir.path().join("scratch"),
        orphan.start_offset,
        bytes::Bytes::from_static(b"partial upload"),
        false,
    );
    h.rsm
        .copy_log_segment_data(&orphan, files.data)
        .await
        .expect("copy");
    let report = ops::remote_verify(h.rlmm.as_ref(), &h.rsm, &parts, &|_, _| {})
        .await
        .expect("verify");
    assert!(
        report.orphan_objects.is_empty(),
        "known to the RLMM, so not an orphan: {report}"
    );

    // Restart: a clean stop, then everything reopened over the same dirs.
    h.close().await;
    let h = Harness::open(dir.path(), &s3, fast_config(), true).await;
    let log = h
        .log_manager
        .get_log(&TopicPartition::new("orders", 0))
        .expect("log reopened");
    wait_until(WAIT, "restore after restart", || {
        log.highest_offset_in_remote_storage() == last_rolled_end
    })
    .await;
    // The abandoned attempt is cleaned (DELETE_* recorded, objects gone).
    wait_until(WAIT, "abandoned COPY_SEGMENT_STARTED cleaned", || {
        h.segments(&tip)
            .iter()
            .all(|s| s.remote_log_segment_id != orphan_id)
    })
    .await;
    assert_eq!(h.object_keys().await.len(), 3 * segs.len());
    assert_eq!(
        read_all(&h.rlm, &log, 0, 5_000).await,
        expected,
        "after restart"
    );

    // Timestamp lookups that fall in remote segments (batch b has timestamp 1_000_000 + b).
    assert_eq!(
        h.rlm
            .find_offset_by_timestamp(log.topic_partition(), 1_000_003)
            .await
            .expect("ts"),
        Some((30, 1_000_003))
    );
    assert_eq!(
        h.rlm
            .find_offset_by_timestamp(log.topic_partition(), 0)
            .await
            .expect("ts"),
        Some((0, 1_000_000))
    );
    assert_eq!(
        h.rlm
            .find_offset_by_timestamp(log.topic_partition(), 1_000_049)
            .await
            .expect("ts"),
        Some((490, 1_000_049)),
        "the last batch is local"
    );
    assert_eq!(
        h.rlm
            .find_offset_by_timestamp(log.topic_partition(), 2_000_000)
            .await
            .expect("ts"),
        None
    );
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_partitions_are_read_in_one_read_many() {
    let s3 = S3Server::start("many").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let logs: Vec<_> = (0..3).map(|p| h.create_log("clicks", p, 0xB2)).collect();
    let mut expected = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        append(log, 20 + 5 * i, 5_000);
        expected.push(read_local_all(log, 0));
    }
    h.rlm.run_once().await;
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    for log in &logs {
        assert!(
            log.local_log_start_offset() > 0,
            "{} not offloaded",
            log.topic_partition()
        );
    }
    let mut reqs: Vec<_> = logs
        .iter()
        .map(|l| RemoteReadRequest::new(l.topic_partition().clone(), 0, 3_000, true))
        .collect();
    reqs.push(RemoteReadRequest::new(
        TopicPartition::new("clicks", 9),
        0,
        3_000,
        true,
    ));
    let results = h.rlm.read_many(reqs).await;
    assert_eq!(results.len(), 4);
    for (i, (tp, r)) in results.iter().take(3).enumerate() {
        assert_eq!(tp, logs[i].topic_partition());
        let got = r.as_ref().expect("remote read");
        assert!(!got.is_empty() && got.len() <= 3_000);
        assert_eq!(got, &expected[i].slice(..got.len()), "partition {i} bytes");
    }
    assert!(matches!(results[3].1, Err(Error::UnknownPartition { .. })));
    // Beyond what is remote, and below the log start: out of range.
    let beyond = logs[0].local_log_start_offset() + 5;
    assert!(matches!(
        h.rlm
            .read(logs[0].topic_partition(), beyond, 1000, true)
            .await,
        Err(Error::OffsetOutOfRange { .. })
    ));
    h.close().await;
}

/// A store slower than `remote.fetch.max.wait.ms`: the first reads time out, but each keeps running in the
/// background and fills the chunk cache, so a consumer fetching again gets the data (Kafka lets an expired remote
/// read run on); with cancelled reads it would time out forever. The fetch quota only defers a read's start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_slower_than_the_fetch_wait_complete_on_a_later_fetch() {
    let s3 = S3Server::start("slow").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = fast_config();
    config.fetch_max_wait_ms = 100;
    let h = Harness::open(dir.path(), &s3, config, false).await;
    let logs: Vec<_> = (0..3).map(|p| h.create_log("slow", p, 0xD4)).collect();
    let mut expected = Vec::new();
    for log in &logs {
        append(log, 20, 5_000);
        expected.push(read_local_all(log, 0));
    }
    h.rlm.run_once().await;
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    assert!(logs.iter().all(|l| l.local_log_start_offset() > 0));

    h.faulty.delay_gets(Duration::from_millis(250)); // every GET takes longer than the 100 ms wait
    let reqs: Vec<_> = logs
        .iter()
        .map(|l| RemoteReadRequest::new(l.topic_partition().clone(), 0, 3_000, true))
        .collect();
    let first = h.rlm.read_many(reqs.clone()).await;
    assert!(
        first.iter().all(|(_, r)| matches!(
            r,
            Err(Error::Deferred {
                reason: Deferral::Timeout { .. },
                ..
            })
        )),
        "{first:?}"
    );
    let mut fetches = 1;
    let got = loop {
        let results = h.rlm.read_many(reqs.clone()).await;
        fetches += 1;
        if results.iter().all(|(_, r)| r.is_ok()) {
            break results;
        }
        assert!(
            fetches < 60,
            "no progress after {fetches} fetches: {results:?}"
        );
    };
    for (i, (_, r)) in got.iter().enumerate() {
        let b = r.as_ref().expect("read");
        assert!(!b.is_empty());
        assert_eq!(b, &expected[i].slice(..b.len()), "partition {i} bytes");
    }
    // Expired reads are counted as such, not as remote fetch errors.
    let text = h.rlm.render_metrics();
    let expires: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("kafka_server_DelayedRemoteFetchMetrics_ExpiresPerSec "))
        .and_then(|v| v.trim().parse().ok())
        .expect("expires counter");
    assert!(expires >= 3, "{text}");
    assert_eq!(
        h.rlm
            .metrics()
            .meter_total("RemoteFetchErrorsPerSec", Some("slow")),
        Some(0),
        "{text}"
    );
    h.close().await;
}

/// The remote fetch quota (`remote.log.manager.fetch.max.bytes.per.second`) defers the start of a read once the
/// bytes read exceed it: the caller gets `Deferred` (`Deferral::Quota`) (no records this time), the deferral is counted, and the
/// read goes through again once the quota has refilled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fetch_quota_defers_reads_and_counts_the_deferrals() {
    let s3 = S3Server::start("quota").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = fast_config();
    config.fetch_max_bytes_per_second = 4_000;
    let h = Harness::open(dir.path(), &s3, config, false).await;
    let log = h.create_log("quota", 0, 0xD7);
    append(&log, 20, 5_000);
    h.rlm.run_once().await;
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    assert!(log.local_log_start_offset() > 0);
    let tp = log.topic_partition().clone();
    // 8 KiB read against a 4 KB/s quota: the bucket is in debt for about a second.
    let first = h.rlm.read(&tp, 0, 8_192, true).await.expect("first read");
    assert!(first.len() > 4_000, "{} bytes", first.len());
    let second = h.rlm.read(&tp, 0, 8_192, true).await;
    assert!(
        matches!(
            second,
            Err(Error::Deferred {
                reason: Deferral::Quota,
                ..
            })
        ),
        "{second:?}"
    );
    let deferrals = |h: &Harness| -> u64 {
        h.rlm
            .render_metrics()
            .lines()
            .find_map(|l| l.strip_prefix("strata_remote_fetch_quota_deferrals_total "))
            .and_then(|v| v.trim().parse().ok())
            .expect("deferrals counter")
    };
    assert_eq!(deferrals(&h), 1);
    // Once the debt is paid back the same read is served (bounded by the deadline, not a fixed sleep).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let again = loop {
        match h.rlm.read(&tp, 0, 8_192, true).await {
            Ok(b) => break b,
            Err(Error::Deferred {
                reason: Deferral::Quota,
                ..
            }) => {
                assert!(std::time::Instant::now() < deadline, "quota never refilled");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("read: {e}"),
        }
    };
    assert_eq!(again, first);
    assert!(deferrals(&h) >= 1);
    assert_eq!(
        h.rlm
            .metrics()
            .meter_total("RemoteFetchErrorsPerSec", Some("quota")),
        Some(0)
    );
    h.close().await;
}

/// A roll starts its partition's copy at once, without waiting for `remote.log.manager.task.interval.ms`
/// (60 s here), every time — also while other partitions sit idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_roll_starts_its_partitions_copy_without_waiting_for_the_interval() {
    let s3 = S3Server::start("roll-wake").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_with(&[("remote.log.manager.task.interval.ms", "60000")]);
    let h = Harness::open(dir.path(), &s3, config, false).await;
    let idle = h.create_log("idle", 0, 0xE1);
    let busy = h.create_log("busy", 0, 0xE2);
    h.rlm.start();
    for round in 0..3 {
        append(&busy, 12, 1_000 + round * 100);
        wait_until(
            Duration::from_secs(20),
            "the rolled segments to be copied",
            || all_rolled_copied(&busy),
        )
        .await;
    }
    assert!(busy.rolled_segments().len() >= 3);
    assert_eq!(idle.highest_offset_in_remote_storage(), -1);
    h.close().await;
}

/// The copy task and the expiration task of a partition run side by side while segments roll all the time:
/// every segment is copied exactly once, none is taken for a dangling attempt and deleted, and after local
/// retention everything reads back from offset 0 identical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_and_expiry_side_by_side_lose_no_segment() {
    let s3 = S3Server::start("side-by-side").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let log = h.create_log("busy", 0, 0xC7);
    let tip = tip(&log);
    h.rlm.start();
    for round in 0..60 {
        // Each round rolls about one segment: both tasks are woken every time.
        append(&log, 7, 10_000 + round * 10);
        if round % 10 == 0 {
            h.rlm.wake();
        }
        tokio::task::yield_now().await;
    }
    let expected = read_local_all(&log, 0);
    wait_until(
        Duration::from_secs(30),
        "every rolled segment copied",
        || all_rolled_copied(&log),
    )
    .await;
    let segs = h.segments(&tip);
    assert!(
        segs.iter()
            .all(|s| s.state == RemoteLogSegmentState::CopySegmentFinished),
        "{segs:?}"
    );
    let mut starts: Vec<_> = segs.iter().map(|s| s.start_offset).collect();
    starts.dedup();
    assert_eq!(starts.len(), segs.len(), "one copy per segment");
    assert_eq!(segs[0].start_offset, 0);
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    assert!(log.local_log_start_offset() > 0);
    assert_eq!(read_all(&h.rlm, &log, 0, 64 * 1024).await, expected);
    h.close().await;
}

/// The manager reads `remote.log.copy.disable` from the partition's log config at each pass: turning it on and
/// off on the log (as AlterConfigs does) stops and resumes copying without telling the manager anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copying_follows_the_logs_copy_disable_without_being_told() {
    let s3 = S3Server::start("copy-disable").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let log = h.create_log("paused", 0, 0xC0);
    let mut paused = tiered_log_config();
    paused.remote_log_copy_disable = true;
    // KIP-950: with copying off, local retention is total retention.
    paused.local_retention_bytes = paused.retention_bytes;
    paused.local_retention_ms = paused.retention_ms;
    log.update_config(paused).expect("copy disabled");
    append(&log, 24, 1_000);
    assert!(log.rolled_segments().len() >= 2, "segments rolled");
    h.rlm.run_once().await;
    assert_eq!(
        log.highest_offset_in_remote_storage(),
        -1,
        "nothing is copied while the log's config disables copying"
    );
    assert!(h.segments(&tip(&log)).is_empty());
    log.update_config(tiered_log_config())
        .expect("copy enabled");
    h.rlm.run_once().await;
    assert!(
        all_rolled_copied(&log),
        "every rolled segment is copied once the log's config allows it: highest in remote {}, rolled {:?}",
        log.highest_offset_in_remote_storage(),
        log.rolled_segments().last().map(|s| s.next_offset)
    );
    assert!(!h.segments(&tip(&log)).is_empty());
    h.close().await;
}
