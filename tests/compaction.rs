//! Log compaction end to end with real clients (rdkafka): compacted topics created and switched by AdminClient /
//! AlterConfigs, cleaned by the broker's log cleaner while producers write; consumers from offset 0 see the
//! latest value of each key; keyless records are refused; bad cleaner values are refused; a restart keeps the
//! cleaned log.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::tiered::{alter_topic, log_of, runtime};
use common::*;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::FutureRecord;
use rdkafka::Message;
use strata_broker::Server;
use tokio::runtime::Runtime;

/// The cleaner runs every 20 ms when idle.
const BROKER: &[(&str, &str)] = &[("log.cleaner.backoff.ms", "20")];

/// A compacted topic that rolls every ~1 KiB and is cleanable as soon as 1 % of it is dirty; tombstones stay
/// 300 ms.
const COMPACTED: &[(&str, &str)] = &[
    ("cleanup.policy", "compact"),
    ("segment.bytes", "1024"),
    ("min.cleanable.dirty.ratio", "0.01"),
    ("delete.retention.ms", "300"),
];

async fn start(dir: &Path) -> Server {
    start_broker_with(dir, BROKER).await
}

/// CreateTopics through the AdminClient: the per-topic result.
fn create(
    rt: &Runtime,
    bs: &str,
    name: &str,
    configs: &[(&str, &str)],
) -> Result<(), RDKafkaErrorCode> {
    let mut t = NewTopic::new(name, 1, TopicReplication::Fixed(1));
    for (k, v) in configs {
        t = t.set(k, v);
    }
    let res = rt
        .block_on(admin(bs).create_topics(&[t], &AdminOptions::new()))
        .expect("create_topics request");
    match res.as_slice() {
        [Ok(_)] => Ok(()),
        [Err((_, code))] => Err(*code),
        other => panic!("{other:?}"),
    }
}

/// Produces `key → value` (None = tombstone), all in flight together; every one must be acknowledged.
fn produce(rt: &Runtime, bs: &str, topic: &str, records: &[(String, Option<String>)]) {
    let p = producer(bs, &[("linger.ms", "2")]);
    rt.block_on(async {
        let sends = records.iter().map(|(k, v)| {
            let mut r = FutureRecord::<str, str>::to(topic).key(k.as_str());
            if let Some(v) = v {
                r = r.payload(v.as_str());
            }
            p.send(r, Duration::from_secs(20))
        });
        for r in futures::future::join_all(sends).await {
            r.expect("acknowledged");
        }
    });
}

/// Every record of partition 0 from offset 0 to the high watermark: (offset, key, value).
fn read_all(bs: &str, topic: &str) -> Vec<(i64, String, Option<String>)> {
    let c: BaseConsumer = client_config(bs)
        .set("group.id", "reader")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .create()
        .expect("consumer");
    let (_, high) = c
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .expect("watermarks");
    assign_from_beginning(&c, topic, 1);
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            Instant::now() < deadline,
            "reading {topic} to {high} timed out"
        );
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                let key =
                    String::from_utf8(m.key().expect("every record has a key").to_vec()).unwrap();
                let value = m.payload().map(|v| String::from_utf8(v.to_vec()).unwrap());
                out.push((m.offset(), key, value));
                if m.offset() + 1 >= high {
                    break;
                }
            }
            Some(Err(KafkaError::PartitionEOF(_)))
                if out.last().is_none_or(|(o, _, _)| o + 1 >= high) =>
            {
                break;
            }
            Some(Err(e)) => panic!("consumer error: {e}"),
            None => {}
        }
    }
    out
}

