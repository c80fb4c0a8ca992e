//! KIP-848 consumer groups: ConsumerGroupHeartbeat / ConsumerGroupDescribe at the wire (member epochs,
//! revocation before assignment, assignors, regex subscriptions, the two protocols side by side) and with
//! librdkafka consumers (`group.protocol=consumer`).

use crate::common;
use crate::groups::cgh;
use crate::groups::raw as group_raw;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{
    ApiKey, DescribeGroupsRequest, DescribeGroupsResponse, GroupId, ListGroupsRequest,
    ListGroupsResponse,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::FutureRecord;

use cgh::{describe, Cgh};
use common::raw::{connect, request};
use common::{bootstrap, client_config, create_topic, producer, start_broker_with};
use group_raw::RawMember;

const BROKER: &[(&str, &str)] = &[("group.consumer.heartbeat.interval.ms", "300")];

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

/// KIP-848: a member gets the partitions the target gives it only once the member holding them has revoked
/// them; the revoking member keeps its epoch until it reports them gone; a wrong epoch is FENCED_MEMBER_EPOCH,
/// a commit with a past epoch STALE_MEMBER_EPOCH; leaving with epoch -1 hands the partitions back.
#[tokio::test]
async fn partitions_move_only_after_their_owner_revoked_them() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    create_topic(&bootstrap(&server), "k", 4).await;
    let addr = server.local_addr();
    let mut a = Cgh::new(addr, "g848").await;
    let r = a.join(&["k"], None, None).await;
    assert_eq!((r.error_code, r.member_epoch), (0, 1));
    assert_eq!(a.owned.len(), 4);

    let mut b = Cgh::new(addr, "g848").await;
    let r = b.join(&["k"], None, None).await;
    assert_eq!((r.error_code, r.member_epoch), (0, 2));
    assert!(b.owned.is_empty(), "a still holds every partition");

    let r = a.beat().await;
    assert_eq!(r.member_epoch, 1, "revoking keeps the epoch");
    assert_eq!(a.owned.len(), 2, "told to keep two of four");
    let r = a.beat().await;
    assert_eq!(r.member_epoch, 2, "revocation reported: the target epoch");
    let r = b.beat().await;
    assert_eq!(r.error_code, 0);
    assert_eq!(b.owned.len(), 2);
    assert!(a.owned.is_disjoint(&b.owned));
    let d = describe(addr, "g848").await;
    assert_eq!(d.groups[0].group_state.as_str(), "Stable");
    assert_eq!(d.groups[0].assignor_name.as_str(), "uniform");
    assert_eq!(d.groups[0].members.len(), 2);

    // Wrong epochs.
    let mut bad = a.base().with_member_epoch(7);
    bad.topic_partitions = None;
    let r = a.send(bad).await;
    assert_eq!(r.error_code, 110, "FENCED_MEMBER_EPOCH");
    let mut commit = RawMember::new(addr, "g848", None).await;
    assert_eq!(
        commit.commit_as(9, &a.id, 1, "k", 5).await,
        113,
        "STALE_MEMBER_EPOCH"
    );
    assert_eq!(commit.commit_as(9, &a.id, 2, "k", 5).await, 0);
    assert_eq!(
        commit.commit_as(9, "nobody", 2, "k", 5).await,
        25,
        "UNKNOWN_MEMBER_ID"
    );

    // a leaves: b gets everything.
    let leave = a.base().with_member_epoch(-1);
    assert_eq!(a.send(leave).await.error_code, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.owned.len() < 4 {
        assert!(Instant::now() < deadline, "b never got a's partitions");
        b.beat().await;
    }
    server.shutdown().await.unwrap();
}

/// Kafka's server-side assignors: `range` gives each subscriber a contiguous range per topic; an unknown
/// assignor is UNSUPPORTED_ASSIGNOR; a regex subscription matches whole topic names.
#[tokio::test]
async fn range_assignor_and_regex_subscriptions() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "orders-eu", 2).await;
    create_topic(&bs, "orders-us", 2).await;
    create_topic(&bs, "payments", 2).await;
    let addr = server.local_addr();
    let mut x = Cgh::new(addr, "g-re").await;
    assert_eq!(x.join(&[], None, Some("sticky")).await.error_code, 112);
    let r = x.join(&[], Some("orders-.*"), Some("range")).await;
    assert_eq!(r.error_code, 0);
    assert!(
        x.owned.is_empty(),
        "the regex resolves after the joining heartbeat"
    );
    assert_eq!(x.beat().await.error_code, 0);
    assert_eq!(x.owned.len(), 4, "both orders topics, not payments");
    let d = describe(addr, "g-re").await;
    let m = &d.groups[0].members[0];
    let names: BTreeSet<String> = m
        .assignment
        .topic_partitions
        .iter()
        .map(|t| t.topic_name.0.to_string())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["orders-eu".to_string(), "orders-us".to_string()])
    );
    assert_eq!(d.groups[0].assignor_name.as_str(), "range");
    server.shutdown().await.unwrap();
}

