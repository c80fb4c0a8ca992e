//! Authorization of KIP-848 consumer groups beyond the per-API matrix (tests/acl_matrix.rs), as Kafka 4.x does it:
//! ConsumerGroupDescribe hides a group whose members' assignments name a topic the principal may not DESCRIBE
//! (TOPIC_AUTHORIZATION_FAILED, no members), and a regex subscription resolves only to topics the member's principal
//! may DESCRIBE.

use crate::common;
use crate::groups::cgh;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use cgh::Cgh;
use common::raw::{self, connect, request};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use tokio::net::TcpStream;

const DESCRIBE: i8 = 8;
const READ: i8 = 3;
const TOPIC: i8 = 2;
const GROUP: i8 = 3;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// A broker with Kafka's StandardAuthorizer, SASL/PLAIN users admin (super user), alice and bob.
async fn start(dir: &std::path::Path) -> (strata_broker::Server, SocketAddr) {
    let log_dirs = dir.display().to_string();
    let props = [
        ("listeners", "SASL://127.0.0.1:0"),
        ("listener.security.protocol.map", "SASL:SASL_PLAINTEXT"),
        ("sasl.enabled.mechanisms", "PLAIN"),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";"#,
        ),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
        ("group.consumer.heartbeat.interval.ms", "300"),
        ("log.dirs", log_dirs.as_str()),
    ];
    let server = common::start_broker_with(dir, &props).await;
    let addr = server.local_addrs()[0];
    (server, addr)
}

/// A connection authenticated as `user` (password `<user>-secret`).
async fn login(addr: SocketAddr, user: &str) -> TcpStream {
    let mut c = connect(addr).await;
    assert_eq!(raw::sasl_handshake(&mut c, 1, "PLAIN").await.error_code, 0);
    let token = format!("\0{user}\0{user}-secret");
    let r = raw::sasl_authenticate(&mut c, token.as_bytes())
        .await
        .expect("answered");
    assert_eq!(r.error_code, 0, "{user} authenticates");
    c
}

/// ALLOW `op` on the literal resource `rt` `name` for `who`.
async fn allow(admin: &mut TcpStream, who: &str, grants: &[(i8, &str, i8)]) {
    let creations = grants
        .iter()
        .map(|(rt, name, op)| {
            create_acls_request::AclCreation::default()
                .with_resource_type(*rt)
                .with_resource_name(s(name))
                .with_resource_pattern_type(3)
                .with_principal(s(who))
                .with_host(s("*"))
                .with_operation(*op)
                .with_permission_type(3)
        })
        .collect();
    let r: CreateAclsResponse = request(
        admin,
        ApiKey::CreateAcls,
        2,
        &CreateAclsRequest::default().with_creations(creations),
    )
    .await
    .unwrap();
    assert!(r.results.iter().all(|x| x.error_code == 0), "{r:?}");
}

/// A KIP-848 member of `group` on the connection `conn`.
fn member(conn: TcpStream, group: &str) -> Cgh {
    Cgh {
        conn,
        group: group.into(),
        id: uuid::Uuid::new_v4().simple().to_string(),
        epoch: 0,
        rebalance_timeout_ms: 30_000,
        owned: BTreeSet::new(),
    }
}

/// Heartbeats until the member owns `n` partitions (bounded).
async fn beat_until_owns(m: &mut Cgh, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while m.owned.len() != n {
        assert!(Instant::now() < deadline, "owns {:?}, not {n}", m.owned);
        let r = m.beat().await;
        assert_eq!(r.error_code, 0, "{r:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn describe(
    c: &mut TcpStream,
    group: &str,
) -> consumer_group_describe_response::DescribedGroup {
    let r: ConsumerGroupDescribeResponse = request(
        c,
        ApiKey::ConsumerGroupDescribe,
        0,
        &ConsumerGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(s(group))])
            .with_include_authorized_operations(true),
    )
    .await
    .unwrap();
    assert_eq!(r.groups.len(), 1, "{r:?}");
    r.groups.into_iter().next().unwrap()
}

