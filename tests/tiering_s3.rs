//! Tiered storage to a real S3 HTTP server: s3s + s3s-fs in this process on 127.0.0.1:0 with SigV4 static keys,
//! the broker set up with the properties the README shows (`rsm.config.storage.backend=s3`, bucket, endpoint,
//! region, path style, access keys, key prefix). librdkafka (rdkafka crate) produces and consumes.
//!
//! Covered: offload → remote consume byte-identical → restart → consume again; DeleteTopics leaves no object
//! (also when S3 is down at the time: after it and a restart, sparing a new topic of the same name); an S3
//! outage (503 on every request) holds local deletion, copying resumes after it, remote reads fail without a
//! wrong record and succeed after it, nothing is lost, no orphan objects; a copy failing after its `.log` was
//! stored (cleanup failing too) loses no record and leaves nothing behind once S3 recovers, across a restart;
//! retention.ms expires old segments from the bucket (deletes refused, restart, then done), -2 and time lookups
//! start at the new log start, `offsets_for_times` finds records inside remote segments; a segment larger than a
//! part goes up as a multipart upload; encrypted + compressed segments hold no plaintext in the bucket.
use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::raw;
use common::{admin, assign_from_beginning, consume_n, producer, wait_until};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{ApiKey, ListOffsetsRequest, ListOffsetsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::FutureRecord;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use strata_broker::tiered::{configs_from_properties, ops::OfflineTier};
use strata_broker::Server;
use strata_metadata::{
    RemoteLogMetadataManager, RemoteLogSegmentState, TopicIdPartition, TopicPartition,
};

/// Access key id and secret the S3 server accepts.
const KEY: &str = "testing";
const BUCKET: &str = "strata-tier";
/// `rsm.config.key.prefix`.
const PREFIX: &str = "strata/";
/// CreateTime of record i: BASE_TS + i * 1000.
const BASE_TS: i64 = 1_700_000_000_000;
/// Generous bounds: CI runs these on 2 shared cores.
const WAIT: Duration = Duration::from_secs(60);

/// `S3State::fault`: serve normally.
const HEALTHY: u8 = 0;
/// `S3State::fault`: 503 to every request.
const DOWN: u8 = 1;
/// `S3State::fault`: 503 to PUTs of `.indexes` objects and to deletes (a copy fails after its `.log` is stored
/// and its cleanup fails too).
const NO_INDEXES_NO_DELETES: u8 = 2;
/// `S3State::fault`: 503 to deletes only.
const NO_DELETES: u8 = 3;

/// An S3 server (s3s-fs under `root`, bucket = `root/BUCKET`) that answers 503 as `st.fault` says.
struct S3 {
    endpoint: String,
    root: PathBuf,
    st: Arc<S3State>,
}

#[derive(Default)]
struct S3State {
    /// HEALTHY, DOWN or NO_INDEXES_NO_DELETES.
    fault: AtomicU8,
    /// Requests answered 503.
    refused: AtomicU64,
    /// CreateMultipartUpload requests (`POST ?uploads`).
    multipart: AtomicU64,
}

impl S3 {
    async fn start(root: &Path) -> S3 {
        std::fs::create_dir_all(root.join(BUCKET)).expect("bucket dir");
        let fs = s3s_fs::FileSystem::new(root).expect("s3s-fs");
        let mut b = S3ServiceBuilder::new(fs);
        b.set_auth(SimpleAuth::from_single(KEY, KEY));
        let service = b.build();
        let st = Arc::new(S3State::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = st.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                // Without it small response writes wait for delayed ACKs (tens of ms per request).
                let _ = sock.set_nodelay(true);
                let (s3, st) = (service.clone(), state.clone());
                let svc = hyper::service::service_fn(move |req: hyper::Request<_>| {
                    let (s3, st) = (s3.clone(), st.clone());
                    let (m, uri) = (req.method(), req.uri());
                    let query = uri.query().unwrap_or("");
                    if m == hyper::Method::POST
                        && query.split('&').any(|q| q == "uploads" || q == "uploads=")
                    {
                        st.multipart.fetch_add(1, Ordering::SeqCst);
                    }
                    let delete = m == hyper::Method::DELETE
                        || (m == hyper::Method::POST && query.contains("delete"));
                    let refuse = match st.fault.load(Ordering::SeqCst) {
                        DOWN => true,
                        NO_INDEXES_NO_DELETES => {
                            delete || (m == hyper::Method::PUT && uri.path().ends_with(".indexes"))
                        }
                        NO_DELETES => delete,
                        _ => false,
                    };
                    async move {
                        if refuse {
                            st.refused.fetch_add(1, Ordering::SeqCst);
                            let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>\
                                        ServiceUnavailable</Code><Message>test outage</Message></Error>";
                            let mut resp = hyper::Response::new(s3s::Body::from(body.to_string()));
                            *resp.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
                            return Ok::<_, s3s::HttpError>(resp);
                        }
                        hyper::service::Service::call(&s3, req).await
                    }
                });
                tokio::spawn(async move {
                    let _ = ConnBuilder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(sock), svc)
                        .await;
                });
            }
        });
        S3 {
            endpoint: format!("http://{addr}"),
            root: root.to_path_buf(),
            st,
        }
    }

    /// Keys of the objects of `topic` (s3s-fs keeps one file per key under the bucket's directory).
    fn objects(&self, topic: &str) -> Vec<String> {
        let bucket = self.root.join(BUCKET);
        let mut out = Vec::new();
        let mut stack = vec![bucket.join(PREFIX)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(rel) = p.strip_prefix(&bucket) {
                    let key = rel.to_string_lossy().into_owned();
                    // `{PREFIX}{topic}-{topic id: 22 characters}/...`: not a topic named `{topic}-...`.
                    let id = key
                        .strip_prefix(PREFIX)
                        .and_then(|k| k.strip_prefix(topic))
                        .and_then(|k| k.strip_prefix('-'))
                        .and_then(|k| k.split('/').next());
                    if id.is_some_and(|id| id.len() == 22) {
                        out.push(key);
                    }
                }
            }
        }
        out.sort();
        out
    }
}

