//! An object-store outage (FaultyStore failing PUTs): appends keep working, local deletion is held, copying
//! resumes after it, nothing is lost and no orphan object or unfinished metadata is left.
mod common;
mod rlm_support;

use std::time::Duration;

use strata_metadata::RemoteLogSegmentState;
use strata_tiering::rlm::ops;
use strata_tiering::testing::{Fault, Op};

use common::s3::S3Server;
use rlm_support::*;

/// PUT calls 2..=OUTAGE_PUTS fail: the first attempt uploads its `.log`, then fails on `.indexes`, so its
/// cleanup has something to remove.
const OUTAGE_PUTS: usize = 14;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_holds_local_deletion_then_copying_resumes_without_loss_or_orphans() {
    let s3 = S3Server::start("outage").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    for nth in 2..=OUTAGE_PUTS {
        h.faulty.inject(Op::Put, nth, Fault::Fail);
        h.faulty.inject(Op::CreateMultipart, nth, Fault::Fail);
    }
    h.rlm.start();
    let log = h.create_log("payments", 0, 0xE5);
    let tip = tip(&log);
    append(&log, 20, 1_000);

    // While uploads fail: copy errors are counted, nothing is remote, local retention deletes nothing, and the
    // held bytes are reported.
    wait_until(Duration::from_secs(20), "three failed copies", || {
        h.rlm
            .metrics()
            .meter_total("RemoteCopyErrorsPerSec", Some("payments"))
            .unwrap_or(0)
            >= 3
    })
    .await;
    assert!(
        h.faulty.calls(Op::Put) < OUTAGE_PUTS,
        "outage already over; raise OUTAGE_PUTS"
    );
    assert_eq!(log.highest_offset_in_remote_storage(), -1);
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    assert_eq!(log.local_log_start_offset(), 0, "local segments are held");
    let text = h.rlm.render_metrics();
    let held = text
        .lines()
        .find_map(|l| l.strip_prefix("strata_remote_log_local_bytes_held "))
        .and_then(|v| v.parse::<u64>().ok())
        .expect("held gauge");
    assert!(held > 0, "{text}");
    assert!(
        h.rlm.metrics().object_store_requests("put").1 >= 2,
        "object-store PUT errors are counted"
    );

    // Appends keep working during the outage.
    append(&log, 20, 2_000);
    let expected = read_local_all(&log, 0);

    // After the outage: everything rolled is copied, in order, and local copies can go.
    wait_until(
        Duration::from_secs(30),
        "copying resumed and caught up",
        || all_rolled_copied(&log),
    )
    .await;
    assert!(h.faulty.calls(Op::Put) > OUTAGE_PUTS);
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    assert!(log.local_log_start_offset() > 0);
    assert_eq!(
        read_all(&h.rlm, &log, 0, 4_000).await,
        expected,
        "nothing lost"
    );

    // No orphan: failed attempts were cleaned (DELETE_SEGMENT_FINISHED, objects removed).
    wait_until(Duration::from_secs(20), "failed attempts cleaned", || {
        h.segments(&tip)
            .iter()
            .all(|s| s.state == RemoteLogSegmentState::CopySegmentFinished)
    })
    .await;
    let segs = h.segments(&tip);
    let mut starts: Vec<_> = segs.iter().map(|s| s.start_offset).collect();
    starts.dedup();
    assert_eq!(starts.len(), segs.len(), "one finished copy per segment");
    let report = ops::remote_verify(
        h.rlmm.as_ref(),
        &h.rsm,
        &h.rlm.partitions_of("payments"),
        &|_, _| {},
    )
    .await
    .expect("verify");
    assert!(report.is_clean(), "{report}");
    assert_eq!(h.object_keys().await.len(), 3 * segs.len());
    let text = h.rlm.render_metrics();
    assert!(
        text.contains("strata_remote_log_local_bytes_held 0"),
        "{text}"
    );
    h.close().await;
}

/// `RemoteCopyLagSegments` while a pass is stuck on a hanging upload: the gauge shows every segment still to
/// copy, not the value left by the previous pass (none here: the gauge used to be set only when a pass ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_lag_gauge_reports_the_backlog_while_an_upload_hangs() {
    let s3 = S3Server::start("lag").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let log = h.create_log("lagging", 0, 0xC3);
    append(&log, 30, 1_000_000);
    let rolled = log.rolled_segments().len();
    assert!(rolled >= 3, "only {rolled} segments rolled");
    h.faulty.inject(Op::Put, 1, Fault::Hang);
    h.rlm.start();

    let gauge = |h: &Harness| -> Option<u64> {
        let text = h.rlm.render_metrics();
        text.lines()
            .find_map(|l| {
                l.strip_prefix(
                    "kafka_server_BrokerTopicMetrics_RemoteCopyLagSegments{topic=\"lagging\"} ",
                )
            })
            .and_then(|v| v.trim().parse().ok())
    };
    wait_until(Duration::from_secs(20), "the first upload to hang", || {
        h.faulty.calls(Op::Put) >= 1
    })
    .await;
    wait_until(
        Duration::from_secs(20),
        "the copy-lag gauge to show the backlog",
        || gauge(&h) == Some(rolled as u64),
    )
    .await;
    assert_eq!(
        log.highest_offset_in_remote_storage(),
        -1,
        "nothing was copied while the upload hangs"
    );
    h.close().await;
}

