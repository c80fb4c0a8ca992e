//! Admin APIs answered as a Kafka broker without an authorizer answers them (strata has none), checked with raw
//! requests at every advertised version and with confluent-kafka's AdminClient (the `kafka-acls` flows):
//! DescribeAcls / CreateAcls / DeleteAcls are SECURITY_DISABLED (54) with a message (Kafka's `AclApis`),
//! ElectLeaders is ELECTION_NOT_NEEDED (84) for each partition of a single node (its one replica is the preferred
//! leader and leads) and UNKNOWN_TOPIC_OR_PARTITION (3) for unknown ones (Kafka's
//! `ReplicationControlManager.electLeader`).

use crate::common;

use std::process::Command;

use bytes::{Buf, BufMut, BytesMut};
use common::raw::{connect, read_frame, request, send_frame};
use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::elect_leaders_request::TopicPartitions;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};

const SECURITY_DISABLED: i16 = 54;
const ELECTION_NOT_NEEDED: i16 = 84;
const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn creation() -> AclCreation {
    AclCreation::default()
        .with_resource_type(2) // TOPIC
        .with_resource_name(s("t"))
        .with_resource_pattern_type(3) // LITERAL
        .with_principal(s("User:alice"))
        .with_host(s("*"))
        .with_operation(3) // READ
        .with_permission_type(3) // ALLOW
}

fn filter() -> DeleteAclsFilter {
    DeleteAclsFilter::default()
        .with_resource_type_filter(1) // ANY
        .with_pattern_type_filter(1) // ANY
        .with_operation(1)
        .with_permission_type(1)
}

/// Sends a raw v0 `body` of `api` (below the codec's floor) and returns the response body after the v0 header.
async fn raw_v0(s: &mut tokio::net::TcpStream, api: ApiKey, body: &[u8]) -> bytes::Bytes {
    let mut frame = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(0)
        .with_correlation_id(5)
        .with_client_id(Some(StrBytes::from_static_str("acl-v0")))
        .encode(&mut frame, api.request_header_version(0))
        .unwrap();
    frame.put_slice(body);
    send_frame(s, &frame).await;
    let mut r = read_frame(s)
        .await
        .unwrap_or_else(|| panic!("{api:?} v0 closed"));
    assert_eq!(r.get_i32(), 5);
    r
}