/// Broker properties as a user writes them in `server.properties`: data in `dir/data`, tiering to `s3`; short
/// intervals so that tests run fast.
fn props(dir: &Path, s3: &S3) -> BTreeMap<String, String> {
    let text = format!(
        "listeners=PLAINTEXT://127.0.0.1:0
        log.dirs={data}
        log.retention.check.interval.ms=100
        remote.log.manager.task.interval.ms=100
        remote.log.manager.task.retry.backoff.ms=50
        remote.log.manager.task.retry.backoff.max.ms=500
        rlmm.config.remote.log.metadata.topic.num.partitions=1
        rsm.config.storage.backend=s3
        rsm.config.storage.s3.bucket.name={BUCKET}
        rsm.config.storage.s3.region=us-east-1
        rsm.config.storage.s3.endpoint.url={endpoint}
        rsm.config.storage.s3.path.style.access.enabled=true
        rsm.config.storage.aws.access.key.id={KEY}
        rsm.config.storage.aws.secret.access.key={KEY}
        rsm.config.storage.s3.api.call.timeout=2000
        rsm.config.storage.s3.api.call.attempt.timeout=1000
        rsm.config.key.prefix={PREFIX}
        rsm.config.chunk.size=4096",
        data = dir.join("data").display(),
        endpoint = s3.endpoint,
    );
    text.lines()
        .filter_map(|l| l.trim().split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// An S3 server and a broker tiering to it, with `extra` properties: (runtime, temp dir, S3, properties,
/// broker, bootstrap).
fn setup(extra: &[(&str, &str)]) -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().unwrap();
    let s3 = rt.block_on(S3::start(&dir.path().join("s3")));
    let mut props = props(dir.path(), &s3);
    props.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("broker starts against S3");
    let bs = server.local_addr().to_string();
    (rt, dir, s3, props, server, bs)
}

type Setup = (
    tokio::runtime::Runtime,
    tempfile::TempDir,
    S3,
    BTreeMap<String, String>,
    Server,
    String,
);

/// Record i of `topic`: distinct bytes; 16 KiB for topics named `large*`.
fn value_of(topic: &str, i: usize) -> Vec<u8> {
    let mut v = format!("s3-{i:06}-").into_bytes();
    v.extend((0..(i % 53) + 30).map(|j| (i * 7 + j) as u8));
    if topic.starts_with("large") {
        v.extend((0..16_384 - v.len()).map(|j| (i + j * 13) as u8));
    }
    v
}

/// Creates `topic` (1 partition) tiered, with 4 KiB segments, almost nothing kept locally, no remote retention,
/// unless `configs` say otherwise.
fn create_tiered(rt: &tokio::runtime::Runtime, bs: &str, topic: &str, configs: &[(&str, &str)]) {
    let mut all: BTreeMap<&str, &str> = [
        ("remote.storage.enable", "true"),
        ("segment.bytes", "4096"),
        ("local.retention.bytes", "1"),
        ("local.retention.ms", "1000"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .into();
    all.extend(configs.iter().copied());
    let t = all.into_iter().fold(
        NewTopic::new(topic, 1, TopicReplication::Fixed(1)),
        |t, (k, v)| t.set(k, v),
    );
    let res = rt
        .block_on(admin(bs).create_topics(&[t], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(n)] if n == topic), "{res:?}");
}

/// Produces records `from..to` (key `k{i}`, value `value_of(i)`, CreateTime `ts0 + i * 1000`), acks=all.
fn produce(rt: &tokio::runtime::Runtime, bs: &str, topic: &str, from: usize, to: usize, ts0: i64) {
    let p = producer(bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in from..to {
            let (k, v) = (format!("k{i}"), value_of(topic, i));
            let r = FutureRecord::to(topic)
                .key(&k)
                .payload(&v)
                .partition(0)
                .timestamp(ts0 + i as i64 * 1000);
            let d = p
                .send(r, Duration::from_secs(20))
                .await
                .unwrap_or_else(|(e, _)| panic!("record {i} not delivered: {e}"));
            assert_eq!(d.offset, i as i64, "offset of record {i}");
        }
    });
}

/// Consumes `n` records of partition 0 from offset 0 and checks each is record i, byte for byte, in order.
fn consume_from_zero(bs: &str, topic: &str, n: usize) {
    let c: BaseConsumer = common::consumer(
        bs,
        &format!("reader-{}", uuid::Uuid::new_v4()),
        &[("fetch.max.bytes", "65536"), ("message.max.bytes", "65536")],
    );
    assign_from_beginning(&c, topic, 1);
    let got = consume_n(&c, n, WAIT);
    assert_eq!(got[0].1, 0, "first offset");
    check_records(topic, &got);
}

/// (partition, offset, key, value), as `consume_n` returns them.
type Record = (i32, i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// Checks that `got` are consecutive records of `topic` (partition 0), byte for byte, in order.
fn check_records(topic: &str, got: &[Record]) {
    let first = got.first().map_or(0, |r| r.1 as usize);
    for (j, (part, offset, key, value)) in got.iter().enumerate() {
        let i = first + j;
        assert_eq!((*part, *offset), (0, i as i64), "position of record {i}");
        assert_eq!(key.as_deref(), Some(format!("k{i}").as_bytes()), "key {i}");
        assert_eq!(
            value.as_deref(),
            Some(&value_of(topic, i)[..]),
            "value of {i}"
        );
    }
}

/// ListOffsets v9 for partition 0 of `topic` at `timestamp` (a sentinel or a time): the offset.
fn list_offset(rt: &tokio::runtime::Runtime, server: &Server, topic: &str, ts: i64) -> i64 {
    rt.block_on(async {
        let mut s = raw::connect(server.local_addr()).await;
        let req = ListOffsetsRequest::default()
            .with_replica_id((-1).into())
            .with_topics(vec![ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(vec![ListOffsetsPartition::default()
                    .with_partition_index(0)
                    .with_timestamp(ts)])]);
        let resp: ListOffsetsResponse = raw::request(&mut s, ApiKey::ListOffsets, 9, &req)
            .await
            .expect("ListOffsets response");
        let p = &resp.topics[0].partitions[0];
        assert_eq!(p.error_code, 0, "ListOffsets {ts} error");
        p.offset
    })
}

fn log_of(server: &Server, topic: &str) -> Arc<strata_storage::UnifiedLog> {
    server
        .broker()
        .log_manager()
        .get_log(&TopicPartition::new(topic, 0))
        .expect("log")
}

/// Waits until at least half of `n` records are in S3 and gone from the local log, every rolled segment is
/// copied and every remote segment the RLMM knows is `COPY_SEGMENT_FINISHED` (no copy or cleanup under way);
/// checks the topic's objects: each `.rsm-manifest` (written last) has its `.log` and `.indexes`.
fn wait_offloaded(s3: &S3, server: &Server, topic: &str, n: usize) {
    let log = log_of(server, topic);
    let half = n as i64 / 2;
    let tip = TopicIdPartition::new(log.topic_id(), TopicPartition::new(topic, 0));
    let rlmm = server.tiering().expect("tiering on").rlmm();
    wait_until("segments offloaded to S3, copying caught up", WAIT, || {
        let rolled_end = log
            .rolled_segments()
            .last()
            .map_or(-1, |s| s.next_offset - 1);
        let segments = rlmm.list_remote_log_segments(&tip).expect("segments");
        log.highest_offset_in_remote_storage() > half
            && log.local_log_start_offset() > half
            && log.highest_offset_in_remote_storage() >= rolled_end
            && segments
                .iter()
                .all(|s| s.state == RemoteLogSegmentState::CopySegmentFinished)
    });
    let objects = s3.objects(topic);
    let manifests: Vec<&str> = objects
        .iter()
        .filter_map(|k| k.strip_suffix(".rsm-manifest"))
        .collect();
    let complete = |m: &&str| {
        ["log", "indexes"]
            .iter()
            .all(|x| objects.contains(&format!("{m}.{x}")))
    };
    assert!(
        manifests.len() >= 2 && manifests.iter().all(complete),
        "{objects:?}"
    );
}

/// Opens the stopped broker's data and the bucket like `strata remote ls/verify`: `topic`'s remote segments are
/// all finished, and verify of every tiered topic reports nothing missing and no orphan; `gone` has none.
fn verify_clean(
    rt: &tokio::runtime::Runtime,
    props: &BTreeMap<String, String>,
    topic: &str,
    gone: &[&str],
) {
    rt.block_on(async {
        let (b, t) = configs_from_properties(props).expect("configs");
        let tier = OfflineTier::open(&b, t).await.expect("open offline");
        let rows = tier.ls(topic).expect("remote ls");
        assert!(!rows.is_empty(), "no remote segment of {topic}");
        assert!(
            rows.iter().all(|r| r.state == "COPY_SEGMENT_FINISHED"),
            "{rows:?}"
        );
        let report = tier.verify(None).await.expect("verify");
        assert!(report.is_clean(), "{report}");
        assert!(report.segments_checked >= rows.len(), "{report}");
        for t in gone {
            // Neither a local log nor remote metadata is left: `remote ls` answers "no such topic".
            assert!(tier.partitions(Some(t)).is_empty(), "partitions of {t}");
            assert!(tier.ls(t).is_err(), "remote ls of the deleted {t}");
        }
        tier.close().await.expect("close");
    });
}

#[test]
fn offloads_to_s3_and_serves_remote_reads_before_and_after_a_restart() {
    const N: usize = 400;
    let (rt, _dir, s3, props, server, bs) = setup(&[]);
    create_tiered(&rt, &bs, "orders", &[]);
    produce(&rt, &bs, "orders", 0, N, BASE_TS);
    wait_offloaded(&s3, &server, "orders", N);
    let lo = |ts| list_offset(&rt, &server, "orders", ts);
    let (earliest, local_start, tiered) = (lo(-2), lo(-4), lo(-5));
    assert!(
        earliest == 0 && local_start > 0,
        "-2 {earliest} -4 {local_start}"
    );
    assert!(
        tiered >= local_start - 1,
        "-5 = {tiered}, -4 = {local_start}"
    );

    consume_from_zero(&bs, "orders", N);
    let rlm = server.tiering().expect("tiering on").rlm();
    assert!(
        rlm.metrics()
            .meter_total("RemoteFetchBytesPerSec", Some("orders"))
            .unwrap_or(0)
            > 0,
        "the consume was not served from S3"
    );

    // Restart on the same data dir and the same S3 server: the local copies stay deleted, reads still work.
    rt.block_on(server.shutdown()).expect("clean shutdown");
    let server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("broker restarts");
    let bs = server.local_addr().to_string();
    let lo = |ts| list_offset(&rt, &server, "orders", ts);
    assert!(
        lo(-2) == 0 && lo(-4) > 0,
        "-2 {} -4 {} after restart",
        lo(-2),
        lo(-4)
    );
    consume_from_zero(&bs, "orders", N);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "orders", &[]);
}

#[test]
fn s3_outage_holds_local_deletion_and_copying_resumes_without_loss_or_orphans() {
    const N: usize = 300;
    // Failing calls give up after ~1.5 s of retries (object_store's backoff) instead of ~3 s.
    let (rt, _dir, s3, props, server, bs) =
        setup(&[("rsm.config.storage.s3.api.call.timeout", "1000")]);
    create_tiered(&rt, &bs, "payments", &[]);

    // S3 answers 503 to everything from now on; producing (acks=all) keeps working.
    s3.st.fault.store(DOWN, Ordering::SeqCst);
    produce(&rt, &bs, "payments", 0, N, BASE_TS);
    let log = log_of(&server, "payments");
    assert!(log.rolled_segments().len() >= 3, "segments to copy");
    let rlm = server.tiering().expect("tiering on").rlm();
    let copy_errors = || {
        rlm.metrics()
            .meter_total("RemoteCopyErrorsPerSec", Some("payments"))
            .unwrap_or(0)
    };
    let held = || {
        rlm.render_metrics()
            .lines()
            .find_map(|l| l.strip_prefix("strata_remote_log_local_bytes_held "))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Local retention (every 100 ms, local.retention.bytes=1) ran many times during these failed copies.
    wait_until(
        "failed copies and held bytes during the outage",
        WAIT,
        || copy_errors() >= 1 && held() > 0,
    );
    assert!(s3.st.refused.load(Ordering::SeqCst) > 0, "S3 saw requests");
    assert_eq!(list_offset(&rt, &server, "payments", -4), 0, "local start");
    assert_eq!(log.local_log_start_offset(), 0, "local segments held");
    assert_eq!(log.highest_offset_in_remote_storage(), -1, "nothing copied");
    let objects = s3.objects("payments");
    assert!(objects.is_empty(), "{objects:?}");

    // Heal: copying resumes, local deletion follows, nothing is lost.
    s3.st.fault.store(HEALTHY, Ordering::SeqCst);
    wait_offloaded(&s3, &server, "payments", N);
    let tiered = list_offset(&rt, &server, "payments", -5);
    assert!(tiered > N as i64 / 2, "-5 = {tiered}");
    assert!(list_offset(&rt, &server, "payments", -4) > N as i64 / 2);

    // Reading remote data while S3 is down again: the reads fail (no wrong record reaches the client); once S3
    // is back the same consumer gets every record.
    s3.st.fault.store(DOWN, Ordering::SeqCst);
    let refused = s3.st.refused.load(Ordering::SeqCst);
    let c: BaseConsumer = common::consumer(&bs, "during-outage", &[]);
    assign_from_beginning(&c, "payments", 1);
    let mut got = Vec::new();
    // Takes what arrives within 100 ms and everything ready after it; errors are expected while S3 is down.
    let poll = |got: &mut Vec<_>| {
        use rdkafka::Message;
        let mut wait = Duration::from_millis(100);
        while let Some(r) = c.poll(wait) {
            if let Ok(m) = r {
                let (k, v) = (m.key().map(<[u8]>::to_vec), m.payload().map(<[u8]>::to_vec));
                got.push((m.partition(), m.offset(), k, v));
            }
            wait = Duration::ZERO;
        }
    };
    wait_until("remote reads refused by S3", WAIT, || {
        poll(&mut got);
        s3.st.refused.load(Ordering::SeqCst) > refused
    });
    check_records("payments", &got);
    s3.st.fault.store(HEALTHY, Ordering::SeqCst);
    wait_until("all records after S3 is back", WAIT, || {
        poll(&mut got);
        got.len() >= N
    });
    assert_eq!((got.len(), got[0].1), (N, 0), "records, first offset");
    check_records("payments", &got);
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "payments", &[]);
}

#[test]
fn deleting_a_topic_leaves_no_object_in_s3() {
    const N: usize = 300;
    let (rt, _dir, s3, props, server, bs) = setup(&[]);
    // `audit-2` shares the key prefix `strata/audit-`: it must keep its objects.
    for topic in ["audit", "audit-2"] {
        create_tiered(&rt, &bs, topic, &[]);
        produce(&rt, &bs, topic, 0, N, BASE_TS);
    }
    wait_offloaded(&s3, &server, "audit", N);
    wait_offloaded(&s3, &server, "audit-2", N);
    let kept = s3.objects("audit-2");

    let res = rt
        .block_on(admin(&bs).delete_topics(&["audit"], &AdminOptions::new()))
        .expect("delete_topics");
    assert!(matches!(res.as_slice(), [Ok(n)] if n == "audit"), "{res:?}");
    wait_until("no object of the deleted topic in S3", WAIT, || {
        s3.objects("audit").is_empty()
    });
    assert!(
        server
            .broker()
            .log_manager()
            .get_log(&TopicPartition::new("audit", 0))
            .is_none(),
        "the local log is gone"
    );
    let now = s3.objects("audit-2");
    assert!(
        kept.iter().all(|k| now.contains(k)),
        "objects of the other topic went: {kept:?} then {now:?}"
    );
    consume_from_zero(&bs, "audit-2", N);

    // After a restart nothing comes back, and verify finds no orphan object anywhere.
    rt.block_on(server.shutdown()).expect("clean shutdown");
    let server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("broker restarts");
    assert!(s3.objects("audit").is_empty(), "{:?}", s3.objects("audit"));
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "audit-2", &["audit"]);
}