/// Failing remote deletes are retried with backoff, not only at the next task interval (60 s here) and not in a
/// tight loop: over the first second only a handful of passes try, and the expired segments go once the store
/// accepts deletes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_remote_deletes_are_retried_with_backoff() {
    let s3 = S3Server::start("expiry-backoff").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_with(&[
        ("remote.log.manager.task.interval.ms", "60000"),
        ("remote.log.manager.task.retry.backoff.ms", "50"),
        ("remote.log.manager.task.retry.backoff.max.ms", "200"),
        ("remote.log.manager.task.retry.jitter", "0"),
    ]);
    let h = Harness::open(dir.path(), &s3, config, false).await;
    let log = h.create_log("audit", 0, 0xE7);
    let tip = tip(&log);
    append(&log, 30, 1_000);
    h.rlm.run_once().await;
    let before = h.segments(&tip);
    assert!(before.len() >= 3, "{} segments offloaded", before.len());
    // A pass tries at most the three objects of the first segment before it gives up.
    const FAILING: usize = 30;
    for nth in 1..=FAILING {
        h.faulty.inject(Op::Delete, nth, Fault::Fail);
    }
    // Everything remote expires by time (timestamps are from 1970).
    let mut cfg = log.config();
    cfg.retention_ms = 60_000;
    log.update_config(cfg).expect("config");
    h.rlm.start();
    wait_until(Duration::from_secs(10), "a retried delete", || {
        h.faulty.calls(Op::Delete) > 3
    })
    .await;
    // Passes at 0, 50, 150, 350, 550, 750, 950 ms at most: a loop without backoff would have used up every
    // failing call within milliseconds and deleted everything.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let deletes = h.faulty.calls(Op::Delete);
    assert!(deletes <= 3 * 9, "{deletes} delete calls in about a second");
    assert!(
        !h.segments(&tip).is_empty(),
        "deleted although the store was still failing"
    );
    wait_until(
        Duration::from_secs(20),
        "expired segments deleted after the failures",
        || h.segments(&tip).is_empty(),
    )
    .await;
    assert!(h.faulty.calls(Op::Delete) > FAILING);
    assert!(h.object_keys().await.is_empty(), "objects left");
    assert_eq!(log.log_start_offset(), log.local_log_start_offset());
    h.close().await;
}

/// Deleting a partition's remote data (DeleteTopics) while its upload hangs cancels the upload: the deletion
/// finishes at once and leaves no object, and a re-created partition of the same name (a new topic id) is copied
/// without inheriting the old one's failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_partition_cancels_its_hanging_upload() {
    let s3 = S3Server::start("cancel-upload").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let old = h.create_log("orders", 0, 0xD1);
    let old_tip = tip(&old);
    append(&old, 20, 1_000);
    h.start_with_a_hanging_upload().await;
    // A config change of the tiered topic meanwhile (the broker calls resume_copying on every AlterConfigs of it)
    // must not detach the hanging upload from the deletion's cancel.
    h.rlm.resume_copying("orders");

    tokio::time::timeout(
        Duration::from_secs(10),
        h.rlm.delete_partition_remote_data(&old_tip),
    )
    .await
    .expect("the deletion waited for the hanging upload")
    .expect("delete remote data");
    assert!(h.segments(&old_tip).is_empty(), "segments left");
    assert!(h.object_keys().await.is_empty(), "objects left");
    h.log_manager
        .delete_log(old.topic_partition())
        .expect("delete local log");

    let new = h.create_log("orders", 0, 0xD2);
    append(&new, 20, 2_000);
    h.rlm.wake();
    wait_until(
        Duration::from_secs(20),
        "the re-created partition to be copied",
        || all_rolled_copied(&new),
    )
    .await;
    assert_eq!(
        h.rlm
            .metrics()
            .meter_total("RemoteCopyErrorsPerSec", Some("orders"))
            .unwrap_or(0),
        0,
        "the cancelled upload was counted as a copy error"
    );
    assert!(h.segments(&old_tip).is_empty());
    h.close().await;
}

/// Each partition's pass runs on its own: while one partition's upload hangs, another partition's new segments
/// are still copied as they roll (a pass over all partitions used to wait for the slowest).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_upload_does_not_hold_back_other_partitions() {
    let s3 = S3Server::start("independent").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let stuck = h.create_log("stuck", 0, 0xF1);
    let moving = h.create_log("moving", 0, 0xF2);
    append(&stuck, 20, 1_000);
    h.start_with_a_hanging_upload().await;

    for round in 0..2 {
        append(&moving, 20, 10_000 + round * 100);
        wait_until(
            Duration::from_secs(20),
            "the other partition's segments to be copied",
            || all_rolled_copied(&moving),
        )
        .await;
    }
    assert_eq!(
        stuck.highest_offset_in_remote_storage(),
        -1,
        "the hanging upload finished"
    );
    h.close().await;
}

