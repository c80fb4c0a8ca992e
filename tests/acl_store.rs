//! The authorizer's durable bindings and its principals (issue 31): ACLs acknowledged before a SIGKILL in the middle
//! of a stream of CreateAcls are all there after the restart (and the file reads back), a PLAINTEXT client is
//! `User:ANONYMOUS` (its Metadata shows only the topics it may describe, with Kafka's authorized-operations bits),
//! and start-up refuses an authorizer or principal builder class strata does not have, naming the key.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::raw::{connect, request};
use common::ChildBroker;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

const AUTHORIZER: (&str, &str) = (
    "authorizer.class.name",
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
);

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
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

fn all_acls() -> DescribeAclsRequest {
    DescribeAclsRequest::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(1)
        .with_pattern_type_filter(1)
        .with_operation(1)
        .with_permission_type(1)
}

#[test]
fn acls_acknowledged_before_a_sigkill_mid_stream_are_all_there_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let overrides = [AUTHORIZER, ("super.users", "User:ANONYMOUS")];
    let child = ChildBroker::spawn_with(dir.path(), 0, &overrides);
    let addr: std::net::SocketAddr = child.bootstrap.parse().unwrap();
    let acked = Arc::new(AtomicUsize::new(0));
    let writer = {
        let acked = acked.clone();
        std::thread::spawn(move || {
            common::runtime().block_on(async move {
                let mut c = connect(addr).await;
                for i in 0..100_000 {
                    let req = CreateAclsRequest::default().with_creations(vec![grant(
                        "User:u",
                        2,
                        &format!("t{i}"),
                        3,
                    )]);
                    let Some(r) =
                        request::<_, CreateAclsResponse>(&mut c, ApiKey::CreateAcls, 3, &req).await
                    else {
                        return; // killed
                    };
                    assert_eq!(r.results[0].error_code, 0, "{r:?}");
                    acked.store(i + 1, Ordering::SeqCst);
                }
            })
        })
    };
    common::wait_until("50 ACLs acknowledged", Duration::from_secs(60), || {
        acked.load(Ordering::SeqCst) >= 50
    });
    child.kill9();
    writer.join().unwrap();
    let acknowledged = acked.load(Ordering::SeqCst);

    let child = ChildBroker::spawn_with(dir.path(), 0, &overrides);
    let addr: std::net::SocketAddr = child.bootstrap.parse().unwrap();
    common::runtime().block_on(async move {
        let mut c = connect(addr).await;
        let r: DescribeAclsResponse = request(&mut c, ApiKey::DescribeAcls, 3, &all_acls())
            .await
            .unwrap();
        assert_eq!(r.error_code, 0);
        let names: std::collections::HashSet<String> = r
            .resources
            .iter()
            .map(|x| x.resource_name.to_string())
            .collect();
        // Every acknowledged creation is there; at most the one in flight besides.
        for i in 0..acknowledged {
            assert!(
                names.contains(&format!("t{i}")),
                "t{i} of {acknowledged} acknowledged is lost"
            );
        }
        assert!(
            names.len() <= acknowledged + 1,
            "{} stored, {acknowledged} acknowledged",
            names.len()
        );
    });
    assert!(child.terminate());
}

#[test]
fn a_plaintext_client_is_anonymous_and_sees_only_the_topics_it_may_describe() {
    common::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = common::start_broker_with(dir.path(), &[AUTHORIZER]).await;
        let authz = server.broker().authorizer().expect("authorizer on").clone();
        let mut c = connect(server.local_addr()).await;
        // Nothing granted yet: CreateTopics needs CREATE.
        let create = CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_topics(
                ["seen", "hidden"]
                    .iter()
                    .map(|n| {
                        create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(s(n)))
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .collect(),
            );
        let r: CreateTopicsResponse = request(&mut c, ApiKey::CreateTopics, 7, &create)
            .await
            .unwrap();
        assert!(r.topics.iter().all(|t| t.error_code == 29), "{r:?}");
        assert!(server.broker().registry().get("seen").is_none());
        // The ACLs go in through the store (as CreateAcls would) for User:ANONYMOUS: CREATE on the cluster, READ
        // on one topic.
        use strata_broker::authz::acl::*;
        let b = |rt, name: &str, op| AclBinding {
            resource_type: rt,
            resource_name: name.into(),
            pattern_type: PatternType::Literal,
            principal: "User:ANONYMOUS".into(),
            host: "*".into(),
            operation: op,
            permission: Permission::Allow,
        };
        authz
            .store()
            .add(&[
                b(ResourceType::Cluster, CLUSTER_NAME, AclOperation::Create),
                b(ResourceType::Topic, "seen", AclOperation::Read),
            ])
            .unwrap();
        let r: CreateTopicsResponse = request(&mut c, ApiKey::CreateTopics, 7, &create)
            .await
            .unwrap();
        assert!(r.topics.iter().all(|t| t.error_code == 0), "{r:?}");
        let all = MetadataRequest::default()
            .with_topics(None)
            .with_include_topic_authorized_operations(true);
        let m: MetadataResponse = request(&mut c, ApiKey::Metadata, 12, &all).await.unwrap();
        let names: Vec<&str> = m
            .topics
            .iter()
            .map(|t| t.name.as_ref().unwrap().as_str())
            .collect();
        assert_eq!(names, vec!["seen"], "{m:?}");
        // READ (3) and the DESCRIBE (8) it implies.
        assert_eq!(m.topics[0].topic_authorized_operations, (1 << 3) | (1 << 8));
        // Named: TOPIC_AUTHORIZATION_FAILED, without saying whether it exists.
        let named = MetadataRequest::default()
            .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
            )
            .with_name(Some(TopicName(s("hidden"))))]));
        let m: MetadataResponse = request(&mut c, ApiKey::Metadata, 12, &named).await.unwrap();
        assert_eq!(m.topics[0].error_code, 29, "{m:?}");
        assert!(m.topics[0].partitions.is_empty());
        server.shutdown().await.unwrap();
    });
}

#[test]
fn start_up_refuses_an_unknown_authorizer_or_principal_builder_naming_the_key() {
    common::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        for (key, value) in [
            ("authorizer.class.name", "com.acme.RangerAuthorizer"),
            ("principal.builder.class", "com.acme.PrincipalBuilder"),
            ("ssl.principal.mapping.rules", "RULE:^CN=(.*)$/$1/X"),
        ] {
            let props = common::local_props(dir.path(), &[(key, value)]);
            let e = strata_broker::Server::start_from_properties(&props)
                .await
                .err()
                .unwrap_or_else(|| panic!("{key}={value} was accepted"));
            assert!(e.to_string().contains(key), "{key}: {e}");
        }
    });
}
