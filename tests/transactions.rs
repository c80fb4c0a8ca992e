//! Transactions end to end (KIP-98), with librdkafka consumers and a raw client: read_committed fetches stop at
//! the last stable offset and carry the aborted transactions, read_uncommitted sees everything, ListOffsets
//! honours the isolation level.
//!
//! Until the transaction coordinator serves clients, the transactional data and the COMMIT/ABORT markers are
//! written to the partition's log directly, as the coordinator does.

mod common;

use std::time::Duration;

use common::raw::{connect, request};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use strata_storage::record::ControlRecordType;
use strata_storage::{RecordBatchBuilder, UnifiedLog};

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

/// A transactional batch of `values` from producer `pid` (epoch 0) starting at sequence `seq`.
fn txn_batch(pid: i64, seq: i32, values: &[&str]) -> bytes::Bytes {
    let mut b = RecordBatchBuilder::new()
        .producer(pid, 0, seq)
        .transactional(true);
    let now = strata_storage::time::now_ms();
    for v in values {
        b.append(now, None, Some(v.as_bytes()), &[]);
    }
    b.build()
}

fn plain(values: &[&str]) -> bytes::Bytes {
    let mut b = RecordBatchBuilder::new();
    let now = strata_storage::time::now_ms();
    for v in values {
        b.append(now, None, Some(v.as_bytes()), &[]);
    }
    b.build()
}

fn end_txn(log: &UnifiedLog, kind: ControlRecordType, pid: i64) {
    log.append_transaction_marker(kind, pid, 0, 0, 0).unwrap();
}

fn values(msgs: &[common::Consumed]) -> Vec<String> {
    msgs.iter()
        .map(|m| String::from_utf8(m.3.clone().unwrap()).unwrap())
        .collect()
}

fn fetch(topic: &str, offset: i64, isolation_level: i8) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(1 << 20)
        .with_isolation_level(isolation_level)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name(topic))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])])
}

fn latest(topic: &str, isolation_level: i8) -> ListOffsetsRequest {
    ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(isolation_level)
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(name(topic))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(-1)])])
}

/// Kafka's read_committed: a consumer sees committed transactional data and non-transactional data, never
/// aborted data, and nothing at or past the first open transaction (the LSO) until it ends; a read_uncommitted
/// consumer sees every data record. The Fetch response carries the LSO and the aborted transactions (producer
/// id + first offset); ListOffsets latest is the LSO for READ_COMMITTED and the high watermark otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_committed_skips_aborted_data_and_stops_at_the_last_stable_offset() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bootstrap = common::bootstrap(&server);
    common::create_topic(&bootstrap, "tx", 1).await;
    let log = server.broker().log("tx", 0).unwrap();
    log.append_as_leader(txn_batch(100, 0, &["a1", "a2"]), 0)
        .unwrap(); // 0, 1
    log.append_as_leader(txn_batch(200, 0, &["b1"]), 0).unwrap(); // 2
    end_txn(&log, ControlRecordType::Abort, 100); // 3
    end_txn(&log, ControlRecordType::Commit, 200); // 4
    log.append_as_leader(plain(&["c1"]), 0).unwrap(); // 5
    log.append_as_leader(txn_batch(300, 0, &["open"]), 0)
        .unwrap(); // 6, open
    assert_eq!((log.last_stable_offset(), log.high_watermark()), (6, 7));

    // Raw: the response as Kafka builds it.
    let mut s = connect(server.local_addr()).await;
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 11, &fetch("tx", 0, 1))
        .await
        .unwrap();
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.error_code, 0);
    assert_eq!((p.high_watermark, p.last_stable_offset), (7, 6));
    let aborted: Vec<(i64, i64)> = p
        .aborted_transactions
        .as_ref()
        .expect("read_committed lists aborted transactions")
        .iter()
        .map(|t| (t.producer_id.0, t.first_offset))
        .collect();
    assert_eq!(aborted, vec![(100, 0)]);
    let records = p.records.clone().unwrap();
    let last = strata_storage::RecordBatch::iter(&records)
        .map(Result::unwrap)
        .last()
        .unwrap();
    assert_eq!(last.next_offset(), 6, "nothing at or past the LSO");
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 11, &fetch("tx", 6, 1))
        .await
        .unwrap();
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.error_code, 0);
    assert!(p.records.as_ref().unwrap().is_empty());
    for (level, want) in [(1i8, 6i64), (0, 7)] {
        let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 5, &latest("tx", level))
            .await
            .unwrap();
        assert_eq!(r.topics[0].partitions[0].offset, want, "isolation {level}");
    }

    // librdkafka consumers.
    let uncommitted =
        common::consumer(&bootstrap, "ru", &[("isolation.level", "read_uncommitted")]);
    common::assign_from_beginning(&uncommitted, "tx", 1);
    let got = common::consume_n(&uncommitted, 5, Duration::from_secs(20));
    assert_eq!(values(&got), ["a1", "a2", "b1", "c1", "open"]);
    let committed = common::consumer(&bootstrap, "rc", &[("isolation.level", "read_committed")]);
    common::assign_from_beginning(&committed, "tx", 1);
    let got = common::consume_n(&committed, 2, Duration::from_secs(20));
    assert_eq!(values(&got), ["b1", "c1"]);
    end_txn(&log, ControlRecordType::Commit, 300); // 7
    log.append_as_leader(plain(&["c2"]), 0).unwrap(); // 8
    let got = common::consume_n(&committed, 2, Duration::from_secs(20));
    assert_eq!(values(&got), ["open", "c2"]);
    assert_eq!(got[0].1, 6);
    server.shutdown().await.unwrap();
}
