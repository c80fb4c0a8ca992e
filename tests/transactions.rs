//! Transactions (KIP-98) with librdkafka consumers and a raw client: read_committed fetches stop at the last
//! stable offset and carry the aborted transactions, read_uncommitted sees everything, ListOffsets honours the
//! isolation level (the first test writes data and markers to the log directly, as the coordinator does); the
//! coordinator's answers to bad requests are Kafka's codes with nothing written; a transaction past its timeout
//! is aborted by the broker. librdkafka's transactional producer is in `transactions_clients.rs`.

use crate::common;

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
    let log = server.broker().topics().log("tx", 0).unwrap();
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

fn txn_batch_epoch(pid: i64, epoch: i16, seq: i32, values: &[&str]) -> bytes::Bytes {
    let mut b = RecordBatchBuilder::new()
        .producer(pid, epoch, seq)
        .transactional(true);
    let now = strata_storage::time::now_ms();
    for v in values {
        b.append(now, None, Some(v.as_bytes()), &[]);
    }
    b.build()
}

fn produce(topic: &str, txn_id: Option<&str>, records: bytes::Bytes) -> ProduceRequest {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_transactional_id(txn_id.map(|t| TransactionalId(StrBytes::from_string(t.into()))))
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(topic))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])])
}

fn produce_code(r: &ProduceResponse) -> i16 {
    r.responses[0].partition_responses[0].error_code
}

fn tid(s: &str) -> TransactionalId {
    TransactionalId(StrBytes::from_string(s.into()))
}

async fn init(s: &mut tokio::net::TcpStream, id: &str, timeout_ms: i32) -> (i64, i16) {
    let r: InitProducerIdResponse = request(
        s,
        ApiKey::InitProducerId,
        4,
        &InitProducerIdRequest::default()
            .with_transactional_id(Some(tid(id)))
            .with_transaction_timeout_ms(timeout_ms)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    )
    .await
    .unwrap();
    assert_eq!(r.error_code, 0);
    (r.producer_id.0, r.producer_epoch)
}

fn add_partitions(
    id: &str,
    pid: i64,
    epoch: i16,
    topics: &[(&str, i32)],
) -> AddPartitionsToTxnRequest {
    use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
    AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(tid(id))
        .with_v3_and_below_producer_id(ProducerId(pid))
        .with_v3_and_below_producer_epoch(epoch)
        .with_v3_and_below_topics(
            topics
                .iter()
                .map(|(t, p)| {
                    AddPartitionsToTxnTopic::default()
                        .with_name(name(t))
                        .with_partitions(vec![*p])
                })
                .collect(),
        )
}

fn add_codes(r: &AddPartitionsToTxnResponse) -> Vec<(String, i16)> {
    r.results_by_topic_v3_and_below
        .iter()
        .flat_map(|t| {
            t.results_by_partition
                .iter()
                .map(move |p| (t.name.0.to_string(), p.partition_error_code))
        })
        .collect()
}

fn end(id: &str, pid: i64, epoch: i16, commit: bool) -> EndTxnRequest {
    EndTxnRequest::default()
        .with_transactional_id(tid(id))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit)
}

