//! `__consumer_offsets` compacted by the log cleaner, as Kafka does it (the topic is `cleanup.policy=compact`): commits
//! from a real client (librdkafka) shrink to the latest per key, groups and offsets are the same after a restart,
//! and transactional offset commits (TxnOffsetCommit) follow Kafka's cleaner rules for transactional data: an open
//! transaction is never cleaned (it stays above the last stable offset), an aborted one's records go.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use strata_broker::Server;
use strata_storage::{LogCleaner, RecordBatch, TopicPartition, UnifiedLog};

const T: Duration = Duration::from_secs(30);

/// Small `__consumer_offsets` segments, so commits roll them and the cleaner has something to clean.
fn props(cleaner_threads: bool) -> Vec<(&'static str, &'static str)> {
    vec![
        ("offsets.topic.segment.bytes", "1024"),
        ("log.cleaner.backoff.ms", "100"),
        (
            "log.cleaner.enable",
            if cleaner_threads { "true" } else { "false" },
        ),
    ]
}

fn offsets_log(server: &Server) -> Arc<UnifiedLog> {
    server
        .broker()
        .log_manager()
        .get_log(&TopicPartition::new("__consumer_offsets", 0))
        .expect("__consumer_offsets-0")
}

/// (records, bytes) in the log, and its batches.
fn contents(log: &UnifiedLog) -> (i64, u64, Vec<RecordBatch>) {
    let mut batches: Vec<RecordBatch> = Vec::new();
    let mut offset = log.log_start_offset();
    while offset < log.log_end_offset() {
        // A read ends at its segment's end.
        let data = log.read(offset, 1 << 24, true, None).unwrap().records;
        let before = batches.len();
        batches.extend(RecordBatch::iter(&data).map(Result::unwrap));
        match batches[before..].last() {
            Some(b) => offset = b.next_offset(),
            None => break,
        }
    }
    let records = batches.iter().map(|b| b.records_count() as i64).sum();
    (records, log.size_in_bytes(), batches)
}

fn commit(c: &BaseConsumer, topic: &str, offset: i64) {
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(offset))
        .unwrap();
    c.commit(&tpl, CommitMode::Sync).expect("commit");
}

fn committed(bootstrap: &str, group: &str, topic: &str) -> Offset {
    let c = common::consumer(bootstrap, group, &[]);
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(topic, 0);
    let got = c.committed_offsets(tpl, T).unwrap();
    got.find_partition(topic, 0).unwrap().offset()
}

fn group_state(bootstrap: &str, group: &str) -> (String, String) {
    let c = common::consumer(bootstrap, "observer", &[]);
    let list = c.fetch_group_list(Some(group), T).unwrap();
    let g = &list.groups()[0];
    (g.state().to_string(), g.protocol_type().to_string())
}

/// Cleans until no log is due; whether `__consumer_offsets-0` was among them.
fn clean_all(cleaner: &LogCleaner) -> bool {
    let mut offsets = false;
    while let Some(stats) = cleaner.clean_once().unwrap() {
        offsets |= stats.tp == TopicPartition::new("__consumer_offsets", 0);
    }
    offsets
}

/// Produces `in-0` .. `in-{n-1}` to topic `in` and waits for them (blocking).
fn produce_inputs(bootstrap: &str, n: usize) {
    let input = common::client_config(bootstrap)
        .create::<BaseProducer>()
        .unwrap();
    for i in 0..n {
        let v = format!("in-{i}");
        input
            .send(BaseRecord::<(), _>::to("in").payload(&v))
            .unwrap();
    }
    input.flush(T).unwrap();
}