/// Whether `log` holds exactly `model` (key → latest value; tombstoned keys absent), one record per key, in
/// strictly increasing offsets. Panics on an offset order violation or a wrong value (those never heal).
fn compacted_to(
    log: &[(i64, String, Option<String>)],
    model: &BTreeMap<String, Option<String>>,
) -> bool {
    assert!(
        log.windows(2).all(|w| w[0].0 < w[1].0),
        "offsets not strictly increasing"
    );
    let mut latest: BTreeMap<&str, &Option<String>> = BTreeMap::new();
    for (_, k, v) in log {
        latest.insert(k, v);
    }
    for (k, v) in &latest {
        let want = model
            .get(*k)
            .unwrap_or_else(|| panic!("key {k} never written"));
        if v.is_some() {
            assert_eq!(*v, want, "latest value of {k}");
        }
    }
    for (k, v) in model {
        if v.is_some() {
            assert_eq!(
                latest.get(k.as_str()).copied(),
                Some(v),
                "latest value of {k} lost"
            );
        }
    }
    let live = model.values().filter(|v| v.is_some()).count();
    log.len() == live && latest.values().all(|v| v.is_some())
}

/// Writes one filler record (a fresh key, part of the model) and rolls the log, so that everything written is
/// in closed segments and the cleaner has new dirty data (tombstones go in a pass after delete.retention.ms).
fn nudge(
    rt: &Runtime,
    server: &Server,
    bs: &str,
    topic: &str,
    n: usize,
    model: &mut BTreeMap<String, Option<String>>,
) {
    let (k, v) = (format!("filler-{n:04}"), format!("f{n}"));
    produce(rt, bs, topic, &[(k.clone(), Some(v.clone()))]);
    model.insert(k, Some(v));
    log_of(server, topic, 0).roll().expect("roll");
}

/// Polls (deadline 60 s) until the topic read from offset 0 is exactly `model`, nudging the cleaner between
/// reads.
fn wait_compacted(
    rt: &Runtime,
    server: &Server,
    bs: &str,
    topic: &str,
    model: &mut BTreeMap<String, Option<String>>,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut n = 0;
    loop {
        let log = read_all(bs, topic);
        if compacted_to(&log, model) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{topic} not compacted after 60 s: {} records for {} live keys",
            log.len(),
            model.values().filter(|v| v.is_some()).count()
        );
        nudge(rt, server, bs, topic, n, model);
        n += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn round(keys: std::ops::Range<usize>, r: usize) -> Vec<(String, Option<String>)> {
    keys.map(|k| {
        (
            format!("key-{k:03}"),
            Some(format!("value-{k}-round-{r}-{}", "x".repeat(k % 7))),
        )
    })
    .collect()
}

/// Kafka's compaction (cleanup.policy=compact): 40 keys overwritten 30 times and 10 of them tombstoned while the
/// producer keeps writing; the cleaner (min.cleanable.dirty.ratio=0.01, small segments) leaves, read from offset 0,
/// exactly the latest value of each live key in increasing offsets, tombstones gone after delete.retention.ms;
/// /metrics' source counts the cleanings; a restart keeps every latest value.
#[test]
fn compacted_topic_keeps_the_latest_value_per_key_while_producers_write_and_after_restart() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = bootstrap(&server);
    create(&rt, &bs, "compacted", COMPACTED).expect("compacted topic created");
    let mut model = BTreeMap::new();
    for r in 0..30 {
        let mut records = round(0..40, r);
        if r == 20 {
            records = (0..10).map(|k| (format!("key-{k:03}"), None)).collect();
        } else if r > 20 {
            records = round(10..40, r);
        }
        produce(&rt, &bs, "compacted", &records);
        model.extend(records);
    }
    let log = log_of(&server, "compacted", 0);
    let written = log.log_end_offset();
    assert!(written >= 1000, "{written}");
    wait_compacted(&rt, &server, &bs, "compacted", &mut model);
    let cleaner = server
        .broker()
        .cleaner()
        .expect("the server runs a cleaner");
    let m = cleaner.metrics();
    assert!(m.cleanings_total > 0 && m.bytes_written_total > 0, "{m:?}");
    let text = strata_broker::topics::cleaner::render_metrics(cleaner);
    assert!(
        text.contains("kafka_log_logcleaner_max_dirty_percent"),
        "{text}"
    );
    assert!(log.log_end_offset() > written, "offsets never reused");
    drop(log);

    rt.block_on(server.shutdown()).unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = bootstrap(&server);
    let after = read_all(&bs, "compacted");
    assert!(
        compacted_to(&after, &model),
        "restart changed the compacted log: {} records",
        after.len()
    );
    rt.block_on(server.shutdown()).unwrap();
}

