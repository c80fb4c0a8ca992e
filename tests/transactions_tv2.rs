//! Transaction version 2 (KIP-890 part 2) over the wire, as Kafka 4.x's coordinator answers it: ApiVersions
//! finalizes `transaction.version` 2; a transactional Produce v12+ adds its partition itself (no
//! AddPartitionsToTxn), TxnOffsetCommit v5 adds the group's partition itself (no AddOffsetsToTxn); EndTxn v5 bumps
//! the epoch at every end, writes the markers with the bumped epoch and answers the new epoch; retries, stale
//! epochs and a newer producer get Kafka's codes; the state survives a restart (`__transaction_state` value
//! version 1). The Java client's use of it is in tests/jvm (TransactionsTest).

use crate::common;

use common::raw::{connect, request};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use strata_storage::{RecordBatch, RecordBatchBuilder};
use tokio::net::TcpStream;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

fn tid(s: &str) -> TransactionalId {
    TransactionalId(StrBytes::from_string(s.into()))
}

fn txn_batch(pid: i64, epoch: i16, seq: i32, values: &[&str]) -> bytes::Bytes {
    let mut b = RecordBatchBuilder::new()
        .producer(pid, epoch, seq)
        .transactional(true);
    let now = strata_storage::time::now_ms();
    for v in values {
        b.append(now, None, Some(v.as_bytes()), &[]);
    }
    b.build()
}

/// Produce `records` to `topic`-0 as transactional id `id` at `version`; the partition's error code.
async fn produce(
    s: &mut TcpStream,
    version: i16,
    id: &str,
    topic: &str,
    records: bytes::Bytes,
) -> i16 {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_transactional_id(Some(tid(id)))
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(topic))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    let r: ProduceResponse = request(s, ApiKey::Produce, version, &req).await.unwrap();
    r.responses[0].partition_responses[0].error_code
}

async fn init(s: &mut TcpStream, id: &str) -> (i16, i64, i16) {
    let r: InitProducerIdResponse = request(
        s,
        ApiKey::InitProducerId,
        5,
        &InitProducerIdRequest::default()
            .with_transactional_id(Some(tid(id)))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    )
    .await
    .unwrap();
    (r.error_code, r.producer_id.0, r.producer_epoch)
}

/// EndTxn at `version`: (error code, producer id, epoch) of the answer.
async fn end(
    s: &mut TcpStream,
    version: i16,
    id: &str,
    pid: i64,
    epoch: i16,
    commit: bool,
) -> (i16, i64, i16) {
    let r: EndTxnResponse = request(
        s,
        ApiKey::EndTxn,
        version,
        &EndTxnRequest::default()
            .with_transactional_id(tid(id))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_committed(commit),
    )
    .await
    .unwrap();
    (r.error_code, r.producer_id.0, r.producer_epoch)
}

/// DescribeTransactions: (state, epoch, partitions).
async fn describe(s: &mut TcpStream, id: &str) -> (String, i16, Vec<(String, i32)>) {
    let r: DescribeTransactionsResponse = request(
        s,
        ApiKey::DescribeTransactions,
        0,
        &DescribeTransactionsRequest::default().with_transactional_ids(vec![tid(id)]),
    )
    .await
    .unwrap();
    let t = &r.transaction_states[0];
    assert_eq!(t.error_code, 0);
    let mut parts: Vec<(String, i32)> = t
        .topics
        .iter()
        .flat_map(|tp| {
            tp.partitions
                .iter()
                .map(move |p| (tp.topic.0.to_string(), *p))
        })
        .collect();
    parts.sort();
    (t.transaction_state.to_string(), t.producer_epoch, parts)
}