/// A partition whose pass waits for a free pass slot (every slot held by another partition's hanging upload)
/// still gives way to a delete of its remote data at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_partition_waiting_for_a_pass_slot_does_not_wait_for_other_partitions() {
    let s3 = S3Server::start("slot-wait").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_with(&[
        ("remote.log.manager.task.interval.ms", "200"),
        ("remote.log.manager.copier.thread.pool.size", "1"),
        ("remote.log.manager.expiration.thread.pool.size", "1"),
    ]);
    let h = Harness::open(dir.path(), &s3, config, false).await;
    let hanging = h.create_log("hanging", 0, 0xA1);
    let waiting = h.create_log("waiting", 0, 0xA2);
    append(&hanging, 20, 1_000);
    h.start_with_a_hanging_upload().await;
    // Its rolls dispatch a pass that waits for the one slot.
    append(&waiting, 20, 2_000);
    tokio::time::timeout(
        Duration::from_secs(10),
        h.rlm.delete_partition_remote_data(&tip(&waiting)),
    )
    .await
    .expect("the deletion waited for another partition's upload")
    .expect("delete remote data");
    assert_eq!(waiting.highest_offset_in_remote_storage(), -1);
    assert_eq!(h.faulty.calls(Op::Put), 1, "only the hanging upload ran");
    h.close().await;
}

/// A partition's remote expiry does not wait for its own upload: while an upload hangs, retention still deletes
/// the partition's expired remote segments and advances its log start (Kafka's separate expiration task).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_expiry_runs_while_the_same_partitions_upload_hangs() {
    let s3 = S3Server::start("expire-beside-copy").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let log = h.create_log("beside", 0, 0xB5);
    let tip = tip(&log);
    append(&log, 20, 1_000);
    h.rlm.run_once().await;
    let offloaded = h.segments(&tip);
    assert!(
        offloaded.len() >= 3,
        "{} segments offloaded",
        offloaded.len()
    );
    let last_remote = offloaded
        .iter()
        .map(|s| s.end_offset)
        .max()
        .expect("segments");
    append(&log, 20, 2_000);
    h.faulty
        .inject(Op::Put, h.faulty.calls(Op::Put) + 1, Fault::Hang);
    // Everything expires by time (timestamps are from 1970).
    let mut cfg = log.config();
    cfg.retention_ms = 60_000;
    log.update_config(cfg).expect("config");
    let puts = h.faulty.calls(Op::Put);
    h.rlm.start();
    wait_until(Duration::from_secs(20), "the next upload to hang", || {
        h.faulty.calls(Op::Put) > puts
    })
    .await;
    wait_until(
        Duration::from_secs(20),
        "the expired remote segments deleted beside the hanging upload",
        || {
            h.segments(&tip)
                .iter()
                .all(|s| s.state == RemoteLogSegmentState::CopySegmentStarted)
        },
    )
    .await;
    assert!(
        log.log_start_offset() > last_remote,
        "log start not advanced"
    );
    assert_eq!(
        log.highest_offset_in_remote_storage(),
        last_remote,
        "the hanging upload finished"
    );
    h.close().await;
}

/// An upload that fails after its local log was deleted (the broker deleted the topic under it; the failure is
/// the store's or a vanished file's) is abandoned quietly: the attempt is cleaned up, and it is not counted as a
/// copy error (alerts on RemoteCopyErrorsPerSec) nor retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_failing_after_its_log_was_deleted_is_not_a_copy_error() {
    let s3 = S3Server::start("deleted-under-upload").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    h.faulty
        .inject(Op::Put, 1, Fault::FailAfter(Duration::from_millis(300)));
    let log = h.create_log("gone", 0, 77);
    append(&log, 40, 1_000);
    h.rlm.start();
    wait_until(Duration::from_secs(20), "the first upload to start", || {
        h.faulty.calls(Op::Put) >= 1
    })
    .await;
    h.log_manager
        .delete_log(&strata_storage::TopicPartition::new("gone", 0))
        .expect("delete log");
    // The failed attempt's objects are deleted after the failure is accounted for.
    wait_until(
        Duration::from_secs(20),
        "the abandoned attempt to be cleaned up",
        || h.faulty.calls(Op::Delete) >= 1,
    )
    .await;
    assert_eq!(
        h.rlm
            .metrics()
            .meter_total("RemoteCopyErrorsPerSec", Some("gone"))
            .unwrap_or(0),
        0,
        "counted as a copy error"
    );
    assert_eq!(
        log.highest_offset_in_remote_storage(),
        -1,
        "nothing was copied"
    );
    h.close().await;
}
