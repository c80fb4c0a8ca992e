//! Log compaction with the built `strata` binary: SIGKILL while the cleaner runs, in a loop; every restart keeps
//! each key's latest acknowledged value and no offset twice (Kafka's `.cleaned` → `.swap` protocol).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::producer::FutureRecord;
use rdkafka::Message;

const KEYS: usize = 50;

fn spawn(dir: &Path) -> ChildBroker {
    ChildBroker::spawn_with(dir, 0, &[("log.cleaner.backoff.ms", "10")])
}

/// Whether the child logged a finished cleaning since it started (drains the lines read so far).
fn cleaned(broker: &ChildBroker) -> bool {
    let mut seen = false;
    while let Ok(line) = broker.logs.try_recv() {
        seen |= line.contains("cleaned log");
    }
    seen
}

/// Every record of partition 0 from offset 0 to the high watermark: (offset, key, round of the value).
fn read_all(bs: &str) -> Vec<(i64, usize, usize)> {
    let c: BaseConsumer = client_config(bs)
        .set("group.id", "reader")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .create()
        .expect("consumer");
    let (_, high) = c
        .fetch_watermarks("kv", 0, Duration::from_secs(10))
        .expect("watermarks");
    assign_from_beginning(&c, "kv", 1);
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while out.last().is_none_or(|(o, _, _)| o + 1 < high) {
        assert!(Instant::now() < deadline, "reading to {high} timed out");
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                let key = std::str::from_utf8(m.key().expect("key")).unwrap();
                let value = std::str::from_utf8(m.payload().expect("value")).unwrap();
                let k = key.trim_start_matches("key-").parse().unwrap();
                let r = value.split('-').nth(1).unwrap()[1..].parse().unwrap();
                out.push((m.offset(), k, r));
            }
            Some(Err(KafkaError::PartitionEOF(_))) if high == 0 => break,
            Some(Err(KafkaError::PartitionEOF(_))) | None => {}
            Some(Err(e)) => panic!("consumer error: {e}"),
        }
    }
    out
}

/// Kafka's cleaner swaps cleaned segments in with `.cleaned` → `.swap` → live renames so that a crash at any
/// point leaves the old or the new segments: SIGKILL six times while the cleaner works on a compacted topic
/// that is being overwritten (50 keys, acknowledged rounds); after each restart every key's latest value is the
/// last acknowledged one, offsets strictly increase (none twice), and the log is smaller than what was written.
#[test]
fn sigkill_during_cleaning_keeps_every_latest_value_and_no_duplicate_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut broker = spawn(dir.path());
    let topic = NewTopic::new("kv", 1, TopicReplication::Fixed(1))
        .set("cleanup.policy", "compact")
        .set("segment.bytes", "2048")
        .set("min.cleanable.dirty.ratio", "0.01");
    let res = rt
        .block_on(admin(&broker.bootstrap).create_topics(&[topic], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");

    let mut acked = [usize::MAX; KEYS];
    let mut round = 0;
    let mut written = 0;
    for kill in 0..6 {
        let p = producer(&broker.bootstrap, &[("linger.ms", "1")]);
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut cleanings = false;
        // Acknowledged rounds until the cleaner has cleaned at least once in this run, then a few more so it
        // is busy with fresh dirty data when killed.
        let mut extra = 0;
        while extra < 3 {
            assert!(
                Instant::now() < deadline,
                "no cleaning logged in run {kill}"
            );
            rt.block_on(async {
                let sends = (0..KEYS).map(|k| {
                    let key = format!("key-{k:03}");
                    let value = format!("k{k}-r{round}-{}", "v".repeat(20));
                    let p = &p;
                    async move {
                        p.send(
                            FutureRecord::to("kv").key(&key).payload(&value),
                            Duration::from_secs(20),
                        )
                        .await
                    }
                });
                for r in futures::future::join_all(sends).await {
                    r.expect("acknowledged");
                }
            });
            acked = [round; KEYS];
            round += 1;
            written += KEYS;
            cleanings |= cleaned(&broker);
            if cleanings {
                extra += 1;
            }
        }
        drop(p);
        broker.kill9();
        broker = spawn(dir.path());
        let log = read_all(&broker.bootstrap);
        assert!(
            log.windows(2).all(|w| w[0].0 < w[1].0),
            "offsets not strictly increasing after kill {kill}"
        );
        let mut latest = BTreeMap::new();
        for (_, k, r) in &log {
            latest.insert(*k, *r);
        }
        for (k, want) in acked.iter().enumerate() {
            assert_eq!(latest.get(&k), Some(want), "key {k} after kill {kill}");
        }
        assert!(
            log.len() < written,
            "nothing cleaned: {} of {written} records",
            log.len()
        );
    }
    assert!(broker.terminate(), "clean exit at the end");
}