#[test]
fn a_copy_that_failed_midway_loses_nothing_and_leaves_no_object_after_recovery_and_a_restart() {
    const N: usize = 200;
    // Failing calls give up after ~1.5 s of retries (object_store's backoff) instead of ~3 s.
    let (rt, _dir, s3, props, server, bs) =
        setup(&[("rsm.config.storage.s3.api.call.timeout", "1000")]);
    create_tiered(&rt, &bs, "ledger", &[]);

    // Copies store their `.log`, fail on `.indexes`, and cannot remove the `.log` either.
    s3.st.fault.store(NO_INDEXES_NO_DELETES, Ordering::SeqCst);
    produce(&rt, &bs, "ledger", 0, N, BASE_TS);
    let log = log_of(&server, "ledger");
    let stray = |objects: &[String]| -> Vec<String> {
        objects
            .iter()
            .filter(|k| {
                let base = k.rsplit_once('.').map_or(k.as_str(), |(b, _)| b);
                !objects.contains(&format!("{base}.rsm-manifest"))
            })
            .cloned()
            .collect()
    };
    let rlm = server.tiering().expect("tiering on").rlm();
    wait_until("a failed copy left its .log behind", WAIT, || {
        let failed = rlm
            .metrics()
            .meter_total("RemoteCopyErrorsPerSec", Some("ledger"))
            .unwrap_or(0);
        failed >= 1 && !stray(&s3.objects("ledger")).is_empty()
    });
    assert_eq!(log.highest_offset_in_remote_storage(), -1, "nothing copied");
    assert_eq!(log.local_log_start_offset(), 0, "local segments held");
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    // S3 back, broker restarted: no record is lost (the start must not take the failed attempts, left in
    // DELETE_SEGMENT_STARTED, for expired segments), copying catches up, the attempts' objects are removed.
    s3.st.fault.store(HEALTHY, Ordering::SeqCst);
    let server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("broker restarts");
    let bs = server.local_addr().to_string();
    wait_offloaded(&s3, &server, "ledger", N);
    assert_eq!(log_of(&server, "ledger").log_start_offset(), 0, "log start");
    wait_until("no object outside a finished segment", WAIT, || {
        stray(&s3.objects("ledger")).is_empty()
    });
    consume_from_zero(&bs, "ledger", N);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "ledger", &[]);
}

