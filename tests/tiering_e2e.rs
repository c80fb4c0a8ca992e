//! Tiered storage end to end through the broker, with librdkafka (rdkafka crate) and the filesystem backend:
//! create a tiered topic → produce → expect segments offloaded and local copies deleted → consume from offset 0
//! (served from the remote tier) byte-identical → ListOffsets -4 / -5 / timestamp → `/metrics` →
//! `__remote_log_metadata` readable → restart → consume again → `strata remote ls/verify` on the stopped broker.
mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use common::raw;
use common::{admin, assign_from_beginning, consume_n, producer};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{ApiKey, ListOffsetsRequest, ListOffsetsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::FutureRecord;
use strata_broker::tiered::{configs_from_properties, ops::OfflineTier, TieredServer};

const TOPIC: &str = "tiered";
const MESSAGES: usize = 1500;
/// Timestamps of message i: BASE_TS + i * 1000.
const BASE_TS: i64 = 1_700_000_000_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn value_of(i: usize) -> Vec<u8> {
    let mut v = format!("tiered-{i:06}-").into_bytes();
    v.extend((0..(i % 61) + 40).map(|j| (i * 31 + j) as u8));
    v
}

fn props(dir: &Path) -> BTreeMap<String, String> {
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

async fn start(dir: &Path) -> TieredServer {
    TieredServer::start_from_properties(&props(dir))
        .await
        .expect("tiered broker starts")
}

/// ListOffsets v9 for partition 0 of `topic` at `timestamp` (a sentinel or a time): (offset, timestamp).
async fn list_offset(addr: std::net::SocketAddr, topic: &str, timestamp: i64) -> (i64, i64) {
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
async fn alter_topic(
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

fn consume_all_from_zero(bootstrap: &str, group: &str) {
    let c: BaseConsumer = common::consumer(
        bootstrap,
        group,
        &[("fetch.max.bytes", "65536"), ("message.max.bytes", "65536")],
    );
    assign_from_beginning(&c, TOPIC, 1);
    let got = consume_n(&c, MESSAGES, Duration::from_secs(20));
    for (i, (part, offset, key, value)) in got.iter().enumerate() {
        assert_eq!((*part, *offset), (0, i as i64), "message {i} position");
        assert_eq!(
            key.as_deref(),
            Some(format!("k{i}").as_bytes()),
            "key of {i}"
        );
        assert_eq!(value.as_deref(), Some(&value_of(i)[..]), "value of {i}");
    }
}

fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect /metrics");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read http response");
    out
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn offloaded_segments_are_served_remotely_before_and_after_a_restart() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let addr = server.local_addr();

    // create topic: tiered, small segments, almost nothing kept locally.
    let topic = NewTopic::new(TOPIC, 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "16384")
        .set("local.retention.bytes", "1")
        .set("retention.bytes", "-1")
        .set("retention.ms", "-1");
    let res = rt
        .block_on(admin(&bs).create_topics(&[topic], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(n)] if n == TOPIC), "{res:?}");

    // produce: one batch per message, increasing timestamps.
    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    let futures: Vec<_> = (0..MESSAGES)
        .map(|i| {
            let key = format!("k{i}");
            let value = value_of(i);
            p.send_result(
                FutureRecord::to(TOPIC)
                    .key(&key)
                    .payload(&value)
                    .partition(0)
                    .timestamp(BASE_TS + i as i64 * 1000),
            )
            .map_err(|(e, _)| e)
            .expect("enqueue")
        })
        .collect();
    rt.block_on(async {
        for f in futures {
            f.await.expect("delivery").expect("delivered");
        }
    });

    // expect offloaded and expect local start: the local log now starts well above 0.
    let log = server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new(TOPIC, 0))
        .expect("log");
    wait_for(
        "segments offloaded and local copies deleted",
        Duration::from_secs(15),
        || {
            log.highest_offset_in_remote_storage() > (MESSAGES as i64) / 2
                && log.local_log_start_offset() > (MESSAGES as i64) / 2
        },
    );
    assert_eq!(log.log_start_offset(), 0, "nothing expired remotely");

    // ListOffsets: -2 = 0, -4 = local start, -5 = highest tiered offset, timestamps inside remote data.
    let (earliest, _) = rt.block_on(list_offset(addr, TOPIC, -2));
    // Local retention may still be deleting segments: -4 lies between the local starts before and after.
    let local_before = log.local_log_start_offset();
    let (earliest_local, _) = rt.block_on(list_offset(addr, TOPIC, -4));
    let local_after = log.local_log_start_offset();
    let (latest_tiered, _) = rt.block_on(list_offset(addr, TOPIC, -5));
    assert_eq!(earliest, 0);
    assert!(
        (local_before..=local_after).contains(&earliest_local),
        "-4 = {earliest_local}, local start {local_before}..={local_after}"
    );
    assert!(earliest_local > 0, "-4 = {earliest_local}");
    assert!(
        latest_tiered >= earliest_local - 1 && latest_tiered < MESSAGES as i64,
        "-5 = {latest_tiered}, -4 = {earliest_local}"
    );
    // By timestamp: message 100 lies in a remote segment (below the local log start); the lookup answers its
    // offset and timestamp from the remote segment's time index, as for a time between two records.
    assert!(earliest_local > 101, "message 100 is remote");
    let t100 = BASE_TS + 100 * 1000;
    assert_eq!(rt.block_on(list_offset(addr, TOPIC, t100)), (100, t100));
    assert_eq!(rt.block_on(list_offset(addr, TOPIC, t100 - 1)), (100, t100));
    assert_eq!(
        rt.block_on(list_offset(addr, TOPIC, BASE_TS - 5)),
        (0, BASE_TS)
    );
    let last = BASE_TS + (MESSAGES as i64 - 1) * 1000;
    assert_eq!(
        rt.block_on(list_offset(addr, TOPIC, last)),
        (MESSAGES as i64 - 1, last),
        "a local record after the remote ones"
    );
    assert_eq!(rt.block_on(list_offset(addr, TOPIC, last + 1)), (-1, -1));
    // consume from 0: served remotely, byte-identical.
    consume_all_from_zero(&bs, "first");
    let rlm = server.tiering().expect("tiering on").rlm();
    assert!(
        rlm.metrics()
            .meter_total("RemoteFetchBytesPerSec", Some(TOPIC))
            .unwrap_or(0)
            > 0,
        "the consume was not served from the remote tier"
    );
    let metrics_addr = server
        .tiering()
        .and_then(|t| t.metrics_addr())
        .expect("/metrics bound");
    let text = http_get(metrics_addr, "/metrics");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    for name in [
        "RemoteCopyBytesPerSec",
        "RemoteFetchBytesPerSec",
        "RemoteLogSizeBytes",
    ] {
        assert!(text.contains(name), "/metrics lacks {name}");
    }
    assert!(http_get(metrics_addr, "/nope").starts_with("HTTP/1.1 404"));

    // __remote_log_metadata: readable by a client, JSON records of the copies.
    let c: BaseConsumer = common::consumer(&bs, "meta-reader", &[]);
    assign_from_beginning(&c, "__remote_log_metadata", 2);
    let records = consume_n(&c, 4, Duration::from_secs(10));
    for r in &records {
        let v: serde_json::Value =
            serde_json::from_slice(r.3.as_deref().expect("record value")).expect("JSON value");
        assert_eq!(v["version"], 1, "{v}");
        assert!(
            matches!(v["type"].as_str(), Some("segment" | "segment_update")),
            "{v}"
        );
    }
    drop(c);

    // restart → consume again from 0.
    rt.block_on(server.shutdown()).expect("clean shutdown");
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let log = server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new(TOPIC, 0))
        .expect("log after restart");
    assert!(
        log.local_log_start_offset() > 0,
        "local copies stay deleted"
    );
    assert_eq!(log.log_start_offset(), 0, "log start survives the restart");
    consume_all_from_zero(&bs, "second");
    rt.block_on(server.shutdown()).expect("clean shutdown");

    // strata remote ls / verify on the stopped broker's data.
    rt.block_on(async {
        let (b, t) = configs_from_properties(&props(dir.path())).unwrap();
        let tier = OfflineTier::open(&b, t).await.expect("open offline");
        let rows = tier.ls(TOPIC).expect("ls");
        assert!(rows.len() >= 2, "{} remote segments", rows.len());
        assert!(rows.iter().all(|r| r.state == "COPY_SEGMENT_FINISHED"));
        assert_eq!(rows[0].start_offset, 0);
        assert!(rows
            .iter()
            .all(|r| r.object_keys.len() == 3 && r.size_bytes > 0));
        let report = tier.verify(None).await.expect("verify");
        assert!(report.is_clean(), "{report}");
        assert_eq!(report.segments_checked, rows.len());
        tier.close().await.expect("close");
    });
}