/// Kafka refuses a record without a key on a compacted topic (INVALID_RECORD, "Compacted topic cannot accept
/// message without key"): the producer gets the error and nothing is written.
#[test]
fn a_keyless_record_to_a_compacted_topic_is_invalid_record_and_nothing_is_written() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = bootstrap(&server);
    create(&rt, &bs, "keyed", COMPACTED).unwrap();
    produce(&rt, &bs, "keyed", &round(0..3, 0));
    let end = log_of(&server, "keyed", 0).log_end_offset();
    let p = producer(&bs, &[("retries", "0")]);
    let res = rt.block_on(p.send(
        FutureRecord::<str, str>::to("keyed").payload("no key"),
        Duration::from_secs(10),
    ));
    match res {
        Err((KafkaError::MessageProduction(code), _)) => {
            assert_eq!(code, RDKafkaErrorCode::InvalidRecord)
        }
        other => panic!("expected INVALID_RECORD, got {other:?}"),
    }
    assert_eq!(
        log_of(&server, "keyed", 0).log_end_offset(),
        end,
        "nothing written"
    );
    rt.block_on(server.shutdown()).unwrap();
}

/// A topic created with cleanup.policy=delete and switched to compact by AlterConfigs is compacted from then on
/// (its history included), as in Kafka.
#[test]
fn a_topic_switched_from_delete_to_compact_by_alter_configs_gets_compacted() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = bootstrap(&server);
    create(&rt, &bs, "switched", &[("segment.bytes", "1024")]).unwrap();
    let mut model = BTreeMap::new();
    for r in 0..10 {
        let records = round(0..20, r);
        produce(&rt, &bs, "switched", &records);
        model.extend(records);
    }
    let before = read_all(&bs, "switched").len();
    assert_eq!(before, 200, "delete policy keeps every record");
    let (code, msg) = rt.block_on(alter_topic(server.local_addr(), "switched", COMPACTED));
    assert_eq!(code, 0, "{msg}");
    assert!(log_of(&server, "switched", 0)
        .config()
        .cleanup_policy
        .compacts());
    wait_compacted(&rt, &server, &bs, "switched", &mut model);
    rt.block_on(server.shutdown()).unwrap();
}

/// Bad cleaner values: a topic's min.cleanable.dirty.ratio outside [0, 1] is INVALID_CONFIG (Kafka's
/// between(0, 1)), and a broker with log.cleaner.threads=0 does not start, naming the key and the value.
#[test]
fn invalid_cleaner_values_are_refused_naming_them() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(start(dir.path()));
    let bs = bootstrap(&server);
    let bad = [COMPACTED, &[("min.cleanable.dirty.ratio", "2")]].concat();
    assert_eq!(
        create(&rt, &bs, "bad-ratio", &bad),
        Err(RDKafkaErrorCode::InvalidConfig)
    );
    assert!(server.broker().registry().get("bad-ratio").is_none());
    rt.block_on(server.shutdown()).unwrap();

    let other = tempfile::tempdir().unwrap();
    let err = rt
        .block_on(Server::start_from_properties(&local_props(
            other.path(),
            &[("log.cleaner.threads", "0")],
        )))
        .expect_err("log.cleaner.threads=0 must stop start-up")
        .to_string();
    assert!(
        err.contains("log.cleaner.threads") && err.contains('0'),
        "{err}"
    );
}
