//! Wire-level behaviour of individual APIs, checked with a raw client: long-poll fetch woken by appends,
//! ListOffsets specs, empty record sets, FindCoordinator forms, DeleteRecords, CreateTopics validate-only,
//! OffsetForLeaderEpoch and DescribeCluster.

use crate::common;

use std::time::{Duration, Instant};

use common::raw::{batch, batch_at, connect, request};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_records_request::{
    DeleteRecordsPartition, DeleteRecordsTopic,
};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

fn produce(topic: &str, records: bytes::Bytes) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(topic))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])])
}

fn fetch(topic: &str, offset: i64, max_wait_ms: i32) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(max_wait_ms)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name(topic))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])])
}

fn list_offsets(topic: &str, ts: i64) -> ListOffsetsRequest {
    ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(name(topic))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(ts)])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_long_poll_is_woken_by_an_append_and_empty_results_are_empty_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "poll", 1).await;

    // Nothing to read: waits max_wait_ms and answers with an empty (not null) record set.
    let mut s = connect(addr).await;
    let started = Instant::now();
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("poll", 0, 300))
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "returned before max_wait_ms"
    );
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.error_code, 0);
    assert_eq!(p.records.as_ref().map(|b| b.len()), Some(0));

    // A long poll is answered as soon as a producer appends.
    let waiter = tokio::spawn(async move {
        let mut s = connect(addr).await;
        let started = Instant::now();
        let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("poll", 0, 20_000))
            .await
            .unwrap();
        (started.elapsed(), r)
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut p = connect(addr).await;
    let pr: ProduceResponse = request(
        &mut p,
        ApiKey::Produce,
        9,
        &produce("poll", batch(&[b"wake"])),
    )
    .await
    .unwrap();
    assert_eq!(pr.responses[0].partition_responses[0].error_code, 0);
    let (waited, r) = waiter.await.unwrap();
    assert!(
        waited < Duration::from_secs(10),
        "fetch was not woken by the append ({waited:?})"
    );
    let part = &r.responses[0].partitions[0];
    assert_eq!(part.high_watermark, 1);
    assert!(part.records.as_ref().is_some_and(|b| !b.is_empty()));

    // Out of range.
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("poll", 5, 0))
        .await
        .unwrap();
    assert_eq!(
        r.responses[0].partitions[0].error_code, 1,
        "OFFSET_OUT_OF_RANGE"
    );
    broker.shutdown().await.unwrap();
}

