//! Answers that the differential tests (tests/differential.rs) found differing from Kafka 4.4 and that now match,
//! checked here without Kafka: null aborted transactions for read_uncommitted fetches (an empty list for unknown
//! partitions), INVALID_TOPIC_EXCEPTION for Metadata of an invalid name, UNKNOWN_TOPIC_ID for Produce v13 with the
//! nil id, an empty config list in CreateTopics errors, INVALID_GROUP_ID for an empty group id in Heartbeat /
//! LeaveGroup / SyncGroup, a null protocol name in JoinGroup v7+ errors, and INVALID_PRODUCER_ID_MAPPING for
//! EndTxn of a transactional id no producer initialised, INVALID_REQUEST for an empty one.

mod common;

use common::raw::{batch, connect, request};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

const INVALID_TOPIC_EXCEPTION: i16 = 17;
const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
const UNKNOWN_TOPIC_ID: i16 = 100;
const INVALID_GROUP_ID: i16 = 24;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

fn name(s: &str) -> TopicName {
    TopicName(sb(s))
}

fn fetch(topic: &str, isolation: i8) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_bytes(1 << 20)
        .with_isolation_level(isolation)
        .with_session_epoch(-1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name(topic))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 20)])])
}

#[test]
fn read_uncommitted_fetch_has_null_aborted_transactions() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        common::create_topic(&common::bootstrap(&b), "t", 1).await;
        let mut s = connect(b.local_addr()).await;
        let produce = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(5000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(name("t"))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(batch(&[b"a"])))])]);
        let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &produce).await.unwrap();
        assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
        for (isolation, want) in [(0i8, None), (1, Some(0usize))] {
            let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("t", isolation))
                .await
                .unwrap();
            let p = &r.responses[0].partitions[0];
            assert_eq!(p.error_code, 0);
            assert_eq!(
                p.aborted_transactions.as_ref().map(Vec::len),
                want,
                "isolation level {isolation}"
            );
        }
        // A partition the broker does not have: an empty list, as Kafka.
        let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &fetch("missing", 0))
            .await
            .unwrap();
        let p = &r.responses[0].partitions[0];
        assert_eq!(p.error_code, UNKNOWN_TOPIC_OR_PARTITION);
        assert_eq!(p.aborted_transactions, Some(Vec::new()));
        b.shutdown().await.unwrap();
    });
}

#[test]
fn metadata_names_invalid_and_unknown_topics_apart() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b =
            common::start_broker_with(dir.path(), &[("auto.create.topics.enable", "false")]).await;
        let mut s = connect(b.local_addr()).await;
        for (topic, want) in [
            ("bad/name", INVALID_TOPIC_EXCEPTION),
            ("..", INVALID_TOPIC_EXCEPTION),
            ("valid-but-missing", UNKNOWN_TOPIC_OR_PARTITION),
        ] {
            let req = MetadataRequest::default().with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some(name(topic))),
            ]));
            let r: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &req).await.unwrap();
            assert_eq!(r.topics[0].error_code, want, "{topic}");
        }
        b.shutdown().await.unwrap();
    });
}

#[test]
fn produce_v13_with_the_nil_topic_id_is_unknown_topic_id() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        let req = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(5000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_topic_id(uuid::Uuid::nil())
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(batch(&[b"a"])))])]);
        let r: ProduceResponse = request(&mut s, ApiKey::Produce, 13, &req).await.unwrap();
        assert_eq!(
            r.responses[0].partition_responses[0].error_code,
            UNKNOWN_TOPIC_ID
        );
        b.shutdown().await.unwrap();
    });
}

#[test]
fn create_topics_error_answers_list_no_configs() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        let req = CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(name("bad/name"))
                .with_num_partitions(1)
                .with_replication_factor(1)]);
        let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &req)
            .await
            .unwrap();
        let t = &r.topics[0];
        assert_eq!(t.error_code, INVALID_TOPIC_EXCEPTION);
        assert_eq!(t.configs, Some(Vec::new()));
        b.shutdown().await.unwrap();
    });
}