/// The values a read_committed fetch of `topic`-0 returns, and the control batches' (producer id, epoch).
async fn read_committed(s: &mut TcpStream, topic: &str) -> (Vec<String>, Vec<(i64, i16)>) {
    let req = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(1 << 20)
        .with_isolation_level(1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name(topic))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 20)])]);
    let r: FetchResponse = request(s, ApiKey::Fetch, 11, &req).await.unwrap();
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.error_code, 0);
    let aborted: Vec<i64> = p
        .aborted_transactions
        .iter()
        .flatten()
        .map(|t| t.first_offset)
        .collect();
    let mut values = Vec::new();
    let mut markers = Vec::new();
    let records = p.records.clone().unwrap_or_default();
    for batch in RecordBatch::iter(&records) {
        let batch = batch.unwrap();
        if batch.is_control() {
            markers.push((batch.producer_id(), batch.producer_epoch()));
            continue;
        }
        // Kafka's reader drops the batches of an aborted transaction (listed by first offset).
        if aborted.contains(&batch.base_offset()) {
            continue;
        }
        for r in batch.records().unwrap() {
            values.push(String::from_utf8(r.unwrap().value.unwrap().to_vec()).unwrap());
        }
    }
    (values, markers)
}

/// ApiVersions v3+ advertises transaction.version 0-2 and group.version 0-1, finalized at 2 and 1, and no feature
/// strata does not implement (metadata.version and the other KRaft-era features).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_finalizes_transaction_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    let r: ApiVersionsResponse = request(
        &mut s,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("test"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    )
    .await
    .unwrap();
    let supported: Vec<(String, i16, i16)> = r
        .supported_features
        .iter()
        .map(|f| (f.name.to_string(), f.min_version, f.max_version))
        .collect();
    assert_eq!(
        supported,
        [
            ("group.version".into(), 0, 1),
            ("transaction.version".into(), 0, 2)
        ]
    );
    let finalized: Vec<(String, i16)> = r
        .finalized_features
        .iter()
        .map(|f| (f.name.to_string(), f.max_version_level))
        .collect();
    assert_eq!(
        finalized,
        [
            ("group.version".into(), 1),
            ("transaction.version".into(), 2)
        ]
    );
    assert!(r.finalized_features_epoch >= 0);
    let end_txn = r
        .api_keys
        .iter()
        .find(|k| k.api_key == ApiKey::EndTxn as i16)
        .unwrap();
    assert_eq!(end_txn.max_version, 5);
}

