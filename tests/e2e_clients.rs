//! End-to-end: the broker in-process on 127.0.0.1:0, librdkafka (rdkafka crate) as the client.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use rdkafka::admin::{AdminOptions, AlterConfig, NewPartitions, ResourceSpecifier};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::Message;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn value_of(i: usize) -> Vec<u8> {
    let mut v = format!("value-{i:07}-").into_bytes();
    v.extend((0..(i % 97)).map(|j| (i + j) as u8));
    v
}

/// Sends `n` messages to `topic` (partition i % partitions), returning (partition, offset) per message.
fn produce_all(
    rt: &tokio::runtime::Runtime,
    p: &FutureProducer,
    topic: &str,
    n: usize,
    partitions: i32,
) -> Vec<(i32, i64)> {
    let mut futures = Vec::with_capacity(n);
    for i in 0..n {
        let key = format!("k{i}");
        let value = value_of(i);
        let rec = FutureRecord::to(topic)
            .key(&key)
            .payload(&value)
            .partition((i % partitions as usize) as i32);
        futures.push(p.send_result(rec).map_err(|(e, _)| e).expect("enqueue"));
    }
    rt.block_on(async {
        let mut out = Vec::with_capacity(n);
        for f in futures {
            let d = f.await.expect("delivery future").expect("delivered");
            out.push((d.partition, d.offset));
        }
        out
    })
}

#[test]
fn hundred_thousand_messages_over_three_partitions_come_back_byte_identical_and_in_order() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    rt.block_on(create_topic(&bs, "bulk", 3));
    let n = 100_000;
    let p = producer(
        &bs,
        &[
            ("linger.ms", "5"),
            ("queue.buffering.max.messages", "200000"),
        ],
    );
    let delivered = produce_all(&rt, &p, "bulk", n, 3);
    // Offsets per partition are dense and follow send order.
    let mut expected: HashMap<(i32, i64), usize> = HashMap::new();
    let mut next = [0i64; 3];
    for (i, (part, off)) in delivered.iter().enumerate() {
        assert_eq!(*part, (i % 3) as i32);
        assert_eq!(
            *off, next[*part as usize],
            "message {i} out of order in partition {part}"
        );
        next[*part as usize] += 1;
        expected.insert((*part, *off), i);
    }
    let c = consumer(&bs, "bulk-reader", &[]);
    assign_from_beginning(&c, "bulk", 3);
    let got = consume_n(&c, n, Duration::from_secs(120));
    let mut last = [-1i64; 3];
    for (part, off, key, value) in got {
        assert_eq!(
            off,
            last[part as usize] + 1,
            "gap or reorder in partition {part}"
        );
        last[part as usize] = off;
        let i = expected[&(part, off)];
        assert_eq!(key.as_deref(), Some(format!("k{i}").as_bytes()));
        assert_eq!(
            value.as_deref(),
            Some(value_of(i).as_slice()),
            "payload of message {i} differs"
        );
    }
    assert_eq!(last, [33_333, 33_332, 33_332]);
    drop(c);
    rt.block_on(broker.shutdown()).unwrap();
}

#[test]
fn idempotent_producer_writes_each_message_once_in_order() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    rt.block_on(create_topic(&bs, "idem", 2));
    let p = producer(&bs, &[("enable.idempotence", "true"), ("linger.ms", "2")]);
    let n = 5_000;
    let delivered = produce_all(&rt, &p, "idem", n, 2);
    let c = consumer(&bs, "idem-reader", &[]);
    assign_from_beginning(&c, "idem", 2);
    let got = consume_n(&c, n, Duration::from_secs(60));
    let mut seen = HashMap::new();
    for (part, off, _, value) in &got {
        assert!(
            seen.insert((*part, *off), value.clone()).is_none(),
            "offset {part}/{off} delivered twice"
        );
    }
    for (i, (part, off)) in delivered.iter().enumerate() {
        assert_eq!(
            seen[&(*part, *off)].as_deref(),
            Some(value_of(i).as_slice())
        );
    }
    // Nothing beyond the n messages: the high watermarks add up to n.
    let total: i64 = (0..2)
        .map(|part| {
            c.fetch_watermarks("idem", part, Duration::from_secs(5))
                .unwrap()
                .1
        })
        .sum();
    assert_eq!(total, n as i64);
    drop(c);
    rt.block_on(broker.shutdown()).unwrap();
}