#[test]
fn a_segment_larger_than_a_part_is_uploaded_in_parts_and_read_back() {
    // 420 records of 16 KiB: one rolled 6 MiB segment, uploaded as parts of 5 MiB + ~1 MiB. (1 MiB chunks: with
    // 4 KiB ones every fetch makes 16 ranged GETs, each of which s3s-fs answers after hashing the whole object.)
    const N: usize = 420;
    let (rt, _dir, s3, props, server, bs) = setup(&[
        (
            "rsm.config.storage.s3.multipart.upload.part.size",
            "5242880",
        ),
        ("rsm.config.chunk.size", "1048576"),
    ]);
    create_tiered(&rt, &bs, "large", &[("segment.bytes", "6291456")]);
    produce(&rt, &bs, "large", 0, N, BASE_TS);
    let log = log_of(&server, "large");
    wait_until("the 6 MiB segment offloaded", WAIT, || {
        log.highest_offset_in_remote_storage() > 0 && log.local_log_start_offset() > 0
    });
    assert!(
        s3.st.multipart.load(Ordering::SeqCst) >= 1,
        "no multipart upload"
    );
    let objects = s3.objects("large");
    let log_object = objects
        .iter()
        .find(|k| k.ends_with(".log"))
        .expect("a .log object");
    let size = std::fs::metadata(s3.root.join(BUCKET).join(log_object))
        .expect("object file")
        .len();
    assert!(size > 5_242_880, "{log_object}: {size} bytes");
    // s3s-fs keeps parts and upload state in `.upload*` files until the upload completes or is aborted.
    let pending: Vec<_> = std::fs::read_dir(&s3.root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".upload"))
        .collect();
    assert!(pending.is_empty(), "unfinished uploads: {pending:?}");
    consume_from_zero(&bs, "large", N);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "large", &[]);
}

