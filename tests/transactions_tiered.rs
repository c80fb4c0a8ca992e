//! Transactions through the remote tier (KIP-405 with KIP-98): a segment is copied only below the last stable
//! offset, its transaction index goes with it, and a read_committed fetch served from remote segments carries the
//! aborted transactions read from the remote indexes, so a consumer reading from offset 0 after the local segments
//! were deleted gets exactly the committed records.

use crate::common;

use std::time::Duration;

use common::raw::{connect, request};
use common::tiered::{self, log_of, runtime, wait_for};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

const T: Duration = Duration::from_secs(30);
const PER_TXN: usize = 20;

fn value(txn: usize, i: usize) -> String {
    format!("txn{txn:02}-rec{i:02}-{}", "p".repeat(150))
}

fn txn_producer(bs: &str) -> BaseProducer {
    let p: BaseProducer = common::client_config(bs)
        .set("transactional.id", "tiered-tx")
        .set("linger.ms", "0")
        .set("batch.num.messages", "4")
        .create()
        .unwrap();
    p.init_transactions(T).unwrap();
    p
}

fn send(p: &BaseProducer, topic: &str, txn: usize) {
    for i in 0..PER_TXN {
        let v = value(txn, i);
        p.send(BaseRecord::<(), _>::to(topic).partition(0).payload(&v))
            .unwrap();
    }
    p.flush(T).unwrap();
}

fn read(bs: &str, isolation: &str, want: usize) -> Vec<String> {
    let c = common::consumer(
        bs,
        &format!("r-{isolation}"),
        &[("isolation.level", isolation)],
    );
    common::assign_from_beginning(&c, "ttx", 1);
    let got = common::consume_n(&c, want, T);
    let extra = c.poll(Duration::from_millis(500));
    assert!(
        !matches!(extra, Some(Ok(_))),
        "more than {want} records for {isolation}"
    );
    got.into_iter()
        .map(|m| String::from_utf8(m.3.unwrap()).unwrap())
        .collect()
}

