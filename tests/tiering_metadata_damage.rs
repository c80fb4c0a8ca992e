//! `__remote_log_metadata` damaged after a copied segment's local copy was deleted: its last record (the
//! segment's COPY_SEGMENT_FINISHED) torn off, the segment's offsets are neither local nor in a finished remote
//! segment. Kafka's RemoteLogManager answers OFFSET_OUT_OF_RANGE for an offset no remote segment holds, so the
//! consumer resets by `auto.offset.reset`; strata answered KAFKA_STORAGE_ERROR, which clients retry forever (a
//! consumer stalled below the high watermark with no error). The other segments stay readable.

use crate::common;

use std::time::Duration;

use common::raw::{connect, request};
use common::tiered::*;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{ApiKey, BrokerId, FetchRequest, FetchResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

const TOPIC: &str = "damaged";
const OFFSET_OUT_OF_RANGE: i16 = 1;

async fn fetch(addr: std::net::SocketAddr, offset: i64) -> (i16, usize) {
    let mut s = connect(addr).await;
    let req = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(StrBytes::from_static_str(TOPIC)))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])]);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &req)
        .await
        .expect("Fetch response");
    let p = &r.responses[0].partitions[0];
    (p.error_code, p.records.as_ref().map_or(0, |r| r.len()))
}

/// The `.log` file of the metadata partition holding the most bytes (the one the topic's records hash to).
fn metadata_log(data: &std::path::Path) -> std::path::PathBuf {
    let mut logs: Vec<_> = std::fs::read_dir(data)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("__remote_log_metadata-")
        })
        .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort_by_key(|p| std::fs::metadata(p).unwrap().len());
    logs.pop().expect("a metadata log")
}

#[test]
fn an_offset_no_remote_segment_holds_after_metadata_damage_is_out_of_range() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    tiered_topic(&rt, &bs, TOPIC, 1, 300, &[]);
    let log = log_of(&server, TOPIC, 0);
    // Quiet: every rolled segment copied and its local copy deleted (local start = highest remote offset + 1).
    wait_for(
        "rolled segments copied and deleted locally",
        Duration::from_secs(30),
        || {
            let remote = log.highest_offset_in_remote_storage();
            remote > 100 && log.local_log_start_offset() == remote + 1
        },
    );
    let last_copied = log.highest_offset_in_remote_storage();
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    let meta = metadata_log(&dir.path().join("data"));
    let len = std::fs::metadata(&meta).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&meta)
        .unwrap()
        .set_len(len - 9)
        .unwrap();

    let server = rt.block_on(start(dir.path()));
    let addr = server.local_addr();
    let log = log_of(&server, TOPIC, 0);
    assert!(
        log.local_log_start_offset() > last_copied,
        "the lost segment has no local copy"
    );
    assert_eq!(log.log_start_offset(), 0);
    // The segment ending at `last_copied` lost its finished record: no remote segment holds that offset.
    let (code, bytes) = rt.block_on(fetch(addr, last_copied));
    assert_eq!(
        (code, bytes),
        (OFFSET_OUT_OF_RANGE, 0),
        "fetch at {last_copied} (lost segment)"
    );
    // Nothing else was lost: offset 0 (an intact remote segment) and the local log are served.
    let (code, bytes) = rt.block_on(fetch(addr, 0));
    assert_eq!(code, 0, "fetch at 0");
    assert!(bytes > 0, "records at 0");
    let (code, bytes) = rt.block_on(fetch(addr, log.local_log_start_offset()));
    assert_eq!(code, 0, "fetch at the local log start");
    assert!(bytes > 0, "records at the local log start");
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}