/// Kafka's coordinator errors, each with nothing written: EndTxn for an unknown id is INVALID_PRODUCER_ID_MAPPING
/// (Kafka 4.4 answers so: tests/differential, case txn/end-other-id);
/// a wrong epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before KIP-588's versions); an unknown topic in
/// AddPartitionsToTxn is UNKNOWN_TOPIC_OR_PARTITION with the rest OPERATION_NOT_ATTEMPTED; a transactional produce
/// to a partition not in the transaction is INVALID_TXN_STATE (KIP-890 verification), one without a
/// transactional id TRANSACTIONAL_ID_AUTHORIZATION_FAILED, a client's control batch INVALID_RECORD; committing an
/// aborted transaction is INVALID_TXN_STATE, a retried commit succeeds again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_transactional_requests_get_kafkas_codes_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bootstrap = common::bootstrap(&server);
    common::create_topic(&bootstrap, "t", 1).await;
    let log = server.broker().topics().log("t", 0).unwrap();
    let mut s = connect(server.local_addr()).await;
    let (pid, epoch) = init(&mut s, "bad", 60_000).await;

    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("nope", pid, epoch, true))
        .await
        .unwrap();
    assert_eq!(r.error_code, 49, "INVALID_PRODUCER_ID_MAPPING");
    let r: AddPartitionsToTxnResponse = request(
        &mut s,
        ApiKey::AddPartitionsToTxn,
        3,
        &add_partitions("bad", pid, epoch + 1, &[("t", 0)]),
    )
    .await
    .unwrap();
    assert_eq!(add_codes(&r), [("t".to_string(), 90)], "PRODUCER_FENCED");
    let r: AddPartitionsToTxnResponse = request(
        &mut s,
        ApiKey::AddPartitionsToTxn,
        1,
        &add_partitions("bad", pid, epoch + 1, &[("t", 0)]),
    )
    .await
    .unwrap();
    assert_eq!(
        add_codes(&r),
        [("t".to_string(), 47)],
        "INVALID_PRODUCER_EPOCH below v2"
    );
    let r: AddPartitionsToTxnResponse = request(
        &mut s,
        ApiKey::AddPartitionsToTxn,
        3,
        &add_partitions("bad", pid, epoch, &[("t", 0), ("missing", 0)]),
    )
    .await
    .unwrap();
    let mut codes = add_codes(&r);
    codes.sort();
    assert_eq!(codes, [("missing".to_string(), 3), ("t".to_string(), 55)]);

    // Produce: not added / no transactional id / a control batch.
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce("t", Some("bad"), txn_batch_epoch(pid, epoch, 0, &["x"])),
    )
    .await
    .unwrap();
    assert_eq!(produce_code(&r), 48, "INVALID_TXN_STATE");
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce("t", None, txn_batch_epoch(pid, epoch, 0, &["x"])),
    )
    .await
    .unwrap();
    assert_eq!(
        produce_code(&r),
        53,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    );
    let mut control = RecordBatchBuilder::new()
        .producer(pid, epoch, -1)
        .transactional(true)
        .control(true);
    control.append(
        strata_storage::time::now_ms(),
        Some(&[0, 0, 0, 1]),
        Some(&[0, 0, 0, 0, 0, 0]),
        &[],
    );
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce("t", Some("bad"), control.build()),
    )
    .await
    .unwrap();
    assert_eq!(produce_code(&r), 87, "INVALID_RECORD");
    assert!(r.responses[0].partition_responses[0]
        .error_message
        .as_deref()
        .unwrap_or_default()
        .contains("control records"));
    assert_eq!(log.log_end_offset(), 0, "nothing was written");

    // The proper flow, then the wrong ends.
    let r: AddPartitionsToTxnResponse = request(
        &mut s,
        ApiKey::AddPartitionsToTxn,
        3,
        &add_partitions("bad", pid, epoch, &[("t", 0)]),
    )
    .await
    .unwrap();
    assert_eq!(add_codes(&r), [("t".to_string(), 0)]);
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce(
            "t",
            Some("bad"),
            txn_batch_epoch(pid, epoch, 0, &["a", "b"]),
        ),
    )
    .await
    .unwrap();
    assert_eq!(produce_code(&r), 0);
    assert_eq!(log.last_stable_offset(), 0, "open transaction");
    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("bad", pid, epoch + 1, true))
        .await
        .unwrap();
    assert_eq!(r.error_code, 90, "PRODUCER_FENCED");
    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("bad", pid, epoch, false))
        .await
        .unwrap();
    assert_eq!(r.error_code, 0);
    assert_eq!((log.log_end_offset(), log.last_stable_offset()), (3, 3));
    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("bad", pid, epoch, false))
        .await
        .unwrap();
    assert_eq!(r.error_code, 0, "a retried abort");
    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("bad", pid, epoch, true))
        .await
        .unwrap();
    assert_eq!(
        r.error_code, 48,
        "committing an aborted transaction: INVALID_TXN_STATE"
    );
    assert_eq!(
        log.log_end_offset(),
        3,
        "the refused requests wrote nothing"
    );
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 11, &fetch("t", 0, 1))
        .await
        .unwrap();
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.aborted_transactions.as_ref().map(Vec::len), Some(1));
    server.shutdown().await.unwrap();
}