fn read_str(b: &mut bytes::Bytes) -> Option<String> {
    let n = b.get_i16();
    (n >= 0).then(|| String::from_utf8(b.split_to(n as usize).to_vec()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_requests_are_security_disabled_at_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut c = connect(broker.local_addr()).await;

    for v in 1..=3 {
        let r: DescribeAclsResponse = request(
            &mut c,
            ApiKey::DescribeAcls,
            v,
            &DescribeAclsRequest::default()
                .with_resource_type_filter(1)
                .with_pattern_type_filter(1)
                .with_operation(1)
                .with_permission_type(1),
        )
        .await
        .unwrap_or_else(|| panic!("DescribeAcls v{v} closed"));
        assert_eq!(r.error_code, SECURITY_DISABLED, "v{v}");
        assert!(
            r.error_message
                .as_deref()
                .unwrap()
                .contains("No Authorizer"),
            "v{v}: {:?}",
            r.error_message
        );
        assert!(r.resources.is_empty());

        let req = CreateAclsRequest::default().with_creations(vec![creation(), creation()]);
        let r: CreateAclsResponse = request(&mut c, ApiKey::CreateAcls, v, &req).await.unwrap();
        let codes: Vec<i16> = r.results.iter().map(|x| x.error_code).collect();
        assert_eq!(codes, vec![SECURITY_DISABLED; 2], "v{v}");
        assert!(r.results[0].error_message.is_some());

        let req = DeleteAclsRequest::default().with_filters(vec![filter()]);
        let r: DeleteAclsResponse = request(&mut c, ApiKey::DeleteAcls, v, &req).await.unwrap();
        assert_eq!(r.filter_results.len(), 1);
        assert_eq!(r.filter_results[0].error_code, SECURITY_DISABLED, "v{v}");
        assert!(r.filter_results[0].matching_acls.is_empty());
    }

    // Kafka 3.9's v0 (no pattern type), removed in 4.0 by KIP-896.
    // DescribeAcls v0: resource_type, resource_name (null), principal (null), host (null), operation, permission.
    let mut r = raw_v0(
        &mut c,
        ApiKey::DescribeAcls,
        &[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 1],
    )
    .await;
    assert_eq!(r.get_i32(), 0, "throttle");
    assert_eq!(r.get_i16(), SECURITY_DISABLED);
    assert!(read_str(&mut r).unwrap().contains("No Authorizer"));
    assert_eq!(r.get_i32(), 0, "no resources");
    // CreateAcls v0: one creation.
    let mut body = BytesMut::new();
    body.put_i32(1);
    body.put_i8(2);
    for text in ["t", "User:alice", "*"] {
        body.put_i16(text.len() as i16);
        body.put_slice(text.as_bytes());
    }
    body.put_i8(3);
    body.put_i8(3);
    let mut r = raw_v0(&mut c, ApiKey::CreateAcls, &body).await;
    assert_eq!(r.get_i32(), 0, "throttle");
    assert_eq!(r.get_i32(), 1, "one result");
    assert_eq!(r.get_i16(), SECURITY_DISABLED);
    // DeleteAcls v0: two filters.
    let mut body = BytesMut::new();
    body.put_i32(2);
    for _ in 0..2 {
        body.put_slice(&[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 1]);
    }
    let mut r = raw_v0(&mut c, ApiKey::DeleteAcls, &body).await;
    assert_eq!(r.get_i32(), 0, "throttle");
    assert_eq!(r.get_i32(), 2, "one result per filter");
    assert_eq!(r.get_i16(), SECURITY_DISABLED);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elect_leaders_is_not_needed_for_every_partition_of_a_single_node() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "el", 2).await;
    let mut c = connect(addr).await;
    let asked = vec![
        TopicPartitions::default()
            .with_topic(TopicName(s("el")))
            .with_partitions(vec![0, 1, 2]),
        TopicPartitions::default()
            .with_topic(TopicName(s("nope")))
            .with_partitions(vec![0]),
    ];
    for v in 0..=2 {
        for election_type in [0i8, 1] {
            if v == 0 && election_type == 1 {
                continue; // v0 has no election type: preferred only.
            }
            let req = ElectLeadersRequest::default()
                .with_election_type(election_type)
                .with_timeout_ms(5000)
                .with_topic_partitions(Some(asked.clone()));
            let r: ElectLeadersResponse = request(&mut c, ApiKey::ElectLeaders, v, &req)
                .await
                .unwrap_or_else(|| panic!("ElectLeaders v{v} closed"));
            assert_eq!(r.error_code, 0, "v{v}");
            let got: Vec<(String, i32, i16)> = r
                .replica_election_results
                .iter()
                .flat_map(|t| {
                    t.partition_result
                        .iter()
                        .map(|p| (t.topic.0.to_string(), p.partition_id, p.error_code))
                })
                .collect();
            assert_eq!(
                got,
                vec![
                    ("el".into(), 0, ELECTION_NOT_NEEDED),
                    ("el".into(), 1, ELECTION_NOT_NEEDED),
                    ("el".into(), 2, UNKNOWN_TOPIC_OR_PARTITION),
                    ("nope".into(), 0, UNKNOWN_TOPIC_OR_PARTITION),
                ],
                "v{v} type {election_type}"
            );
            let unknown = &r.replica_election_results[1].partition_result[0];
            assert!(unknown.error_message.as_deref().unwrap().contains("nope-0"));
        }
    }
    // A null topic list asks for every partition; Kafka leaves out those whose election was not needed.
    let req = ElectLeadersRequest::default()
        .with_timeout_ms(5000)
        .with_topic_partitions(None);
    let r: ElectLeadersResponse = request(&mut c, ApiKey::ElectLeaders, 2, &req)
        .await
        .unwrap();
    assert_eq!(r.error_code, 0);
    assert!(r.replica_election_results.is_empty(), "{r:?}");
    broker.shutdown().await.unwrap();
}

/// DescribeGroups v3+ with `include_authorized_operations`: READ, DELETE and DESCRIBE (328), every operation
/// `AclEntry.supportedOperations(GROUP)` lists, for each group answered without an error (Kafka's
/// `handleDescribeGroupsRequest` without an authorizer); i32::MIN ("not requested") otherwise. ConsumerGroupDescribe
/// the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn described_groups_carry_every_group_operation_when_asked() {
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    const GROUP_OPERATIONS: i32 = (1 << 3) | (1 << 6) | (1 << 8);
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "gops", 1).await;
    let mut c = connect(addr).await;
    // A group with committed offsets (a simple committer): "Empty".
    let commit = OffsetCommitRequest::default()
        .with_group_id(GroupId(s("g1")))
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(TopicName(s("gops")))
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(3)])]);
    let r: OffsetCommitResponse = request(&mut c, ApiKey::OffsetCommit, 8, &commit)
        .await
        .unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 0);

    for v in 3..=6 {
        let req = DescribeGroupsRequest::default()
            .with_groups(vec![GroupId(s("g1")), GroupId(s("nobody"))])
            .with_include_authorized_operations(true);
        let r: DescribeGroupsResponse = request(&mut c, ApiKey::DescribeGroups, v, &req)
            .await
            .unwrap();
        assert_eq!(r.groups[0].error_code, 0, "v{v}");
        assert_eq!(r.groups[0].authorized_operations, GROUP_OPERATIONS, "v{v}");
        // An unknown group is "Dead" without an error before v6 (described), GROUP_ID_NOT_FOUND from v6.
        let unknown = &r.groups[1];
        let want = if v >= 6 { i32::MIN } else { GROUP_OPERATIONS };
        assert_eq!(unknown.authorized_operations, want, "v{v} unknown group");

        let plain = req.clone().with_include_authorized_operations(false);
        let r: DescribeGroupsResponse = request(&mut c, ApiKey::DescribeGroups, v, &plain)
            .await
            .unwrap();
        assert_eq!(r.groups[0].authorized_operations, i32::MIN, "v{v}");
    }
    broker.shutdown().await.unwrap();
}