/// Kafka 4.x resolves a regex new to the group asynchronously (librdkafka's 0045 counts on it): the joining
/// heartbeat's target holds the listed topics only, a later heartbeat brings the regex's topics (a new group
/// epoch); a regex the group no longer uses is forgotten, so subscribing to it again resolves it again.
#[tokio::test]
async fn a_new_regex_is_resolved_after_the_heartbeat_that_brought_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "re-1", 4).await;
    create_topic(&bs, "re-2", 4).await;
    create_topic(&bs, "plain-a", 2).await;
    let addr = server.local_addr();
    for round in 0..2 {
        let mut x = Cgh::new(addr, "g-async").await;
        let r = x.join(&["plain-a"], Some("re-.*"), None).await;
        assert_eq!(r.error_code, 0);
        assert_eq!(x.owned.len(), 2, "round {round}: the listed topic first");
        let epoch = r.member_epoch;
        let r = x.beat().await;
        assert!(r.member_epoch > epoch, "round {round}: a new group epoch");
        assert_eq!(x.owned.len(), 10, "round {round}: then the regex's topics");
        // Leaving empties the group: the regex is forgotten and resolved again in the next round.
        let leave = x.base().with_member_epoch(-1);
        assert_eq!(x.send(leave).await.error_code, 0);
    }
    server.shutdown().await.unwrap();
}

/// Kafka 4.4 computes a new target off the heartbeat path (`group.consumer.assignor.offload.enable`): the
/// heartbeat that changes a member's subscription is answered from the current target (no revocation yet, the
/// group is Assigning), a later one revokes and then assigns. librdkafka's 0045 (subscribe, unsubscribe,
/// subscribe at once) lost its assignment for good when that answer started a revocation. A member that left
/// (-1) and rejoins with epoch 0 and the same member id gets its new subscription's partitions.
#[tokio::test]
async fn a_subscription_change_is_assigned_after_the_heartbeat_that_brought_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    for t in ["sub-1", "sub-2", "sub-3"] {
        create_topic(&bs, t, 4).await;
    }
    let addr = server.local_addr();
    let mut x = Cgh::new(addr, "g-resub").await;
    let r = x.join(&["sub-1"], None, None).await;
    assert_eq!((r.error_code, r.member_epoch), (0, 1));
    assert_eq!(x.owned.len(), 4);
    let first = x.owned.clone();

    let change = x
        .base()
        .with_subscribed_topic_names(Some(vec![kafka_protocol::messages::TopicName(s("sub-2"))]));
    let r = x.send(change).await;
    assert_eq!(r.error_code, 0);
    assert_eq!(r.member_epoch, 1, "the member keeps its epoch");
    assert!(
        r.assignment.is_none(),
        "no new assignment in the answer to the changing heartbeat: {:?}",
        r.assignment
    );
    assert_eq!(
        describe(addr, "g-resub").await.groups[0]
            .group_state
            .as_str(),
        "Assigning"
    );

    // Later heartbeats: sub-1 revoked (same epoch), then sub-2 with a new epoch.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut saw_revocation = false;
    loop {
        assert!(
            Instant::now() < deadline,
            "sub-2 never assigned: {:?}",
            x.owned
        );
        let r = x.beat().await;
        assert_eq!(r.error_code, 0);
        saw_revocation |= x.owned.is_empty();
        if x.owned.len() == 4 && x.owned.is_disjoint(&first) {
            assert!(r.member_epoch > 1, "a new epoch for the new target");
            break;
        }
    }
    assert!(saw_revocation, "sub-1 revoked before sub-2 came");

    // Leave, then rejoin at once with the same member id and another subscription.
    let second = x.owned.clone();
    let leave = x.base().with_member_epoch(-1);
    let r = x.send(leave).await;
    assert_eq!((r.error_code, r.member_epoch), (0, -1));
    x.owned.clear();
    let r = x.join(&["sub-3"], None, None).await;
    assert_eq!(r.error_code, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while x.owned.len() < 4 {
        assert!(Instant::now() < deadline, "the rejoined member got nothing");
        assert_eq!(x.beat().await.error_code, 0);
    }
    assert!(x.owned.is_disjoint(&first) && x.owned.is_disjoint(&second));
    assert_eq!(
        describe(addr, "g-resub").await.groups[0]
            .group_state
            .as_str(),
        "Stable"
    );
    server.shutdown().await.unwrap();
}