#[test]
fn a_topic_deleted_during_an_outage_loses_its_objects_after_it_and_its_successor_keeps_its_own() {
    const N: usize = 200;
    let (rt, _dir, s3, props, server, bs) =
        setup(&[("rsm.config.storage.s3.api.call.timeout", "1000")]);
    create_tiered(&rt, &bs, "events", &[]);
    produce(&rt, &bs, "events", 0, N, BASE_TS);
    wait_offloaded(&s3, &server, "events", N);
    let old = s3.objects("events");
    // `strata/events-<old topic id>/`: a copy may still be running, so later objects are matched by folder.
    let old_dir = format!(
        "{}/",
        old[0].splitn(3, '/').take(2).collect::<Vec<_>>().join("/")
    );
    let of_old = |keys: &[String]| keys.iter().filter(|k| k.starts_with(&old_dir)).count();

    // S3 down: DeleteTopics still succeeds, a topic of the same name is created and written, the broker stops.
    s3.st.fault.store(DOWN, Ordering::SeqCst);
    let res = rt
        .block_on(admin(&bs).delete_topics(&["events"], &AdminOptions::new()))
        .expect("delete_topics");
    assert!(
        matches!(res.as_slice(), [Ok(n)] if n == "events"),
        "{res:?}"
    );
    create_tiered(&rt, &bs, "events", &[]);
    produce(&rt, &bs, "events", 0, N, BASE_TS);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    let now = s3.objects("events");
    assert!(
        old.iter().all(|k| now.contains(k)),
        "nothing could be deleted yet: {now:?}"
    );

    // S3 back, broker restarted: the old topic's objects go, the new topic is offloaded and keeps its objects.
    s3.st.fault.store(HEALTHY, Ordering::SeqCst);
    let server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("broker restarts");
    let bs = server.local_addr().to_string();
    wait_until("the deleted topic's objects removed", WAIT, || {
        of_old(&s3.objects("events")) == 0
    });
    wait_offloaded(&s3, &server, "events", N);
    assert_eq!(of_old(&s3.objects("events")), 0, "{old_dir}");
    consume_from_zero(&bs, "events", N);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "events", &[]);
}