fn assigned(c: &BaseConsumer) -> usize {
    c.assignment().map(|a| a.count()).unwrap_or(0)
}

/// Polls every consumer once (rebalance callbacks run inside poll); returns messages seen.
fn poll_all(cs: &[&BaseConsumer], sink: &mut Vec<(i32, i64)>) {
    for c in cs {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(30)) {
            sink.push((m.partition(), m.offset()));
        }
    }
}

fn poll_until(
    cs: &[&BaseConsumer],
    what: &str,
    limit: Duration,
    sink: &mut Vec<(i32, i64)>,
    mut done: impl FnMut(&mut Vec<(i32, i64)>) -> bool,
) {
    let deadline = std::time::Instant::now() + limit;
    loop {
        poll_all(cs, sink);
        if done(sink) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
    }
}

#[test]
fn consumer_group_rebalances_on_join_and_leave_commits_and_resumes_after_restart() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    rt.block_on(create_topic(&bs, "grp", 3));
    let p = producer(&bs, &[]);
    produce_all(&rt, &p, "grp", 300, 3);

    let a = consumer(&bs, "g1", &[]);
    a.subscribe(&["grp"]).unwrap();
    let mut seen = Vec::new();
    poll_until(
        &[&a],
        "first member owns all 3 partitions",
        Duration::from_secs(30),
        &mut seen,
        |_| assigned(&a) == 3,
    );

    let b = consumer(&bs, "g1", &[]);
    b.subscribe(&["grp"]).unwrap();
    let c = consumer(&bs, "g1", &[]);
    c.subscribe(&["grp"]).unwrap();
    poll_until(
        &[&a, &b, &c],
        "three members with one partition each",
        Duration::from_secs(60),
        &mut seen,
        |_| assigned(&a) == 1 && assigned(&b) == 1 && assigned(&c) == 1,
    );
    // Everyone consumes; together the group sees every message, then commits.
    poll_until(
        &[&a, &b, &c],
        "all 300 messages consumed",
        Duration::from_secs(60),
        &mut seen,
        |s| {
            let mut u = s.clone();
            u.sort();
            u.dedup();
            u.len() >= 300
        },
    );
    for x in [&a, &b, &c] {
        x.commit_consumer_state(CommitMode::Sync).unwrap();
    }
    // c leaves: a and b take over its partition.
    c.unsubscribe();
    drop(c);
    poll_until(
        &[&a, &b],
        "two members sharing 3 partitions",
        Duration::from_secs(60),
        &mut seen,
        |_| assigned(&a) + assigned(&b) == 3 && assigned(&a) >= 1 && assigned(&b) >= 1,
    );
    drop(a);
    drop(b);
    drop(p);
    rt.block_on(broker.shutdown()).unwrap();

    // Restart on the same data: the group resumes from its committed offsets.
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    let p = producer(&bs, &[]);
    let fresh: Vec<(i32, i64)> = (0..30)
        .map(|i| {
            let v = format!("after-restart-{i}");
            rt.block_on(
                p.send(
                    FutureRecord::<str, _>::to("grp")
                        .payload(&v)
                        .partition(i % 3),
                    Duration::from_secs(10),
                ),
            )
            .map(|d| (d.partition, d.offset))
            .expect("delivered")
        })
        .collect();
    assert!(
        fresh.iter().all(|(_, off)| *off >= 100),
        "offsets continue after restart: {fresh:?}"
    );
    let d = consumer(&bs, "g1", &[]);
    d.subscribe(&["grp"]).unwrap();
    let got = consume_n(&d, 30, Duration::from_secs(60));
    let mut got: Vec<(i32, i64)> = got.into_iter().map(|(p, o, _, _)| (p, o)).collect();
    got.sort();
    let mut want = fresh.clone();
    want.sort();
    assert_eq!(got, want, "resumed exactly after the committed offsets");
    drop(d);
    rt.block_on(broker.shutdown()).unwrap();
}