/// As Kafka 4.4's `TopicRegexResolver` (every topic name in the metadata image, no internal-topic filter): a regex
/// naming `__consumer_offsets` gets it assigned (franz-go's Test848RegexBrokerResolves checks this against Kafka).
#[tokio::test]
async fn a_regex_subscription_matches_internal_topics_as_kafka_does() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    create_topic(&bootstrap(&server), "orders-eu", 2).await;
    let addr = server.local_addr();
    let mut x = Cgh::new(addr, "g-re-internal").await;
    let r = x
        .join(&[], Some("orders-eu|__consumer_offsets"), None)
        .await;
    assert_eq!(r.error_code, 0);
    assert_eq!(x.beat().await.error_code, 0, "the regex resolved");
    let d = describe(addr, "g-re-internal").await;
    let names: BTreeSet<String> = d.groups[0].members[0]
        .assignment
        .topic_partitions
        .iter()
        .map(|t| t.topic_name.0.to_string())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["__consumer_offsets".to_string(), "orders-eu".to_string()])
    );
    server.shutdown().await.unwrap();
}

/// Kafka (`group.consumer.migration.policy=disabled`): a group id in use by one protocol is refused to the
/// other: JoinGroup to a consumer group is INCONSISTENT_GROUP_PROTOCOL, ConsumerGroupHeartbeat to a classic group
/// with members is GROUP_ID_NOT_FOUND.
#[tokio::test]
async fn a_group_of_one_protocol_is_refused_to_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    create_topic(&bootstrap(&server), "p", 1).await;
    let addr = server.local_addr();
    let mut new = Cgh::new(addr, "g-new").await;
    assert_eq!(new.join(&["p"], None, None).await.error_code, 0);
    let mut classic = RawMember::new(addr, "g-new", None).await;
    assert_eq!(
        classic.join().await.error_code,
        23,
        "INCONSISTENT_GROUP_PROTOCOL"
    );

    let mut old = RawMember::new(addr, "g-old", None).await;
    assert_eq!(old.join().await.error_code, 0);
    let mut other = Cgh::new(addr, "g-old").await;
    assert_eq!(
        other.join(&["p"], None, None).await.error_code,
        69,
        "GROUP_ID_NOT_FOUND"
    );

    // ListGroups v5 (KIP-848): the group type, and the type and state filters (case-insensitive).
    let list = |types: &[&str], states: &[&str]| {
        ListGroupsRequest::default()
            .with_types_filter(types.iter().map(|t| s(t)).collect())
            .with_states_filter(states.iter().map(|t| s(t)).collect())
    };
    let mut c = connect(addr).await;
    let all: ListGroupsResponse = request(&mut c, ApiKey::ListGroups, 5, &list(&[], &[]))
        .await
        .unwrap();
    let typed: BTreeSet<(String, String)> = all
        .groups
        .iter()
        .map(|g| (g.group_id.0.to_string(), g.group_type.to_string()))
        .collect();
    assert_eq!(
        typed,
        BTreeSet::from([
            ("g-new".to_string(), "consumer".to_string()),
            ("g-old".to_string(), "classic".to_string())
        ])
    );
    let only: ListGroupsResponse =
        request(&mut c, ApiKey::ListGroups, 5, &list(&["Consumer"], &[]))
            .await
            .unwrap();
    assert_eq!(only.groups.len(), 1);
    assert_eq!(only.groups[0].group_id.0.as_str(), "g-new");
    let none: ListGroupsResponse = request(
        &mut c,
        ApiKey::ListGroups,
        5,
        &list(&["classic"], &["empty"]),
    )
    .await
    .unwrap();
    assert!(none.groups.is_empty(), "g-old is not empty: {none:?}");

    // DescribeGroups v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND.
    let d: DescribeGroupsResponse = request(
        &mut c,
        ApiKey::DescribeGroups,
        6,
        &DescribeGroupsRequest::default().with_groups(vec![GroupId(s("nope"))]),
    )
    .await
    .unwrap();
    assert_eq!(
        (d.groups[0].error_code, d.groups[0].group_state.as_str()),
        (69, "Dead")
    );
    server.shutdown().await.unwrap();
}

