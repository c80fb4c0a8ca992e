//! A data dir whose `__remote_log_metadata` holds the JSON records of versions before issue 34 (keyed
//! `"{topicId}:{partition}"`, a JSON object value) still works: the broker replays them on start-up, serves the
//! remote segments they describe, writes new records in Kafka's serialization beside them, and after another
//! restart reads both.
//!
//! The old data dir is made the way the previous version left it: the broker tiers a topic, stops, and each
//! metadata partition is rewritten offline with the same records in the old JSON form (and the RLMM snapshot,
//! which would skip the replay, removed).

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::tiered::*;
use common::{assign_from_beginning, consume_n, consumer};
use strata_metadata::{RemoteLogMetadataRecord, ValueFormat, SNAPSHOT_FILE_NAME};
use strata_storage::{LogManager, LogManagerConfig, RecordBatch, RecordBatchBuilder};
use strata_tiering::rlm::ops;

const TOPIC: &str = "legacy";

/// Rewrites every `__remote_log_metadata` partition of the stopped broker's data dir with its records as JSON
/// values keyed `"{topicId}:{partition}"`, as the previous version wrote them; returns how many.
fn rewrite_as_json(data: &Path) -> usize {
    let mut config = LogManagerConfig::default();
    config.log_dirs = vec![data.to_path_buf()];
    config.node_id = 1;
    let logs = LogManager::open(config).expect("open the data dir offline");
    let mut rewritten = 0;
    for log in logs.all_logs() {
        let tp = log.topic_partition().clone();
        if tp.topic != strata_metadata::REMOTE_LOG_METADATA_TOPIC_NAME {
            continue;
        }
        let data = log.read(0, i32::MAX as usize, true, None).unwrap();
        let mut records = Vec::new();
        for batch in RecordBatch::iter(&data.records) {
            for r in batch.unwrap().records().unwrap() {
                let r = r.unwrap();
                let value = r.value.expect("metadata value");
                assert_eq!(ValueFormat::of(&value), ValueFormat::Kafka);
                records.push((
                    r.timestamp,
                    RemoteLogMetadataRecord::from_bytes(&value, || format!("{tp}@{}", r.offset))
                        .unwrap(),
                ));
            }
        }
        let (topic_id, log_config) = (log.topic_id(), log.config());
        drop(log);
        logs.delete_log(&tp).unwrap();
        logs.remove_deleted_dirs();
        let log = logs.get_or_create_log(&tp, topic_id, log_config).unwrap();
        if !records.is_empty() {
            let mut b = RecordBatchBuilder::new();
            for (ts, r) in &records {
                b.append(*ts, Some(r.key().as_bytes()), Some(&r.to_json()), &[]);
            }
            log.append_as_leader(b.build(), 0).unwrap();
            log.flush().unwrap();
        }
        rewritten += records.len();
    }
    logs.shutdown().unwrap();
    let snapshot = data.join(SNAPSHOT_FILE_NAME);
    assert!(
        snapshot.is_file(),
        "the RLMM snapshot at {}",
        snapshot.display()
    );
    std::fs::remove_file(snapshot).unwrap();
    rewritten
}

fn consume_all(bs: &str, group: &str, n: usize) {
    let c = consumer(bs, group, &[]);
    assign_from_beginning(&c, TOPIC, 1);
    let got = consume_n(&c, n, Duration::from_secs(60));
    for (i, m) in got.iter().enumerate() {
        assert_eq!(m.1, i as i64, "offset");
        assert_eq!(
            m.3.as_deref(),
            Some(value_of(i % 300).as_slice()),
            "value at {i}"
        );
    }
}

#[test]
fn json_metadata_of_the_previous_version_is_replayed_and_its_segments_served() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    tiered_topic(&rt, &bs, TOPIC, 1, 300, &[]);
    let log = log_of(&server, TOPIC, 0);
    wait_for(
        "segments copied and deleted locally",
        Duration::from_secs(30),
        || {
            let remote = log.highest_offset_in_remote_storage();
            remote > 100 && log.local_log_start_offset() == remote + 1
        },
    );
    let first_remote = log.highest_offset_in_remote_storage();
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    let n = rewrite_as_json(&data);
    assert!(
        n >= 4,
        "at least two segments' started and finished records, got {n}"
    );

    // Restart over the JSON records: the remote segments are known again and served from offset 0.
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let log = log_of(&server, TOPIC, 0);
    wait_for(
        "the remote segments known again",
        Duration::from_secs(30),
        || log.highest_offset_in_remote_storage() == first_remote,
    );
    assert!(log.local_log_start_offset() > 0, "offset 0 is only remote");
    let lines = ops::metadata_records(server.broker().log_manager()).unwrap();
    assert_eq!(lines.len(), n);
    assert!(lines.iter().all(|l| l.format == "json"), "{lines:?}");
    consume_all(&bs, "after-json", 300);

    // New copies are written in Kafka's serialization beside the JSON ones.
    let p = common::producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..300 {
            let (k, v) = (format!("k{i}"), value_of(i));
            p.send(
                rdkafka::producer::FutureRecord::to(TOPIC)
                    .key(&k)
                    .payload(&v)
                    .partition(0),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    wait_for("the new segments copied", Duration::from_secs(30), || {
        log.highest_offset_in_remote_storage() > 400
    });
    let lines = ops::metadata_records(server.broker().log_manager()).unwrap();
    assert!(lines.iter().any(|l| l.format == "kafka"), "{lines:?}");
    assert_eq!(lines.iter().filter(|l| l.format == "json").count(), n);
    assert!(
        lines.iter().all(|l| !l.json.contains("undecodable")),
        "{lines:?}"
    );
    drop(log);
    drop(p);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    // A second restart replays both formats.
    std::fs::remove_file(data.join(SNAPSHOT_FILE_NAME)).ok();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let log = log_of(&server, TOPIC, 0);
    wait_for(
        "the remote segments known again",
        Duration::from_secs(30),
        || log.highest_offset_in_remote_storage() > 400,
    );
    consume_all(&bs, "after-both", 600);
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}
