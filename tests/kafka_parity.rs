//! Answers that the differential tests (tests/differential_kafka.rs) found differing from Kafka 4.4 and that now match,
//! checked here without Kafka: null aborted transactions for read_uncommitted fetches (an empty list for unknown
//! partitions), INVALID_TOPIC_EXCEPTION for Metadata of an invalid name, UNKNOWN_TOPIC_ID for Produce v13 with the
//! nil id, an empty config list in CreateTopics errors, INVALID_GROUP_ID for an empty group id in Heartbeat /
//! LeaveGroup / SyncGroup, a null protocol name in JoinGroup v7+ errors, and INVALID_PRODUCER_ID_MAPPING for
//! EndTxn of a transactional id no producer initialised, INVALID_REQUEST for an empty one; ApiVersions v3+ with
//! an empty client software name (INVALID_REQUEST), Produce with acks=2 (INVALID_REQUIRED_ACKS) or with other than
//! one complete batch (INVALID_RECORD), ListOffsets sentinels below their version (UNSUPPORTED_VERSION), a name
//! twice in one CreateTopics, CreatePartitions past the per-request limit (POLICY_VIOLATION), OffsetForLeaderEpoch
//! of a future epoch (undefined), ConsumerGroupHeartbeat with an empty group id and SyncGroup v5 without protocol.

use crate::common;

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

const INVALID_REQUEST: i16 = 42;

fn produce_req(topic: &str, acks: i16, records: bytes::Bytes) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(topic))
            .with_partition_data(vec![
                PartitionProduceData::default().with_records(Some(records))
            ])])
}

async fn high_watermark(s: &mut tokio::net::TcpStream, topic: &str) -> i64 {
    let r: ListOffsetsResponse = request(s, ApiKey::ListOffsets, 7, &list_offsets(topic, -1))
        .await
        .unwrap();
    r.topics[0].partitions[0].offset
}

fn list_offsets(topic: &str, timestamp: i64) -> ListOffsetsRequest {
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(name(topic))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_timestamp(timestamp)
                .with_current_leader_epoch(-1)])])
}

#[test]
fn api_versions_v3_and_later_need_a_client_software_name_and_version() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        // Empty name and version: INVALID_REQUEST, with the table at v3 and without it from v4 (as Kafka 4.4).
        for (version, with_table) in [(3i16, true), (4, false)] {
            let r: ApiVersionsResponse = request(
                &mut s,
                ApiKey::ApiVersions,
                version,
                &ApiVersionsRequest::default(),
            )
            .await
            .unwrap();
            assert_eq!(r.error_code, INVALID_REQUEST, "v{version}");
            assert_eq!(!r.api_keys.is_empty(), with_table, "v{version}");
        }
        let bad = ApiVersionsRequest::default()
            .with_client_software_name(sb("my client"))
            .with_client_software_version(sb("1.0"));
        let r: ApiVersionsResponse = request(&mut s, ApiKey::ApiVersions, 4, &bad).await.unwrap();
        assert_eq!(r.error_code, INVALID_REQUEST, "a space in the name");
        let good = common::raw::api_versions_request();
        let r: ApiVersionsResponse = request(&mut s, ApiKey::ApiVersions, 4, &good)
            .await
            .unwrap();
        assert_eq!(r.error_code, 0);
        assert!(!r.api_keys.is_empty());
        // v0-2 carry no name: served.
        let r: ApiVersionsResponse = request(
            &mut s,
            ApiKey::ApiVersions,
            2,
            &ApiVersionsRequest::default(),
        )
        .await
        .unwrap();
        assert_eq!(r.error_code, 0);
        b.shutdown().await.unwrap();
    });
}