#[test]
fn an_empty_group_id_is_invalid_group_id() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        let hb = HeartbeatRequest::default().with_member_id(sb("m"));
        let r: HeartbeatResponse = request(&mut s, ApiKey::Heartbeat, 4, &hb).await.unwrap();
        assert_eq!(r.error_code, INVALID_GROUP_ID, "Heartbeat");
        let leave = LeaveGroupRequest::default().with_member_id(sb("m"));
        let r: LeaveGroupResponse = request(&mut s, ApiKey::LeaveGroup, 2, &leave)
            .await
            .unwrap();
        assert_eq!(r.error_code, INVALID_GROUP_ID, "LeaveGroup");
        let leave = LeaveGroupRequest::default().with_members(vec![
            kafka_protocol::messages::leave_group_request::MemberIdentity::default()
                .with_member_id(sb("m")),
        ]);
        let r: LeaveGroupResponse = request(&mut s, ApiKey::LeaveGroup, 5, &leave)
            .await
            .unwrap();
        assert_eq!(r.error_code, INVALID_GROUP_ID, "LeaveGroup v5");
        let sync = SyncGroupRequest::default().with_member_id(sb("m"));
        let r: SyncGroupResponse = request(&mut s, ApiKey::SyncGroup, 3, &sync).await.unwrap();
        assert_eq!(r.error_code, INVALID_GROUP_ID, "SyncGroup");
        b.shutdown().await.unwrap();
    });
}

#[test]
fn join_group_errors_have_a_null_protocol_name_from_v7() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        let join = JoinGroupRequest::default()
            .with_session_timeout_ms(10_000)
            .with_rebalance_timeout_ms(10_000)
            .with_protocol_type(sb("consumer"));
        for (version, want) in [(6i16, Some(String::new())), (7, None), (9, None)] {
            let r: JoinGroupResponse = request(&mut s, ApiKey::JoinGroup, version, &join)
                .await
                .unwrap();
            assert_eq!(r.error_code, INVALID_GROUP_ID);
            assert_eq!(r.protocol_name.map(|p| p.to_string()), want, "v{version}");
        }
        b.shutdown().await.unwrap();
    });
}

#[test]
fn end_txn_of_an_uninitialised_transactional_id_is_invalid_producer_id_mapping() {
    const INVALID_PRODUCER_ID_MAPPING: i16 = 49;
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        let req = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(sb("never-initialised")))
            .with_producer_id(ProducerId(5))
            .with_producer_epoch(0)
            .with_committed(true);
        let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &req).await.unwrap();
        assert_eq!(r.error_code, INVALID_PRODUCER_ID_MAPPING);
        b.shutdown().await.unwrap();
    });
}

#[test]
fn an_empty_transactional_id_is_invalid_request() {
    const INVALID_REQUEST: i16 = 42;
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        let init = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(sb(""))))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        let r: InitProducerIdResponse = request(&mut s, ApiKey::InitProducerId, 4, &init)
            .await
            .unwrap();
        assert_eq!(r.error_code, INVALID_REQUEST, "InitProducerId");
        let end = EndTxnRequest::default().with_producer_id(ProducerId(1));
        let r: EndTxnResponse = request(&mut s, ApiKey::EndTxn, 3, &end).await.unwrap();
        assert_eq!(r.error_code, INVALID_REQUEST, "EndTxn");
        let add = AddOffsetsToTxnRequest::default()
            .with_producer_id(ProducerId(1))
            .with_group_id(GroupId(sb("g")));
        let r: AddOffsetsToTxnResponse = request(&mut s, ApiKey::AddOffsetsToTxn, 3, &add)
            .await
            .unwrap();
        assert_eq!(r.error_code, INVALID_REQUEST, "AddOffsetsToTxn");
        b.shutdown().await.unwrap();
    });
}