/// Kafka's `handleConsumerGroupDescribe`: a principal that may DESCRIBE the group but not a topic in a member's
/// assignment gets TOPIC_AUTHORIZATION_FAILED for the group, with no members (so no topic names or ids); once it may
/// DESCRIBE every assigned topic it sees the group.
#[tokio::test]
async fn consumer_group_describe_hides_groups_with_undescribable_assigned_topics() {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = start(dir.path()).await;
    let mut admin = login(addr, "admin").await;
    raw::create_topics(&mut admin, &["open", "secret"], 1).await;
    allow(
        &mut admin,
        "User:alice",
        &[(GROUP, "cg", DESCRIBE), (TOPIC, "open", DESCRIBE)],
    )
    .await;

    let mut m = member(login(addr, "admin").await, "cg");
    let r = m.join(&["open", "secret"], None, None).await;
    assert_eq!(r.error_code, 0, "{r:?}");
    beat_until_owns(&mut m, 2).await;

    let seen = describe(&mut admin, "cg").await;
    assert_eq!((seen.error_code, seen.members.len()), (0, 1), "{seen:?}");

    let mut alice = login(addr, "alice").await;
    let hidden = describe(&mut alice, "cg").await;
    assert_eq!(
        hidden.error_code, 29,
        "TOPIC_AUTHORIZATION_FAILED: {hidden:?}"
    );
    assert!(hidden.members.is_empty(), "{hidden:?}");
    assert_eq!(
        hidden.error_message.as_deref(),
        Some("The group has described topic(s) that the client is not authorized to describe.")
    );
    assert!(!format!("{hidden:?}").contains("secret"), "{hidden:?}");

    allow(&mut admin, "User:alice", &[(TOPIC, "secret", DESCRIBE)]).await;
    let shown = describe(&mut alice, "cg").await;
    assert_eq!((shown.error_code, shown.members.len()), (0, 1), "{shown:?}");
    assert_eq!(
        shown.members[0].assignment.topic_partitions.len(),
        2,
        "{shown:?}"
    );
    assert_ne!(
        shown.authorized_operations,
        i32::MIN,
        "operations asked for"
    );
    server.shutdown().await.unwrap();
}

/// The topic names of a described member's assignment and target assignment.
fn assigned_names(
    g: &consumer_group_describe_response::DescribedGroup,
) -> (Vec<String>, Vec<String>) {
    let names = |a: &consumer_group_describe_response::Assignment| {
        a.topic_partitions
            .iter()
            .map(|t| t.topic_name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(g.members.len(), 1, "{g:?}");
    (
        names(&g.members[0].assignment),
        names(&g.members[0].target_assignment),
    )
}

/// Kafka 4.x's `GroupMetadataManager` resolves a regex subscription to the topics the member's principal may
/// DESCRIBE only (`filterTopicDescribeAuthorizedTopics`): alice, subscribed to `orders-.*` with DESCRIBE on
/// `orders-eu` alone, is never given `orders-us`; once she may DESCRIBE it, her next heartbeats bring it.
#[tokio::test]
async fn a_regex_subscription_resolves_to_describable_topics_only() {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = start(dir.path()).await;
    let mut admin = login(addr, "admin").await;
    raw::create_topics(&mut admin, &["orders-eu", "orders-us", "other"], 1).await;
    allow(
        &mut admin,
        "User:alice",
        &[(GROUP, "rg", READ), (TOPIC, "orders-eu", DESCRIBE)],
    )
    .await;

    let mut m = member(login(addr, "alice").await, "rg");
    let r = m.join(&[], Some("orders-.*"), None).await;
    assert_eq!(r.error_code, 0, "{r:?}");
    beat_until_owns(&mut m, 1).await;
    // A few more heartbeats: the regex stays resolved to orders-eu alone.
    for _ in 0..5 {
        let r = m.beat().await;
        assert_eq!(r.error_code, 0, "{r:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(m.owned.len(), 1, "{:?}", m.owned);
    let g = describe(&mut admin, "rg").await;
    assert_eq!(
        assigned_names(&g),
        (vec!["orders-eu".to_string()], vec!["orders-eu".to_string()]),
        "{g:?}"
    );

    allow(&mut admin, "User:alice", &[(TOPIC, "orders-us", DESCRIBE)]).await;
    beat_until_owns(&mut m, 2).await;
    let g = describe(&mut admin, "rg").await;
    let both = vec!["orders-eu".to_string(), "orders-us".to_string()];
    assert_eq!(assigned_names(&g), (both.clone(), both), "{g:?}");
    server.shutdown().await.unwrap();
}