#[test]
fn produce_takes_one_complete_batch_per_partition_and_acks_0_1_or_all() {
    const INVALID_REQUIRED_ACKS: i16 = 21;
    const INVALID_RECORD: i16 = 87;
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        common::create_topic(&common::bootstrap(&b), "t", 1).await;
        let mut s = connect(b.local_addr()).await;
        let one = batch(&[b"a", b"b", b"c"]);
        let mut two = bytes::BytesMut::from(&batch(&[b"x"])[..]);
        two.extend_from_slice(&batch(&[b"y"]));
        let truncated = one.slice(..one.len() - 5);
        let cases = [
            ("acks=2", 2i16, one.clone(), INVALID_REQUIRED_ACKS),
            ("two batches", -1, two.freeze(), INVALID_RECORD),
            ("truncated", -1, truncated, INVALID_RECORD),
        ];
        for (what, acks, records, want) in cases {
            for version in [3i16, 9] {
                let r: ProduceResponse = request(
                    &mut s,
                    ApiKey::Produce,
                    version,
                    &produce_req("t", acks, records.clone()),
                )
                .await
                .unwrap();
                let p = &r.responses[0].partition_responses[0];
                assert_eq!(p.error_code, want, "{what} v{version}");
                assert_eq!(p.base_offset, -1, "{what} v{version}");
            }
        }
        assert_eq!(high_watermark(&mut s, "t").await, 0, "nothing was written");
        // One batch of three records (raw::batch builds one batch however many records): accepted.
        let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &produce_req("t", 1, one))
            .await
            .unwrap();
        assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
        assert_eq!(high_watermark(&mut s, "t").await, 3);
        b.shutdown().await.unwrap();
    });
}

#[test]
fn list_offsets_sentinels_need_the_version_that_introduced_them() {
    const UNSUPPORTED_VERSION: i16 = 35;
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        common::create_topic(&common::bootstrap(&b), "t", 1).await;
        let mut s = connect(b.local_addr()).await;
        for (timestamp, version, want) in [
            (-3i64, 1i16, UNSUPPORTED_VERSION),
            (-3, 6, UNSUPPORTED_VERSION),
            (-3, 7, 0),
            (-4, 7, UNSUPPORTED_VERSION),
            (-4, 8, 0),
            (-5, 8, UNSUPPORTED_VERSION),
            (-5, 9, 0),
            (-9, 1, UNSUPPORTED_VERSION),
            (-9, 10, UNSUPPORTED_VERSION),
            (-1, 1, 0),
        ] {
            let r: ListOffsetsResponse = request(
                &mut s,
                ApiKey::ListOffsets,
                version,
                &list_offsets("t", timestamp),
            )
            .await
            .unwrap();
            let p = &r.topics[0].partitions[0];
            assert_eq!(p.error_code, want, "{timestamp} at v{version}");
            if want != 0 {
                assert_eq!(
                    (p.offset, p.timestamp),
                    (-1, -1),
                    "{timestamp} at v{version}"
                );
            }
        }
        b.shutdown().await.unwrap();
    });
}

#[test]
fn a_topic_named_twice_in_create_topics_is_answered_once_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b =
            common::start_broker_with(dir.path(), &[("auto.create.topics.enable", "false")]).await;
        let mut s = connect(b.local_addr()).await;
        let topic = |n: &str, partitions: i32| {
            CreatableTopic::default()
                .with_name(name(n))
                .with_num_partitions(partitions)
                .with_replication_factor(1)
        };
        let req = CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_topics(vec![topic("twice", 1), topic("once", 1), topic("twice", 2)]);
        let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &req)
            .await
            .unwrap();
        let got: Vec<(String, i16)> = r
            .topics
            .iter()
            .map(|t| (t.name.0.to_string(), t.error_code))
            .collect();
        assert_eq!(
            got,
            [
                ("twice".to_string(), INVALID_REQUEST),
                ("once".to_string(), 0)
            ]
        );
        assert_eq!(r.topics[0].num_partitions, -1);
        assert!(r.topics[0].topic_id.is_nil());
        let m: MetadataResponse = request(
            &mut s,
            ApiKey::Metadata,
            12,
            &MetadataRequest::default().with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some(name("twice"))),
                MetadataRequestTopic::default().with_name(Some(name("once"))),
            ])),
        )
        .await
        .unwrap();
        let codes: Vec<i16> = m.topics.iter().map(|t| t.error_code).collect();
        assert_eq!(codes, [UNKNOWN_TOPIC_OR_PARTITION, 0]);
        b.shutdown().await.unwrap();
    });
}