/// Kafka's timeout abort: a transaction open past its transaction.timeout.ms is aborted by the broker (every
/// transaction.abort.timed.out.transaction.cleanup.interval.ms), its producer fenced by the epoch bump, so the
/// LSO moves on and later data reaches read_committed consumers; DescribeTransactions and ListTransactions show it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_past_its_timeout_is_aborted_and_stops_blocking_the_lso() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker_with(
        dir.path(),
        &[(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            "100",
        )],
    )
    .await;
    let bootstrap = common::bootstrap(&server);
    common::create_topic(&bootstrap, "slow", 1).await;
    let log = server.broker().topics().log("slow", 0).unwrap();
    let mut s = connect(server.local_addr()).await;
    let (pid, epoch) = init(&mut s, "stuck", 800).await;
    let r: AddPartitionsToTxnResponse = request(
        &mut s,
        ApiKey::AddPartitionsToTxn,
        3,
        &add_partitions("stuck", pid, epoch, &[("slow", 0)]),
    )
    .await
    .unwrap();
    assert_eq!(add_codes(&r), [("slow".to_string(), 0)]);
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce(
            "slow",
            Some("stuck"),
            txn_batch_epoch(pid, epoch, 0, &["never"]),
        ),
    )
    .await
    .unwrap();
    assert_eq!(produce_code(&r), 0);
    log.append_as_leader(plain(&["later"]), 0).unwrap();
    assert_eq!(log.last_stable_offset(), 0);
    let listed: ListTransactionsResponse = request(
        &mut s,
        ApiKey::ListTransactions,
        1,
        &ListTransactionsRequest::default()
            .with_state_filters(vec![StrBytes::from_static_str("Ongoing")]),
    )
    .await
    .unwrap();
    assert_eq!(listed.transaction_states.len(), 1);
    common::wait_until(
        "the timed-out transaction is aborted",
        Duration::from_secs(20),
        || log.last_stable_offset() == log.high_watermark(),
    );
    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("stuck", pid, epoch, true))
        .await
        .unwrap();
    assert_eq!(r.error_code, 90, "the producer was fenced");
    let d: DescribeTransactionsResponse = request(
        &mut s,
        ApiKey::DescribeTransactions,
        0,
        &DescribeTransactionsRequest::default()
            .with_transactional_ids(vec![tid("stuck"), tid("unknown")]),
    )
    .await
    .unwrap();
    let st = &d.transaction_states[0];
    assert_eq!(
        (
            st.error_code,
            st.transaction_state.as_str(),
            st.producer_epoch
        ),
        (0, "CompleteAbort", epoch + 1)
    );
    assert_eq!(d.transaction_states[1].error_code, 105);
    let committed = common::consumer(&bootstrap, "rc", &[("isolation.level", "read_committed")]);
    common::assign_from_beginning(&committed, "slow", 1);
    let got = tokio::task::spawn_blocking(move || {
        common::consume_n(&committed, 1, Duration::from_secs(20))
    })
    .await
    .unwrap();
    assert_eq!(values(&got), ["later"]);
    server.shutdown().await.unwrap();
}

