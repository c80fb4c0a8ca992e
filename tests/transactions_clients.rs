//! Transactions through librdkafka's transactional producer against the in-process broker (KIP-98 as Kafka's
//! coordinator runs it): commit and abort over several partitions, read_committed vs read_uncommitted consumers,
//! a zombie fenced by a newer producer with the same `transactional.id`, and consume-transform-produce with the
//! consumer's offsets sent to the transaction.

use crate::common;

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

const T: Duration = Duration::from_secs(30);

fn txn_producer(bootstrap: &str, id: &str, extra: &[(&str, &str)]) -> BaseProducer {
    let mut c = common::client_config(bootstrap);
    c.set("transactional.id", id)
        .set("message.timeout.ms", "30000");
    for (k, v) in extra {
        c.set(*k, *v);
    }
    let p: BaseProducer = c.create().expect("transactional producer");
    p.init_transactions(T).expect("init_transactions");
    p
}

/// Sends `values` to `topic`, spread over `partitions` partitions, inside the open transaction.
fn send(p: &BaseProducer, topic: &str, partitions: i32, values: &[String]) {
    for (i, v) in values.iter().enumerate() {
        let partition = i as i32 % partitions;
        let key = format!("k{i}");
        p.send(
            BaseRecord::to(topic)
                .partition(partition)
                .key(&key)
                .payload(v),
        )
        .expect("enqueue");
    }
    p.flush(T).expect("flush");
}