/// Fetch sessions (KIP-227): a full fetch asking for a session (epoch 0) is answered sessionless (session id 0,
/// records as usual); an incremental fetch (epoch > 0) gets FETCH_SESSION_ID_NOT_FOUND and no partitions, as
/// Kafka answers for a session it does not hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_sessions_are_refused_so_clients_send_full_fetches() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "sessions", 1).await;
    let mut s = connect(addr).await;
    let pr: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce("sessions", batch(&[b"a", b"b"])),
    )
    .await
    .unwrap();
    assert_eq!(pr.responses[0].partition_responses[0].error_code, 0);

    let full = fetch("sessions", 0, 0)
        .with_session_id(0)
        .with_session_epoch(0);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &full).await.unwrap();
    assert_eq!(r.error_code, 0);
    assert_eq!(r.session_id, 0, "no session is handed out");
    let p = &r.responses[0].partitions[0];
    assert_eq!((p.error_code, p.high_watermark), (0, 2));
    assert!(p.records.as_ref().is_some_and(|b| !b.is_empty()));

    let incremental = fetch("sessions", 0, 0)
        .with_session_id(1234)
        .with_session_epoch(1);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &incremental)
        .await
        .unwrap();
    assert_eq!(r.error_code, 70, "FETCH_SESSION_ID_NOT_FOUND");
    assert!(r.responses.is_empty());

    // The connection and the data are intact: a sessionless fetch (epoch -1) reads both records.
    let sessionless = fetch("sessions", 0, 0).with_session_epoch(-1);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 7, &sessionless)
        .await
        .unwrap();
    assert_eq!(r.error_code, 0);
    assert_eq!(r.responses[0].partitions[0].high_watermark, 2);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_answers_earliest_latest_max_timestamp_and_by_time() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "lo", 1).await;
    let mut s = connect(addr).await;
    for (i, ts) in [1000i64, 5000, 3000].iter().enumerate() {
        let v = format!("v{i}");
        let r: ProduceResponse = request(
            &mut s,
            ApiKey::Produce,
            9,
            &produce("lo", batch_at(&[v.as_bytes()], *ts)),
        )
        .await
        .unwrap();
        assert_eq!(r.responses[0].partition_responses[0].base_offset, i as i64);
    }
    let at = |r: &ListOffsetsResponse| {
        (
            r.topics[0].partitions[0].offset,
            r.topics[0].partitions[0].timestamp,
        )
    };
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 7, &list_offsets("lo", -2))
        .await
        .unwrap();
    assert_eq!(at(&r).0, 0);
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 7, &list_offsets("lo", -1))
        .await
        .unwrap();
    assert_eq!(at(&r).0, 3);
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 7, &list_offsets("lo", -3))
        .await
        .unwrap();
    assert_eq!(at(&r), (1, 5000), "max timestamp");
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 7, &list_offsets("lo", 2000))
        .await
        .unwrap();
    assert_eq!(at(&r).0, 1, "first offset with timestamp >= 2000");
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 7, &list_offsets("lo", 9999))
        .await
        .unwrap();
    assert_eq!(at(&r), (-1, -1), "no record that late");
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 9, &list_offsets("lo", -4))
        .await
        .unwrap();
    assert_eq!(at(&r).0, 0, "earliest local");
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 1, &list_offsets("nope", -1))
        .await
        .unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 3);

    // DeleteRecords moves the log start; earliest follows.
    let dr = DeleteRecordsRequest::default()
        .with_timeout_ms(5000)
        .with_topics(vec![DeleteRecordsTopic::default()
            .with_name(name("lo"))
            .with_partitions(vec![DeleteRecordsPartition::default()
                .with_partition_index(0)
                .with_offset(2)])]);
    let r: DeleteRecordsResponse = request(&mut s, ApiKey::DeleteRecords, 2, &dr)
        .await
        .unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    assert_eq!(r.topics[0].partitions[0].low_watermark, 2);
    let r: ListOffsetsResponse = request(&mut s, ApiKey::ListOffsets, 7, &list_offsets("lo", -2))
        .await
        .unwrap();
    assert_eq!(at(&r).0, 2);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("lo", 0, 0))
        .await
        .unwrap();
    assert_eq!(
        r.responses[0].partitions[0].error_code, 1,
        "below the log start is out of range"
    );
    assert_eq!(r.responses[0].partitions[0].log_start_offset, 2);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_cluster_epochs_and_validate_only_create() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let mut s = connect(addr).await;

    let r: FindCoordinatorResponse = request(
        &mut s,
        ApiKey::FindCoordinator,
        2,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("g")),
    )
    .await
    .unwrap();
    assert_eq!(
        (r.error_code, r.node_id.0, r.port),
        (0, 1, i32::from(addr.port()))
    );
    let r: FindCoordinatorResponse = request(
        &mut s,
        ApiKey::FindCoordinator,
        4,
        &FindCoordinatorRequest::default().with_coordinator_keys(vec![
            StrBytes::from_static_str("a"),
            StrBytes::from_static_str("b"),
        ]),
    )
    .await
    .unwrap();
    assert_eq!(r.coordinators.len(), 2);
    assert!(r
        .coordinators
        .iter()
        .all(|c| c.error_code == 0 && c.node_id.0 == 1));
    // Transaction coordinators (key type 1): this broker, in both forms (the first lookup creates
    // __transaction_state, as Kafka does); key type 2 (share groups) is INVALID_REQUEST naming the type.
    let r: FindCoordinatorResponse = request(
        &mut s,
        ApiKey::FindCoordinator,
        2,
        &FindCoordinatorRequest::default()
            .with_key(StrBytes::from_static_str("tx"))
            .with_key_type(1),
    )
    .await
    .unwrap();
    assert_eq!((r.error_code, r.node_id.0), (0, 1));
    let r: FindCoordinatorResponse = request(
        &mut s,
        ApiKey::FindCoordinator,
        4,
        &FindCoordinatorRequest::default()
            .with_key_type(1)
            .with_coordinator_keys(vec![StrBytes::from_static_str("tx")]),
    )
    .await
    .unwrap();
    assert_eq!(r.coordinators.len(), 1);
    let c = &r.coordinators[0];
    assert_eq!((c.error_code, c.node_id.0, &*c.key), (0, 1, "tx"));
    let r: FindCoordinatorResponse = request(
        &mut s,
        ApiKey::FindCoordinator,
        4,
        &FindCoordinatorRequest::default()
            .with_key_type(2)
            .with_coordinator_keys(vec![StrBytes::from_static_str("share")]),
    )
    .await
    .unwrap();
    let c = &r.coordinators[0];
    assert_eq!((c.error_code, c.node_id.0), (42, -1));
    assert!(
        c.error_message
            .as_deref()
            .unwrap_or_default()
            .contains("key type 2"),
        "{:?}",
        c.error_message
    );

    let r: DescribeClusterResponse = request(
        &mut s,
        ApiKey::DescribeCluster,
        1,
        &DescribeClusterRequest::default(),
    )
    .await
    .unwrap();
    assert_eq!(r.brokers.len(), 1);
    assert_eq!(r.controller_id.0, 1);
    assert!(!r.cluster_id.is_empty());

    let create = |validate_only: bool, rf: i16| {
        CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_validate_only(validate_only)
            .with_topics(vec![CreatableTopic::default()
                .with_name(name("vo"))
                .with_num_partitions(2)
                .with_replication_factor(rf)])
    };
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create(true, 1))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 0);
    assert!(
        broker.broker().registry().get("vo").is_none(),
        "validate_only created the topic"
    );
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create(false, 3))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 38, "INVALID_REPLICATION_FACTOR");
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create(false, -1))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 0);
    assert_eq!(r.topics[0].num_partitions, 2);
    assert!(!r.topics[0].topic_id.is_nil());

    let pr: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce("vo", batch(&[b"a", b"b"])),
    )
    .await
    .unwrap();
    assert_eq!(pr.responses[0].partition_responses[0].error_code, 0);
    let ofle = OffsetForLeaderEpochRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![OffsetForLeaderTopic::default()
            .with_topic(name("vo"))
            .with_partitions(vec![OffsetForLeaderPartition::default()
                .with_partition(0)
                .with_current_leader_epoch(0)
                .with_leader_epoch(0)])]);
    let r: OffsetForLeaderEpochResponse = request(&mut s, ApiKey::OffsetForLeaderEpoch, 4, &ofle)
        .await
        .unwrap();
    let p = &r.topics[0].partitions[0];
    assert_eq!((p.error_code, p.leader_epoch, p.end_offset), (0, 0, 2));
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_duplicates_get_the_original_offset_and_gaps_are_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "idem", 1).await;
    let mut s = connect(addr).await;
    let r: InitProducerIdResponse = request(
        &mut s,
        ApiKey::InitProducerId,
        4,
        &InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    )
    .await
    .unwrap();
    assert_eq!(r.error_code, 0);
    let (pid, epoch) = (r.producer_id.0, r.producer_epoch);
    assert!(pid >= 0);
    let send = |seq: i32| {
        produce(
            "idem",
            common::raw::idempotent_batch(&[b"a", b"b"], pid, epoch, seq),
        )
    };
    let code_and_offset = |r: &ProduceResponse| {
        let p = &r.responses[0].partition_responses[0];
        (p.error_code, p.base_offset)
    };
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &send(0)).await.unwrap();
    assert_eq!(code_and_offset(&r), (0, 0));
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &send(2)).await.unwrap();
    assert_eq!(code_and_offset(&r), (0, 2));
    // A retry of the second batch is answered with its original offset and not written again.
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &send(2)).await.unwrap();
    assert_eq!(code_and_offset(&r), (0, 2));
    let log = broker.broker().topics().log("idem", 0).unwrap();
    assert_eq!(log.log_end_offset(), 4);
    // A gap in the sequence is OUT_OF_ORDER_SEQUENCE_NUMBER.
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &send(9)).await.unwrap();
    assert_eq!(code_and_offset(&r).0, 45);
    assert_eq!(log.log_end_offset(), 4);
    // A transactional id gets its producer id from the transaction coordinator: epoch 0 first, then bumped
    // (fencing the first producer) by a second InitProducerId.
    let init = InitProducerIdRequest::default()
        .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("tx"))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    let first: InitProducerIdResponse = request(&mut s, ApiKey::InitProducerId, 4, &init)
        .await
        .unwrap();
    assert_eq!((first.error_code, first.producer_epoch), (0, 0));
    assert!(first.producer_id.0 >= 0);
    let second: InitProducerIdResponse = request(&mut s, ApiKey::InitProducerId, 4, &init)
        .await
        .unwrap();
    assert_eq!(
        (second.error_code, second.producer_id, second.producer_epoch),
        (0, first.producer_id, 1)
    );
    // transaction.timeout.ms above transaction.max.timeout.ms (900000) is INVALID_TRANSACTION_TIMEOUT.
    let r: InitProducerIdResponse = request(
        &mut s,
        ApiKey::InitProducerId,
        4,
        &init.clone().with_transaction_timeout_ms(900_001),
    )
    .await
    .unwrap();
    assert_eq!((r.error_code, r.producer_id.0), (50, -1));
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_auto_creates_only_when_enabled_and_lists_internal_topics() {
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    let md = |topic: &str| {
        MetadataRequest::default()
            .with_allow_auto_topic_creation(true)
            .with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some(name(topic)))
            ]))
    };
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("num.partitions", "4")]).await;
    let mut s = connect(broker.local_addr()).await;
    let r: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &md("auto"))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 0);
    assert_eq!(
        r.topics[0].partitions.len(),
        4,
        "num.partitions applies to auto-created topics"
    );
    assert!(!r.topics[0].topic_id.is_nil());
    // By id, with the empty name Kafka's Java client sends (its Admin describeTopics by id).
    let id = r.topics[0].topic_id;
    let by_id: MetadataResponse = request(
        &mut s,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![MetadataRequestTopic::default()
            .with_name(Some(name("")))
            .with_topic_id(id)])),
    )
    .await
    .unwrap();
    assert_eq!(by_id.topics[0].error_code, 0);
    assert_eq!(by_id.topics[0].topic_id, id);
    assert_eq!(by_id.topics[0].name.as_ref().unwrap().0.as_str(), "auto");
    let all: MetadataResponse = request(
        &mut s,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    )
    .await
    .unwrap();
    let offsets = all
        .topics
        .iter()
        .find(|t| {
            t.name
                .as_ref()
                .is_some_and(|n| n.0.as_str() == "__consumer_offsets")
        })
        .unwrap();
    assert!(offsets.is_internal);
    broker.shutdown().await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let broker =
        common::start_broker_with(dir.path(), &[("auto.create.topics.enable", "false")]).await;
    let mut s = connect(broker.local_addr()).await;
    let r: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &md("auto"))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 3, "UNKNOWN_TOPIC_OR_PARTITION");
    assert!(broker.broker().registry().get("auto").is_none());
    let r: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &md("bad/name"))
        .await
        .unwrap();
    assert_ne!(r.topics[0].error_code, 0);
    broker.shutdown().await.unwrap();
}