/// OffsetFetch v1 of `topic`-0 in `group`.
async fn committed(addr: std::net::SocketAddr, group: &str, topic: &str) -> i64 {
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
    use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse, TopicName};
    let mut c = connect(addr).await;
    let req = OffsetFetchRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_topics(Some(vec![OffsetFetchRequestTopic::default()
            .with_name(TopicName(s(topic)))
            .with_partition_indexes(vec![0])]));
    let r: OffsetFetchResponse = request(&mut c, ApiKey::OffsetFetch, 1, &req).await.unwrap();
    r.topics[0].partitions[0].committed_offset
}

/// A group id emptied by one protocol is taken over by the other, as Kafka's coordinator does whatever its
/// migration policy (maybeDeleteEmptyConsumerGroup / maybeDeleteEmptyClassicGroup): the empty group's records
/// are deleted, its committed offsets kept, the new group's members commit — across a restart too. (Before, a
/// classic member of an emptied consumer group was handed partitions but every commit was UNKNOWN_MEMBER_ID,
/// and consumer-protocol members were then GROUP_ID_NOT_FOUND until a restart.)
#[tokio::test]
async fn an_emptied_group_is_taken_over_by_the_other_protocol_with_its_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    create_topic(&bootstrap(&server), "p", 1).await;
    let addr = server.local_addr();
    let mut new = Cgh::new(addr, "g-sw").await;
    assert_eq!(new.join(&["p"], None, None).await.error_code, 0);
    let left = new.send(new.base().with_member_epoch(-1)).await;
    assert_eq!(left.error_code, 0, "leave");

    let classic_round = |offset: i64| async move {
        let mut classic = RawMember::new(addr, "g-sw", None).await;
        assert_eq!(classic.join().await.error_code, 0, "classic join");
        let me = classic.member_id.clone();
        assert_eq!(classic.sync(&[(&me, b"")]).await.error_code, 0, "sync");
        assert_eq!(
            classic.commit("p", offset).await,
            0,
            "the classic member's commit"
        );
        assert_eq!(describe_type(addr, "g-sw").await, "classic");
        assert_eq!(classic.leave().await.0, 0, "classic leave");
    };
    classic_round(7).await;
    assert_eq!(committed(addr, "g-sw", "p").await, 7);

    // Back to the consumer protocol: the empty classic group gives way, the offset stays.
    let mut again = Cgh::new(addr, "g-sw").await;
    assert_eq!(
        again.join(&["p"], None, None).await.error_code,
        0,
        "consumer join"
    );
    assert_eq!(describe_type(addr, "g-sw").await, "consumer");
    assert_eq!(committed(addr, "g-sw", "p").await, 7);
    assert_eq!(
        again
            .send(again.base().with_member_epoch(-1))
            .await
            .error_code,
        0
    );

    // After a restart (the deletions replayed), the switch works again.
    let port = addr.port();
    server.shutdown().await.unwrap();
    let listener = format!("PLAINTEXT://127.0.0.1:{port}");
    let mut props: Vec<(&str, &str)> = BROKER.to_vec();
    props.push(("listeners", &listener));
    let server = start_broker_with(dir.path(), &props).await;
    assert_eq!(committed(addr, "g-sw", "p").await, 7);
    classic_round(9).await;
    let mut last = Cgh::new(addr, "g-sw").await;
    assert_eq!(
        last.join(&["p"], None, None).await.error_code,
        0,
        "consumer join after restart"
    );
    assert_eq!(committed(addr, "g-sw", "p").await, 9);
    server.shutdown().await.unwrap();
}