/// The TV2 round trip: Produce v12 opens the transaction and adds the partition; EndTxn v5 commits, the marker
/// carries epoch 1 and the answer says (pid, 1); a retry at epoch 0 is answered the same, an abort at epoch 0 is
/// INVALID_TXN_STATE; a write at the old epoch is INVALID_PRODUCER_EPOCH and writes nothing; the next transaction
/// (epoch 1) aborts to epoch 2 and read_committed never sees it; the state survives a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_txn_v5_bumps_the_epoch_and_produce_v12_adds_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    common::create_topic(&common::bootstrap(&server), "tv2", 1).await;
    let mut s = connect(server.local_addr()).await;
    let (code, pid, e0) = init(&mut s, "tv2").await;
    assert_eq!((code, e0), (0, 0));

    assert_eq!(
        produce(&mut s, 12, "tv2", "tv2", txn_batch(pid, 0, 0, &["a", "b"])).await,
        0
    );
    assert_eq!(
        describe(&mut s, "tv2").await,
        ("Ongoing".into(), 0, vec![("tv2".into(), 0)])
    );
    assert_eq!(read_committed(&mut s, "tv2").await.0, Vec::<String>::new());
    assert_eq!(end(&mut s, 5, "tv2", pid, 0, true).await, (0, pid, 1));
    assert_eq!(
        read_committed(&mut s, "tv2").await,
        (vec!["a".into(), "b".into()], vec![(pid, 1)])
    );
    assert_eq!(
        describe(&mut s, "tv2").await,
        ("CompleteCommit".into(), 1, vec![])
    );

    // A retry of the commit (the client did not see the answer) is answered again; an abort at that epoch is not.
    assert_eq!(end(&mut s, 5, "tv2", pid, 0, true).await, (0, pid, 1));
    assert_eq!(
        end(&mut s, 5, "tv2", pid, 0, false).await.0,
        48,
        "INVALID_TXN_STATE"
    );
    // The old epoch cannot write any more: the marker fenced it.
    assert_eq!(
        produce(&mut s, 12, "tv2", "tv2", txn_batch(pid, 0, 2, &["late"])).await,
        47
    );
    assert_eq!(
        end(&mut s, 5, "tv2", pid, -1, false).await.0,
        90,
        "PRODUCER_FENCED"
    );

    // The next transaction at epoch 1 aborts to epoch 2.
    assert_eq!(
        produce(&mut s, 12, "tv2", "tv2", txn_batch(pid, 1, 0, &["gone"])).await,
        0
    );
    assert_eq!(end(&mut s, 5, "tv2", pid, 1, false).await, (0, pid, 2));
    let (values, markers) = read_committed(&mut s, "tv2").await;
    assert_eq!(values, ["a", "b"]);
    assert_eq!(markers, [(pid, 1), (pid, 2)]);
    // Committing a transaction that added nothing is INVALID_TXN_STATE; aborting it bumps the epoch (TV2).
    assert_eq!(end(&mut s, 5, "tv2", pid, 2, true).await.0, 48);
    assert_eq!(end(&mut s, 5, "tv2", pid, 2, false).await, (0, pid, 3));

    drop(s);
    server.shutdown().await.unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    assert_eq!(
        describe(&mut s, "tv2").await,
        ("CompleteAbort".into(), 3, vec![])
    );
    // The retry rules hold after the restart (the client transaction version was kept).
    assert_eq!(end(&mut s, 5, "tv2", pid, 2, false).await, (0, pid, 3));
    assert_eq!(
        produce(&mut s, 12, "tv2", "tv2", txn_batch(pid, 3, 0, &["c"])).await,
        0
    );
    assert_eq!(end(&mut s, 5, "tv2", pid, 3, true).await, (0, pid, 4));
    assert_eq!(read_committed(&mut s, "tv2").await.0, ["a", "b", "c"]);
}

/// TxnOffsetCommit v5 adds the group's `__consumer_offsets` partition itself: the offsets are committed with the
/// transaction (visible after EndTxn v5 commits) without an AddOffsetsToTxn; v4 without it is
/// TRANSACTION_ABORTABLE (KIP-890), Produce v11 to a partition not added too, Produce v10 INVALID_TXN_STATE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txn_offset_commit_v5_adds_the_offsets_partition() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    common::create_topic(&common::bootstrap(&server), "src", 1).await;
    let mut s = connect(server.local_addr()).await;
    let (_, pid, epoch) = init(&mut s, "eos").await;
    let commit = |version: i16, epoch: i16| {
        let req = TxnOffsetCommitRequest::default()
            .with_transactional_id(tid("eos"))
            .with_group_id(GroupId(StrBytes::from_static_str("eos-group")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_generation_id(-1)
            .with_topics(vec![TxnOffsetCommitRequestTopic::default()
                .with_name(name("src"))
                .with_partitions(vec![TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(42)
                    .with_committed_leader_epoch(-1)])]);
        (version, req)
    };
    let (v, req) = commit(4, epoch);
    let r: TxnOffsetCommitResponse = request(&mut s, ApiKey::TxnOffsetCommit, v, &req)
        .await
        .unwrap();
    assert_eq!(
        r.topics[0].partitions[0].error_code, 120,
        "TRANSACTION_ABORTABLE"
    );
    assert_eq!(
        produce(&mut s, 11, "eos", "src", txn_batch(pid, epoch, 0, &["x"])).await,
        120
    );
    assert_eq!(
        produce(&mut s, 10, "eos", "src", txn_batch(pid, epoch, 0, &["x"])).await,
        48
    );

    let (v, req) = commit(5, epoch);
    let r: TxnOffsetCommitResponse = request(&mut s, ApiKey::TxnOffsetCommit, v, &req)
        .await
        .unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    let (state, _, parts) = describe(&mut s, "eos").await;
    assert_eq!(state, "Ongoing");
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].0, "__consumer_offsets");

    assert_eq!(
        fetch_offset(&mut s, "eos-group", "src").await,
        -1,
        "not visible before the commit"
    );
    assert_eq!(
        end(&mut s, 5, "eos", pid, epoch, true).await,
        (0, pid, epoch + 1)
    );
    assert_eq!(fetch_offset(&mut s, "eos-group", "src").await, 42);
}