#[test]
fn create_partitions_past_the_per_request_limit_is_policy_violation_before_assignments() {
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
    const POLICY_VIOLATION: i16 = 44;
    const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        common::create_topic(&common::bootstrap(&b), "t", 2).await;
        let mut s = connect(b.local_addr()).await;
        // An empty assignment list is wrong too, but the limit is checked first (as Kafka's controller does).
        for (count, want) in [(100_000, POLICY_VIOLATION), (4, INVALID_REPLICA_ASSIGNMENT)] {
            let req = CreatePartitionsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![CreatePartitionsTopic::default()
                    .with_name(name("t"))
                    .with_count(count)
                    .with_assignments(Some(Vec::new()))]);
            let r: CreatePartitionsResponse = request(&mut s, ApiKey::CreatePartitions, 3, &req)
                .await
                .unwrap();
            assert_eq!(r.results[0].error_code, want, "count {count}");
        }
        b.shutdown().await.unwrap();
    });
}

#[test]
fn offset_for_a_leader_epoch_above_the_latest_is_undefined() {
    use kafka_protocol::messages::offset_for_leader_epoch_request::{
        OffsetForLeaderPartition, OffsetForLeaderTopic,
    };
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        common::create_topic(&common::bootstrap(&b), "t", 1).await;
        let mut s = connect(b.local_addr()).await;
        let r: ProduceResponse = request(
            &mut s,
            ApiKey::Produce,
            9,
            &produce_req("t", -1, batch(&[b"a", b"b", b"c"])),
        )
        .await
        .unwrap();
        assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
        for (epoch, want) in [(0, (0, 3)), (5, (-1, -1)), (-1, (-1, -1))] {
            let req = OffsetForLeaderEpochRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![OffsetForLeaderTopic::default()
                    .with_topic(name("t"))
                    .with_partitions(vec![OffsetForLeaderPartition::default()
                        .with_leader_epoch(epoch)
                        .with_current_leader_epoch(-1)])]);
            let r: OffsetForLeaderEpochResponse =
                request(&mut s, ApiKey::OffsetForLeaderEpoch, 4, &req)
                    .await
                    .unwrap();
            let p = &r.topics[0].partitions[0];
            assert_eq!(p.error_code, 0);
            assert_eq!((p.leader_epoch, p.end_offset), want, "epoch {epoch}");
        }
        b.shutdown().await.unwrap();
    });
}

#[test]
fn group_requests_check_their_own_fields_first() {
    const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
    let dir = tempfile::tempdir().unwrap();
    common::runtime().block_on(async {
        let b = common::start_broker(dir.path()).await;
        let mut s = connect(b.local_addr()).await;
        // ConsumerGroupHeartbeat v0 with an empty group id: INVALID_REQUEST and member epoch 0, as Kafka.
        let hb = ConsumerGroupHeartbeatRequest::default()
            .with_rebalance_timeout_ms(10_000)
            .with_subscribed_topic_names(Some(vec![name("t")]));
        let r: ConsumerGroupHeartbeatResponse =
            request(&mut s, ApiKey::ConsumerGroupHeartbeat, 0, &hb)
                .await
                .unwrap();
        assert_eq!((r.error_code, r.member_epoch), (INVALID_REQUEST, 0));
        // SyncGroup v5 without protocol type and name: INCONSISTENT_GROUP_PROTOCOL before the (empty) group id.
        let sync = SyncGroupRequest::default().with_member_id(sb("m"));
        let r: SyncGroupResponse = request(&mut s, ApiKey::SyncGroup, 5, &sync).await.unwrap();
        assert_eq!(r.error_code, INCONSISTENT_GROUP_PROTOCOL);
        let sync = sync
            .with_protocol_type(Some(sb("consumer")))
            .with_protocol_name(Some(sb("range")));
        let r: SyncGroupResponse = request(&mut s, ApiKey::SyncGroup, 5, &sync).await.unwrap();
        assert_eq!(r.error_code, INVALID_GROUP_ID);
        b.shutdown().await.unwrap();
    });
}
