//! Helpers of the tiered-storage end-to-end tests (tests/tiering_e2e.rs, tests/tiering_rules.rs): a broker with
//! the filesystem backend in a temp dir, raw ListOffsets / AlterConfigs, tiered topics, remote file counts.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{ApiKey, ListOffsetsRequest, ListOffsetsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::producer::FutureRecord;
use strata_broker::Server;

use super::raw;
use super::{admin, producer};

/// Timestamps of message i in the tests that set them: BASE_TS + i * 1000 (or * 10).
pub const BASE_TS: i64 = 1_700_000_000_000;

#[allow(unused_imports)]
pub use super::runtime;

pub fn value_of(i: usize) -> Vec<u8> {
    let mut v = format!("tiered-{i:06}-").into_bytes();
    v.extend((0..(i % 61) + 40).map(|j| (i * 31 + j) as u8));
    v
}

pub fn props(dir: &Path) -> BTreeMap<String, String> {
    [
        ("listeners", "PLAINTEXT://127.0.0.1:0".to_string()),
        ("log.dirs", dir.join("data").display().to_string()),
        ("log.retention.check.interval.ms", "100".into()),
        ("remote.log.manager.task.interval.ms", "100".into()),
        ("remote.log.manager.task.retry.backoff.ms", "50".into()),
        (
            "rlmm.config.remote.log.metadata.topic.num.partitions",
            "2".into(),
        ),
        (
            "rsm.config.storage.filesystem.root",
            dir.join("remote").display().to_string(),
        ),
        ("rsm.config.chunk.size", "4096".into()),
        ("http.listener", "127.0.0.1:0".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub async fn start(dir: &Path) -> Server {
    Server::start_from_properties(&props(dir))
        .await
        .expect("tiered broker starts")
}

/// ListOffsets v9 for partition 0 of `topic` at `timestamp` (a sentinel or a time): (offset, timestamp).
pub async fn list_offset(addr: std::net::SocketAddr, topic: &str, timestamp: i64) -> (i64, i64) {
    let mut s = raw::connect(addr).await;
    let req = ListOffsetsRequest::default()
        .with_replica_id((-1).into())
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(timestamp)])]);
    let resp: ListOffsetsResponse = raw::request(&mut s, ApiKey::ListOffsets, 9, &req)
        .await
        .expect("ListOffsets response");
    let p = &resp.topics[0].partitions[0];
    assert_eq!(p.error_code, 0, "ListOffsets {timestamp} error");
    (p.offset, p.timestamp)
}

/// AlterConfigs v2 (replace the topic's overrides with `configs`): (error code, error message).
pub async fn alter_topic(
    addr: std::net::SocketAddr,
    topic: &str,
    configs: &[(&str, &str)],
) -> (i16, String) {
    use kafka_protocol::messages::alter_configs_request::{AlterConfigsResource, AlterableConfig};
    use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse};
    let mut s = raw::connect(addr).await;
    let req = AlterConfigsRequest::default().with_resources(vec![AlterConfigsResource::default()
        .with_resource_type(2)
        .with_resource_name(StrBytes::from_string(topic.to_string()))
        .with_configs(
            configs
                .iter()
                .map(|(k, v)| {
                    AlterableConfig::default()
                        .with_name(StrBytes::from_string(k.to_string()))
                        .with_value(Some(StrBytes::from_string(v.to_string())))
                })
                .collect(),
        )]);
    let resp: AlterConfigsResponse = raw::request(&mut s, ApiKey::AlterConfigs, 2, &req)
        .await
        .expect("AlterConfigs response");
    let r = &resp.responses[0];
    (
        r.error_code,
        r.error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

pub fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Creates a tiered topic with small segments and produces `n` messages per partition (value_of(i)).
pub fn tiered_topic(
    rt: &tokio::runtime::Runtime,
    bs: &str,
    name: &str,
    partitions: i32,
    n: usize,
    extra: &[(&str, &str)],
) {
    let mut t = NewTopic::new(name, partitions, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "4096")
        .set("local.retention.bytes", "1");
    for (k, v) in extra {
        t = t.set(k, v);
    }
    let res = rt
        .block_on(admin(bs).create_topics(&[t], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    let p = producer(bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for part in 0..partitions {
            for i in 0..n {
                let v = value_of(i);
                let k = format!("k{i}");
                p.send(
                    FutureRecord::to(name).key(&k).payload(&v).partition(part),
                    Duration::from_secs(10),
                )
                .await
                .expect("delivered");
            }
        }
    });
}

pub fn log_of(server: &Server, topic: &str, p: i32) -> std::sync::Arc<strata_storage::UnifiedLog> {
    server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new(topic, p))
        .expect("log")
}

/// Files under the remote folders of `topic` (`<root>/<topic>-<id>/...`).
pub fn remote_files(root: &Path, topic: &str) -> usize {
    fn walk(p: &Path, n: &mut usize) {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                walk(&e.path(), n);
            } else {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(&format!("{topic}-"))
        {
            walk(&e.path(), &mut n);
        }
    }
    n
}