fn values(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

fn read_all(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    isolation: &str,
    want: usize,
) -> Vec<String> {
    let c = common::consumer(
        bootstrap,
        &format!("reader-{isolation}-{topic}"),
        &[("isolation.level", isolation)],
    );
    common::assign_from_beginning(&c, topic, partitions);
    let got = common::consume_n(&c, want, T);
    // Nothing more arrives (a read_committed reader must not see aborted records late).
    let extra = c.poll(Duration::from_millis(500));
    assert!(
        !matches!(extra, Some(Ok(_))),
        "more than {want} records for {isolation}"
    );
    let mut out: Vec<String> = got
        .into_iter()
        .map(|m| String::from_utf8(m.3.unwrap()).unwrap())
        .collect();
    out.sort();
    out
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// KIP-98: committed transactions are visible to read_committed consumers, aborted ones are not, and a
/// read_uncommitted consumer sees both; the COMMIT/ABORT markers occupy one offset per partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_and_abort_over_several_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "orders", 3).await;
    let bs2 = bs.clone();
    tokio::task::spawn_blocking(move || {
        let p = txn_producer(&bs2, "tx-orders", &[]);
        let committed = values("committed", 30);
        let aborted = values("aborted", 12);
        p.begin_transaction().unwrap();
        send(&p, "orders", 3, &committed);
        p.commit_transaction(T).expect("commit");
        p.begin_transaction().unwrap();
        send(&p, "orders", 3, &aborted);
        p.abort_transaction(T).expect("abort");
        assert_eq!(
            read_all(&bs2, "orders", 3, "read_committed", 30),
            sorted(committed.clone())
        );
        let mut all = committed;
        all.extend(aborted);
        assert_eq!(
            read_all(&bs2, "orders", 3, "read_uncommitted", 42),
            sorted(all)
        );
    })
    .await
    .unwrap();
    for partition in 0..3 {
        let log = server.broker().topics().log("orders", partition).unwrap();
        // 10 committed + 4 aborted records + 2 markers per partition; nothing left open.
        assert_eq!(log.log_end_offset(), 16, "partition {partition}");
        assert_eq!(log.last_stable_offset(), log.high_watermark());
    }
    server.shutdown().await.unwrap();
}

/// Kafka's zombie fencing: a second producer with the same transactional.id bumps the epoch; the first one's
/// open transaction is aborted and its commit fails as fenced (fatal for it); the newcomer's data is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_producer_is_fenced_and_its_transaction_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "fenced", 1).await;
    let bs2 = bs.clone();
    tokio::task::spawn_blocking(move || {
        let zombie = txn_producer(&bs2, "tx-z", &[]);
        zombie.begin_transaction().unwrap();
        send(&zombie, "fenced", 1, &values("zombie", 5));
        let successor = txn_producer(&bs2, "tx-z", &[]);
        let err = zombie
            .commit_transaction(T)
            .expect_err("the zombie's commit must fail");
        let fenced = match &err {
            KafkaError::Transaction(e) => e.is_fatal(),
            _ => false,
        };
        assert!(fenced, "expected a fatal fencing error, got {err:?}");
        successor.begin_transaction().unwrap();
        send(&successor, "fenced", 1, &values("successor", 3));
        successor.commit_transaction(T).unwrap();
        assert_eq!(
            read_all(&bs2, "fenced", 1, "read_committed", 3),
            sorted(values("successor", 3))
        );
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

/// Consume-transform-produce: the consumer's positions go to the transaction (AddOffsetsToTxn +
/// TxnOffsetCommit) and become the group's committed offsets only when the transaction commits; an aborted
/// transaction leaves the committed offsets where they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_sent_to_a_transaction_are_committed_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "in", 1).await;
    common::create_topic(&bs, "out", 1).await;
    let bs2 = bs.clone();
    tokio::task::spawn_blocking(move || {
        let input = common::client_config(&bs2)
            .create::<BaseProducer>()
            .unwrap();
        for i in 0..20 {
            let v = format!("in-{i}");
            input
                .send(BaseRecord::<(), _>::to("in").payload(&v))
                .unwrap();
        }
        input.flush(T).unwrap();
        let c: BaseConsumer =
            common::consumer(&bs2, "ctp", &[("isolation.level", "read_committed")]);
        c.subscribe(&["in"]).unwrap();
        let p = txn_producer(&bs2, "tx-ctp", &[]);
        let committed_offset = |c: &BaseConsumer| {
            let mut tpl = TopicPartitionList::new();
            tpl.add_partition("in", 0);
            let got = c.committed_offsets(tpl, T).unwrap();
            got.find_partition("in", 0).unwrap().offset()
        };
        // Transaction 1: the first 10 inputs, committed.
        let first = common::consume_n(&c, 10, T);
        p.begin_transaction().unwrap();
        send(
            &p,
            "out",
            1,
            &first
                .iter()
                .map(|m| format!("t1:{}", m.1))
                .collect::<Vec<_>>(),
        );
        let mut pos = TopicPartitionList::new();
        pos.add_partition_offset("in", 0, Offset::Offset(10))
            .unwrap();
        p.send_offsets_to_transaction(&pos, &c.group_metadata().unwrap(), T)
            .unwrap();
        // A read_committed consumer asks with require_stable (KIP-447) and would wait for the transaction to end;
        // a read_uncommitted one in the same group gets the last committed offset at once.
        let peek: BaseConsumer =
            common::consumer(&bs2, "ctp", &[("isolation.level", "read_uncommitted")]);
        assert_eq!(
            committed_offset(&peek),
            Offset::Invalid,
            "not visible before the commit"
        );
        p.commit_transaction(T).unwrap();
        assert_eq!(committed_offset(&c), Offset::Offset(10));
        // Transaction 2: the next 10, aborted: the committed offset stays.
        let second = common::consume_n(&c, 10, T);
        p.begin_transaction().unwrap();
        send(
            &p,
            "out",
            1,
            &second
                .iter()
                .map(|m| format!("t2:{}", m.1))
                .collect::<Vec<_>>(),
        );
        let mut pos = TopicPartitionList::new();
        pos.add_partition_offset("in", 0, Offset::Offset(20))
            .unwrap();
        p.send_offsets_to_transaction(&pos, &c.group_metadata().unwrap(), T)
            .unwrap();
        p.abort_transaction(T).unwrap();
        assert_eq!(committed_offset(&c), Offset::Offset(10));
        let out = read_all(&bs2, "out", 1, "read_committed", 10);
        assert!(out.iter().all(|v| v.starts_with("t1:")), "{out:?}");
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
    // The committed offset and the open-transaction bookkeeping survive a restart.
    let server = common::start_broker(dir.path()).await;
    let bs = common::bootstrap(&server);
    let got = tokio::task::spawn_blocking(move || {
        let c = common::consumer(&bs, "ctp", &[]);
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition("in", 0);
        let got = c.committed_offsets(tpl, T).unwrap();
        got.find_partition("in", 0).unwrap().offset()
    })
    .await
    .unwrap();
    assert_eq!(got, Offset::Offset(10));
    server.shutdown().await.unwrap();
}