#[test]
fn unreachable_remote_storage_refuses_start_with_the_probe_error() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind, note, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut p = props(dir.path());
    for (k, v) in [
        ("rsm.config.storage.backend", "s3".to_string()),
        ("rsm.config.storage.s3.bucket.name", "tier".into()),
        ("rsm.config.storage.s3.region", "us-east-1".into()),
        (
            "rsm.config.storage.s3.endpoint.url",
            format!("http://127.0.0.1:{port}"),
        ),
        (
            "rsm.config.storage.s3.path.style.access.enabled",
            "true".into(),
        ),
        ("rsm.config.storage.aws.access.key.id", "test".into()),
        ("rsm.config.storage.aws.secret.access.key", "test".into()),
        ("rsm.config.storage.s3.api.call.timeout", "1500".into()),
        (
            "rsm.config.storage.s3.api.call.attempt.timeout",
            "500".into(),
        ),
    ] {
        p.insert(k.to_string(), v);
    }
    let started = Instant::now();
    let err = rt
        .block_on(TieredServer::start_from_properties(&p))
        .expect_err("start-up must fail");
    let msg = err.to_string();
    assert!(
        msg.contains("tier") && msg.contains(&port.to_string()) && msg.contains("put"),
        "the error names the bucket, endpoint and failing call: {msg}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The log dirs were released: a broker with the filesystem backend starts on the same dir.
    let server = rt.block_on(start(dir.path()));
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

#[test]
fn strata_remote_ls_and_verify_print_segments_of_a_stopped_broker() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let topic = NewTopic::new("cli", 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "4096");
    let res = rt
        .block_on(admin(&bs).create_topics(&[topic], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..200 {
            let v = value_of(i);
            p.send(
                FutureRecord::<str, _>::to("cli").payload(&v).partition(0),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    let log = server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new("cli", 0))
        .expect("log");
    wait_for("a segment offloaded", Duration::from_secs(15), || {
        log.highest_offset_in_remote_storage() >= 0
    });
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    let mut args: Vec<String> = Vec::new();
    for (k, v) in props(dir.path()) {
        args.push("--override".into());
        args.push(format!("{k}={v}"));
    }
    let ls = std::process::Command::new(common::strata_bin())
        .args(["remote", "ls", "--topic", "cli"])
        .args(&args)
        .output()
        .expect("run strata remote ls");
    let out = String::from_utf8_lossy(&ls.stdout);
    assert!(
        ls.status.success(),
        "{out} {}",
        String::from_utf8_lossy(&ls.stderr)
    );
    assert!(out.contains("COPY_SEGMENT_FINISHED"), "{out}");
    assert!(out.contains(".rsm-manifest"), "{out}");

    let verify = std::process::Command::new(common::strata_bin())
        .args(["remote", "verify"])
        .args(&args)
        .output()
        .expect("run strata remote verify");
    let out = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{out}");
    assert!(
        out.contains("orphan objects: 0") && out.trim_end().ends_with("OK"),
        "{out}"
    );

    // An orphan object under the partition's folder is reported, with exit status 1.
    let remote = dir.path().join("remote");
    let seg_dir = std::fs::read_dir(&remote)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("cli-"))
        .expect("topic folder")
        .path()
        .join("0");
    std::fs::write(seg_dir.join("stray.log"), b"x").unwrap();
    let verify = std::process::Command::new(common::strata_bin())
        .args(["remote", "verify", "--topic", "cli"])
        .args(&args)
        .output()
        .expect("run strata remote verify");
    let out = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(1), "{out}");
    assert!(out.contains("stray.log"), "{out}");

    // An unknown topic, or a log dir the broker never formatted (a typo), is an error and creates nothing.
    let ls = std::process::Command::new(common::strata_bin())
        .args(["remote", "ls", "--topic", "no-such-topic"])
        .args(&args)
        .output()
        .expect("run strata remote ls");
    assert_ne!(ls.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&ls.stderr).contains("no-such-topic"),
        "{}",
        String::from_utf8_lossy(&ls.stderr)
    );
    let typo = dir.path().join("typo");
    let verify = std::process::Command::new(common::strata_bin())
        .args(["remote", "verify"])
        .args(&args)
        .args(["--override", &format!("log.dirs={}", typo.display())])
        .output()
        .expect("run strata remote verify");
    let err = String::from_utf8_lossy(&verify.stderr);
    assert_ne!(verify.status.code(), Some(0), "{err}");
    assert!(err.contains("meta.properties"), "{err}");
    assert!(!typo.exists(), "the inspection created {}", typo.display());
}