/// A newer producer fences the older one under TV2 too: its open transaction is aborted (CONCURRENT_TRANSACTIONS
/// first, then the bumped epoch), the old producer's writes are INVALID_PRODUCER_EPOCH and its EndTxn
/// PRODUCER_FENCED; read_committed never sees the fenced data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_producer_fences_a_tv2_producer() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    common::create_topic(&common::bootstrap(&server), "f", 1).await;
    let mut s = connect(server.local_addr()).await;
    let (_, pid, old) = init(&mut s, "f").await;
    assert_eq!(
        produce(&mut s, 12, "f", "f", txn_batch(pid, old, 0, &["fenced"])).await,
        0
    );
    let (code, _, _) = init(&mut s, "f").await;
    assert_eq!(
        code, 51,
        "CONCURRENT_TRANSACTIONS while the open transaction is aborted"
    );
    let (code, pid2, new) = init(&mut s, "f").await;
    assert_eq!(code, 0);
    assert_eq!(pid2, pid);
    assert!(
        new > old + 1,
        "fence abort and init each bump: {old} -> {new}"
    );
    assert_eq!(
        produce(&mut s, 12, "f", "f", txn_batch(pid, old, 1, &["late"])).await,
        47
    );
    assert_eq!(
        end(&mut s, 5, "f", pid, old, true).await.0,
        90,
        "PRODUCER_FENCED"
    );
    assert_eq!(
        produce(&mut s, 12, "f", "f", txn_batch(pid, new, 0, &["ok"])).await,
        0
    );
    assert_eq!(end(&mut s, 5, "f", pid, new, true).await, (0, pid, new + 1));
    assert_eq!(read_committed(&mut s, "f").await.0, ["ok"]);
}

/// The committed offset of `topic`-0 for `group` (-1 when none).
async fn fetch_offset(s: &mut TcpStream, group: &str, topic: &str) -> i64 {
    let req = OffsetFetchRequest::default()
        .with_group_id(GroupId(StrBytes::from_string(group.into())))
        .with_topics(Some(vec![
            kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic::default()
                .with_name(name(topic))
                .with_partition_indexes(vec![0]),
        ]));
    let r: OffsetFetchResponse = request(s, ApiKey::OffsetFetch, 5, &req).await.unwrap();
    r.topics[0].partitions[0].committed_offset
}

/// UpdateFeatures(transaction.version, `level`) at `version`, as a downgrade when `downgrade`; (top-level code,
/// per-feature codes).
async fn update_tv(
    s: &mut TcpStream,
    version: i16,
    level: i16,
    downgrade: bool,
) -> (i16, Vec<i16>) {
    use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
    let update = FeatureUpdateKey::default()
        .with_feature(StrBytes::from_static_str("transaction.version"))
        .with_max_version_level(level);
    let update = if version == 0 {
        update.with_allow_downgrade(downgrade)
    } else {
        update.with_upgrade_type(if downgrade { 2 } else { 1 })
    };
    let r: UpdateFeaturesResponse = request(
        s,
        ApiKey::UpdateFeatures,
        version,
        &UpdateFeaturesRequest::default()
            .with_timeout_ms(10_000)
            .with_feature_updates(vec![update]),
    )
    .await
    .unwrap();
    (
        r.error_code,
        r.results.iter().map(|f| f.error_code).collect(),
    )
}