/// Static membership (KIP-345) with librdkafka: a restarted instance (same `group.instance.id`, no LeaveGroup)
/// takes its partitions back without a rebalance of the others, and a duplicate of a live instance fences the
/// old one with FENCED_INSTANCE_ID (a fatal error for librdkafka) instead of the two stealing the id forever.
#[test]
fn static_members_restart_without_a_rebalance_and_a_duplicate_instance_is_fenced() {
    use rdkafka::error::KafkaError;
    use rdkafka::types::RDKafkaErrorCode;

    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    rt.block_on(create_topic(&bs, "static", 4));
    let member = |instance: &str| {
        let c = consumer(&bs, "gs", &[("group.instance.id", instance)]);
        c.subscribe(&["static"]).unwrap();
        c
    };
    let a = member("i1");
    let b = member("i2");
    let mut seen = Vec::new();
    poll_until(
        &[&a, &b],
        "two static members with two partitions each",
        Duration::from_secs(60),
        &mut seen,
        |_| assigned(&a) == 2 && assigned(&b) == 2,
    );
    let group_state = |c: &BaseConsumer| {
        let list = c
            .fetch_group_list(Some("gs"), Duration::from_secs(10))
            .unwrap();
        let g = &list.groups()[0];
        (g.state().to_string(), g.members().len())
    };

    // i1 restarts: a static member sends no LeaveGroup on close, and its new incarnation takes the entry over.
    drop(a);
    let a2 = member("i1");
    poll_until(
        &[&a2, &b],
        "the restarted i1 owns its two partitions again",
        Duration::from_secs(30),
        &mut seen,
        |_| {
            assert_eq!(assigned(&b), 2, "i2 was rebalanced by i1's restart");
            assigned(&a2) == 2
        },
    );
    assert_eq!(group_state(&b), ("Stable".to_string(), 2));

    // A duplicate i1 while a2 lives: a2 is fenced (fatal), the duplicate holds i1's partitions, i2 untouched.
    let dup = member("i1");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut fenced = None;
    while fenced.is_none() || assigned(&dup) != 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no fencing: a2 error {fenced:?}, duplicate owns {}",
            assigned(&dup)
        );
        for c in [&dup, &b] {
            let _ = c.poll(Duration::from_millis(30));
        }
        if fenced.is_none() {
            if let Some(Err(e)) = a2.poll(Duration::from_millis(30)) {
                if e.rdkafka_error_code() == Some(RDKafkaErrorCode::FencedInstanceId) {
                    assert!(matches!(e, KafkaError::MessageConsumptionFatal(_)), "{e}");
                    fenced = Some(e);
                }
            }
        }
        assert_eq!(assigned(&b), 2, "i2 was rebalanced by the duplicate");
    }
    assert_eq!(group_state(&b), ("Stable".to_string(), 2));
    drop((a2, b, dup));
    rt.block_on(broker.shutdown()).unwrap();
}