/// A remote tier stand-in: answers every read with one fixed batch and records what was asked.
struct CannedRemote {
    batch: bytes::Bytes,
    asked: std::sync::Mutex<Vec<(String, i64)>>,
}

impl strata_broker::remote::RemoteLogReader for CannedRemote {
    fn read(
        &self,
        log: std::sync::Arc<strata_storage::UnifiedLog>,
        offset: i64,
        _max_bytes: usize,
    ) -> strata_broker::remote::BoxFuture<
        Result<bytes::Bytes, strata_broker::remote::RemoteReadError>,
    > {
        self.asked
            .lock()
            .unwrap()
            .push((log.topic_partition().to_string(), offset));
        let b = self.batch.clone();
        Box::pin(async move { Ok(b) })
    }
}

/// Creates topic `tiered`, produces to it and, since the broker runs without tiered storage (which refuses
/// remote.storage.enable=true), tiers its log directly: pretends the tiering layer copied everything, then lets
/// local retention drop the local copies. Returns a connection and the log.
async fn tiered_log_without_local_copies(
    broker: &strata_broker::Server,
) -> (
    tokio::net::TcpStream,
    std::sync::Arc<strata_storage::UnifiedLog>,
) {
    use kafka_protocol::messages::create_topics_request::CreatableTopicConfig;
    let mut s = connect(broker.local_addr()).await;
    let cfg = |k: &str, v: &str| {
        CreatableTopicConfig::default()
            .with_name(StrBytes::from_string(k.into()))
            .with_value(Some(StrBytes::from_string(v.into())))
    };
    let create = CreateTopicsRequest::default()
        .with_timeout_ms(5000)
        .with_topics(vec![CreatableTopic::default()
            .with_name(name("tiered"))
            .with_num_partitions(1)
            .with_replication_factor(1)
            .with_configs(vec![
                cfg("segment.bytes", "1024"),
                cfg("local.retention.bytes", "1"),
            ])]);
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create)
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 0, "{:?}", r.topics[0].error_message);
    let payload = vec![b'x'; 300];
    for _ in 0..12 {
        let r: ProduceResponse = request(
            &mut s,
            ApiKey::Produce,
            9,
            &produce("tiered", batch(&[&payload])),
        )
        .await
        .unwrap();
        assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
    }
    let log = broker.broker().topics().log("tiered", 0).unwrap();
    let mut tiered = log.config();
    tiered.remote_storage_enable = true;
    log.update_config(tiered).unwrap();
    log.roll().unwrap();
    log.update_highest_offset_in_remote_storage(log.log_end_offset() - 1);
    broker
        .broker()
        .log_manager()
        .run_retention(strata_storage::time::now_ms())
        .unwrap();
    assert!(
        log.local_log_start_offset() > 0,
        "local retention removed nothing"
    );
    assert_eq!(log.log_start_offset(), 0);
    (s, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_below_the_local_log_start_goes_through_the_remote_reader() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let (mut s, _log) = tiered_log_without_local_copies(&broker).await;
    // Without a remote reader the offset cannot be served; the response still tells the real log start.
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("tiered", 0, 0))
        .await
        .unwrap();
    let p = &r.responses[0].partitions[0];
    assert_eq!((p.error_code, p.log_start_offset), (1, 0));

    broker.shutdown().await.unwrap();

    let remote = std::sync::Arc::new(CannedRemote {
        batch: batch(&[b"from-remote"]),
        asked: Default::default(),
    });
    // The reader is handed to the broker when it starts (as tiering hands in its own).
    let dir = tempfile::tempdir().unwrap();
    let (config, tiering) =
        strata_broker::tiered::configs_from_properties(&common::local_props(dir.path(), &[]))
            .unwrap();
    let options = strata_broker::ServerOptions {
        remote_reader: Some(remote.clone()),
        ..Default::default()
    };
    let broker = strata_broker::Server::start_with(config, tiering, options)
        .await
        .unwrap();
    let (mut s, log) = tiered_log_without_local_copies(&broker).await;
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("tiered", 0, 0))
        .await
        .unwrap();
    let p = &r.responses[0].partitions[0];
    assert_eq!(p.error_code, 0);
    assert_eq!(p.records.as_ref(), Some(&remote.batch));
    assert_eq!(
        remote.asked.lock().unwrap().as_slice(),
        &[("tiered-0".to_string(), 0)]
    );
    // Offsets still on local disk do not touch the remote tier.
    let local = log.local_log_start_offset();
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("tiered", local, 0))
        .await
        .unwrap();
    assert_eq!(r.responses[0].partitions[0].error_code, 0);
    assert_eq!(remote.asked.lock().unwrap().len(), 1);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_with_runs_setup_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut props = std::collections::BTreeMap::new();
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert("log.dirs".to_string(), dir.path().display().to_string());
    props.insert(
        "remote.log.storage.system.enable".to_string(),
        "false".to_string(),
    );
    let (config, tiering) = strata_broker::tiered::configs_from_properties(&props).unwrap();
    let options = strata_broker::ServerOptions {
        setup: Some(Box::new(|b| {
            b.topics()
                .create_topic("made-in-setup", 2, Default::default())
                .map(|_| ())
        })),
        ..Default::default()
    };
    let broker = strata_broker::Server::start_with(config, tiering, options)
        .await
        .unwrap();
    assert_eq!(
        broker
            .broker()
            .registry()
            .get("made-in-setup")
            .unwrap()
            .partitions,
        2
    );
    let mut props = std::collections::BTreeMap::new();
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert(
        "log.dirs".to_string(),
        tempfile::tempdir().unwrap().path().display().to_string(),
    );
    props.insert(
        "remote.log.storage.system.enable".to_string(),
        "false".to_string(),
    );
    let (config, tiering) = strata_broker::tiered::configs_from_properties(&props).unwrap();
    let options = strata_broker::ServerOptions {
        setup: Some(Box::new(|_| {
            Err(strata_broker::Error::InvalidPartitions(
                "setup failed on purpose".into(),
            ))
        })),
        ..Default::default()
    };
    let failed = strata_broker::Server::start_with(config, tiering, options).await;
    assert!(failed.is_err(), "a failing setup must stop start-up");
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_pending_long_polls_and_writes_the_clean_marker() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "idle", 1).await;
    let poll = tokio::spawn(async move {
        let mut s = connect(addr).await;
        let r: Option<FetchResponse> =
            request(&mut s, ApiKey::Fetch, 12, &fetch("idle", 0, 60_000)).await;
        r
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    broker.shutdown().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "shutdown waited for the 60 s long poll"
    );
    let answered = tokio::time::timeout(Duration::from_secs(5), poll)
        .await
        .expect("poll finished")
        .unwrap();
    if let Some(r) = answered {
        assert_eq!(r.responses[0].partitions[0].error_code, 0);
    }
    assert!(dir.path().join(".kafka_cleanshutdown").exists());
}
