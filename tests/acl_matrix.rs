//! Authorization of every API strata serves, allowed and denied, over the wire (issue 31): a broker with Kafka's
//! StandardAuthorizer switched on, three SASL/PLAIN users — `admin` (a super user), `alice` (ALLOW ALL on topic `t`,
//! group `g`, transactional id `x` and the cluster) and `bob` (no ACL) — and one raw request per API from each.
//! bob's answer carries Kafka's authorization error (or, for the listing APIs, leaves the resource out) and changes
//! nothing; alice's carries none. The counts are printed (`matrix: N APIs, M cases`).

use crate::common;

use std::net::SocketAddr;

use bytes::Bytes;
use common::raw::{self, connect, request};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::net::TcpStream;

const TOPIC: i16 = 29;
const GROUP: i16 = 30;
const CLUSTER: i16 = 31;
const TXN: i16 = 53;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// The broker's properties: a SASL_PLAINTEXT listener with three PLAIN users, then a PLAINTEXT one.
fn props(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("listeners", "SASL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0".into()),
        ("listener.security.protocol.map", "SASL:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT".into()),
        ("sasl.enabled.mechanisms", "PLAIN".into()),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";"#.into(),
        ),
        ("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer".into()),
        ("super.users", "User:admin".into()),
        ("log.dirs", dir.display().to_string()),
    ]
}

/// A connection authenticated as `user` (password `<user>-secret`).
async fn login(addr: SocketAddr, user: &str) -> TcpStream {
    let mut c = connect(addr).await;
    let hs = raw::sasl_handshake(&mut c, 1, "PLAIN").await;
    assert_eq!(hs.error_code, 0);
    let token = format!("\0{user}\0{user}-secret");
    let r = raw::sasl_authenticate(&mut c, token.as_bytes())
        .await
        .expect("answered");
    assert_eq!(r.error_code, 0, "{user} authenticates");
    c
}

/// Every error code in a response (its `Debug` output's `*error_code` fields).
fn codes(debug: &str) -> Vec<i16> {
    // CreateTopics' topic_config_error_code is the configs' (DESCRIBE_CONFIGS, which alice lacks on the topic it
    // creates: Kafka answers 29 there too), not the request's.
    debug
        .replace("topic_config_error_code", "topic_config_code")
        .split("error_code: ")
        .skip(1)
        .filter_map(|rest| {
            let end = rest
                .find(|c: char| c != '-' && !c.is_ascii_digit())
                .unwrap_or(rest.len());
            rest[..end].parse().ok()
        })
        .collect()
}

/// Sends `req` as `api` v`version` and returns the response's `Debug` text.
async fn call<Req: Encodable, Resp: Decodable + std::fmt::Debug>(
    c: &mut TcpStream,
    api: ApiKey,
    version: i16,
    req: &Req,
) -> String {
    let resp: Resp = request(c, api, version, req).await.expect("answered");
    format!("{resp:?}")
}

