//! The version range strata serves, checked with raw requests: ApiVersions reports the one table
//! (`strata_broker::codec::versions::SUPPORTED`), every API answers at the oldest and the newest version it advertises,
//! and the newest versions' own features work — topic ids in Produce v13 / Fetch v13+ / DeleteTopics v6
//! (KIP-516, UNKNOWN_TOPIC_ID = 100 for an id no topic has) and authorized operations as a Kafka broker without
//! an authorizer reports them (every operation `AclEntry.supportedOperations` lists).

use crate::common;

use bytes::{Buf, BufMut, BytesMut};
use common::raw::{batch, connect, read_frame, request, send_frame};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};
use strata_broker::codec::versions::SUPPORTED;
use uuid::Uuid;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

async fn topic_id(s: &mut tokio::net::TcpStream, topic: &str) -> Uuid {
    let req = MetadataRequest::default().with_topics(Some(vec![
        MetadataRequestTopic::default().with_name(Some(name(topic)))
    ]));
    let r: MetadataResponse = request(s, ApiKey::Metadata, 12, &req).await.unwrap();
    assert_eq!(r.topics[0].error_code, 0);
    r.topics[0].topic_id
}

fn produce_by_id(id: Uuid, values: &[&[u8]]) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_topic_id(id)
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(batch(values)))])])
}

fn fetch_by_id(id: Uuid) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic_id(id)
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 20)])])
}

/// Sends an empty-bodied (all defaults) request of `api` v`version` and returns whether a response came back
/// with our correlation id (the connection is closed on an undecodable or unsupported request).
async fn answers(addr: std::net::SocketAddr, api: ApiKey, version: i16, body: &[u8]) -> bool {
    let mut s = connect(addr).await;
    let mut frame = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(11)
        .with_client_id(Some(StrBytes::from_static_str("range-test")))
        .encode(&mut frame, api.request_header_version(version))
        .unwrap();
    frame.put_slice(body);
    send_frame(&mut s, &frame).await;
    match read_frame(&mut s).await {
        Some(mut r) => r.get_i32() == 11,
        None => false,
    }
}