/// KIP-447: offsets sent to an open transaction are invisible to OffsetFetch until the commit; a fetch with
/// `require_stable` gets UNSTABLE_OFFSET_COMMIT (retriable) for those partitions meanwhile, and the committed
/// offset once the transaction commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_in_an_open_transaction_are_unstable_until_it_commits() {
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
    use kafka_protocol::messages::txn_offset_commit_request::{
        TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
    };
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bootstrap = common::bootstrap(&server);
    common::create_topic(&bootstrap, "src", 1).await;
    let mut s = connect(server.local_addr()).await;
    let (pid, epoch) = init(&mut s, "ctp", 60_000).await;
    let group = GroupId(StrBytes::from_static_str("g"));
    let r: AddOffsetsToTxnResponse = request(
        &mut s,
        ApiKey::AddOffsetsToTxn,
        3,
        &AddOffsetsToTxnRequest::default()
            .with_transactional_id(tid("ctp"))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_group_id(group.clone()),
    )
    .await
    .unwrap();
    assert_eq!(r.error_code, 0);
    let r: TxnOffsetCommitResponse = request(
        &mut s,
        ApiKey::TxnOffsetCommit,
        3,
        &TxnOffsetCommitRequest::default()
            .with_transactional_id(tid("ctp"))
            .with_group_id(group.clone())
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_generation_id(-1)
            .with_topics(vec![TxnOffsetCommitRequestTopic::default()
                .with_name(name("src"))
                .with_partitions(vec![TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(42)
                    .with_committed_leader_epoch(-1)])]),
    )
    .await
    .unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    let fetch_offsets = |stable: bool| {
        OffsetFetchRequest::default()
            .with_group_id(group.clone())
            .with_require_stable(stable)
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name(name("src"))
                .with_partition_indexes(vec![0])]))
    };
    let answer = |r: &OffsetFetchResponse| {
        let p = &r.topics[0].partitions[0];
        (p.error_code, p.committed_offset)
    };
    let r: OffsetFetchResponse = request(&mut s, ApiKey::OffsetFetch, 7, &fetch_offsets(true))
        .await
        .unwrap();
    assert_eq!(answer(&r), (88, -1), "UNSTABLE_OFFSET_COMMIT");
    let r: OffsetFetchResponse = request(&mut s, ApiKey::OffsetFetch, 7, &fetch_offsets(false))
        .await
        .unwrap();
    assert_eq!(answer(&r), (0, -1), "not visible before the commit");
    let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end("ctp", pid, epoch, true))
        .await
        .unwrap();
    assert_eq!(r.error_code, 0);
    let r: OffsetFetchResponse = request(&mut s, ApiKey::OffsetFetch, 7, &fetch_offsets(true))
        .await
        .unwrap();
    assert_eq!(answer(&r), (0, 42));
    server.shutdown().await.unwrap();
}

/// The aborted transactions of a read_committed Fetch are listed by first offset, whatever the order their ABORT
/// markers were written in (kafkajs drops entries from the front of the list expecting that order; it showed
/// aborted records when the list followed the `.txnindex`'s marker order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_transactions_are_listed_by_first_offset() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bootstrap = common::bootstrap(&server);
    common::create_topic(&bootstrap, "order", 1).await;
    let log = server.broker().topics().log("order", 0).unwrap();
    log.append_as_leader(txn_batch(100, 0, &["a"]), 0).unwrap(); // 0
    log.append_as_leader(txn_batch(200, 0, &["b"]), 0).unwrap(); // 1
    end_txn(&log, ControlRecordType::Abort, 200); // 2: the later transaction aborts first
    end_txn(&log, ControlRecordType::Abort, 100); // 3
    log.append_as_leader(plain(&["c"]), 0).unwrap(); // 4
    let mut s = connect(server.local_addr()).await;
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 11, &fetch("order", 0, 1))
        .await
        .unwrap();
    let listed: Vec<(i64, i64)> = r.responses[0].partitions[0]
        .aborted_transactions
        .as_ref()
        .unwrap()
        .iter()
        .map(|t| (t.first_offset, t.producer_id.0))
        .collect();
    assert_eq!(listed, [(0, 100), (1, 200)]);
    server.shutdown().await.unwrap();
}
