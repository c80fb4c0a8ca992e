//! Remote expiry with real parts: `retention.bytes` and `retention.ms` over local + remote delete remote objects
//! and the RLMM records DELETE_SEGMENT_STARTED → DELETE_SEGMENT_FINISHED; DeleteRecords across remote segments;
//! partition (topic) deletion leaves no object; the remote-storage config rules.
mod common;
mod rlm_support;

use std::collections::HashSet;
use std::time::Duration;

use strata_metadata::{RemoteLogMetadataManager, RemoteLogSegmentState};
use strata_storage::UnifiedLog;
use strata_tiering::rlm::{ops, validate_topic_config, ConfigChangeAction, TopicRemoteConfig};
use strata_tiering::Error;

use common::s3::S3Server;
use rlm_support::*;

/// The `(segment id, state)` pairs the RLMM recorded, read back from `__remote_log_metadata`.
fn recorded_states(h: &Harness) -> Vec<(String, String)> {
    ops::metadata_records(&h.log_manager)
        .expect("metadata records")
        .iter()
        .filter_map(|r| {
            let v: serde_json::Value = serde_json::from_str(&r.json).expect("json record");
            let id = v["remote_log_segment_id"]["id"].as_str()?.to_string();
            Some((
                id,
                v["state"]
                    .as_str()
                    .unwrap_or("COPY_SEGMENT_STARTED")
                    .to_string(),
            ))
        })
        .collect()
}

async fn offloaded(h: &Harness, log: &UnifiedLog) {
    h.rlm.run_once().await;
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("retention");
    let last = log
        .rolled_segments()
        .last()
        .map_or(-1, |s| s.next_offset - 1);
    assert_eq!(
        log.highest_offset_in_remote_storage(),
        last.max(log.highest_offset_in_remote_storage())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_bytes_over_local_and_remote_deletes_remote_objects() {
    let s3 = S3Server::start("retention").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), false).await;
    let log = h.create_log("metrics", 0, 0xC3);
    let tip = tip(&log);
    append(&log, 50, 1_000);
    h.rlm.run_once().await;
    h.log_manager
        .run_retention(i64::MAX / 2)
        .expect("local retention");
    let before = h.segments(&tip);
    assert!(before.len() >= 5);
    let objects_before = h.object_keys().await.len();
    assert_eq!(objects_before, 3 * before.len());

    // Total retention of about three segments: the oldest remote segments go.
    let mut cfg = log.config();
    cfg.retention_bytes = 3 * 8 * 1024;
    log.update_config(cfg).expect("config");
    h.rlm.run_once().await;

    let after = h.segments(&tip);
    let gone: Vec<_> = before.iter().filter(|s| !after.contains(s)).collect();
    assert!(
        !gone.is_empty() && after.len() < before.len(),
        "nothing expired"
    );
    assert_eq!(gone[0].start_offset, 0, "oldest first");
    assert_eq!(
        log.log_start_offset(),
        after[0].start_offset,
        "log start advanced to the first kept segment"
    );
    let local_only = log.size_in_bytes();
    let remote: u64 = after.iter().map(|s| s.segment_size_in_bytes).sum();
    assert!(local_only + remote <= 3 * 8 * 1024 + after[0].segment_size_in_bytes);
    assert_eq!(
        h.object_keys().await.len(),
        3 * after.len(),
        "objects of expired segments deleted"
    );
    let keys: HashSet<String> = h.object_keys().await.into_iter().collect();
    for s in &gone {
        for k in h.rsm.segment_keys(s).all() {
            assert!(!keys.contains(&k.to_string()), "{k} still stored");
        }
    }
    // The RLMM recorded DELETE_SEGMENT_STARTED then DELETE_SEGMENT_FINISHED for each expired segment.
    let states = recorded_states(&h);
    for s in &gone {
        let ids = [
            s.remote_log_segment_id.id.to_string(),
            strata_tiering::key::kafka_uuid(&s.remote_log_segment_id.id),
        ];
        let id = &ids[0];
        let seq: Vec<_> = states
            .iter()
            .filter(|(i, _)| ids.contains(i))
            .map(|(_, st)| st.as_str())
            .collect();
        assert_eq!(
            seq,
            [
                "COPY_SEGMENT_STARTED",
                "COPY_SEGMENT_FINISHED",
                "DELETE_SEGMENT_STARTED",
                "DELETE_SEGMENT_FINISHED"
            ],
            "segment {id}"
        );
    }
    assert!(matches!(
        h.rlm.read(log.topic_partition(), 0, 1000, true).await,
        Err(Error::OffsetOutOfRange { .. })
    ));
    let first = h
        .rlm
        .read(log.topic_partition(), log.log_start_offset(), 1000, true)
        .await
        .expect("read");
    assert!(!first.is_empty());
    assert!(
        h.rlm
            .metrics()
            .meter_total("RemoteDeleteRequestsPerSec", None)
            .expect("meter")
            >= gone.len() as u64
    );

    // Time retention: everything (timestamps are from 1970) expires remotely; the log start reaches the
    // local data.
    let mut cfg = log.config();
    cfg.retention_bytes = -1;
    cfg.retention_ms = 60_000;
    log.update_config(cfg).expect("config");
    h.rlm.run_once().await;
    assert!(h.segments(&tip).is_empty());
    assert!(h.object_keys().await.is_empty());
    assert_eq!(log.log_start_offset(), log.local_log_start_offset());
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_records_across_remote_segments_then_partition_deletion_leaves_no_object() {
    let s3 = S3Server::start("deleterecords").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = Harness::open(dir.path(), &s3, fast_config(), true).await;
    let log = h.create_log("events", 0, 0xD4);
    let other = h.create_log("events", 1, 0xD4);
    let tip = tip(&log);
    append(&log, 50, 1_000);
    append(&other, 20, 1_000);
    wait_until(
        Duration::from_secs(20),
        "offload of both partitions",
        || [&log, &other].iter().all(|l| all_rolled_copied(l)),
    )
    .await;
    offloaded(&h, &log).await;
    let segs = h.segments(&tip);
    assert!(segs.len() >= 4);

    // DeleteRecords to an offset inside the third remote segment: the first two go, the third stays.
    let cut = segs[2].start_offset + 3;
    assert_eq!(log.delete_records(cut).expect("delete records"), cut);
    h.rlm.wake();
    wait_until(
        Duration::from_secs(20),
        "segments below the cut deleted",
        || h.segments(&tip).first().map(|s| s.start_offset) == Some(segs[2].start_offset),
    )
    .await;
    assert_eq!(log.log_start_offset(), cut);
    assert!(matches!(
        h.rlm.read(log.topic_partition(), cut - 1, 1000, true).await,
        Err(Error::OffsetOutOfRange { .. })
    ));
    let at_cut = h
        .rlm
        .read(log.topic_partition(), cut, 1 << 20, true)
        .await
        .expect("read at cut");
    let first = strata_storage::RecordBatch::iter(&at_cut)
        .next()
        .expect("batch")
        .expect("valid");
    assert!(first.base_offset() <= cut && cut <= first.last_offset());
    assert_eq!(
        h.object_keys().await.len(),
        3 * (h.segments(&tip).len() + h.segments(&rlm_support::tip(&other)).len())
    );

    // Topic deletion: every remote object of both partitions goes; the RLMM forgets them.
    let deleted = h
        .rlm
        .delete_topic_remote_data("events")
        .await
        .expect("delete topic");
    assert_eq!(deleted.len(), 2);
    assert!(
        h.object_keys().await.is_empty(),
        "objects left: {:?}",
        h.object_keys().await
    );
    for t in &deleted {
        assert!(h.segments(t).is_empty());
        assert!(
            h.rlmm
                .remote_partition_delete_metadata(t)
                .expect("read")
                .is_none(),
            "finished and forgotten"
        );
    }
    let states: Vec<_> = ops::metadata_records(&h.log_manager)
        .expect("records")
        .into_iter()
        .filter(|r| r.json.contains("partition_delete"))
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.json).expect("json")["state"].to_string()
        })
        .collect();
    assert_eq!(
        states
            .iter()
            .filter(|s| s.contains("DELETE_PARTITION_FINISHED"))
            .count(),
        2,
        "{states:?}"
    );
    // New data in a deleted partition is never copied again.
    append(&log, 10, 2_000);
    h.rlm.run_once().await;
    assert!(h.object_keys().await.is_empty());
    assert!(h
        .segments(&tip)
        .iter()
        .all(|s| s.state != RemoteLogSegmentState::CopySegmentFinished));
    h.close().await;
}