/// What bob's answer shows.
#[derive(Debug, Clone, Copy)]
enum Denied {
    /// The error code.
    Code(i16),
    /// The resource (named) is left out of a listing.
    Hides(&'static str),
    /// The authorized operations are 0 (nothing else is denied).
    NoOperations,
}

/// One request per API, with what a denial looks like.
async fn ask(c: &mut TcpStream, api: ApiKey) -> (String, Denied) {
    use Denied::*;
    let t = TopicName(s("t"));
    macro_rules! go {
        ($req:ty, $resp:ty, $v:expr, $build:expr, $denied:expr) => {{
            let req: $req = $build;
            (call::<$req, $resp>(c, api, $v, &req).await, $denied)
        }};
    }
    match api {
        ApiKey::Produce => go!(
            ProduceRequest,
            ProduceResponse,
            9,
            {
                let p = produce_request::PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(raw::batch(&[b"v"])));
                ProduceRequest::default()
                    .with_acks(-1)
                    .with_timeout_ms(5000)
                    .with_topic_data(vec![produce_request::TopicProduceData::default()
                        .with_name(t.clone())
                        .with_partition_data(vec![p])])
            },
            Code(TOPIC)
        ),
        ApiKey::Fetch => go!(
            FetchRequest,
            FetchResponse,
            12,
            FetchRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_max_wait_ms(0)
                .with_max_bytes(1 << 20)
                .with_session_epoch(-1)
                .with_topics(vec![fetch_request::FetchTopic::default()
                    .with_topic(t.clone())
                    .with_partitions(vec![fetch_request::FetchPartition::default()
                        .with_partition(0)
                        .with_partition_max_bytes(1 << 20)])]),
            Code(TOPIC)
        ),
        ApiKey::ListOffsets => go!(
            ListOffsetsRequest,
            ListOffsetsResponse,
            7,
            ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                    .with_name(t.clone())
                    .with_partitions(vec![
                        list_offsets_request::ListOffsetsPartition::default().with_timestamp(-1)
                    ])]),
            Code(TOPIC)
        ),
        ApiKey::Metadata => go!(
            MetadataRequest,
            MetadataResponse,
            12,
            MetadataRequest::default().with_topics(Some(vec![
                metadata_request::MetadataRequestTopic::default().with_name(Some(t.clone()))
            ])),
            Code(TOPIC)
        ),
        ApiKey::OffsetCommit => go!(
            OffsetCommitRequest,
            OffsetCommitResponse,
            8,
            OffsetCommitRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_generation_id_or_member_epoch(-1)
                .with_topics(vec![
                    offset_commit_request::OffsetCommitRequestTopic::default()
                        .with_name(t.clone())
                        .with_partitions(vec![
                            offset_commit_request::OffsetCommitRequestPartition::default()
                                .with_committed_offset(1)
                        ])
                ]),
            Code(GROUP)
        ),
        ApiKey::OffsetFetch => go!(
            OffsetFetchRequest,
            OffsetFetchResponse,
            7,
            OffsetFetchRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_topics(None),
            Code(GROUP)
        ),
        ApiKey::FindCoordinator => go!(
            FindCoordinatorRequest,
            FindCoordinatorResponse,
            3,
            FindCoordinatorRequest::default().with_key(s("g")),
            Code(GROUP)
        ),
        ApiKey::JoinGroup => go!(
            JoinGroupRequest,
            JoinGroupResponse,
            7,
            JoinGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_session_timeout_ms(10000)
                .with_rebalance_timeout_ms(100)
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
                )
                .with_name(s("range"))]),
            Code(GROUP)
        ),
        ApiKey::Heartbeat => go!(
            HeartbeatRequest,
            HeartbeatResponse,
            4,
            HeartbeatRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_member_id(s("m")),
            Code(GROUP)
        ),
        ApiKey::LeaveGroup => go!(
            LeaveGroupRequest,
            LeaveGroupResponse,
            4,
            LeaveGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_members(vec![
                    leave_group_request::MemberIdentity::default().with_member_id(s("m"))
                ]),
            Code(GROUP)
        ),
        ApiKey::SyncGroup => go!(
            SyncGroupRequest,
            SyncGroupResponse,
            5,
            SyncGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_member_id(s("m"))
                .with_protocol_type(Some(s("consumer")))
                .with_protocol_name(Some(s("range"))),
            Code(GROUP)
        ),
        ApiKey::DescribeGroups => go!(
            DescribeGroupsRequest,
            DescribeGroupsResponse,
            5,
            DescribeGroupsRequest::default().with_groups(vec![GroupId(s("g"))]),
            Code(GROUP)
        ),
        ApiKey::ListGroups => go!(
            ListGroupsRequest,
            ListGroupsResponse,
            4,
            ListGroupsRequest::default(),
            Hides("\"g\"")
        ),
        ApiKey::CreateTopics => go!(
            CreateTopicsRequest,
            CreateTopicsResponse,
            5,
            CreateTopicsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![create_topics_request::CreatableTopic::default()
                    .with_name(TopicName(s("created")))
                    .with_num_partitions(1)
                    .with_replication_factor(1)]),
            Code(TOPIC)
        ),
        ApiKey::DeleteTopics => go!(
            DeleteTopicsRequest,
            DeleteTopicsResponse,
            5,
            DeleteTopicsRequest::default()
                .with_timeout_ms(5000)
                .with_topic_names(vec![TopicName(s("t2"))]),
            Code(TOPIC)
        ),
        ApiKey::DeleteRecords => go!(
            DeleteRecordsRequest,
            DeleteRecordsResponse,
            2,
            DeleteRecordsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![delete_records_request::DeleteRecordsTopic::default()
                    .with_name(t.clone())
                    .with_partitions(vec![
                        delete_records_request::DeleteRecordsPartition::default().with_offset(0)
                    ])]),
            Code(TOPIC)
        ),
        ApiKey::InitProducerId => go!(
            InitProducerIdRequest,
            InitProducerIdResponse,
            4,
            InitProducerIdRequest::default()
                .with_transactional_id(Some(TransactionalId(s("x"))))
                .with_transaction_timeout_ms(10000)
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
            Code(TXN)
        ),
        ApiKey::OffsetForLeaderEpoch => go!(
            OffsetForLeaderEpochRequest,
            OffsetForLeaderEpochResponse,
            4,
            OffsetForLeaderEpochRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![
                    offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                        .with_topic(t.clone())
                        .with_partitions(vec![
                            offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                                .with_leader_epoch(0)
                                .with_current_leader_epoch(-1)
                        ])
                ]),
            Code(TOPIC)
        ),
        ApiKey::AddPartitionsToTxn => go!(
            AddPartitionsToTxnRequest,
            AddPartitionsToTxnResponse,
            3,
            AddPartitionsToTxnRequest::default()
                .with_v3_and_below_transactional_id(TransactionalId(s("x")))
                .with_v3_and_below_producer_id(ProducerId(0))
                .with_v3_and_below_topics(vec![
                    add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                        .with_name(t.clone())
                        .with_partitions(vec![0])
                ]),
            Code(TXN)
        ),
        ApiKey::AddOffsetsToTxn => go!(
            AddOffsetsToTxnRequest,
            AddOffsetsToTxnResponse,
            3,
            AddOffsetsToTxnRequest::default()
                .with_transactional_id(TransactionalId(s("x")))
                .with_group_id(GroupId(s("g"))),
            Code(TXN)
        ),
        ApiKey::EndTxn => go!(
            EndTxnRequest,
            EndTxnResponse,
            3,
            EndTxnRequest::default().with_transactional_id(TransactionalId(s("x"))),
            Code(TXN)
        ),
        ApiKey::WriteTxnMarkers => go!(
            WriteTxnMarkersRequest,
            WriteTxnMarkersResponse,
            1,
            WriteTxnMarkersRequest::default().with_markers(vec![
                write_txn_markers_request::WritableTxnMarker::default()
                    .with_producer_id(ProducerId(999))
                    .with_topics(vec![
                        write_txn_markers_request::WritableTxnMarkerTopic::default()
                            .with_name(t.clone())
                            .with_partition_indexes(vec![0])
                    ])
            ]),
            Code(CLUSTER)
        ),
        ApiKey::TxnOffsetCommit => go!(
            TxnOffsetCommitRequest,
            TxnOffsetCommitResponse,
            3,
            TxnOffsetCommitRequest::default()
                .with_transactional_id(TransactionalId(s("x")))
                .with_group_id(GroupId(s("g")))
                .with_topics(vec![
                    txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                        .with_name(t.clone())
                        .with_partitions(vec![
                            txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                                .with_committed_offset(1)
                        ])
                ]),
            Code(TXN)
        ),
        ApiKey::DescribeAcls => go!(
            DescribeAclsRequest,
            DescribeAclsResponse,
            2,
            any_acls(),
            Code(CLUSTER)
        ),
        ApiKey::CreateAcls => go!(
            CreateAclsRequest,
            CreateAclsResponse,
            2,
            CreateAclsRequest::default().with_creations(vec![grant("User:bob", 2, "t", 2)]),
            Code(CLUSTER)
        ),
        ApiKey::DeleteAcls => go!(
            DeleteAclsRequest,
            DeleteAclsResponse,
            2,
            DeleteAclsRequest::default().with_filters(vec![
                delete_acls_request::DeleteAclsFilter::default()
                    .with_resource_type_filter(1)
                    .with_resource_name_filter(None)
                    .with_principal_filter(Some(s("User:nobody")))
                    .with_host_filter(None)
                    .with_pattern_type_filter(1)
                    .with_operation(1)
                    .with_permission_type(1)
            ]),
            Code(CLUSTER)
        ),
        ApiKey::DescribeConfigs => go!(
            DescribeConfigsRequest,
            DescribeConfigsResponse,
            4,
            DescribeConfigsRequest::default().with_resources(vec![
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("t")),
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(4)
                    .with_resource_name(s("1"))
            ]),
            Code(TOPIC)
        ),
        ApiKey::AlterConfigs => go!(
            AlterConfigsRequest,
            AlterConfigsResponse,
            2,
            AlterConfigsRequest::default().with_resources(vec![
                alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("t"))
                    .with_configs(vec![alter_configs_request::AlterableConfig::default()
                        .with_name(s("retention.ms"))
                        .with_value(Some(s("1234")))])
            ]),
            Code(TOPIC)
        ),
        ApiKey::IncrementalAlterConfigs => go!(
            IncrementalAlterConfigsRequest,
            IncrementalAlterConfigsResponse,
            1,
            IncrementalAlterConfigsRequest::default().with_resources(vec![
                incremental_alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("t"))
                    .with_configs(vec![
                        incremental_alter_configs_request::AlterableConfig::default()
                            .with_name(s("retention.ms"))
                            .with_value(Some(s("1234")))
                    ])
            ]),
            Code(TOPIC)
        ),
        ApiKey::DescribeLogDirs => go!(
            DescribeLogDirsRequest,
            DescribeLogDirsResponse,
            4,
            DescribeLogDirsRequest::default(),
            Code(CLUSTER)
        ),
        ApiKey::CreatePartitions => go!(
            CreatePartitionsRequest,
            CreatePartitionsResponse,
            3,
            CreatePartitionsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![
                    create_partitions_request::CreatePartitionsTopic::default()
                        .with_name(t.clone())
                        .with_count(2)
                ]),
            Code(TOPIC)
        ),
        ApiKey::DeleteGroups => go!(
            DeleteGroupsRequest,
            DeleteGroupsResponse,
            2,
            DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("g"))]),
            Code(GROUP)
        ),
        ApiKey::ElectLeaders => go!(
            ElectLeadersRequest,
            ElectLeadersResponse,
            2,
            ElectLeadersRequest::default()
                .with_timeout_ms(5000)
                .with_topic_partitions(Some(vec![
                    elect_leaders_request::TopicPartitions::default()
                        .with_topic(t.clone())
                        .with_partitions(vec![0])
                ])),
            Code(CLUSTER)
        ),
        ApiKey::UpdateFeatures => go!(
            UpdateFeaturesRequest,
            UpdateFeaturesResponse,
            1,
            UpdateFeaturesRequest::default()
                .with_timeout_ms(5000)
                .with_validate_only(true)
                .with_feature_updates(vec![update_features_request::FeatureUpdateKey::default()
                    .with_feature(s("transaction.version"))
                    .with_max_version_level(2)
                    .with_upgrade_type(1)]),
            Code(CLUSTER)
        ),
        ApiKey::AlterPartitionReassignments => go!(
            AlterPartitionReassignmentsRequest,
            AlterPartitionReassignmentsResponse,
            0,
            AlterPartitionReassignmentsRequest::default().with_timeout_ms(5000),
            Code(CLUSTER)
        ),
        ApiKey::ListPartitionReassignments => go!(
            ListPartitionReassignmentsRequest,
            ListPartitionReassignmentsResponse,
            0,
            ListPartitionReassignmentsRequest::default().with_timeout_ms(5000),
            Code(CLUSTER)
        ),
        ApiKey::OffsetDelete => go!(
            OffsetDeleteRequest,
            OffsetDeleteResponse,
            0,
            OffsetDeleteRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_topics(vec![
                    offset_delete_request::OffsetDeleteRequestTopic::default()
                        .with_name(t.clone())
                        .with_partitions(vec![
                            offset_delete_request::OffsetDeleteRequestPartition::default()
                        ])
                ]),
            Code(GROUP)
        ),
        ApiKey::DescribeClientQuotas => go!(
            DescribeClientQuotasRequest,
            DescribeClientQuotasResponse,
            1,
            DescribeClientQuotasRequest::default(),
            Code(CLUSTER)
        ),
        ApiKey::DescribeUserScramCredentials => go!(
            DescribeUserScramCredentialsRequest,
            DescribeUserScramCredentialsResponse,
            0,
            DescribeUserScramCredentialsRequest::default(),
            Code(CLUSTER)
        ),
        ApiKey::AlterUserScramCredentials => go!(
            AlterUserScramCredentialsRequest,
            AlterUserScramCredentialsResponse,
            0,
            AlterUserScramCredentialsRequest::default().with_upsertions(vec![
                alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
                    .with_name(s("carol"))
                    .with_mechanism(1)
                    .with_iterations(4096)
                    .with_salt(Bytes::from_static(b"salt"))
                    .with_salted_password(Bytes::from_static(b"0123456789abcdef0123456789abcdef"))
            ]),
            Code(CLUSTER)
        ),
        ApiKey::DescribeCluster => go!(
            DescribeClusterRequest,
            DescribeClusterResponse,
            1,
            DescribeClusterRequest::default().with_include_cluster_authorized_operations(true),
            NoOperations
        ),
        ApiKey::DescribeProducers => go!(
            DescribeProducersRequest,
            DescribeProducersResponse,
            0,
            DescribeProducersRequest::default().with_topics(vec![
                describe_producers_request::TopicRequest::default()
                    .with_name(t.clone())
                    .with_partition_indexes(vec![0])
            ]),
            Code(TOPIC)
        ),
        ApiKey::DescribeTransactions => go!(
            DescribeTransactionsRequest,
            DescribeTransactionsResponse,
            0,
            DescribeTransactionsRequest::default()
                .with_transactional_ids(vec![TransactionalId(s("x"))]),
            Code(TXN)
        ),
        ApiKey::ListTransactions => go!(
            ListTransactionsRequest,
            ListTransactionsResponse,
            1,
            ListTransactionsRequest::default(),
            Hides("\"x\"")
        ),
        ApiKey::ConsumerGroupHeartbeat => go!(
            ConsumerGroupHeartbeatRequest,
            ConsumerGroupHeartbeatResponse,
            0,
            ConsumerGroupHeartbeatRequest::default()
                .with_group_id(GroupId(s("g848")))
                .with_member_id(s("m1"))
                .with_rebalance_timeout_ms(5000)
                .with_subscribed_topic_names(Some(vec![t.clone()]))
                .with_topic_partitions(Some(vec![])),
            Code(GROUP)
        ),
        ApiKey::ConsumerGroupDescribe => go!(
            ConsumerGroupDescribeRequest,
            ConsumerGroupDescribeResponse,
            0,
            ConsumerGroupDescribeRequest::default().with_group_ids(vec![GroupId(s("g"))]),
            Code(GROUP)
        ),
        ApiKey::DescribeTopicPartitions => go!(
            DescribeTopicPartitionsRequest,
            DescribeTopicPartitionsResponse,
            0,
            DescribeTopicPartitionsRequest::default().with_topics(vec![
                describe_topic_partitions_request::TopicRequest::default().with_name(t.clone())
            ]),
            Code(TOPIC)
        ),
        other => panic!("no matrix case for {other:?}"),
    }
}