/// The default (empty) request of `api` at `version`, as the codec encodes it, or `None` when the codec has no
/// encoding for it (versions below its floor, served by strata's own legacy codec).
fn default_body(api: ApiKey, version: i16) -> Option<Vec<u8>> {
    macro_rules! enc {
        ($t:ty) => {{
            let mut b = BytesMut::new();
            <$t>::default()
                .encode(&mut b, version)
                .ok()
                .map(|_| b.to_vec())
        }};
    }
    // Kafka 3.9's oldest versions, below the codec's floor, written from the protocol definitions: empty
    // requests (no topics / resources).
    if version == 0 {
        let legacy: Option<&[u8]> = match api {
            // acks=1, timeout_ms, topic_data []
            ApiKey::Produce => Some(&[0, 1, 0, 0, 0x13, 0x88, 0, 0, 0, 0]),
            // replica_id -1, max_wait_ms 0, min_bytes 0, topics []
            ApiKey::Fetch => Some(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            // replica_id -1, topics []
            ApiKey::ListOffsets => Some(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
            // resources []
            ApiKey::DescribeConfigs => Some(&[0, 0, 0, 0]),
            // group_id "", topics []
            ApiKey::OffsetCommit | ApiKey::OffsetFetch => Some(&[0, 0, 0, 0, 0, 0]),
            // topics [] / topic_names [], timeout_ms
            ApiKey::CreateTopics | ApiKey::DeleteTopics => Some(&[0, 0, 0, 0, 0, 0, 0x13, 0x88]),
            // topics []
            ApiKey::OffsetForLeaderEpoch => Some(&[0, 0, 0, 0]),
            // topics null (all)
            ApiKey::DescribeLogDirs => Some(&[0xff, 0xff, 0xff, 0xff]),
            _ => None,
        };
        if let Some(b) = legacy {
            return Some(b.to_vec());
        }
    }
    match api {
        // acks=0 is answered by nothing: ask for acks=1.
        ApiKey::Produce => {
            let mut b = BytesMut::new();
            let req = ProduceRequest::default().with_acks(1);
            req.encode(&mut b, version).ok().map(|_| b.to_vec())
        }
        ApiKey::Fetch => enc!(FetchRequest),
        ApiKey::ListOffsets => enc!(ListOffsetsRequest),
        ApiKey::Metadata => enc!(MetadataRequest),
        ApiKey::OffsetCommit => enc!(OffsetCommitRequest),
        ApiKey::OffsetFetch => enc!(OffsetFetchRequest),
        ApiKey::FindCoordinator => enc!(FindCoordinatorRequest),
        ApiKey::ApiVersions => enc!(ApiVersionsRequest),
        ApiKey::CreateTopics => enc!(CreateTopicsRequest),
        ApiKey::DeleteTopics => enc!(DeleteTopicsRequest),
        ApiKey::DeleteRecords => enc!(DeleteRecordsRequest),
        ApiKey::OffsetForLeaderEpoch => enc!(OffsetForLeaderEpochRequest),
        ApiKey::DescribeConfigs => enc!(DescribeConfigsRequest),
        ApiKey::AlterConfigs => enc!(AlterConfigsRequest),
        ApiKey::CreatePartitions => enc!(CreatePartitionsRequest),
        ApiKey::IncrementalAlterConfigs => enc!(IncrementalAlterConfigsRequest),
        ApiKey::DescribeCluster => enc!(DescribeClusterRequest),
        ApiKey::DescribeTopicPartitions => enc!(DescribeTopicPartitionsRequest),
        ApiKey::DescribeLogDirs => enc!(DescribeLogDirsRequest),
        ApiKey::ListGroups => enc!(ListGroupsRequest),
        ApiKey::DescribeGroups => enc!(DescribeGroupsRequest),
        ApiKey::DeleteGroups => enc!(DeleteGroupsRequest),
        ApiKey::DescribeProducers => enc!(DescribeProducersRequest),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_reports_the_table_and_the_newest_kafka_4_versions() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;
    let r: ApiVersionsResponse = request(
        &mut s,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .unwrap();
    assert_eq!(r.error_code, 0);
    let listed: Vec<(i16, i16, i16)> = r
        .api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect();
    let table: Vec<(i16, i16, i16)> = SUPPORTED
        .iter()
        .map(|(k, lo, hi)| (*k as i16, *lo, *hi))
        .collect();
    assert_eq!(listed, table);
    // Kafka 4.x's newest versions the codec knows (topic ids, KIP-516; top-level error in Metadata, KIP-1102).
    for (api, newest) in [
        (ApiKey::Produce, 13),
        (ApiKey::Fetch, 18),
        (ApiKey::ListOffsets, 10),
        (ApiKey::Metadata, 13),
        (ApiKey::DeleteTopics, 6),
        (ApiKey::DescribeCluster, 2),
        (ApiKey::DescribeTopicPartitions, 0),
    ] {
        let row = listed.iter().find(|(k, _, _)| *k == api as i16).unwrap();
        assert_eq!(row.2, newest, "{api:?}");
    }
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_answers_its_oldest_and_newest_version() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let mut checked = 0;
    for (api, lo, hi) in SUPPORTED {
        for v in [*lo, *hi] {
            let Some(body) = default_body(*api, v) else {
                continue;
            };
            assert!(
                answers(addr, *api, v, &body).await,
                "{api:?} v{v} not answered"
            );
            checked += 1;
        }
    }
    assert!(checked >= 42, "only {checked} (api, version) pairs checked");
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_v13_and_fetch_v13_to_v18_name_topics_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "ids", 1).await;
    let mut s = connect(addr).await;
    let id = topic_id(&mut s, "ids").await;
    assert!(!id.is_nil());

    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        13,
        &produce_by_id(id, &[b"a", b"b"]),
    )
    .await
    .unwrap();
    assert_eq!(r.responses[0].topic_id, id);
    assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
    assert_eq!(r.responses[0].partition_responses[0].base_offset, 0);

    for v in 13..=18 {
        let r: FetchResponse = request(&mut s, ApiKey::Fetch, v, &fetch_by_id(id))
            .await
            .unwrap();
        assert_eq!(r.responses[0].topic_id, id, "v{v}");
        let p = &r.responses[0].partitions[0];
        assert_eq!((p.error_code, p.high_watermark), (0, 2), "v{v}");
        assert!(!p.records.as_ref().unwrap().is_empty(), "v{v}");
    }
    // By name still works below v13.
    let by_name = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name("ids"))
            .with_partitions(vec![
                FetchPartition::default().with_partition_max_bytes(1 << 20)
            ])]);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &by_name).await.unwrap();
    assert_eq!(r.responses[0].partitions[0].high_watermark, 2);

    // An id no topic has: UNKNOWN_TOPIC_ID (100) for Fetch and Produce, nothing written.
    let stranger = Uuid::from_u128(0x1234);
    let r: FetchResponse = request(&mut s, ApiKey::Fetch, 17, &fetch_by_id(stranger))
        .await
        .unwrap();
    assert_eq!(r.responses[0].topic_id, stranger);
    assert_eq!(r.responses[0].partitions[0].error_code, 100);
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        13,
        &produce_by_id(stranger, &[b"x"]),
    )
    .await
    .unwrap();
    assert_eq!(r.responses[0].partition_responses[0].error_code, 100);
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("ids", 0)
            .unwrap()
            .log_end_offset(),
        2
    );
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_topics_v6_deletes_by_id_and_refuses_unknown_ids() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "doomed", 1).await;
    common::create_topic(&addr.to_string(), "kept", 1).await;
    let mut s = connect(addr).await;
    let id = topic_id(&mut s, "doomed").await;
    let kept = topic_id(&mut s, "kept").await;
    let stranger = Uuid::from_u128(77);
    let req = DeleteTopicsRequest::default()
        .with_timeout_ms(5000)
        .with_topics(vec![
            DeleteTopicState::default().with_topic_id(id),
            DeleteTopicState::default().with_topic_id(stranger),
            // Kafka refuses a topic named both ways (INVALID_REQUEST, 42) and deletes nothing for it.
            DeleteTopicState::default()
                .with_name(Some(name("kept")))
                .with_topic_id(kept),
        ]);
    let r: DeleteTopicsResponse = request(&mut s, ApiKey::DeleteTopics, 6, &req)
        .await
        .unwrap();
    let got: Vec<(Option<&str>, Uuid, i16)> = r
        .responses
        .iter()
        .map(|t| {
            (
                t.name.as_ref().map(|n| n.0.as_str()),
                t.topic_id,
                t.error_code,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (Some("doomed"), id, 0),
            (None, stranger, 100),
            (Some("kept"), kept, 42)
        ]
    );
    assert!(broker.broker().registry().get("doomed").is_none());
    assert!(broker.broker().registry().get("kept").is_some());
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorized_operations_are_all_supported_ones_without_an_authorizer() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "ops", 1).await;
    let mut s = connect(addr).await;

    // Not asked: Kafka's "not requested" value, i32::MIN.
    let r: DescribeClusterResponse = request(
        &mut s,
        ApiKey::DescribeCluster,
        2,
        &DescribeClusterRequest::default(),
    )
    .await
    .unwrap();
    assert_eq!(r.cluster_authorized_operations, i32::MIN);
    // CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE.
    let cluster = (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);
    for v in 0..=2 {
        let req =
            DescribeClusterRequest::default().with_include_cluster_authorized_operations(true);
        let r: DescribeClusterResponse = request(&mut s, ApiKey::DescribeCluster, v, &req)
            .await
            .unwrap();
        assert_eq!(r.cluster_authorized_operations, cluster, "v{v}");
    }
    // READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
    let topic =
        (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
    let asked = MetadataRequest::default()
        .with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some(name("ops")))
        ]))
        .with_include_topic_authorized_operations(true);
    for v in [8, 10, 13] {
        let mut req = asked.clone();
        if v <= 10 {
            req = req.with_include_cluster_authorized_operations(true);
        }
        let r: MetadataResponse = request(&mut s, ApiKey::Metadata, v, &req).await.unwrap();
        assert_eq!(r.topics[0].topic_authorized_operations, topic, "v{v}");
        if v <= 10 {
            assert_eq!(r.cluster_authorized_operations, cluster, "v{v}");
        }
    }
    let plain = asked
        .clone()
        .with_include_topic_authorized_operations(false);
    let r: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &plain).await.unwrap();
    assert_eq!(r.topics[0].topic_authorized_operations, i32::MIN);
    broker.shutdown().await.unwrap();
}