/// The topic-only rules are storage's (`LogConfig`), the one needing the broker's state tiering's: a compacted
/// topic cannot be tiered, turning tiering off needs `remote.log.delete.on.disable=true` (which then deletes the
/// remote data), tiering needs `remote.log.storage.system.enable=true`.
#[test]
fn config_rules_reject_compaction_and_disabling_without_delete() {
    use strata_storage::{CleanupPolicy, LogConfig};
    let mut tiered = LogConfig::default();
    tiered.remote_storage_enable = true;
    let mut compacted = tiered.clone();
    compacted.cleanup_policy = CleanupPolicy::Compact;
    assert!(matches!(
        compacted.validate(),
        Err(strata_storage::Error::InvalidConfig { .. })
    ));
    assert!(matches!(
        LogConfig::default().validate_change(&tiered),
        Err(strata_storage::Error::InvalidConfig { .. })
    ));
    let on =
        TopicRemoteConfig::from_topic_props([("remote.storage.enable", "true")]).expect("parse");
    assert!(matches!(
        validate_topic_config(false, "t", None, &on),
        Err(Error::PolicyViolation { .. })
    ));
    let off_delete = TopicRemoteConfig::from_topic_props([
        ("remote.storage.enable", "false"),
        ("remote.log.delete.on.disable", "true"),
    ])
    .expect("parse");
    assert_eq!(
        validate_topic_config(true, "t", Some(&on), &off_delete).expect("accepted"),
        ConfigChangeAction::DeleteRemoteData
    );
}