/// Kafka: `__consumer_offsets` is a compacted topic cleaned by the log cleaner (`offsets.topic.segment.bytes`
/// segments). 400 commits of one partition by a librdkafka consumer and a deleted group's tombstones: the running
/// cleaner threads shrink the log to about one record per key; after a restart the group, its state and its
/// latest offset are as before, and the deleted group has no offsets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cleaner_compacts_commits_and_groups_and_offsets_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker_with(dir.path(), &props(true)).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "in", 1).await;
    let bs2 = bs.clone();
    tokio::task::spawn_blocking(move || {
        produce_inputs(&bs2, 5);
        let c = common::consumer(&bs2, "g", &[]);
        c.subscribe(&["in"]).unwrap();
        common::consume_n(&c, 5, T);
        for offset in 1..=400 {
            commit(&c, "in", offset);
        }
        let gone = common::consumer(&bs2, "gone", &[]);
        commit(&gone, "in", 3);
        drop((c, gone));
    })
    .await
    .unwrap();
    let admin = common::admin(&bs);
    let deleted = admin
        .delete_groups(&["gone"], &rdkafka::admin::AdminOptions::new())
        .await
        .unwrap();
    assert!(deleted[0].is_ok(), "{deleted:?}");
    let log = offsets_log(&server);
    let (appended, written_bytes) = (log.log_end_offset(), log.size_in_bytes());
    let deadline = Instant::now() + T;
    let (records, bytes) = loop {
        let (records, bytes, _) = contents(&log);
        if records < 40 {
            break (records, bytes);
        }
        assert!(
            Instant::now() < deadline,
            "not compacted: {records} records"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    eprintln!(
        "__consumer_offsets-0: {appended} records appended ({written_bytes} bytes on disk as the commits ended, the cleaner running meanwhile); \
         after cleaning {records} records, {bytes} bytes"
    );
    assert_eq!(log.log_start_offset(), 0, "cleaning keeps the log start");
    let bs2 = bs.clone();
    let before = tokio::task::spawn_blocking(move || group_state(&bs2, "g"))
        .await
        .unwrap();
    assert_eq!(before.0, "Empty", "the consumer left");
    server.shutdown().await.unwrap();

    let server = common::start_broker_with(dir.path(), &props(true)).await;
    let bs = common::bootstrap(&server);
    tokio::task::spawn_blocking(move || {
        assert_eq!(committed(&bs, "g", "in"), Offset::Offset(400));
        assert_eq!(committed(&bs, "gone", "in"), Offset::Invalid);
        assert_eq!(
            group_state(&bs, "g"),
            before,
            "group state after the restart"
        );
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

fn txn_producer(bootstrap: &str, id: &str) -> BaseProducer {
    let mut c = common::client_config(bootstrap);
    c.set("transactional.id", id)
        .set("message.timeout.ms", "30000");
    let p: BaseProducer = c.create().expect("transactional producer");
    p.init_transactions(T).expect("init_transactions");
    p
}

/// Transactional records of `__consumer_offsets` (TxnOffsetCommit data, not markers) still holding records.
fn txn_offset_records(log: &UnifiedLog) -> i32 {
    contents(log)
        .2
        .iter()
        .filter(|b| b.is_transactional() && !b.is_control())
        .map(|b| b.records_count())
        .sum()
}

/// Kafka's cleaner on transactional data, in `__consumer_offsets`: a pending TxnOffsetCommit is above the last
/// stable offset, so a cleaning pass leaves it (and does not let it supersede the committed record of its key) and
/// the COMMIT makes it visible (also after another pass and a restart); an aborted one's record is removed by the
/// next pass and the committed offset stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_txn_offset_commit_survives_cleaning_and_an_aborted_one_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    // Cleaner threads off: the test runs each pass itself, on the broker's own cleaner.
    let server = common::start_broker_with(dir.path(), &props(false)).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "in", 1).await;
    common::create_topic(&bs, "out", 1).await;
    let log = offsets_log(&server);
    let cleaner = server.broker().cleaner().expect("cleaner").clone();
    let bs2 = bs.clone();
    let log2 = log.clone();
    tokio::task::spawn_blocking(move || {
        produce_inputs(&bs2, 20);
        let busy = common::consumer(&bs2, "busy", &[]);
        let churn = |n: i64| {
            for offset in 1..=n {
                commit(&busy, "in", offset);
            }
        };
        let c: BaseConsumer =
            common::consumer(&bs2, "ctp", &[("isolation.level", "read_committed")]);
        c.subscribe(&["in"]).unwrap();
        common::consume_n(&c, 20, T);
        let p = txn_producer(&bs2, "tx-offsets");
        churn(100);
        // Transaction 1: offset 10 of "ctp", pending while the cleaner passes.
        p.begin_transaction().unwrap();
        p.send(BaseRecord::to("out").key("k").payload("t1"))
            .unwrap();
        p.flush(T).unwrap();
        let mut pos = TopicPartitionList::new();
        pos.add_partition_offset("in", 0, Offset::Offset(10))
            .unwrap();
        p.send_offsets_to_transaction(&pos, &c.group_metadata().unwrap(), T)
            .unwrap();
        churn(100);
        let (before, before_bytes, _) = contents(&log2);
        assert!(clean_all(&cleaner), "__consumer_offsets was cleaned");
        let (after, after_bytes, _) = contents(&log2);
        eprintln!(
            "__consumer_offsets-0 with an open transaction: {before} records ({before_bytes} bytes), \
             {after} ({after_bytes} bytes) after a pass"
        );
        assert!(
            after < before,
            "commits below the open transaction compacted"
        );
        assert_eq!(txn_offset_records(&log2), 1, "the pending commit stays");
        p.commit_transaction(T).unwrap();
        assert_eq!(committed(&bs2, "ctp", "in"), Offset::Offset(10));
        churn(100);
        clean_all(&cleaner);
        assert_eq!(
            txn_offset_records(&log2),
            1,
            "a committed transaction's record stays"
        );
        assert_eq!(committed(&bs2, "ctp", "in"), Offset::Offset(10));

        // Transaction 2: offset 20, aborted; the next pass removes its record. Commits before it are dirty.
        churn(100);
        p.begin_transaction().unwrap();
        p.send(BaseRecord::to("out").key("k").payload("t2"))
            .unwrap();
        p.flush(T).unwrap();
        let mut pos = TopicPartitionList::new();
        pos.add_partition_offset("in", 0, Offset::Offset(20))
            .unwrap();
        p.send_offsets_to_transaction(&pos, &c.group_metadata().unwrap(), T)
            .unwrap();
        // A pass while it is open must not map it (it would then supersede transaction 1's record of the key).
        churn(100);
        assert!(clean_all(&cleaner));
        assert_eq!(txn_offset_records(&log2), 2, "both transactions' records");
        p.abort_transaction(T).unwrap();
        churn(100);
        assert!(clean_all(&cleaner));
        assert_eq!(
            txn_offset_records(&log2),
            1,
            "the aborted commit's record is removed"
        );
        assert_eq!(committed(&bs2, "ctp", "in"), Offset::Offset(10));
        drop((c, busy));
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();

    let server = common::start_broker_with(dir.path(), &props(false)).await;
    let bs = common::bootstrap(&server);
    tokio::task::spawn_blocking(move || {
        assert_eq!(committed(&bs, "ctp", "in"), Offset::Offset(10));
        assert_eq!(committed(&bs, "busy", "in"), Offset::Offset(100));
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

/// A `__consumer_offsets` log as the rewrite-based compaction of earlier strata versions left it (the history, then
/// the live offsets appended again in a new segment, the log start moved to them) loads as before: each group's
/// latest offset, a deleted offset absent; the cleaner then compacts it like any log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_compacted_by_the_old_rewrite_still_loads() {
    use strata_broker::group::offsets::{encode_key, encode_value, OffsetEntry};
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker_with(dir.path(), &props(false)).await;
    common::create_topic(&common::bootstrap(&server), "in", 1).await;
    let log = offsets_log(&server);
    let record = |group: &str, offset: Option<i64>| {
        let key = encode_key(group, "in", 0).unwrap();
        let value = offset.map(|offset| {
            encode_value(&OffsetEntry {
                offset,
                leader_epoch: -1,
                metadata: String::new(),
                commit_timestamp: 1,
            })
            .unwrap()
        });
        let mut b = strata_storage::RecordBatchBuilder::new();
        b.append(
            strata_storage::time::now_ms(),
            Some(&key),
            value.as_deref(),
            &[],
        );
        b.build()
    };
    for offset in 1..=50 {
        log.append_as_leader(record("g", Some(offset)), 0).unwrap();
        log.append_as_leader(record("d", Some(offset)), 0).unwrap();
    }
    log.append_as_leader(record("d", None), 0).unwrap();
    // The old rewrite: roll, the live offsets again, the log start moved to them.
    log.roll().unwrap();
    let start = log.log_end_offset();
    log.append_as_leader(record("g", Some(50)), 0).unwrap();
    log.flush().unwrap();
    log.maybe_increment_log_start_offset(start).unwrap();
    log.append_as_leader(record("g", Some(51)), 0).unwrap();
    drop(log);
    server.shutdown().await.unwrap();

    let server = common::start_broker_with(dir.path(), &props(false)).await;
    let bs = common::bootstrap(&server);
    let (g, d) =
        tokio::task::spawn_blocking(move || (committed(&bs, "g", "in"), committed(&bs, "d", "in")))
            .await
            .unwrap();
    assert_eq!((g, d), (Offset::Offset(51), Offset::Invalid));
    // The new records (51 of g) are a small share of the log: the restarted broker cleans at any dirty ratio.
    server.shutdown().await.unwrap();
    let mut eager = props(false);
    eager.push(("log.cleaner.min.cleanable.ratio", "0.01"));
    let server = common::start_broker_with(dir.path(), &eager).await;
    offsets_log(&server).roll().unwrap();
    let cleaner = server.broker().cleaner().unwrap().clone();
    assert!(tokio::task::spawn_blocking(move || clean_all(&cleaner))
        .await
        .unwrap());
    server.shutdown().await.unwrap();
    let server = common::start_broker_with(dir.path(), &props(false)).await;
    let bs = common::bootstrap(&server);
    let (g, d) =
        tokio::task::spawn_blocking(move || (committed(&bs, "g", "in"), committed(&bs, "d", "in")))
            .await
            .unwrap();
    assert_eq!((g, d), (Offset::Offset(51), Offset::Invalid));
    server.shutdown().await.unwrap();
}

/// `offsets.retention.minutes` (KIP-211): once a group has been empty for the retention (its offsets' expiry
/// checked with a clock moved past it), its committed offsets are tombstoned in `__consumer_offsets` and the
/// group is gone; after a restart they stay gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_offsets_stay_expired_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker_with(dir.path(), &props(false)).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "in", 1).await;
    let bs2 = bs.clone();
    tokio::task::spawn_blocking(move || {
        produce_inputs(&bs2, 5);
        let c = common::consumer(&bs2, "g", &[]);
        c.subscribe(&["in"]).unwrap();
        common::consume_n(&c, 5, T);
        commit(&c, "in", 4);
        let solo = common::consumer(&bs2, "solo", &[]);
        commit(&solo, "in", 3);
        drop((c, solo));
    })
    .await
    .unwrap();
    let retention = server.broker().config().offsets_retention_ms;
    assert_eq!(retention, 7 * 24 * 3_600_000, "Kafka's default: 7 days");
    let b = server.broker().clone();
    let later = strata_storage::time::now_ms() + retention + 60_000;
    let expired = tokio::task::spawn_blocking(move || b.expire_offsets(later))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(expired, 2, "g (empty since it left) and solo");
    server.shutdown().await.unwrap();

    let server = common::start_broker_with(dir.path(), &props(false)).await;
    let bs = common::bootstrap(&server);
    assert!(!server.broker().group_exists("g"), "g is gone");
    tokio::task::spawn_blocking(move || {
        assert_eq!(committed(&bs, "g", "in"), Offset::Invalid);
        assert_eq!(committed(&bs, "solo", "in"), Offset::Invalid);
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}
