//! Issue 11 item 5: topic names of up to 249 characters are legal in Kafka (`Topic.MAX_NAME_LENGTH`, so that
//! `topic-partition` fits a 255-byte file name). Such a topic must tier to the filesystem backend (every object key
//! component within 255 bytes), be deleted without a trace (the delete-rename cuts the topic as Kafka's
//! `LocalLog.logDeleteDirName` does), and a topic created again under the name must never serve the old records,
//! also after a restart.
use crate::common;

use std::path::Path;
use std::time::Duration;

use common::tiered::*;
use common::{admin, assign_from_beginning, consume_n, producer};
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::FutureRecord;

const MESSAGES: usize = 200;

/// Every file under `root` (relative paths); panics on a name longer than 255 bytes.
fn files_under(root: &Path) -> Vec<String> {
    fn walk(base: &Path, p: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            let name = e.file_name();
            assert!(name.len() <= 255, "file name of {} bytes", name.len());
            if e.path().is_dir() {
                walk(base, &e.path(), out);
            } else {
                out.push(e.path().strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// Entries of `dir` whose name starts like `topic` (the first 200 characters).
fn entries_like(dir: &Path, topic: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&topic[..200]))
        .collect()
}

fn consume(bs: &str, topic: &str, group: &str, n: usize) -> Vec<(i64, Vec<u8>)> {
    let c: BaseConsumer = common::consumer(bs, group, &[]);
    assign_from_beginning(&c, topic, 1);
    consume_n(&c, n, Duration::from_secs(20))
        .into_iter()
        .map(|(_, offset, _, value)| (offset, value.unwrap_or_default()))
        .collect()
}

#[test]
fn a_249_character_topic_tiers_deletes_without_a_trace_and_comes_back_empty() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let remote = dir.path().join("remote");
    let topic = format!("long.{}", "x".repeat(244));
    assert_eq!(topic.len(), 249, "Kafka's longest legal topic name");

    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    let addr = server.local_addr();
    tiered_topic(
        &rt,
        &bs,
        &topic,
        1,
        MESSAGES,
        &[("retention.ms", "-1"), ("retention.bytes", "-1")],
    );
    let log = log_of(&server, &topic, 0);
    wait_for(
        "segments of the long topic offloaded",
        Duration::from_secs(20),
        || {
            log.highest_offset_in_remote_storage() > (MESSAGES as i64) / 2
                && log.local_log_start_offset() > (MESSAGES as i64) / 2
        },
    );
    let uploaded = files_under(&remote);
    assert!(
        uploaded.iter().any(|f| f.ends_with(".rsm-manifest")),
        "no segment uploaded: {uploaded:?}"
    );
    // Read back from the remote tier, byte-identical.
    let got = consume(&bs, &topic, "before-delete", MESSAGES);
    for (i, (offset, value)) in got.iter().enumerate() {
        assert_eq!(
            (*offset, value.as_slice()),
            (i as i64, &value_of(i)[..]),
            "message {i}"
        );
    }

    // DeleteTopics answers 0; no partition dir and no remote object is left.
    let res = rt
        .block_on(admin(&bs).delete_topics(&[&topic], &AdminOptions::new()))
        .expect("delete_topics");
    assert!(matches!(res.as_slice(), [Ok(n)] if *n == topic), "{res:?}");
    assert!(
        entries_like(&data, &topic).is_empty(),
        "{:?}",
        entries_like(&data, &topic)
    );
    wait_for(
        "remote objects of the deleted topic removed",
        Duration::from_secs(20),
        || files_under(&remote).is_empty(),
    );

    // Created again under the name: empty, and only the new records are served.
    let t =
        NewTopic::new(&topic, 1, TopicReplication::Fixed(1)).set("remote.storage.enable", "true");
    let res = rt
        .block_on(admin(&bs).create_topics(&[t], &AdminOptions::new()))
        .expect("create_topics");
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    assert_eq!(
        rt.block_on(list_offset(addr, &topic, -1)).0,
        0,
        "the new topic is empty"
    );
    let p = producer(&bs, &[("linger.ms", "0")]);
    rt.block_on(async {
        for i in 0..3 {
            let v = format!("fresh-{i}");
            p.send(
                FutureRecord::<(), _>::to(&topic).payload(&v).partition(0),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    let fresh: Vec<(i64, Vec<u8>)> = (0..3)
        .map(|i| (i, format!("fresh-{i}").into_bytes()))
        .collect();
    assert_eq!(consume(&bs, &topic, "after-recreate", 3), fresh);
    assert_eq!(rt.block_on(list_offset(addr, &topic, -1)).0, 3);
    drop(p);

    // Also after a restart.
    rt.block_on(server.shutdown()).expect("clean shutdown");
    let server = rt.block_on(start(dir.path()));
    let bs = server.local_addr().to_string();
    assert_eq!(
        rt.block_on(list_offset(server.local_addr(), &topic, -2)).0,
        0
    );
    assert_eq!(
        rt.block_on(list_offset(server.local_addr(), &topic, -1)).0,
        3
    );
    assert_eq!(consume(&bs, &topic, "after-restart", 3), fresh);
    assert_eq!(
        entries_like(&data, &topic).len(),
        1,
        "{:?}",
        entries_like(&data, &topic)
    );
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

/// A partition dir left by a delete that failed half-way in an older version (the registry no longer has the topic,
/// the dir with its records is still there) is set aside at start, never adopted: a topic created again under the
/// name is empty, also after a restart (Kafka sets aside a log whose topic id does not match as stray).
#[test]
fn a_leftover_partition_dir_of_a_deleted_topic_is_never_served_by_a_new_topic() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let topic = "reborn";
    let server = rt.block_on(common::start_broker(dir.path()));
    let bs = server.local_addr().to_string();
    rt.block_on(common::create_topic(&bs, topic, 1));
    let p = producer(&bs, &[("linger.ms", "0")]);
    rt.block_on(async {
        for i in 0..5 {
            let v = format!("old-{i}");
            p.send(
                FutureRecord::<(), _>::to(topic).payload(&v).partition(0),
                Duration::from_secs(10),
            )
            .await
            .expect("delivered");
        }
    });
    drop(p);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    // What a failed delete left: the registry entry gone, the partition dir with its records still there.
    let registry = dir.path().join("strata-topics.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&registry).unwrap()).unwrap();
    assert!(json["topics"]
        .as_object_mut()
        .unwrap()
        .remove(topic)
        .is_some());
    std::fs::write(&registry, serde_json::to_vec(&json).unwrap()).unwrap();
    assert!(dir.path().join("reborn-0").is_dir());

    let server = rt.block_on(common::start_broker(dir.path()));
    let bs = server.local_addr().to_string();
    rt.block_on(common::create_topic(&bs, topic, 1));
    assert_eq!(
        rt.block_on(list_offset(server.local_addr(), topic, -1)).0,
        0,
        "the new topic adopted the deleted topic's records"
    );
    let p = producer(&bs, &[("linger.ms", "0")]);
    rt.block_on(
        p.send(
            FutureRecord::<(), _>::to(topic)
                .payload("new-0")
                .partition(0),
            Duration::from_secs(10),
        ),
    )
    .expect("delivered");
    drop(p);
    assert_eq!(consume(&bs, topic, "g1", 1), vec![(0, b"new-0".to_vec())]);
    rt.block_on(server.shutdown()).expect("clean shutdown");

    let server = rt.block_on(common::start_broker(dir.path()));
    assert_eq!(
        rt.block_on(list_offset(server.local_addr(), topic, -2)).0,
        0
    );
    assert_eq!(
        rt.block_on(list_offset(server.local_addr(), topic, -1)).0,
        1
    );
    assert_eq!(
        consume(&server.local_addr().to_string(), topic, "g2", 1),
        vec![(0, b"new-0".to_vec())]
    );
    // The old records are kept aside, not lost.
    let stray: Vec<_> = entries(dir.path())
        .into_iter()
        .filter(|n| n.starts_with("reborn-0.") && n.ends_with("-stray"))
        .collect();
    assert_eq!(stray.len(), 1, "{:?}", entries(dir.path()));
    rt.block_on(server.shutdown()).expect("clean shutdown");
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}