fn any_acls() -> DescribeAclsRequest {
    DescribeAclsRequest::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(1)
        .with_pattern_type_filter(1)
        .with_operation(1)
        .with_permission_type(1)
}

/// ALLOW `op` for `who` on the literal resource `rt` `name`.
fn grant(who: &str, rt: i8, name: &str, op: i8) -> create_acls_request::AclCreation {
    create_acls_request::AclCreation::default()
        .with_resource_type(rt)
        .with_resource_name(s(name))
        .with_resource_pattern_type(3)
        .with_principal(s(who))
        .with_host(s("*"))
        .with_operation(op)
        .with_permission_type(3)
}

/// The APIs answered without an authorization check (Kafka's too).
const UNCHECKED: &[ApiKey] = &[
    ApiKey::ApiVersions,
    ApiKey::SaslHandshake,
    ApiKey::SaslAuthenticate,
];

/// What admin sees: the end offset of t-0, the partitions of t, whether t2 and `created` exist, t's retention.ms,
/// the ACL count, the SCRAM users, g's committed offsets.
async fn state(admin: &mut TcpStream) -> String {
    let meta: MetadataResponse = request(
        admin,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    )
    .await
    .unwrap();
    let mut topics: Vec<String> = meta
        .topics
        .iter()
        .map(|t| {
            format!(
                "{}:{}",
                t.name.as_ref().unwrap().as_str(),
                t.partitions.len()
            )
        })
        .collect();
    topics.sort();
    let end: ListOffsetsResponse = request(
        admin,
        ApiKey::ListOffsets,
        7,
        &ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                .with_name(TopicName(s("t")))
                .with_partitions(vec![
                    list_offsets_request::ListOffsetsPartition::default().with_timestamp(-1),
                ])]),
    )
    .await
    .unwrap();
    let configs: DescribeConfigsResponse = request(
        admin,
        ApiKey::DescribeConfigs,
        4,
        &DescribeConfigsRequest::default().with_resources(vec![
            describe_configs_request::DescribeConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name(s("t"))
                .with_configuration_keys(Some(vec![s("retention.ms")])),
        ]),
    )
    .await
    .unwrap();
    let acls: DescribeAclsResponse = request(admin, ApiKey::DescribeAcls, 2, &any_acls())
        .await
        .unwrap();
    let scram: DescribeUserScramCredentialsResponse = request(
        admin,
        ApiKey::DescribeUserScramCredentials,
        0,
        &DescribeUserScramCredentialsRequest::default(),
    )
    .await
    .unwrap();
    let offsets: OffsetFetchResponse = request(
        admin,
        ApiKey::OffsetFetch,
        7,
        &OffsetFetchRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_topics(None),
    )
    .await
    .unwrap();
    format!(
        "topics {topics:?} end {} retention {:?} acls {} scram {} offsets {:?}",
        end.topics[0].partitions[0].offset,
        configs.results[0]
            .configs
            .first()
            .and_then(|c| c.value.clone()),
        acls.resources.iter().map(|r| r.acls.len()).sum::<usize>(),
        scram.results.len(),
        offsets
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.committed_offset))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn every_api_is_allowed_or_denied_as_kafka_authorizes_it() {
    common::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let owned = props(dir.path());
        let extra: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let server = common::start_broker_with(dir.path(), &extra).await;
        let addr = server.local_addrs()[0];
        let mut admin = login(addr, "admin").await;
        // Setup, as the super user: topics t and t2, alice's grants, a committed offset of g, transactional id x.
        raw::create_topics(&mut admin, &["t", "t2"], 1).await;
        let grants: Vec<_> = [
            (2, "t"),
            (3, "g"),
            (3, "g848"),
            (5, "x"),
            (4, "kafka-cluster"),
        ]
        .iter()
        .map(|(rt, n)| grant("User:alice", *rt, n, 2))
        .collect();
        let r: CreateAclsResponse = request(
            &mut admin,
            ApiKey::CreateAcls,
            2,
            &CreateAclsRequest::default().with_creations(grants),
        )
        .await
        .unwrap();
        assert!(r.results.iter().all(|x| x.error_code == 0), "{r:?}");
        let _: OffsetCommitResponse = request(
            &mut admin,
            ApiKey::OffsetCommit,
            8,
            &OffsetCommitRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_generation_id_or_member_epoch(-1)
                .with_topics(vec![
                    offset_commit_request::OffsetCommitRequestTopic::default()
                        .with_name(TopicName(s("t")))
                        .with_partitions(vec![
                            offset_commit_request::OffsetCommitRequestPartition::default()
                                .with_committed_offset(0),
                        ]),
                ]),
        )
        .await
        .unwrap();
        let pid: InitProducerIdResponse = request(
            &mut admin,
            ApiKey::InitProducerId,
            4,
            &InitProducerIdRequest::default()
                .with_transactional_id(Some(TransactionalId(s("x"))))
                .with_transaction_timeout_ms(10000)
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
        )
        .await
        .unwrap();
        assert_eq!(pid.error_code, 0);

        let before = state(&mut admin).await;
        assert!(
            before.contains("acls 5") && before.contains("offsets [0]") && before.contains("t2:1"),
            "{before}"
        );
        let mut bob = login(addr, "bob").await;
        let mut apis = 0;
        let mut cases = 0;
        for (api, _, _) in strata_broker::codec::versions::SUPPORTED {
            if UNCHECKED.contains(api) {
                continue;
            }
            let (answer, denied) = ask(&mut bob, *api).await;
            match denied {
                Denied::Code(code) => assert!(
                    codes(&answer).contains(&code),
                    "bob {api:?}: expected {code}: {answer}"
                ),
                Denied::Hides(name) => {
                    assert!(!answer.contains(name), "bob {api:?} sees {name}: {answer}")
                }
                Denied::NoOperations => assert!(
                    answer.contains("cluster_authorized_operations: 0"),
                    "bob {api:?}: {answer}"
                ),
            }
            apis += 1;
            cases += 1;
        }
        // Nothing bob asked changed anything.
        assert_eq!(
            state(&mut admin).await,
            before,
            "bob's denied requests changed nothing"
        );

        let mut alice = login(addr, "alice").await;
        for (api, _, _) in strata_broker::codec::versions::SUPPORTED {
            if UNCHECKED.contains(api) {
                continue;
            }
            let (answer, denied) = ask(&mut alice, *api).await;
            let auth = codes(&answer)
                .into_iter()
                .filter(|c| [TOPIC, GROUP, CLUSTER, TXN].contains(c))
                .count();
            assert_eq!(auth, 0, "alice {api:?} denied: {answer}");
            match denied {
                Denied::Hides(name) => assert!(
                    answer.contains(name),
                    "alice {api:?} misses {name}: {answer}"
                ),
                Denied::NoOperations => assert!(
                    !answer.contains("cluster_authorized_operations: 0"),
                    "{answer}"
                ),
                Denied::Code(_) => {}
            }
            cases += 1;
        }
        println!(
            "matrix: {apis} APIs checked ({} served, {} unchecked as in Kafka), {cases} cases",
            apis + UNCHECKED.len(),
            UNCHECKED.len()
        );
        server.shutdown().await.unwrap();
    });
}