#[test]
fn committed_and_aborted_transactions_read_back_from_the_remote_tier() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(tiered::start(dir.path()));
    let bs = common::bootstrap(&server);
    let topic = NewTopic::new("ttx", 1, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "4096")
        .set("local.retention.bytes", "1");
    let res = rt
        .block_on(common::admin(&bs).create_topics(&[topic], &AdminOptions::new()))
        .unwrap();
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    // A second tiered topic whose copies show that the remote log manager ran.
    tiered::tiered_topic(&rt, &bs, "clock", 1, 0, &[]);

    let p = txn_producer(&bs);
    let mut committed = Vec::new();
    let mut all = Vec::new();
    for txn in 0..8 {
        p.begin_transaction().unwrap();
        send(&p, "ttx", txn);
        let values: Vec<String> = (0..PER_TXN).map(|i| value(txn, i)).collect();
        all.extend(values.clone());
        if txn % 3 == 1 {
            p.abort_transaction(T).unwrap();
        } else {
            committed.extend(values);
            p.commit_transaction(T).unwrap();
        }
    }
    let log = log_of(&server, "ttx", 0);
    wait_for(
        "the closed transactions' segments copied",
        Duration::from_secs(30),
        || log.highest_offset_in_remote_storage() >= log.last_stable_offset() - 200,
    );

    // An open transaction spanning several segments: nothing at or past its first offset is copied.
    p.begin_transaction().unwrap();
    let open_from = log.log_end_offset();
    send(&p, "ttx", 8);
    send(&p, "ttx", 9);
    assert_eq!(log.last_stable_offset(), open_from);
    let clock = log_of(&server, "clock", 0);
    let producer = common::producer(&bs, &[("linger.ms", "0"), ("batch.num.messages", "1")]);
    rt.block_on(async {
        for i in 0..60 {
            let v = tiered::value_of(i);
            producer
                .send(
                    rdkafka::producer::FutureRecord::<(), _>::to("clock").payload(&v),
                    T,
                )
                .await
                .unwrap();
        }
    });
    // Written after the open transaction's segments rolled: once copied, a copy round has looked at them too.
    wait_for("the clock topic copied", Duration::from_secs(30), || {
        clock.highest_offset_in_remote_storage() >= 0
    });
    assert!(
        log.highest_offset_in_remote_storage() < open_from,
        "a segment of the open transaction was copied: remote {} >= {open_from}",
        log.highest_offset_in_remote_storage()
    );
    p.commit_transaction(T).unwrap();
    for txn in 8..10 {
        let values: Vec<String> = (0..PER_TXN).map(|i| value(txn, i)).collect();
        committed.extend(values.clone());
        all.extend(values);
    }
    // Close the last segment with plain records so everything of the transactions can be tiered.
    let plain: BaseProducer = common::client_config(&bs).create().unwrap();
    for i in 0..40 {
        let v = format!("plain-{i:02}-{}", "q".repeat(150));
        plain
            .send(BaseRecord::<(), _>::to("ttx").payload(&v))
            .unwrap();
        committed.push(v.clone());
        all.push(v);
    }
    plain.flush(T).unwrap();
    let marker_of_last = open_from + 2 * PER_TXN as i64;
    wait_for(
        "every transaction tiered and deleted locally",
        Duration::from_secs(30),
        || {
            log.highest_offset_in_remote_storage() >= marker_of_last
                && log.local_log_start_offset() > marker_of_last
        },
    );

    // Raw read_committed from 0: served remotely, with the aborted transactions of the remote indexes.
    rt.block_on(async {
        let mut s = connect(server.local_addr()).await;
        let req = |offset: i64| {
            FetchRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_max_wait_ms(0)
                .with_max_bytes(1 << 20)
                .with_isolation_level(1)
                .with_topics(vec![FetchTopic::default()
                    .with_topic(TopicName(StrBytes::from_static_str("ttx")))
                    .with_partitions(vec![FetchPartition::default()
                        .with_fetch_offset(offset)
                        .with_partition_max_bytes(1 << 20)])])
        };
        // Each remote read serves one segment: fetch on until past the second transaction's marker.
        let (mut aborted, mut next) = (Vec::new(), 0i64);
        for _ in 0..200 {
            if next > 2 * PER_TXN as i64 + 1 {
                break;
            }
            let r: FetchResponse = request(&mut s, ApiKey::Fetch, 11, &req(next))
                .await
                .unwrap();
            let part = &r.responses[0].partitions[0];
            assert_eq!(part.error_code, 0);
            let records = part.records.clone().unwrap_or_default();
            if let Some(last) = strata_storage::RecordBatch::iter(&records)
                .filter_map(Result::ok)
                .last()
            {
                assert!(
                    next < log.local_log_start_offset(),
                    "served from the remote tier"
                );
                next = last.next_offset();
                aborted.extend(part.aborted_transactions.clone().unwrap_or_default());
            } else {
                // A remote read deferred (reader busy): poll again.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        assert!(
            aborted.iter().any(|t| t.first_offset == PER_TXN as i64 + 1),
            "the second transaction (aborted, from offset {}) is listed: {aborted:?}",
            PER_TXN + 1
        );
    });

    let bs2 = bs.clone();
    let (got_committed, got_all) = std::thread::spawn(move || {
        (
            read(&bs2, "read_committed", committed.len()),
            read(&bs2, "read_uncommitted", all.len()),
        )
    })
    .join()
    .unwrap();
    let mut want_committed: Vec<String> = (0..10)
        .filter(|t| t % 3 != 1)
        .flat_map(|t| (0..PER_TXN).map(move |i| value(t, i)))
        .collect();
    want_committed.extend((0..40).map(|i| format!("plain-{i:02}-{}", "q".repeat(150))));
    assert_eq!(
        got_committed, want_committed,
        "exactly the committed records, in order"
    );
    assert_eq!(got_all.len(), 10 * PER_TXN + 40);
    rt.block_on(server.shutdown()).unwrap();
}