/// ListGroups v5's group type of `group` ("" when not listed).
async fn describe_type(addr: std::net::SocketAddr, group: &str) -> String {
    let mut c = connect(addr).await;
    let all: ListGroupsResponse =
        request(&mut c, ApiKey::ListGroups, 5, &ListGroupsRequest::default())
            .await
            .unwrap();
    all.groups
        .iter()
        .find(|g| g.group_id.0.as_str() == group)
        .map(|g| g.group_type.to_string())
        .unwrap_or_default()
}

fn consumer848(bs: &str, group: &str) -> BaseConsumer {
    let mut c = client_config(bs);
    c.set("group.id", group)
        .set("group.protocol", "consumer")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false");
    let c: BaseConsumer = c.create().expect("consumer");
    c.subscribe(&["r848"]).expect("subscribe");
    c
}

fn owned(c: &BaseConsumer) -> usize {
    c.assignment().map(|t| t.count()).unwrap_or(0)
}

/// librdkafka with `group.protocol=consumer`: two members share the partitions, consume every record once,
/// commit with their member epoch, and the one left takes over when the other closes.
#[tokio::test(flavor = "multi_thread")]
async fn rdkafka_consumers_with_the_consumer_protocol_share_and_take_over() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "r848", 4).await;
    let prod = producer(&bs, &[]);
    for p in 0..4 {
        for i in 0..5 {
            let v = format!("v{i}");
            let rec = FutureRecord::<(), _>::to("r848").payload(&v).partition(p);
            prod.send(rec, Duration::from_secs(10))
                .await
                .expect("produce");
        }
    }
    let addr = server.local_addr();
    let bs2 = bs.clone();
    let (a, b, got) = tokio::task::spawn_blocking(move || {
        let a = consumer848(&bs2, "g-rd848");
        let b = consumer848(&bs2, "g-rd848");
        let mut got = BTreeSet::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(owned(&a) == 2 && owned(&b) == 2 && got.len() == 20) {
            assert!(
                Instant::now() < deadline,
                "a owns {}, b owns {}, consumed {}",
                owned(&a),
                owned(&b),
                got.len()
            );
            for c in [&a, &b] {
                if let Some(Ok(m)) = c.poll(Duration::from_millis(50)) {
                    use rdkafka::Message;
                    // Nothing is committed before the partitions move, so the new owner may read a record
                    // again (at-least-once, as with Kafka): count each record once.
                    got.insert((m.partition(), m.offset()));
                }
            }
        }
        for c in [&a, &b] {
            c.commit_consumer_state(CommitMode::Sync)
                .expect("commit with the member epoch");
        }
        (a, b, got)
    })
    .await
    .unwrap();
    assert_eq!(got.len(), 20);
    let d = describe(addr, "g-rd848").await;
    assert_eq!(d.groups[0].members.len(), 2);
    let b = tokio::task::spawn_blocking(move || {
        drop(a);
        let deadline = Instant::now() + Duration::from_secs(30);
        while owned(&b) < 4 {
            assert!(Instant::now() < deadline, "b owns {}", owned(&b));
            let _ = b.poll(Duration::from_millis(50));
        }
        b
    })
    .await
    .unwrap();
    drop(b);
    server.shutdown().await.unwrap();
}

