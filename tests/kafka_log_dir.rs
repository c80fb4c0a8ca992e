//! strata opens and serves a log dir Apache Kafka 4.4 wrote (issue 33, item 4; `broker/src/topics/adopt.rs`):
//! Kafka (bench/kafka/kafka.sh, KRaft on loopback) gets a plain, a compacted and a transactional topic, an
//! idempotent and a transactional producer (one transaction aborted), and a consumer group's committed offsets;
//! Kafka stops (SIGTERM); strata starts on Kafka's log dir and every record is read back, with the same offsets,
//! the group's offsets, the producers' state (DescribeProducers as Kafka answered it) and the transactional id
//! (its next epoch) carried over, and new producer ids above Kafka's.
//!
//! Needs `java` 17+ and `mvn` as tests/differential_kafka.rs does (Kafka's jars from Maven Central, cached);
//! `STRATA_DIFFERENTIAL=off` skips it, saying so.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::raw::{connect, request};
use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::producer::{FutureRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

const PLAIN: &str = "plain";
const COMPACTED: &str = "compacted";
const TXN: &str = "txn";
const TXN_ID: &str = "adopt-txn";
const GROUP: &str = "adopt-group";
/// The offsets the group commits on plain's partitions.
const COMMITTED: [(i32, i64); 3] = [(0, 7), (1, 11), (2, 13)];

/// The group's committed offsets on plain's partitions.
fn committed(c: &rdkafka::consumer::BaseConsumer) -> Vec<(i32, i64)> {
    let mut tpl = TopicPartitionList::new();
    for p in 0..3 {
        tpl.add_partition(PLAIN, p);
    }
    let committed = c
        .committed_offsets(tpl, Duration::from_secs(30))
        .expect("committed");
    committed
        .elements()
        .iter()
        .map(|e| (e.partition(), e.offset().to_raw().unwrap_or(-1)))
        .collect()
}

fn kafka_sh(root: &Path) -> PathBuf {
    root.join("bench/kafka/kafka.sh")
}

/// Starts Kafka in `dir` on a free port; its address.
fn start_kafka(root: &Path, dir: &Path) -> String {
    let st = Command::new(kafka_sh(root))
        .arg("install")
        .status()
        .expect("run kafka.sh install");
    assert!(
        st.success(),
        "bench/kafka/kafka.sh install failed (STRATA_DIFFERENTIAL=off skips)"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let out = Command::new(kafka_sh(root))
        .arg("start")
        .arg(dir)
        .arg(port.to_string())
        .output()
        .expect("run kafka.sh start");
    assert!(
        out.status.success(),
        "kafka.sh start failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    format!("127.0.0.1:{port}")
}

/// Stops Kafka (SIGTERM: a clean shutdown) on drop too.
struct KafkaGuard<'a>(&'a Path, &'a Path);

impl Drop for KafkaGuard<'_> {
    fn drop(&mut self) {
        let _ = Command::new(kafka_sh(self.0))
            .arg("stop")
            .arg(self.1)
            .status();
    }
}

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// (producer id, epoch, last sequence) of the active producers of `topic`-0, sorted.
async fn producers(addr: &str, topic: &str) -> Vec<(i64, i16, i32)> {
    let mut s = connect(addr.parse().unwrap()).await;
    let req = DescribeProducersRequest::default().with_topics(vec![TopicRequest::default()
        .with_name(TopicName(sb(topic)))
        .with_partition_indexes(vec![0])]);
    let r: DescribeProducersResponse = request(&mut s, ApiKey::DescribeProducers, 0, &req)
        .await
        .expect("DescribeProducers answered");
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_code, 0, "{topic}: {p:?}");
    let mut out: Vec<_> = p
        .active_producers
        .iter()
        .map(|a| (a.producer_id.0, a.producer_epoch as i16, a.last_sequence))
        .collect();
    out.sort();
    out
}

/// InitProducerId (v4) for `transactional_id` (None: idempotent): (error, id, epoch).
async fn init_producer_id(addr: &str, transactional_id: Option<&str>) -> (i16, i64, i16) {
    let mut s = connect(addr.parse().unwrap()).await;
    let req = InitProducerIdRequest::default()
        .with_transactional_id(transactional_id.map(|t| TransactionalId(sb(t))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    let r: InitProducerIdResponse = request(&mut s, ApiKey::InitProducerId, 4, &req)
        .await
        .expect("InitProducerId answered");
    (r.error_code, r.producer_id.0, r.producer_epoch)
}

/// Writes the data set to Kafka at `addr`: what each topic's partition 0.. holds, as (partition, key, value).
async fn write_to_kafka(addr: &str) -> Vec<(String, i32, String, String)> {
    let admin = common::admin(addr);
    let topics = [
        NewTopic::new(PLAIN, 3, TopicReplication::Fixed(1)),
        NewTopic::new(COMPACTED, 1, TopicReplication::Fixed(1))
            .set("cleanup.policy", "compact")
            .set("retention.ms", "86400000"),
        NewTopic::new(TXN, 1, TopicReplication::Fixed(1)),
    ];
    for r in admin
        .create_topics(&topics, &AdminOptions::new())
        .await
        .expect("create topics")
    {
        r.expect("topic created");
    }
    let mut written = Vec::new();
    let p = common::producer(addr, &[("enable.idempotence", "true")]);
    for i in 0..90 {
        let (part, key, value) = (i % 3, format!("k{i}"), format!("plain-{i}"));
        let rec = FutureRecord::to(PLAIN)
            .partition(part)
            .key(&key)
            .payload(&value);
        p.send(rec, Duration::from_secs(30))
            .await
            .expect("produce plain");
        written.push((PLAIN.to_string(), part, key, value));
    }
    for i in 0..20 {
        let (key, value) = (format!("key-{}", i % 5), format!("compacted-{i}"));
        let rec = FutureRecord::to(COMPACTED)
            .partition(0)
            .key(&key)
            .payload(&value);
        p.send(rec, Duration::from_secs(30))
            .await
            .expect("produce compacted");
        written.push((COMPACTED.to_string(), 0, key, value));
    }
    let t = common::producer(addr, &[("transactional.id", TXN_ID)]);
    t.init_transactions(Duration::from_secs(30)).expect("init");
    for (batch, commit) in [(0, true), (1, false), (2, true)] {
        t.begin_transaction().expect("begin");
        for i in 0..5 {
            let (key, value) = (format!("t{batch}-{i}"), format!("txn-{batch}-{i}"));
            let rec = FutureRecord::to(TXN).partition(0).key(&key).payload(&value);
            t.send(rec, Duration::from_secs(30))
                .await
                .expect("produce txn");
            if commit {
                written.push((TXN.to_string(), 0, key, value));
            }
        }
        if commit {
            t.commit_transaction(Duration::from_secs(30))
                .expect("commit");
        } else {
            t.abort_transaction(Duration::from_secs(30)).expect("abort");
        }
    }
    // The group commits offsets 7, 11, 13 on plain's partitions.
    let c = common::consumer(addr, GROUP, &[]);
    let mut tpl = TopicPartitionList::new();
    for (part, off) in COMMITTED {
        tpl.add_partition_offset(PLAIN, part, Offset::Offset(off))
            .unwrap();
    }
    c.commit(&tpl, CommitMode::Sync).expect("commit offsets");
    assert_eq!(committed(&c), COMMITTED, "Kafka holds the group's offsets");
    written
}

/// Reads every record of `topic` (partitions 0..n) from `addr` with `isolation`: (partition, key, value) by offset.
fn read_all(
    addr: &str,
    topic: &str,
    partitions: i32,
    want: usize,
    isolation: &str,
) -> Vec<(i32, String, String)> {
    let c = common::consumer(
        addr,
        &format!("reader-{topic}-{isolation}"),
        &[("isolation.level", isolation)],
    );
    common::assign_from_beginning(&c, topic, partitions);
    let mut got: Vec<(i32, i64, String, String)> =
        common::consume_n(&c, want, Duration::from_secs(60))
            .into_iter()
            .map(|(p, o, k, v)| {
                let s = |b: Option<Vec<u8>>| String::from_utf8(b.unwrap_or_default()).unwrap();
                (p, o, s(k), s(v))
            })
            .collect();
    // Nothing more than `want`.
    assert!(
        rdkafka::consumer::BaseConsumer::poll(&c, Duration::from_millis(500)).is_none(),
        "{topic}: more than {want} records"
    );
    got.sort();
    got.into_iter().map(|(p, _, k, v)| (p, k, v)).collect()
}

#[test]
fn strata_serves_a_log_dir_kafka_wrote() {
    if std::env::var("STRATA_DIFFERENTIAL").as_deref() == Ok("off") {
        eprintln!("Kafka log dir test SKIPPED: STRATA_DIFFERENTIAL=off");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("k");
    let rt = common::runtime();
    let (written, kafka_plain, kafka_txn) = {
        let addr = start_kafka(root, &kdir);
        let _guard = KafkaGuard(root, &kdir);
        rt.block_on(async {
            let written = write_to_kafka(&addr).await;
            (
                written,
                producers(&addr, PLAIN).await,
                producers(&addr, TXN).await,
            )
        })
    };
    assert!(!kafka_plain.is_empty() && !kafka_txn.is_empty());
    let data = kdir.join("data");
    assert!(
        data.join("__cluster_metadata-0").is_dir(),
        "a KRaft log dir"
    );

    rt.block_on(async {
        // The internal topics keep the partition counts Kafka gave them (one each, kafka.sh's) where strata's
        // settings say otherwise (50 transaction state partitions here).
        let b = common::start_broker_with(&data, &[("transaction.state.log.num.partitions", "50")])
            .await;
        let addr = common::bootstrap(&b);
        let want = |topic: &str| -> Vec<(i32, String, String)> {
            let mut w: Vec<_> = written
                .iter()
                .filter(|(t, ..)| t == topic)
                .map(|(_, p, k, v)| (*p, k.clone(), v.clone()))
                .collect();
            // By partition, each in the order produced (= offset order).
            w.sort_by_key(|r| r.0);
            w
        };
        let (a, plain, compacted, txn) = (addr.clone(), want(PLAIN), want(COMPACTED), want(TXN));
        tokio::task::spawn_blocking(move || {
            assert_eq!(read_all(&a, PLAIN, 3, plain.len(), "read_committed"), plain);
            assert_eq!(
                read_all(&a, COMPACTED, 1, compacted.len(), "read_committed"),
                compacted
            );
            // The aborted transaction's five records stay hidden from read_committed; read_uncommitted sees them.
            assert_eq!(read_all(&a, TXN, 1, txn.len(), "read_committed"), txn);
            assert_eq!(
                read_all(&a, TXN, 1, txn.len() + 5, "read_uncommitted").len(),
                15
            );
            // The group's committed offsets.
            let c = common::consumer(&a, GROUP, &[]);
            assert_eq!(committed(&c), COMMITTED);
        })
        .await
        .unwrap();
        // Producer state as Kafka had it; the transactional id continues with its next epoch.
        assert_eq!(producers(&addr, PLAIN).await, kafka_plain);
        assert_eq!(producers(&addr, TXN).await, kafka_txn);
        let (code, id, epoch) = init_producer_id(&addr, Some(TXN_ID)).await;
        assert_eq!(code, 0);
        assert_eq!((id, epoch), (kafka_txn[0].0, kafka_txn[0].1 + 1));
        // New ids come after every id Kafka handed out.
        let (code, id, _) = init_producer_id(&addr, None).await;
        assert_eq!(code, 0);
        let max_kafka = kafka_plain
            .iter()
            .chain(&kafka_txn)
            .map(|p| p.0)
            .max()
            .unwrap();
        assert!(
            id > max_kafka,
            "new producer id {id} <= Kafka's {max_kafka}"
        );
        // Writes continue at the next offset.
        let p = common::producer(&addr, &[]);
        let d = p
            .send(
                FutureRecord::to(PLAIN)
                    .partition(0)
                    .key("new")
                    .payload("after"),
                Duration::from_secs(30),
            )
            .await
            .expect("produce to the adopted topic");
        assert_eq!((d.partition, d.offset), (0, 30));
        b.shutdown().await.unwrap();
    });
}