#[test]
fn admin_creates_describes_alters_deletes_topics_and_adds_partitions() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    let admin = admin(&bs);
    let opts = AdminOptions::new();
    rt.block_on(async {
        let res = admin
            .create_topics(
                &[rdkafka::admin::NewTopic::new(
                    "adm",
                    2,
                    rdkafka::admin::TopicReplication::Fixed(1),
                )
                .set("retention.ms", "3600000")],
                &opts,
            )
            .await
            .unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
        // A second create is TOPIC_ALREADY_EXISTS.
        let res = admin
            .create_topics(
                &[rdkafka::admin::NewTopic::new(
                    "adm",
                    2,
                    rdkafka::admin::TopicReplication::Fixed(1),
                )],
                &opts,
            )
            .await
            .unwrap();
        assert!(
            matches!(
                res.as_slice(),
                [Err((
                    _,
                    rdkafka::types::RDKafkaErrorCode::TopicAlreadyExists
                ))]
            ),
            "{res:?}"
        );

        let desc = admin
            .describe_configs(&[ResourceSpecifier::Topic("adm")], &opts)
            .await
            .unwrap();
        let r = desc[0].as_ref().expect("describe ok");
        let e = r.get("retention.ms").expect("retention.ms listed");
        assert_eq!(e.value.as_deref(), Some("3600000"));
        assert_eq!(e.source, rdkafka::admin::ConfigSource::DynamicTopic);
        let seg = r.get("segment.bytes").expect("defaults listed");
        assert_eq!(seg.source, rdkafka::admin::ConfigSource::Default);

        let res =
            admin
                .alter_configs(
                    &[AlterConfig::new(ResourceSpecifier::Topic("adm"))
                        .set("retention.ms", "7200000")],
                    &opts,
                )
                .await
                .unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
        let desc = admin
            .describe_configs(&[ResourceSpecifier::Topic("adm")], &opts)
            .await
            .unwrap();
        let r = desc[0].as_ref().unwrap();
        assert_eq!(
            r.get("retention.ms").unwrap().value.as_deref(),
            Some("7200000")
        );

        let res = admin
            .alter_configs(
                &[AlterConfig::new(ResourceSpecifier::Topic("adm")).set("no.such.config", "1")],
                &opts,
            )
            .await
            .unwrap();
        // The rdkafka crate drops per-resource AlterConfigs errors (INVALID_CONFIG is asserted in
        // tests/bad_input.rs); here: the rejected request changed nothing.
        assert_eq!(res.len(), 1);
        let desc = admin
            .describe_configs(&[ResourceSpecifier::Topic("adm")], &opts)
            .await
            .unwrap();
        let r = desc[0].as_ref().unwrap();
        assert_eq!(
            r.get("retention.ms").unwrap().value.as_deref(),
            Some("7200000")
        );
        assert!(r.get("no.such.config").is_none());

        let broker_desc = admin
            .describe_configs(&[ResourceSpecifier::Broker(1)], &opts)
            .await
            .unwrap();
        let r = broker_desc[0].as_ref().expect("broker describe ok");
        assert_eq!(
            r.get("num.partitions").and_then(|e| e.value.as_deref()),
            Some("1")
        );
        // Untouched properties are defaults; only the ones the broker was given are static broker configs.
        let np = r.get("num.partitions").unwrap();
        assert_eq!(
            (&np.source, np.is_default),
            (&rdkafka::admin::ConfigSource::Default, true)
        );
        // Tiered storage properties are listed too; this in-process broker runs without tiering.
        assert_eq!(
            r.get("remote.log.storage.system.enable")
                .and_then(|e| e.value.as_deref()),
            Some("false")
        );
        let dirs = r.get("log.dirs").unwrap();
        assert_eq!(
            (&dirs.source, dirs.is_default),
            (&rdkafka::admin::ConfigSource::StaticBroker, false)
        );

        let res = admin
            .create_partitions(&[NewPartitions::new("adm", 5)], &opts)
            .await
            .unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
        let res = admin
            .create_partitions(&[NewPartitions::new("adm", 3)], &opts)
            .await
            .unwrap();
        assert!(
            matches!(
                res.as_slice(),
                [Err((
                    _,
                    rdkafka::types::RDKafkaErrorCode::InvalidPartitions
                ))]
            ),
            "{res:?}"
        );
    });
    let c = consumer(&bs, "adm-reader", &[]);
    let md = c
        .fetch_metadata(Some("adm"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(md.topics()[0].partitions().len(), 5);

    rt.block_on(async {
        let res = admin.delete_topics(&["adm"], &opts).await.unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    });
    let md = c.fetch_metadata(None, Duration::from_secs(10)).unwrap();
    assert!(
        md.topics().iter().all(|t| t.name() != "adm"),
        "deleted topic still listed"
    );
    assert!(md.topics().iter().any(|t| t.name() == "__consumer_offsets"));
    drop(c);
    drop(admin);
    rt.block_on(broker.shutdown()).unwrap();
}

#[test]
fn restart_keeps_topics_and_data() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    rt.block_on(create_topic(&bs, "durable", 2));
    let p = producer(&bs, &[]);
    let delivered = produce_all(&rt, &p, "durable", 1000, 2);
    drop(p);
    rt.block_on(broker.shutdown()).unwrap();

    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    let c = consumer(&bs, "durable-reader", &[]);
    let md = c
        .fetch_metadata(Some("durable"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(md.topics()[0].partitions().len(), 2);
    assign_from_beginning(&c, "durable", 2);
    let got = consume_n(&c, 1000, Duration::from_secs(60));
    let by_pos: HashMap<(i32, i64), Option<Vec<u8>>> =
        got.into_iter().map(|(p, o, _, v)| ((p, o), v)).collect();
    for (i, pos) in delivered.iter().enumerate() {
        assert_eq!(
            by_pos[pos].as_deref(),
            Some(value_of(i).as_slice()),
            "message {i} changed across restart"
        );
    }
    drop(c);
    rt.block_on(broker.shutdown()).unwrap();
}

/// `log.dirs` is a set: a new empty disk listed first (or a reordered list) finds the topic registry where it is,
/// with every topic and record; a list that leaves out the dir holding the registry is refused at start-up
/// instead of serving a partial view; two registries are refused as ambiguous.
#[test]
fn a_new_first_log_dir_keeps_every_topic_and_a_missing_registry_is_refused() {
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        root.path().join("a"),
        root.path().join("b"),
        root.path().join("c"),
    );
    let dirs = |ds: &[&std::path::Path]| {
        ds.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let start = |ds: &str| rt.block_on(common::start_broker_with(root.path(), &[("log.dirs", ds)]));
    let broker = start(&dirs(&[&a, &b]));
    let bs = bootstrap(&broker);
    rt.block_on(create_topic(&bs, "spread", 4));
    let p = producer(&bs, &[]);
    let delivered = produce_all(&rt, &p, "spread", 400, 4);
    drop(p);
    rt.block_on(broker.shutdown()).unwrap();

    // A new disk first, then the old ones reordered: same topics, same records.
    for order in [dirs(&[&c, &a, &b]), dirs(&[&b, &c, &a])] {
        let broker = start(&order);
        let bs = bootstrap(&broker);
        let cons = consumer(&bs, "spread-reader", &[]);
        let md = cons
            .fetch_metadata(Some("spread"), Duration::from_secs(10))
            .unwrap();
        assert_eq!(md.topics()[0].partitions().len(), 4, "log.dirs={order}");
        assign_from_beginning(&cons, "spread", 4);
        let got = consume_n(&cons, 400, Duration::from_secs(60));
        let mut got: Vec<(i32, i64)> = got.into_iter().map(|(p, o, _, _)| (p, o)).collect();
        got.sort();
        let mut want = delivered.clone();
        want.sort();
        assert_eq!(got, want, "log.dirs={order}");
        drop(cons);
        rt.block_on(broker.shutdown()).unwrap();
    }
    assert!(
        !c.join("strata-topics.json").exists(),
        "a second registry was written"
    );

    // Leaving out the dir that holds the registry: refused, naming that dir (a log dir of the last start).
    let holder = if a.join("strata-topics.json").exists() {
        &a
    } else {
        &b
    };
    let other = if holder == &a { &b } else { &a };
    let mut props = std::collections::BTreeMap::new();
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert("log.dirs".to_string(), dirs(&[other, &c]));
    props.insert(
        "remote.log.storage.system.enable".to_string(),
        "false".to_string(),
    );
    let err = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect_err("start-up refused");
    let msg = err.to_string();
    assert!(
        msg.contains(&holder.display().to_string()) && msg.contains("log.dirs"),
        "{msg}"
    );
    // Without the list of the last start's dirs, the registry's absence still refuses, naming the topic.
    for d in [&a, &b, &c] {
        std::fs::remove_file(d.join("strata-log-dirs")).unwrap();
    }
    let err = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect_err("start-up refused");
    let msg = err.to_string();
    assert!(
        msg.contains("spread") && msg.contains("strata-topics.json"),
        "{msg}"
    );
    assert!(!other.join("strata-topics.json").exists() && !c.join("strata-topics.json").exists());

    // Two registries: refused as ambiguous.
    std::fs::copy(
        holder.join("strata-topics.json"),
        c.join("strata-topics.json"),
    )
    .unwrap();
    props.insert("log.dirs".to_string(), dirs(&[&a, &b, &c]));
    let err = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect_err("start-up refused");
    assert!(
        err.to_string()
            .contains("several log dirs hold a topic registry"),
        "{err}"
    );
}

#[test]
fn remote_log_metadata_topic_written_by_the_metadata_plane_is_listed_readable_and_refused_to_producers(
) {
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    // The metadata plane writes its topic straight into the shared LogManager.
    let tp = strata_storage::TopicPartition::new("__remote_log_metadata", 0);
    let log = broker
        .broker()
        .log_manager()
        .get_or_create_log(
            &tp,
            uuid::Uuid::new_v4(),
            strata_storage::LogConfig::default(),
        )
        .unwrap();
    let rec = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: -1,
        timestamp: 1_700_000_000_000,
        key: Some(bytes::Bytes::from_static(b"topic-id:0")),
        value: Some(bytes::Bytes::from_static(
            br#"{"type":"segment","version":1}"#,
        )),
        headers: Default::default(),
    };
    let mut buf = bytes::BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        [&rec],
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    log.append_as_leader(buf.freeze(), 0).unwrap();

    let c = consumer(&bs, "rlm-reader", &[]);
    let md = c.fetch_metadata(None, Duration::from_secs(10)).unwrap();
    assert!(
        md.topics()
            .iter()
            .any(|t| t.name() == "__remote_log_metadata"),
        "internal topic not listed"
    );
    assign_from_beginning(&c, "__remote_log_metadata", 1);
    let got = consume_n(&c, 1, Duration::from_secs(30));
    assert_eq!(
        got[0].3.as_deref(),
        Some(&br#"{"type":"segment","version":1}"#[..])
    );

    let p = producer(&bs, &[("message.timeout.ms", "3000")]);
    let res = rt.block_on(
        p.send(
            FutureRecord::<str, _>::to("__remote_log_metadata")
                .payload("nope")
                .partition(0),
            Duration::from_secs(5),
        ),
    );
    assert!(
        res.is_err(),
        "a client produce to an internal topic was accepted"
    );
    assert_eq!(log.log_end_offset(), 1);
    drop(c);
    drop(p);
    rt.block_on(broker.shutdown()).unwrap();
}

#[test]
fn topic_config_overrides_survive_restart() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    rt.block_on(async {
        let res = admin(&bs)
            .create_topics(
                &[rdkafka::admin::NewTopic::new(
                    "keep-cfg",
                    1,
                    rdkafka::admin::TopicReplication::Fixed(1),
                )
                .set("retention.ms", "123456")
                .set("max.message.bytes", "4096")],
                &AdminOptions::new(),
            )
            .await
            .unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    });
    rt.block_on(broker.shutdown()).unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let cfg = broker
        .broker()
        .topics()
        .log("keep-cfg", 0)
        .unwrap()
        .config();
    assert_eq!(cfg.retention_ms, 123_456);
    assert_eq!(cfg.max_message_bytes, 4096);
    rt.block_on(broker.shutdown()).unwrap();
}

/// Kafka 4.4's ranges: retention.bytes takes any long (negative = unlimited), max.message.bytes starts at 0,
/// which refuses every batch with MESSAGE_TOO_LARGE.
#[test]
fn kafka_config_ranges_retention_bytes_negative_and_max_message_bytes_zero() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let broker = rt.block_on(start_broker(dir.path()));
    let bs = bootstrap(&broker);
    let opts = AdminOptions::new();
    rt.block_on(async {
        let admin = admin(&bs);
        let res = admin
            .create_topics(
                &[rdkafka::admin::NewTopic::new(
                    "ranges",
                    1,
                    rdkafka::admin::TopicReplication::Fixed(1),
                )
                .set("retention.bytes", "-2")
                .set("max.message.bytes", "0")],
                &opts,
            )
            .await
            .unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
        let res = admin
            .alter_configs(
                &[AlterConfig::new(ResourceSpecifier::Topic("ranges"))
                    .set("retention.bytes", "-7")
                    .set("max.message.bytes", "0")],
                &opts,
            )
            .await
            .unwrap();
        assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    });
    let cfg = broker.broker().topics().log("ranges", 0).unwrap().config();
    assert_eq!((cfg.retention_bytes, cfg.max_message_bytes), (-7, 0));
    let p = producer(&bs, &[("message.timeout.ms", "10000")]);
    let sent = rt.block_on(p.send(
        FutureRecord::to("ranges").key("k").payload("v"),
        Duration::from_secs(10),
    ));
    assert!(
        matches!(
            &sent,
            Err((
                rdkafka::error::KafkaError::MessageProduction(
                    rdkafka::types::RDKafkaErrorCode::MessageSizeTooLarge
                ),
                _
            ))
        ),
        "{sent:?}"
    );
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("ranges", 0)
            .unwrap()
            .log_end_offset(),
        0
    );
    drop(p);
    rt.block_on(broker.shutdown()).unwrap();
}