/// Creates a tiered topic with small segments and produces `n` messages per partition (value_of(i)).
fn tiered_topic(
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

fn log_of(
    server: &TieredServer,
    topic: &str,
    p: i32,
) -> std::sync::Arc<strata_storage::UnifiedLog> {
    server
        .broker()
        .log_manager()
        .get_log(&strata_storage::TopicPartition::new(topic, p))
        .expect("log")
}

#[test]
fn one_fetch_reads_several_remote_partitions_byte_identical() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    tiered_topic(&rt, &bs, "multi", 3, 300, &[]);
    let logs: Vec<_> = (0..3).map(|p| log_of(&server, "multi", p)).collect();
    wait_for(
        "all three partitions offloaded",
        Duration::from_secs(15),
        || logs.iter().all(|l| l.local_log_start_offset() > 150),
    );
    let c: BaseConsumer = common::consumer(&bs, "multi-reader", &[]);
    assign_from_beginning(&c, "multi", 3);
    let got = consume_n(&c, 900, Duration::from_secs(20));
    let mut next = [0i64; 3];
    for (part, offset, key, value) in got {
        let i = offset as usize;
        assert_eq!(offset, next[part as usize], "partition {part} in order");
        next[part as usize] += 1;
        assert_eq!(key.as_deref(), Some(format!("k{i}").as_bytes()));
        assert_eq!(value.as_deref(), Some(&value_of(i)[..]), "{part}@{offset}");
    }
    assert_eq!(next, [300, 300, 300]);
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

#[test]
fn retention_and_delete_records_expire_remote_segments() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let remote = dir.path().join("remote");

    // retention.bytes over local + remote: old remote segments are deleted, the log start advances.
    tiered_topic(&rt, &bs, "expiring", 1, 400, &[("retention.bytes", "8192")]);
    let log = log_of(&server, "expiring", 0);
    wait_for(
        "remote segments expired by retention.bytes",
        Duration::from_secs(15),
        || log.log_start_offset() > 0 && log.highest_offset_in_remote_storage() > 0,
    );
    let finished = || {
        strata_tiering::rlm::ops::metadata_records(server.broker().log_manager())
            .expect("metadata records")
            .iter()
            .filter(|r| r.json.contains("DELETE_SEGMENT_FINISHED"))
            .count()
    };
    wait_for(
        "DELETE_SEGMENT_FINISHED recorded",
        Duration::from_secs(15),
        || finished() > 0,
    );
    let (earliest, _) = rt.block_on(list_offset(server.local_addr(), "expiring", -2));
    assert_eq!(earliest, log.log_start_offset());

    // DeleteRecords below the local log start: the remote segments below it go too.
    tiered_topic(&rt, &bs, "trimmed", 1, 400, &[]);
    let log = log_of(&server, "trimmed", 0);
    wait_for("trimmed offloaded", Duration::from_secs(15), || {
        log.local_log_start_offset() > 300
    });
    let files_before = remote_files(&remote, "trimmed");
    let mut tpl = rdkafka::TopicPartitionList::new();
    tpl.add_partition_offset("trimmed", 0, rdkafka::Offset::Offset(200))
        .unwrap();
    let res = rt
        .block_on(admin(&bs).delete_records(&tpl, &AdminOptions::new()))
        .expect("delete_records");
    assert_eq!(res.elements()[0].error(), Ok(()), "{:?}", res.elements()[0]);
    assert_eq!(log.log_start_offset(), 200);
    wait_for(
        "remote segments below 200 deleted",
        Duration::from_secs(15),
        || remote_files(&remote, "trimmed") < files_before,
    );
    let c: BaseConsumer = common::consumer(&bs, "trimmed-reader", &[]);
    assign_from_beginning(&c, "trimmed", 1);
    let got = consume_n(&c, 200, Duration::from_secs(20));
    assert_eq!(got[0].1, 200, "consumption starts at the new log start");
    assert_eq!(got[199].1, 399);
    assert_eq!(got[0].3.as_deref(), Some(&value_of(200)[..]));
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// Files under the remote folders of `topic` (`<root>/<topic>-<id>/...`).
fn remote_files(root: &Path, topic: &str) -> usize {
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

/// AlterConfigs / IncrementalAlterConfigs / CreateTopics run Kafka's tiering rules (INVALID_CONFIG, nothing
/// changed); turning remote storage off with remote.log.delete.on.disable=true deletes the remote data; DeleteTopics
/// leaves no remote object and records DELETE_PARTITION_FINISHED.
#[test]
fn tiering_config_rules_and_topic_deletion_clean_the_remote_tier() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let remote = dir.path().join("remote");
    let a = admin(&bs);

    // CreateTopics: a compacted tiered topic is refused, and the topic does not exist afterwards.
    let bad = NewTopic::new("compacted", 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("cleanup.policy", "compact");
    let res = rt
        .block_on(a.create_topics(&[bad], &AdminOptions::new()))
        .expect("create_topics");
    assert!(
        matches!(
            res.as_slice(),
            [Err((_, rdkafka::types::RDKafkaErrorCode::InvalidConfig))]
        ),
        "{res:?}"
    );
    assert!(server.broker().topics().get("compacted").is_none());

    for (name, n) in [("dropped", 300), ("disabled", 300)] {
        tiered_topic(&rt, &bs, name, 1, n, &[]);
    }
    for name in ["dropped", "disabled"] {
        let log = log_of(&server, name, 0);
        wait_for(
            &format!("{name} offloaded"),
            Duration::from_secs(15),
            || log.local_log_start_offset() > 150,
        );
        assert!(remote_files(&remote, name) > 0);
    }

    // Turning remote storage off without remote.log.delete.on.disable=true: INVALID_CONFIG, config unchanged.
    // (Raw AlterConfigs: the rdkafka crate drops per-resource errors.)
    let addr = server.local_addr();
    let (code, msg) = rt.block_on(alter_topic(
        addr,
        "disabled",
        &[
            ("remote.storage.enable", "false"),
            ("local.retention.bytes", "1"),
            ("segment.bytes", "4096"),
        ],
    ));
    assert_eq!(code, 40, "INVALID_CONFIG expected: {msg}");
    assert!(msg.contains("remote.log.delete.on.disable"), "{msg}");
    let meta = server.broker().topics().get("disabled").expect("topic");
    assert_eq!(
        meta.configs
            .get("remote.storage.enable")
            .map(String::as_str),
        Some("true")
    );
    // A compaction switch on a tiered topic is refused the same way.
    let (code, msg) = rt.block_on(alter_topic(
        addr,
        "disabled",
        &[
            ("remote.storage.enable", "true"),
            ("cleanup.policy", "compact"),
        ],
    ));
    assert_eq!(code, 40, "INVALID_CONFIG expected: {msg}");
    assert!(remote_files(&remote, "disabled") > 0, "nothing deleted");
    // With remote.log.delete.on.disable=true it is accepted and the remote data goes.
    let (code, msg) = rt.block_on(alter_topic(
        addr,
        "disabled",
        &[
            ("remote.storage.enable", "false"),
            ("remote.log.delete.on.disable", "true"),
        ],
    ));
    assert_eq!(code, 0, "{msg}");
    wait_for(
        "remote data of the disabled topic deleted",
        Duration::from_secs(15),
        || remote_files(&remote, "disabled") == 0,
    );

    // Turning it back on (once the deletion finished) resumes copying without a restart.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (code, msg) = rt.block_on(alter_topic(
            addr,
            "disabled",
            &[
                ("remote.storage.enable", "true"),
                ("segment.bytes", "4096"),
                ("local.retention.bytes", "1"),
            ],
        ));
        if code == 0 {
            break;
        }
        assert!(msg.contains("still being deleted"), "{code}: {msg}");
        assert!(Instant::now() < deadline, "remote deletion never finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = log_of(&server, "disabled", 0);
    let end = log.log_end_offset();
    let p = producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..300 {
            let v = value_of(i);
            p.send(
                FutureRecord::<(), _>::to("disabled").payload(&v),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    wait_for(
        "copying resumed after re-enabling",
        Duration::from_secs(15),
        || remote_files(&remote, "disabled") > 0 && log.local_log_start_offset() > end + 100,
    );

    // The broker's DescribeConfigs lists the tiering properties: given ones as static, secrets never.
    let desc = rt
        .block_on(a.describe_configs(
            &[rdkafka::admin::ResourceSpecifier::Broker(1)],
            &AdminOptions::new(),
        ))
        .expect("describe_configs");
    let r = desc[0].as_ref().expect("broker configs");
    let value = |k: &str| r.get(k).and_then(|e| e.value.clone());
    assert_eq!(
        value("remote.log.storage.system.enable").as_deref(),
        Some("true")
    );
    assert_eq!(
        value("remote.log.manager.task.interval.ms").as_deref(),
        Some("100")
    );
    assert_eq!(
        r.get("remote.log.manager.task.interval.ms")
            .map(|e| &e.source),
        Some(&rdkafka::admin::ConfigSource::StaticBroker)
    );
    assert_eq!(value("remote.fetch.max.wait.ms").as_deref(), Some("500"));
    assert_eq!(
        value("rsm.config.storage.filesystem.root"),
        Some(remote.display().to_string())
    );
    assert!(r
        .get("rsm.config.storage.aws.secret.access.key")
        .is_some_and(|e| e.value.is_none() && e.is_sensitive));

    // DeleteTopics: the topic is gone at once; every remote object follows in the background.
    let res = rt
        .block_on(a.delete_topics(&["dropped"], &AdminOptions::new()))
        .expect("delete_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    assert!(server.broker().topics().get("dropped").is_none());
    wait_for(
        "no object of the deleted topic",
        Duration::from_secs(15),
        || remote_files(&remote, "dropped") == 0,
    );
    wait_for(
        "DELETE_PARTITION_FINISHED for the deleted topic",
        Duration::from_secs(15),
        || {
            strata_tiering::rlm::ops::metadata_records(server.broker().log_manager())
                .expect("metadata records")
                .iter()
                .any(|r| {
                    r.json.contains("\"dropped\"") && r.json.contains("DELETE_PARTITION_FINISHED")
                })
        },
    );
    drop(a);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// `log.remote.storage.enable=true` (strata's broker default of remote.storage.enable): a topic auto-created by a
/// producer — the kcat path of the README — is tiered and read back from the remote tier; internal topics are not.
#[test]
fn auto_created_topics_tier_with_the_broker_default() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let mut p = props(dir.path());
    for (k, v) in [
        ("log.remote.storage.enable", "true"),
        ("log.segment.bytes", "4096"),
        ("log.local.retention.bytes", "1"),
    ] {
        p.insert(k.into(), v.into());
    }
    let server = rt
        .block_on(TieredServer::start_from_properties(&p))
        .expect("starts");
    let bs = server.local_addr().to_string();
    let prod = producer(&bs, &[("linger.ms", "0")]);
    rt.block_on(async {
        for i in 0..300 {
            let v = value_of(i);
            let k = format!("k{i}");
            prod.send(
                FutureRecord::to("auto").key(&k).payload(&v),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    let log = log_of(&server, "auto", 0);
    assert!(log.config().remote_storage_enable);
    wait_for("auto offloaded", Duration::from_secs(15), || {
        log.local_log_start_offset() > 150
    });
    let c: BaseConsumer = common::consumer(&bs, "auto-reader", &[]);
    assign_from_beginning(&c, "auto", 1);
    let got = consume_n(&c, 300, Duration::from_secs(20));
    for (i, (_, offset, _, value)) in got.iter().enumerate() {
        assert_eq!(*offset, i as i64);
        assert_eq!(value.as_deref(), Some(&value_of(i)[..]), "value of {i}");
    }
    let offsets = log_of(&server, "__consumer_offsets", 0);
    assert!(
        !offsets.config().remote_storage_enable,
        "internal topic tiered"
    );
    // DescribeConfigs agrees: the broker default is reported for user topics, not for the internal one.
    let a = admin(&bs);
    let desc = rt
        .block_on(a.describe_configs(
            &[
                rdkafka::admin::ResourceSpecifier::Topic("__consumer_offsets"),
                rdkafka::admin::ResourceSpecifier::Topic("auto"),
            ],
            &AdminOptions::new(),
        ))
        .expect("describe_configs");
    let value = |i: usize| {
        desc[i]
            .as_ref()
            .expect("topic configs")
            .get("remote.storage.enable")
            .and_then(|e| e.value.clone())
    };
    assert_eq!(value(0).as_deref(), Some("false"));
    assert_eq!(value(1).as_deref(), Some("true"));
    // A rule between keys is refused naming the key (not a placeholder).
    let bad = NewTopic::new("bad-retention", 1, TopicReplication::Fixed(1))
        .set("retention.ms", "1000")
        .set("local.retention.ms", "5000");
    let res = rt
        .block_on(a.create_topics(&[bad], &AdminOptions::new()))
        .expect("create_topics");
    assert!(
        matches!(
            res.as_slice(),
            [Err((_, rdkafka::types::RDKafkaErrorCode::InvalidConfig))]
        ),
        "{res:?}"
    );
    drop(a);
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    // Without tiering the broker default is refused at start-up, naming the key.
    p.insert("remote.log.storage.system.enable".into(), "false".into());
    let err = rt
        .block_on(TieredServer::start_from_properties(&p))
        .expect_err("refused");
    assert!(
        err.to_string().contains("log.remote.storage.enable"),
        "{err}"
    );
    // The in-memory store would lose every tiered segment at a restart: refused, naming the key.
    p.remove("remote.log.storage.system.enable");
    p.insert("rsm.config.storage.backend".into(), "memory".into());
    let err = rt
        .block_on(TieredServer::start_from_properties(&p))
        .expect_err("memory backend refused");
    assert!(
        err.to_string().contains("rsm.config.storage.backend"),
        "{err}"
    );
}

/// ListOffsets by timestamp answers the exact record inside multi-record batches, compressed ones included, for
/// remote segments and local ones (as Kafka does), not the batch's first offset.
#[test]
fn timestamp_lookups_inside_compressed_remote_batches_find_the_exact_record() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let t = NewTopic::new("batched", 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "8192")
        .set("local.retention.bytes", "1")
        .set("retention.ms", "-1"); // the records' timestamps are from 2023
    let res = rt
        .block_on(admin(&bs).create_topics(&[t], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    let p = producer(
        &bs,
        &[
            ("linger.ms", "50"),
            ("batch.num.messages", "40"),
            ("compression.type", "lz4"),
        ],
    );
    const N: i64 = 1000;
    rt.block_on(async {
        let sends: Vec<_> = (0..N)
            .map(|i| {
                let v = value_of(i as usize);
                p.send_result(
                    FutureRecord::<(), _>::to("batched")
                        .payload(&v)
                        .timestamp(BASE_TS + 10 * i),
                )
                .expect("queued")
            })
            .collect();
        for s in sends {
            s.await.expect("not cancelled").expect("delivered");
        }
    });
    let log = log_of(&server, "batched", 0);
    wait_for("batched offloaded", Duration::from_secs(15), || {
        log.local_log_start_offset() > N / 2
    });
    assert_eq!(log.log_start_offset(), 0);
    let addr = server.local_addr();
    let local_start = log.local_log_start_offset();
    for i in [
        1,
        37,
        123,
        local_start / 2,
        local_start - 1,
        local_start + 3,
        N - 2,
    ] {
        let want = (i, BASE_TS + 10 * i);
        assert_eq!(
            rt.block_on(list_offset(addr, "batched", BASE_TS + 10 * i - 5)),
            want,
            "record {i} (local start {local_start})"
        );
        assert_eq!(
            rt.block_on(list_offset(addr, "batched", BASE_TS + 10 * i)),
            want
        );
    }
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// A remote segment whose object is gone answers UNKNOWN_SERVER_ERROR (clients report it, as with Kafka's
/// RemoteStorageException) instead of a retriable error that would stall a consumer silently; the other
/// segments are still served.
#[test]
fn a_missing_remote_object_is_reported_not_retried_forever() {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::{BrokerId, FetchRequest, FetchResponse};
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    tiered_topic(&rt, &bs, "holed", 1, 300, &[("retention.ms", "-1")]);
    let log = log_of(&server, "holed", 0);
    wait_for("holed offloaded", Duration::from_secs(15), || {
        log.local_log_start_offset() > 150
    });
    // Remove the first segment's .log object from the filesystem tier.
    let mut first = None;
    let mut stack = vec![dir.path().join("remote")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                stack.push(e.path());
            } else if name.starts_with("00000000000000000000-") && name.ends_with(".log") {
                first = Some(e.path());
            }
        }
    }
    std::fs::remove_file(first.expect("first segment's .log object")).unwrap();
    let fetch = |offset: i64| {
        FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(100)
            .with_max_bytes(1 << 20)
            .with_topics(vec![FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_static_str("holed")))
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(0)
                    .with_fetch_offset(offset)
                    .with_partition_max_bytes(1 << 20)])])
    };
    let (code_missing, code_next) = rt.block_on(async {
        let mut s = raw::connect(server.local_addr()).await;
        let r: FetchResponse = raw::request(&mut s, ApiKey::Fetch, 12, &fetch(0))
            .await
            .expect("fetch");
        let missing = r.responses[0].partitions[0].error_code;
        // An offset in a later remote segment is still served.
        let next_segment = log.local_log_start_offset() - 1;
        let r: FetchResponse = raw::request(&mut s, ApiKey::Fetch, 12, &fetch(next_segment))
            .await
            .expect("fetch");
        (missing, r.responses[0].partitions[0].error_code)
    });
    assert_eq!(
        code_missing, -1,
        "UNKNOWN_SERVER_ERROR for the missing object"
    );
    assert_eq!(code_next, 0);
    rt.block_on(server.shutdown()).expect("clean shutdown");
}
