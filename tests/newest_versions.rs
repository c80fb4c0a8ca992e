//! A client that speaks only the newest versions strata advertises (as current franz-go / Java clients pick the
//! highest version both sides know): every request of an admin, produce/consume and consumer-group flow is sent
//! with `kafka-protocol` at the version ApiVersions v4 reports as the maximum, and each response is decoded at that
//! version and checked. (No registry-installable client that speaks only the newest versions was available:
//! kafka-python, kafkajs and aiokafka negotiate older versions.)

use crate::common;

use std::collections::BTreeSet;

use bytes::Bytes;
use common::raw::{connect, request};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::net::TcpStream;

const MEMBER_ID_REQUIRED: i16 = 79;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

fn name(s: &str) -> TopicName {
    TopicName(sb(s))
}

/// The newest-version client: the table from ApiVersions v4, and the APIs it used.
struct Client {
    s: TcpStream,
    newest: Vec<(i16, i16)>,
    used: BTreeSet<i16>,
}

impl Client {
    async fn connect(addr: std::net::SocketAddr) -> Client {
        let mut s = connect(addr).await;
        let r: ApiVersionsResponse = request(
            &mut s,
            ApiKey::ApiVersions,
            4,
            &ApiVersionsRequest::default()
                .with_client_software_name(sb("newest-only"))
                .with_client_software_version(sb("1.0")),
        )
        .await
        .expect("ApiVersions v4 answered");
        assert_eq!(r.error_code, 0);
        let newest = r
            .api_keys
            .iter()
            .map(|k| (k.api_key, k.max_version))
            .collect();
        Client {
            s,
            newest,
            used: BTreeSet::from([ApiKey::ApiVersions as i16]),
        }
    }