/// DescribeTopicPartitions as a principal allowed to DESCRIBE only some topics (Kafka's
/// `DescribeTopicPartitionsRequestHandler`): named topics it may not describe are TOPIC_AUTHORIZATION_FAILED with the
/// nil id; listing every topic leaves them out before the partition limit counts, so the next page starts at a
/// topic it may see; a cursor on a denied topic starts the others at partition 0.
#[test]
fn describe_topic_partitions_answers_only_describable_topics() {
    use describe_topic_partitions_request::{Cursor, TopicRequest};
    common::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let owned = props(dir.path());
        let extra: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let server = common::start_broker_with(dir.path(), &extra).await;
        let addr = server.local_addrs()[0];
        let mut admin = login(addr, "admin").await;
        let names = ["dtp-a", "dtp-b", "dtp-c"];
        raw::create_topics(&mut admin, &names, 2).await;
        // bob may DESCRIBE (8) dtp-a and dtp-c, not dtp-b.
        let r: CreateAclsResponse = request(
            &mut admin,
            ApiKey::CreateAcls,
            2,
            &CreateAclsRequest::default().with_creations(vec![
                grant("User:bob", 2, "dtp-a", 8),
                grant("User:bob", 2, "dtp-c", 8),
            ]),
        )
        .await
        .unwrap();
        assert!(r.results.iter().all(|x| x.error_code == 0), "{r:?}");
        let mut bob = login(addr, "bob").await;
        let ask = |topics: &[&str], limit: i32, cursor: Option<(&str, i32)>| {
            DescribeTopicPartitionsRequest::default()
                .with_topics(
                    topics
                        .iter()
                        .map(|n| TopicRequest::default().with_name(TopicName(s(n))))
                        .collect(),
                )
                .with_response_partition_limit(limit)
                .with_cursor(cursor.map(|(t, p)| {
                    Cursor::default()
                        .with_topic_name(TopicName(s(t)))
                        .with_partition_index(p)
                }))
        };
        // (name, error, partitions) of each answered topic, in order, and the next cursor.
        type Page = (Vec<(String, i16, Vec<i32>)>, Option<(String, i32)>);
        fn page(r: &DescribeTopicPartitionsResponse) -> Page {
            (
                r.topics
                    .iter()
                    .map(|t| {
                        let name = t.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default();
                        let parts = t.partitions.iter().map(|p| p.partition_index).collect();
                        (name, t.error_code, parts)
                    })
                    .collect(),
                r.next_cursor
                    .as_ref()
                    .map(|c| (c.topic_name.0.to_string(), c.partition_index)),
            )
        }
        let entry = |n: &str, e: i16, p: &[i32]| (n.to_string(), e, p.to_vec());

        // Every topic, 3 partitions a page: dtp-b is not counted.
        let all: DescribeTopicPartitionsResponse = request(
            &mut bob,
            ApiKey::DescribeTopicPartitions,
            0,
            &ask(&[], 3, Some(("dtp-", 0))),
        )
        .await
        .unwrap();
        assert_eq!(
            page(&all),
            (
                vec![entry("dtp-a", 0, &[0, 1]), entry("dtp-c", 0, &[0])],
                Some(("dtp-c".into(), 1))
            ),
            "{all:?}"
        );
        // DESCRIBE is all bob may do on dtp-a (bit 8).
        assert_eq!(all.topics[0].topic_authorized_operations, 1 << 8, "{all:?}");
        assert!(all.topics[0].partitions[0].eligible_leader_replicas == Some(vec![]));

        // Named: dtp-b is denied, after the others, with the nil id.
        let named: DescribeTopicPartitionsResponse = request(
            &mut bob,
            ApiKey::DescribeTopicPartitions,
            0,
            &ask(&["dtp-c", "dtp-b", "dtp-a"], 2000, None),
        )
        .await
        .unwrap();
        assert_eq!(
            page(&named),
            (
                vec![
                    entry("dtp-a", 0, &[0, 1]),
                    entry("dtp-c", 0, &[0, 1]),
                    entry("dtp-b", TOPIC, &[]),
                ],
                None
            ),
            "{named:?}"
        );
        assert!(named.topics[2].topic_id.is_nil(), "{named:?}");

        // A cursor on the denied topic: the others start at partition 0.
        let cursor: DescribeTopicPartitionsResponse = request(
            &mut bob,
            ApiKey::DescribeTopicPartitions,
            0,
            &ask(&["dtp-a", "dtp-b", "dtp-c"], 2000, Some(("dtp-b", 1))),
        )
        .await
        .unwrap();
        assert_eq!(
            page(&cursor),
            (
                vec![entry("dtp-c", 0, &[0, 1]), entry("dtp-b", TOPIC, &[])],
                None
            ),
            "{cursor:?}"
        );
        // Only denied topics named: they alone are answered (an empty list would mean every topic).
        let only: DescribeTopicPartitionsResponse = request(
            &mut bob,
            ApiKey::DescribeTopicPartitions,
            0,
            &ask(&["dtp-b"], 2000, None),
        )
        .await
        .unwrap();
        assert_eq!(
            page(&only),
            (vec![entry("dtp-b", TOPIC, &[])], None),
            "{only:?}"
        );
        server.shutdown().await.unwrap();
    });
}
