//! Tiered storage through the broker, the rules and edges: Kafka's tiering config rules (INVALID_CONFIG, disable
//! with delete.on.disable, re-enable), DeleteTopics cleaning the remote tier, the strata-only broker default
//! `log.remote.storage.enable`, exact timestamp lookups inside compressed remote batches, and a missing remote
//! object answered UNKNOWN_SERVER_ERROR. librdkafka (rdkafka crate) and raw requests; filesystem backend.
use crate::common;

use std::time::{Duration, Instant};

use common::raw;
use common::tiered::*;
use common::{admin, assign_from_beginning, consume_n, producer};
use kafka_protocol::messages::{ApiKey, TopicName};
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::FutureRecord;
use strata_broker::Server;

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
    assert!(server.broker().registry().get("compacted").is_none());

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
    let meta = server.broker().registry().get("disabled").expect("topic");
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
    // Kafka refuses compaction on a tiered topic even when the same change turns remote storage off.
    let (code, msg) = rt.block_on(alter_topic(
        addr,
        "disabled",
        &[
            ("remote.storage.enable", "false"),
            ("remote.log.delete.on.disable", "true"),
            ("cleanup.policy", "compact"),
        ],
    ));
    assert_eq!(code, 40, "INVALID_CONFIG expected: {msg}");
    assert!(msg.contains("cleanup.policy"), "{msg}");
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
    // Nothing is tiered any more: ListOffsets -5 answers -1 (it answered the last offset once copied), and the
    // earliest offset is the local log start.
    assert_eq!(rt.block_on(list_offset(addr, "disabled", -5)).0, -1);
    let (earliest, _) = rt.block_on(list_offset(addr, "disabled", -2));
    let (earliest_local, _) = rt.block_on(list_offset(addr, "disabled", -4));
    assert_eq!(earliest, earliest_local);

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
    assert!(server.broker().registry().get("dropped").is_none());
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
        .block_on(Server::start_from_properties(&p))
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
        .block_on(Server::start_from_properties(&p))
        .expect_err("refused");
    assert!(
        err.to_string().contains("log.remote.storage.enable"),
        "{err}"
    );
    // The in-memory store would lose every tiered segment at a restart: refused, naming the key.
    p.remove("remote.log.storage.system.enable");
    p.insert("rsm.config.storage.backend".into(), "memory".into());
    let err = rt
        .block_on(Server::start_from_properties(&p))
        .expect_err("memory backend refused");
    assert!(
        err.to_string().contains("rsm.config.storage.backend"),
        "{err}"
    );
    // A typo'd backend names the key, the value and what the broker accepts (not the test-only backend).
    p.insert("rsm.config.storage.backend".into(), "bogus".into());
    let err = rt
        .block_on(Server::start_from_properties(&p))
        .expect_err("unknown backend refused")
        .to_string();
    assert!(
        err.contains("rsm.config.storage.backend")
            && err.contains("bogus")
            && err.contains("s3, gcs, azure or filesystem")
            && !err.contains("memory"),
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