/// The finalized transaction.version (None when not finalized) and the features epoch.
async fn finalized_tv(s: &mut TcpStream) -> (Option<i16>, i64) {
    let r: ApiVersionsResponse = request(
        s,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("test"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    )
    .await
    .unwrap();
    let tv = r
        .finalized_features
        .iter()
        .find(|f| f.name.as_str() == "transaction.version")
        .map(|f| f.max_version_level);
    (tv, r.finalized_features_epoch)
}

/// The value version of the last `__transaction_state` record of transactional id `id`.
fn last_state_value_version(server: &strata_broker::Server) -> i16 {
    let log = server
        .broker()
        .topics()
        .log("__transaction_state", 0)
        .unwrap();
    let data = log.read(0, 1 << 24, true, None).unwrap().records;
    let mut last = None;
    for batch in RecordBatch::iter(&data) {
        for r in batch.unwrap().records().unwrap() {
            let v = r.unwrap().value.unwrap();
            last = Some(i16::from_be_bytes([v[0], v[1]]));
        }
    }
    last.expect("a __transaction_state record")
}

/// `kafka-features downgrade --feature transaction.version=1` as Kafka serves it: the level is finalized at 1
/// (clients then use transaction version 1), kept across a restart, and checked as Kafka checks it (a level above
/// 2, a downgrade to a higher level, an upgrade to a lower one: INVALID_UPDATE_VERSION, nothing changed;
/// validate_only changes nothing). `__transaction_state` values are version 1 from level 1, version 0 at level 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_features_changes_transaction_version() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        common::start_broker_with(dir.path(), &[("transaction.state.log.num.partitions", "1")])
            .await;
    let mut s = connect(server.local_addr()).await;
    assert_eq!(finalized_tv(&mut s).await, (Some(2), 0));
    init(&mut s, "fv").await;
    assert_eq!(last_state_value_version(&server), 1);

    assert_eq!(update_tv(&mut s, 1, 3, true).await, (95, vec![95]));
    assert_eq!(update_tv(&mut s, 2, 1, false).await, (95, vec![]));
    let r: UpdateFeaturesResponse = request(
        &mut s,
        ApiKey::UpdateFeatures,
        1,
        &UpdateFeaturesRequest::default()
            .with_validate_only(true)
            .with_feature_updates(vec![
                kafka_protocol::messages::update_features_request::FeatureUpdateKey::default()
                    .with_feature(StrBytes::from_static_str("transaction.version"))
                    .with_max_version_level(1)
                    .with_upgrade_type(2),
            ]),
    )
    .await
    .unwrap();
    assert_eq!(r.error_code, 0);
    assert_eq!(finalized_tv(&mut s).await, (Some(2), 0));

    assert_eq!(update_tv(&mut s, 2, 1, true).await, (0, vec![]));
    assert_eq!(finalized_tv(&mut s).await, (Some(1), 1));
    assert_eq!(
        update_tv(&mut s, 1, 2, true).await.0,
        95,
        "a downgrade to a higher level"
    );
    assert_eq!(update_tv(&mut s, 0, 0, true).await, (0, vec![0]));
    assert_eq!(finalized_tv(&mut s).await, (None, 2));
    init(&mut s, "fv").await;
    assert_eq!(last_state_value_version(&server), 0);
    assert_eq!(update_tv(&mut s, 1, 1, false).await, (0, vec![0]));

    drop(s);
    server.shutdown().await.unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    assert_eq!(finalized_tv(&mut s).await, (Some(1), 3));
    // The state written in either version is read back.
    let (code, _, epoch) = init(&mut s, "fv").await;
    assert_eq!((code, epoch), (0, 2));
}