#[test]
fn encrypted_compressed_segments_hold_no_plaintext_in_s3_and_read_back_identical() {
    const N: usize = 300;
    let keys = tempfile::tempdir().unwrap();
    let key_file = keys.path().join("kek.hex");
    std::fs::write(&key_file, "4b".repeat(32)).unwrap();
    let key_file = key_file.display().to_string();
    let (rt, _dir, s3, props, server, bs) = setup(&[
        ("rsm.config.encryption.enabled", "true"),
        ("rsm.config.encryption.key.file", &key_file),
        ("rsm.config.compression.enabled", "true"),
    ]);
    create_tiered(&rt, &bs, "secrets", &[]);
    produce(&rt, &bs, "secrets", 0, N, BASE_TS);
    wait_offloaded(&s3, &server, "secrets", N);
    let bucket = s3.root.join(BUCKET);
    for key in s3.objects("secrets").iter().filter(|k| k.ends_with(".log")) {
        let bytes = std::fs::read(bucket.join(key)).expect("object file");
        let plain = bytes.windows(4).position(|w| w == b"s3-0");
        assert_eq!(plain, None, "{key} holds record bytes in the clear");
    }
    consume_from_zero(&bs, "secrets", N);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "secrets", &[]);
}

#[test]
fn retention_ms_expires_old_segments_across_a_restart_and_offsets_for_times_finds_remote_records() {
    const N: usize = 400;
    const OLD: usize = 150;
    let (rt, _dir, s3, props, server, bs) =
        setup(&[("rsm.config.storage.s3.api.call.timeout", "1000")]);
    create_tiered(&rt, &bs, "metrics", &[("retention.ms", "86400000")]);
    // S3 refuses deletes while the old segments expire: their deletion is left half done over a restart.
    s3.st.fault.store(NO_DELETES, Ordering::SeqCst);
    // Records 0..OLD are from 2023, the rest from the last minutes: the old segments outlive retention.ms.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let recent = now - N as i64 * 1000;
    produce(&rt, &bs, "metrics", 0, OLD, BASE_TS);
    produce(&rt, &bs, "metrics", OLD, N, recent);
    let ts = |i: i64| if i < OLD as i64 { BASE_TS } else { recent } + i * 1000;
    let log = log_of(&server, "metrics");
    let tip = TopicIdPartition::new(log.topic_id(), TopicPartition::new("metrics", 0));
    let rlmm = server.tiering().expect("tiering on").rlmm();
    // (Deletes failing, segments below the log start may stay COPY_SEGMENT_FINISHED; the log start is what counts.)
    wait_until("the log start past every old-only segment", WAIT, || {
        let segs = rlmm.list_remote_log_segments(&tip).expect("segments");
        let first_recent = segs
            .iter()
            .find(|s| {
                s.state == RemoteLogSegmentState::CopySegmentFinished
                    && s.max_timestamp_ms >= recent
            })
            .map(|s| s.start_offset);
        log.local_log_start_offset() > OLD as i64 + 50
            && first_recent == Some(log.log_start_offset())
    });
    let start = log.log_start_offset();
    assert!(s3.st.refused.load(Ordering::SeqCst) > 0, "deletes refused");
    drop(log);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    s3.st.fault.store(HEALTHY, Ordering::SeqCst);
    let server = rt
        .block_on(Server::start_from_properties(&props))
        .expect("broker restarts");
    let bs = server.local_addr().to_string();
    let log = log_of(&server, "metrics");
    assert_eq!(log.log_start_offset(), start, "log start after the restart");

    // Objects of segments below the log start: `{start offset:020}-{id}.*`.
    let below = |start: i64| {
        let objects = s3.objects("metrics");
        let offset = |k: &String| k.rsplit('/').next()?.get(..20)?.parse::<i64>().ok();
        objects
            .iter()
            .filter(|k| offset(k).is_none_or(|o| o < start))
            .count()
    };
    wait_until("old segments deleted from S3", WAIT, || below(start) == 0);
    wait_offloaded(&s3, &server, "metrics", N);
    let local_start = log.local_log_start_offset();
    assert_eq!(log.log_start_offset(), start, "log start");
    assert!(
        start <= OLD as i64,
        "log start {start} beyond the first recent record"
    );
    assert_eq!(list_offset(&rt, &server, "metrics", -2), start);

    // offsets_for_times: records in remote segments (old and recent times), local ones, none after the last;
    // a time before everything finds the new log start.
    let c: BaseConsumer = common::consumer(&bs, "times", &[]);
    let offset_for = |ts: i64| {
        let mut tpl = rdkafka::TopicPartitionList::new();
        tpl.add_partition_offset("metrics", 0, rdkafka::Offset::Offset(ts))
            .expect("add partition");
        let got = c.offsets_for_times(tpl, WAIT).expect("offsets_for_times");
        let e = got.find_partition("metrics", 0).expect("partition 0");
        assert_eq!(e.error(), Ok(()), "offsets_for_times({ts})");
        e.offset()
    };
    let last = N as i64 - 1;
    for i in [
        start,
        start + 1,
        OLD as i64,
        OLD as i64 + 1,
        local_start - 1,
        last,
    ] {
        assert_eq!(offset_for(ts(i)), rdkafka::Offset::Offset(i), "at ts({i})");
        let before = offset_for(ts(i) - 400);
        assert_eq!(before, rdkafka::Offset::Offset(i), "just before ts({i})");
    }
    assert_eq!(offset_for(BASE_TS - 60_000), rdkafka::Offset::Offset(start));
    assert_eq!(offset_for(ts(last) + 1), rdkafka::Offset::End);

    // Consuming from the beginning starts at the new log start.
    assign_from_beginning(&c, "metrics", 1);
    let got = consume_n(&c, N - start as usize, WAIT);
    assert_eq!(got[0].1, start, "first offset");
    check_records("metrics", &got);
    drop(c);
    rt.block_on(server.shutdown()).expect("clean shutdown");
    verify_clean(&rt, &props, "metrics", &[]);
}