/// OffsetDelete (KIP-496) on a live KIP-848 group: Kafka's OffsetMetadataManager refuses, per partition, a topic
/// the group subscribes to (`ConsumerGroup.isSubscribedToTopic`: a member's topic names or a topic its regex
/// resolves to) with GROUP_SUBSCRIBED_TO_TOPIC (86) and keeps that offset, and deletes the offsets of other
/// topics.
#[tokio::test]
async fn offset_delete_refuses_topics_a_consumer_group_subscribes_to() {
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::offset_delete_request::{
        OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
    };
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
    use kafka_protocol::messages::{
        OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse,
        OffsetFetchRequest, OffsetFetchResponse, TopicName,
    };
    const TOPICS: [&str; 3] = ["od-named", "od-rx", "od-free"];
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    for t in TOPICS {
        create_topic(&bs, t, 1).await;
    }
    let addr = server.local_addr();
    let mut by_name = Cgh::new(addr, "g-od848").await;
    let mut by_regex = Cgh::new(addr, "g-od848").await;
    assert_eq!(by_name.join(&["od-named"], None, None).await.error_code, 0);
    assert_eq!(by_regex.join(&[], Some("od-r.*"), None).await.error_code, 0);
    by_name.beat().await;

    let mut c = connect(addr).await;
    let commit = OffsetCommitRequest::default()
        .with_group_id(GroupId(s("g-od848")))
        .with_member_id(s(&by_name.id))
        .with_generation_id_or_member_epoch(by_name.epoch)
        .with_topics(
            TOPICS
                .iter()
                .map(|t| {
                    OffsetCommitRequestTopic::default()
                        .with_name(TopicName(s(t)))
                        .with_partitions(vec![OffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(5)])
                })
                .collect(),
        );
    let r: OffsetCommitResponse = request(&mut c, ApiKey::OffsetCommit, 9, &commit)
        .await
        .unwrap();
    for t in &r.topics {
        assert_eq!(t.partitions[0].error_code, 0, "commit {r:?}");
    }

    let delete = OffsetDeleteRequest::default()
        .with_group_id(GroupId(s("g-od848")))
        .with_topics(
            TOPICS
                .iter()
                .map(|t| {
                    OffsetDeleteRequestTopic::default()
                        .with_name(TopicName(s(t)))
                        .with_partitions(vec![
                            OffsetDeleteRequestPartition::default().with_partition_index(0)
                        ])
                })
                .collect(),
        );
    let r: OffsetDeleteResponse = request(&mut c, ApiKey::OffsetDelete, 0, &delete)
        .await
        .unwrap();
    assert_eq!(r.error_code, 0, "{r:?}");
    let codes: Vec<(String, i16)> = r
        .topics
        .iter()
        .map(|t| (t.name.0.to_string(), t.partitions[0].error_code))
        .collect();
    assert_eq!(
        codes,
        vec![
            ("od-named".to_string(), 86),
            ("od-rx".to_string(), 86),
            ("od-free".to_string(), 0)
        ],
        "GROUP_SUBSCRIBED_TO_TOPIC for the subscribed topics"
    );

    let fetch = OffsetFetchRequest::default()
        .with_group_id(GroupId(s("g-od848")))
        .with_topics(Some(
            TOPICS
                .iter()
                .map(|t| {
                    OffsetFetchRequestTopic::default()
                        .with_name(TopicName(s(t)))
                        .with_partition_indexes(vec![0])
                })
                .collect(),
        ));
    let r: OffsetFetchResponse = request(&mut c, ApiKey::OffsetFetch, 7, &fetch)
        .await
        .unwrap();
    let committed: Vec<(String, i64)> = r
        .topics
        .iter()
        .map(|t| (t.name.0.to_string(), t.partitions[0].committed_offset))
        .collect();
    assert_eq!(
        committed,
        vec![
            ("od-named".to_string(), 5),
            ("od-rx".to_string(), 5),
            ("od-free".to_string(), -1)
        ]
    );
    server.shutdown().await.unwrap();
}