    /// Sends `req` at the newest version of `api` and decodes the answer at it.
    async fn call<Req: Encodable, Resp: Decodable>(&mut self, api: ApiKey, req: &Req) -> Resp {
        let version = self
            .newest
            .iter()
            .find(|(k, _)| *k == api as i16)
            .unwrap_or_else(|| panic!("{api:?} advertised"))
            .1;
        assert_eq!(
            version,
            api.valid_versions().max.min(version),
            "{api:?}: within the codec"
        );
        self.used.insert(api as i16);
        request(&mut self.s, api, version, req)
            .await
            .unwrap_or_else(|| panic!("{api:?} v{version} answered"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_speaking_only_the_newest_versions_runs_admin_produce_consume_and_group_flows() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut c = Client::connect(server.local_addr()).await;

    // Admin: create, describe, alter, grow.
    let r: CreateTopicsResponse = c
        .call(
            ApiKey::CreateTopics,
            &CreateTopicsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![CreatableTopic::default()
                    .with_name(name("newest"))
                    .with_num_partitions(1)
                    .with_replication_factor(1)]),
        )
        .await;
    assert_eq!(r.topics[0].error_code, 0);
    let id = r.topics[0].topic_id;
    assert!(!id.is_nil(), "CreateTopics v7 returns the topic id");
    let r: MetadataResponse = c
        .call(
            ApiKey::Metadata,
            &MetadataRequest::default().with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some(name("newest")))
            ])),
        )
        .await;
    assert_eq!((r.topics[0].error_code, r.topics[0].topic_id), (0, id));
    let r: DescribeClusterResponse = c
        .call(ApiKey::DescribeCluster, &DescribeClusterRequest::default())
        .await;
    assert_eq!((r.error_code, r.brokers.len()), (0, 1));
    let r: IncrementalAlterConfigsResponse = c
        .call(
            ApiKey::IncrementalAlterConfigs,
            &IncrementalAlterConfigsRequest::default().with_resources(vec![
                AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(sb("newest"))
                    .with_configs(vec![AlterableConfig::default()
                        .with_name(sb("retention.ms"))
                        .with_config_operation(0)
                        .with_value(Some(sb("3600000")))]),
            ]),
        )
        .await;
    assert_eq!(r.responses[0].error_code, 0);
    let r: DescribeConfigsResponse = c
        .call(
            ApiKey::DescribeConfigs,
            &DescribeConfigsRequest::default().with_resources(vec![
                DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(sb("newest"))
                    .with_configuration_keys(Some(vec![sb("retention.ms")])),
            ]),
        )
        .await;
    assert_eq!(r.results[0].configs[0].value.as_deref(), Some("3600000"));
    let r: CreatePartitionsResponse = c
        .call(
            ApiKey::CreatePartitions,
            &CreatePartitionsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![
                    create_partitions_request::CreatePartitionsTopic::default()
                        .with_name(name("newest"))
                        .with_count(2)
                        .with_assignments(None),
                ]),
        )
        .await;
    assert_eq!(r.results[0].error_code, 0);

    // Produce (idempotent, by topic id) and consume (by topic id).
    let r: InitProducerIdResponse = c
        .call(
            ApiKey::InitProducerId,
            &InitProducerIdRequest::default()
                .with_transactional_id(None)
                .with_transaction_timeout_ms(-1)
                .with_producer_id((-1).into())
                .with_producer_epoch(-1),
        )
        .await;
    assert_eq!(r.error_code, 0);
    let pid: i64 = r.producer_id.into();
    let values: [&[u8]; 3] = [b"a", b"b", b"c"];
    let r: ProduceResponse = c
        .call(
            ApiKey::Produce,
            &ProduceRequest::default()
                .with_acks(-1)
                .with_timeout_ms(5000)
                .with_topic_data(vec![TopicProduceData::default()
                    .with_topic_id(id)
                    .with_partition_data(vec![PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(common::raw::idempotent_batch(
                            &values, pid, 0, 0,
                        )))])]),
        )
        .await;
    let p = &r.responses[0].partition_responses[0];
    assert_eq!((p.error_code, p.base_offset), (0, 0));
    let r: FetchResponse = c
        .call(
            ApiKey::Fetch,
            &FetchRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_max_wait_ms(0)
                .with_max_bytes(1 << 20)
                .with_topics(vec![FetchTopic::default()
                    .with_topic_id(id)
                    .with_partitions(vec![FetchPartition::default()
                        .with_partition(0)
                        .with_partition_max_bytes(1 << 20)])]),
        )
        .await;
    let p = &r.responses[0].partitions[0];
    assert_eq!((p.error_code, p.high_watermark), (0, 3));
    assert!(!p.records.clone().unwrap_or_default().is_empty());
    let r: ListOffsetsResponse = c
        .call(
            ApiKey::ListOffsets,
            &ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![ListOffsetsTopic::default()
                    .with_name(name("newest"))
                    .with_partitions(vec![ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(-1)])]),
        )
        .await;
    assert_eq!(r.topics[0].partitions[0].offset, 3);
    let r: OffsetForLeaderEpochResponse = c
        .call(
            ApiKey::OffsetForLeaderEpoch,
            &OffsetForLeaderEpochRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![
                    offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                        .with_topic(name("newest"))
                        .with_partitions(vec![
                            offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                                .with_partition(0)
                                .with_current_leader_epoch(-1)
                                .with_leader_epoch(0),
                        ]),
                ]),
        )
        .await;
    assert_eq!(r.topics[0].partitions[0].end_offset, 3);
    let r: DescribeProducersResponse = c
        .call(
            ApiKey::DescribeProducers,
            &DescribeProducersRequest::default().with_topics(vec![
                describe_producers_request::TopicRequest::default()
                    .with_name(name("newest"))
                    .with_partition_indexes(vec![0]),
            ]),
        )
        .await;
    let producers = &r.topics[0].partitions[0].active_producers;
    assert_eq!(producers.len(), 1);
    assert_eq!(
        (
            i64::from(producers[0].producer_id),
            producers[0].last_sequence
        ),
        (pid, 2)
    );

    // A classic consumer group: join (KIP-394 member id first), sync, heartbeat, commit, fetch, leave.
    let r: FindCoordinatorResponse = c
        .call(
            ApiKey::FindCoordinator,
            &FindCoordinatorRequest::default()
                .with_key_type(0)
                .with_coordinator_keys(vec![sb("g-newest")]),
        )
        .await;
    assert_eq!(r.coordinators[0].error_code, 0);
    let join = |member: StrBytes| {
        JoinGroupRequest::default()
            .with_group_id(GroupId(sb("g-newest")))
            .with_session_timeout_ms(30_000)
            .with_rebalance_timeout_ms(30_000)
            .with_member_id(member)
            .with_protocol_type(sb("consumer"))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(sb("range"))
                .with_metadata(Bytes::from_static(&[0, 1, 0, 0, 0, 0]))])
    };
    let r: JoinGroupResponse = c.call(ApiKey::JoinGroup, &join(sb(""))).await;
    assert_eq!(r.error_code, MEMBER_ID_REQUIRED);
    let member = r.member_id.clone();
    let r: JoinGroupResponse = c.call(ApiKey::JoinGroup, &join(member.clone())).await;
    assert_eq!((r.error_code, r.leader.as_str()), (0, member.as_str()));
    let generation = r.generation_id;
    let r: SyncGroupResponse = c
        .call(
            ApiKey::SyncGroup,
            &SyncGroupRequest::default()
                .with_group_id(GroupId(sb("g-newest")))
                .with_generation_id(generation)
                .with_member_id(member.clone())
                .with_protocol_type(Some(sb("consumer")))
                .with_protocol_name(Some(sb("range")))
                .with_assignments(vec![SyncGroupRequestAssignment::default()
                    .with_member_id(member.clone())
                    .with_assignment(Bytes::from_static(&[0, 1, 0, 0, 0, 0]))]),
        )
        .await;
    assert_eq!(r.error_code, 0);
    let r: HeartbeatResponse = c
        .call(
            ApiKey::Heartbeat,
            &HeartbeatRequest::default()
                .with_group_id(GroupId(sb("g-newest")))
                .with_generation_id(generation)
                .with_member_id(member.clone()),
        )
        .await;
    assert_eq!(r.error_code, 0);
    let r: OffsetCommitResponse = c
        .call(
            ApiKey::OffsetCommit,
            &OffsetCommitRequest::default()
                .with_group_id(GroupId(sb("g-newest")))
                .with_generation_id_or_member_epoch(generation)
                .with_member_id(member.clone())
                .with_topics(vec![OffsetCommitRequestTopic::default()
                    .with_name(name("newest"))
                    .with_partitions(vec![OffsetCommitRequestPartition::default()
                        .with_partition_index(0)
                        .with_committed_offset(3)
                        .with_committed_leader_epoch(-1)])]),
        )
        .await;
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    let r: OffsetFetchResponse = c
        .call(
            ApiKey::OffsetFetch,
            &OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
                .with_group_id(GroupId(sb("g-newest")))
                .with_member_epoch(-1)
                .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                    .with_name(name("newest"))
                    .with_partition_indexes(vec![0])]))]),
        )
        .await;
    assert_eq!(r.groups[0].topics[0].partitions[0].committed_offset, 3);
    let r: DescribeGroupsResponse = c
        .call(
            ApiKey::DescribeGroups,
            &DescribeGroupsRequest::default().with_groups(vec![GroupId(sb("g-newest"))]),
        )
        .await;
    assert_eq!(r.groups[0].group_state.as_str(), "Stable");
    let r: ListGroupsResponse = c
        .call(ApiKey::ListGroups, &ListGroupsRequest::default())
        .await;
    assert!(r.groups.iter().any(|g| g.group_id.as_str() == "g-newest"));
    let r: LeaveGroupResponse = c
        .call(
            ApiKey::LeaveGroup,
            &LeaveGroupRequest::default()
                .with_group_id(GroupId(sb("g-newest")))
                .with_members(vec![
                    leave_group_request::MemberIdentity::default().with_member_id(member.clone())
                ]),
        )
        .await;
    assert_eq!(r.error_code, 0);
    let r: DeleteGroupsResponse = c
        .call(
            ApiKey::DeleteGroups,
            &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(sb("g-newest"))]),
        )
        .await;
    assert_eq!(r.results[0].error_code, 0);

    // Trim and delete by topic id.
    let r: DeleteRecordsResponse = c
        .call(
            ApiKey::DeleteRecords,
            &DeleteRecordsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![delete_records_request::DeleteRecordsTopic::default()
                    .with_name(name("newest"))
                    .with_partitions(vec![
                        delete_records_request::DeleteRecordsPartition::default()
                            .with_partition_index(0)
                            .with_offset(1),
                    ])]),
        )
        .await;
    assert_eq!(r.topics[0].partitions[0].low_watermark, 1);
    let r: DescribeLogDirsResponse = c
        .call(ApiKey::DescribeLogDirs, &DescribeLogDirsRequest::default())
        .await;
    assert_eq!(r.results[0].error_code, 0);
    let r: DeleteTopicsResponse = c
        .call(
            ApiKey::DeleteTopics,
            &DeleteTopicsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![DeleteTopicState::default().with_topic_id(id)]),
        )
        .await;
    assert_eq!(r.responses[0].error_code, 0);
    assert!(server.broker().registry().get("newest").is_none());
    assert!(
        c.used.len() >= 26,
        "{} APIs used: {:?}",
        c.used.len(),
        c.used
    );
    server.shutdown().await.unwrap();
}