/// The interop venv's python (tests/interop/install.sh, `STRATA_INTEROP_PREFIX`), if it has confluent_kafka.
fn interop_python() -> Option<std::path::PathBuf> {
    let prefix = std::env::var("STRATA_INTEROP_PREFIX").unwrap_or_else(|_| {
        format!(
            "{}/.cache/strata-interop",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let python = std::path::Path::new(&prefix).join("venv/bin/python");
    let importable = Command::new(&python)
        .args(["-c", "import confluent_kafka"])
        .status()
        .is_ok_and(|s| s.success());
    if !importable {
        eprintln!(
            "SKIPPED: no confluent_kafka in {} (run tests/interop/install.sh)",
            python.display()
        );
        return None;
    }
    Some(python)
}

/// confluent-kafka's AdminClient (librdkafka): create/delete ACLs fail at once with SECURITY_DISABLED (not a hang,
/// not "unsupported by broker"); describe_acls returns no bindings at once (librdkafka drops DescribeAcls' error
/// code, so it does so against Kafka too) while kafka-python raises SecurityDisabledError; elect_leaders reports
/// ELECTION_NOT_NEEDED; describe_consumer_groups(include_authorized_operations) lists READ, DELETE, DESCRIBE. Runs when the interop venv has confluent_kafka.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluent_kafka_admin_gets_kafkas_answers_without_an_authorizer() {
    let Some(python) = interop_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let bs = common::bootstrap(&broker);
    common::create_topic(&bs, "adm", 1).await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/admin_no_authorizer.py"
    );
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .args([script, &bs, "adm"])
            .output()
            .expect("run python")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{stdout}");
    for line in [
        "describe_acls (confluent) no bindings",
        "create_acls SECURITY_DISABLED",
        "delete_acls SECURITY_DISABLED",
        "elect_leaders ELECTION_NOT_NEEDED",
        "describe_consumer_groups authorized operations DELETE,DESCRIBE,READ",
    ] {
        assert!(stdout.contains(line), "{line} missing: {stdout}");
    }
    broker.shutdown().await.unwrap();
}
