//! KIP-848 consumer groups kept as Kafka keeps them: their records in `__consumer_offsets` replayed after a broker
//! restart (members continue with their epochs and partitions, the group stays a `consumer` group), members that
//! do not revoke within their rebalance timeout fenced, OffsetFetch v9 member checks and `group.consumer.max.size`.

use crate::common;
use crate::groups::cgh;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::{
    ApiKey, DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest,
    DescribeGroupsResponse, GroupId, ListGroupsRequest, ListGroupsResponse, OffsetFetchRequest,
    OffsetFetchResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::producer::FutureRecord;
use rdkafka::Message;

use cgh::{describe, Cgh};
use common::raw::{connect, request};
use common::{bootstrap, client_config, create_topic, producer, start_broker_with};

const BROKER: &[(&str, &str)] = &[("group.consumer.heartbeat.interval.ms", "300")];

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

/// (group id, type, state) of every group ListGroups v5 reports.
async fn list_groups(addr: std::net::SocketAddr) -> BTreeSet<(String, String, String)> {
    let mut c = connect(addr).await;
    let r: ListGroupsResponse =
        request(&mut c, ApiKey::ListGroups, 5, &ListGroupsRequest::default())
            .await
            .unwrap();
    r.groups
        .iter()
        .map(|g| {
            (
                g.group_id.0.to_string(),
                g.group_type.to_string(),
                g.group_state.to_string(),
            )
        })
        .collect()
}

/// Kafka replays a consumer group's records (ConsumerGroupMetadata, ...MemberMetadata, ...TargetAssignment*,
/// ...CurrentMemberAssignment) when its coordinator loads: after a broker restart the members heartbeat on with
/// the epochs they had and keep their partitions (no epoch 0 rejoin, no new group epoch), ListGroups reports a
/// Stable `consumer` group and ConsumerGroupDescribe the same members and epochs. A member that left before the
/// restart stays gone (its records were tombstoned), and so does a deleted group.
#[tokio::test]
async fn a_consumer_group_and_its_members_epochs_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    create_topic(&bootstrap(&server), "kr", 4).await;
    let addr = server.local_addr();
    let mut a = Cgh::new(addr, "g-restart").await;
    let mut b = Cgh::new(addr, "g-restart").await;
    let mut c = Cgh::new(addr, "g-restart").await;
    a.join(&["kr"], None, None).await;
    b.join(&["kr"], None, None).await;
    c.join(&["kr"], None, None).await;
    // c leaves; a and b settle on two partitions each.
    assert_eq!(c.send(c.base().with_member_epoch(-1)).await.error_code, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        a.beat().await;
        b.beat().await;
        let d = describe(addr, "g-restart").await;
        if d.groups[0].group_state.as_str() == "Stable" && a.owned.len() == 2 && b.owned.len() == 2
        {
            break;
        }
        assert!(Instant::now() < deadline, "never stable: {:?}", d.groups[0]);
    }
    // An empty group deleted before the restart.
    let mut e = Cgh::new(addr, "g-deleted").await;
    e.join(&["kr"], None, None).await;
    assert_eq!(e.send(e.base().with_member_epoch(-1)).await.error_code, 0);
    let mut conn = connect(addr).await;
    let del: DeleteGroupsResponse = request(
        &mut conn,
        ApiKey::DeleteGroups,
        2,
        &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("g-deleted"))]),
    )
    .await
    .unwrap();
    assert_eq!(del.results[0].error_code, 0);
    let before = describe(addr, "g-restart").await.groups.remove(0);
    let (a_owned, b_owned, a_epoch, b_epoch) = (a.owned.clone(), b.owned.clone(), a.epoch, b.epoch);
    server.shutdown().await.unwrap();

    let server = start_broker_with(dir.path(), BROKER).await;
    let addr = server.local_addr();
    let listed = list_groups(addr).await;
    assert!(
        listed.contains(&("g-restart".into(), "consumer".into(), "Stable".into())),
        "{listed:?}"
    );
    assert!(
        !listed.iter().any(|(g, _, _)| g == "g-deleted"),
        "a deleted group came back: {listed:?}"
    );
    // Kafka's DescribeGroups answers classic groups only: a consumer group is Dead there (GROUP_ID_NOT_FOUND
    // from v6), not an Empty classic group.
    let mut conn = connect(addr).await;
    let classic: DescribeGroupsResponse = request(
        &mut conn,
        ApiKey::DescribeGroups,
        6,
        &DescribeGroupsRequest::default().with_groups(vec![GroupId(s("g-restart"))]),
    )
    .await
    .unwrap();
    assert_eq!(
        (
            classic.groups[0].error_code,
            classic.groups[0].group_state.as_str()
        ),
        (69, "Dead")
    );
    let after = describe(addr, "g-restart").await.groups.remove(0);
    assert_eq!(
        (after.error_code, after.group_epoch, after.assignment_epoch),
        (0, before.group_epoch, before.assignment_epoch)
    );
    let ids = |g: &kafka_protocol::messages::consumer_group_describe_response::DescribedGroup| {
        g.members
            .iter()
            .map(|m| (m.member_id.to_string(), m.member_epoch))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(
        ids(&after),
        ids(&before),
        "same members, same epochs; c stays gone"
    );
    for m in [&mut a, &mut b] {
        m.conn = connect(addr).await;
    }
    let ra = a.beat().await;
    let rb = b.beat().await;
    assert_eq!((ra.error_code, ra.member_epoch), (0, a_epoch));
    assert_eq!((rb.error_code, rb.member_epoch), (0, b_epoch));
    assert_eq!(
        (&a.owned, &b.owned),
        (&a_owned, &b_owned),
        "nothing reassigned"
    );
    let again = describe(addr, "g-restart").await.groups.remove(0);
    assert_eq!(again.group_epoch, before.group_epoch, "no rebalance");
    assert_eq!(again.group_state.as_str(), "Stable");
    server.shutdown().await.unwrap();
}

/// Kafka's rebalance timeout for the consumer protocol (`scheduleConsumerGroupRebalanceTimeout`): a member asked
/// to revoke partitions that still reports them after its rebalance timeout is fenced (its next heartbeat gets
/// UNKNOWN_MEMBER_ID) and its partitions go to the others, although it kept heartbeating.
#[tokio::test]
async fn a_member_not_revoking_within_its_rebalance_timeout_is_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    create_topic(&bootstrap(&server), "kf", 4).await;
    let addr = server.local_addr();
    let mut a = Cgh::new(addr, "g-fence").await;
    a.rebalance_timeout_ms = 1_000;
    a.join(&["kf"], None, None).await;
    let all = a.owned.clone();
    assert_eq!(all.len(), 4);
    let mut b = Cgh::new(addr, "g-fence").await;
    b.join(&["kf"], None, None).await;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(15);
    let fenced = loop {
        // a keeps heartbeating but never gives anything up.
        a.owned = all.clone();
        let r = a.beat().await;
        if r.error_code != 0 {
            break r.error_code;
        }
        assert!(
            Instant::now() < deadline,
            "a was never fenced (epoch {})",
            r.member_epoch
        );
        b.beat().await;
        assert!(b.owned.is_empty(), "b got partitions a still holds");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(fenced, 25, "UNKNOWN_MEMBER_ID");
    assert!(
        started.elapsed() >= Duration::from_millis(1_000),
        "fenced before the rebalance timeout"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.owned.len() < 4 {
        assert!(Instant::now() < deadline, "b never got a's partitions");
        b.beat().await;
    }
    server.shutdown().await.unwrap();
}

async fn offset_fetch(
    addr: std::net::SocketAddr,
    group: &str,
    member: Option<&str>,
    epoch: i32,
) -> i16 {
    let mut c = connect(addr).await;
    let g = OffsetFetchRequestGroup::default()
        .with_group_id(GroupId(s(group)))
        .with_member_id(member.map(s))
        .with_member_epoch(epoch)
        .with_topics(Some(vec![OffsetFetchRequestTopics::default()
            .with_name(TopicName(s("ko")))
            .with_partition_indexes(vec![0])]));
    let r: OffsetFetchResponse = request(
        &mut c,
        ApiKey::OffsetFetch,
        9,
        &OffsetFetchRequest::default().with_groups(vec![g]),
    )
    .await
    .unwrap();
    r.groups[0].error_code
}

/// OffsetFetch v9 as Kafka's `ConsumerGroup.validateOffsetFetch`: no member id and epoch -1 (admin tools) is
/// answered; a member id not in the group is UNKNOWN_MEMBER_ID; a member's epoch other than its current one is
/// STALE_MEMBER_EPOCH. And `group.consumer.max.size` as Kafka's `throwIfConsumerGroupIsFull`: a new member of a
/// full group gets GROUP_MAX_SIZE_REACHED, the members already in go on.
#[tokio::test]
async fn offset_fetch_checks_the_member_and_a_full_group_refuses_new_members() {
    let dir = tempfile::tempdir().unwrap();
    let mut props = BROKER.to_vec();
    props.push(("group.consumer.max.size", "2"));
    let server = start_broker_with(dir.path(), &props).await;
    create_topic(&bootstrap(&server), "ko", 2).await;
    let addr = server.local_addr();
    let mut a = Cgh::new(addr, "g-of").await;
    a.join(&["ko"], None, None).await;
    assert_eq!(offset_fetch(addr, "g-of", None, -1).await, 0);
    assert_eq!(offset_fetch(addr, "g-of", Some(&a.id), a.epoch).await, 0);
    assert_eq!(
        offset_fetch(addr, "g-of", Some(&a.id), a.epoch + 5).await,
        113,
        "STALE_MEMBER_EPOCH"
    );
    assert_eq!(
        offset_fetch(addr, "g-of", Some("nobody"), 1).await,
        25,
        "UNKNOWN_MEMBER_ID"
    );

    let mut b = Cgh::new(addr, "g-of").await;
    assert_eq!(b.join(&["ko"], None, None).await.error_code, 0);
    let mut c = Cgh::new(addr, "g-of").await;
    assert_eq!(
        c.join(&["ko"], None, None).await.error_code,
        81,
        "GROUP_MAX_SIZE_REACHED"
    );
    assert_eq!(a.beat().await.error_code, 0, "a member already in goes on");
    server.shutdown().await.unwrap();
}

/// Rebalance callbacks in order: ("assign" | "revoke", partitions).
type Events = Arc<Mutex<Vec<(&'static str, BTreeSet<i32>)>>>;

/// Records every rebalance callback of one consumer: ("assign" | "revoke", partitions).
#[derive(Clone, Default)]
struct Recorder {
    events: Events,
}

impl ClientContext for Recorder {}

impl ConsumerContext for Recorder {
    fn pre_rebalance(&self, _c: &BaseConsumer<Self>, r: &Rebalance<'_>) {
        let (kind, tpl) = match r {
            Rebalance::Assign(t) => ("assign", *t),
            Rebalance::Revoke(t) => ("revoke", *t),
            Rebalance::Error(_) => return,
        };
        let ps = tpl.elements().iter().map(|e| e.partition()).collect();
        self.events.lock().unwrap().push((kind, ps));
    }
}

type Member = BaseConsumer<Recorder>;

fn member848(bs: &str, group: &str) -> (Member, Recorder) {
    let rec = Recorder::default();
    let mut c = client_config(bs);
    c.set("group.id", group)
        .set("group.protocol", "consumer")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false");
    let m: Member = c.create_with_context(rec.clone()).expect("consumer");
    m.subscribe(&["kc"]).expect("subscribe");
    (m, rec)
}

fn owned(m: &Member) -> BTreeSet<i32> {
    m.assignment()
        .map(|t| t.elements().iter().map(|e| e.partition()).collect())
        .unwrap_or_default()
}

/// Polls both members until `done` holds (panics after `limit`), adding what they consume to `got`.
fn poll_until(
    members: &[&Member],
    got: &mut [Vec<(i32, i64)>],
    what: &str,
    limit: Duration,
    mut done: impl FnMut(&[Vec<(i32, i64)>]) -> bool,
) {
    let deadline = Instant::now() + limit;
    loop {
        for (i, m) in members.iter().enumerate() {
            while let Some(r) = m.poll(Duration::from_millis(20)) {
                if let Ok(msg) = r {
                    got[i].push((msg.partition(), msg.offset()));
                }
            }
        }
        if done(got) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
    }
}

/// librdkafka with `group.protocol=consumer` across a broker restart: the two members keep their partitions
/// (no rebalance callback after the restart: the coordinator replayed their epochs and assignments, as Kafka's
/// does after a failover), commit with their epochs, and consume what is produced after the restart exactly once
/// (everything before it was committed).
#[tokio::test(flavor = "multi_thread")]
async fn rdkafka_consumer_protocol_members_keep_their_partitions_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    let port = server.local_addr().port();
    create_topic(&bs, "kc", 4).await;
    let produce = |bs: String, tag: &'static str| async move {
        let prod = producer(&bs, &[]);
        for p in 0..4 {
            for i in 0..5 {
                let v = format!("{tag}-{i}");
                let rec = FutureRecord::<(), _>::to("kc").payload(&v).partition(p);
                prod.send(rec, Duration::from_secs(10))
                    .await
                    .expect("produce");
            }
        }
    };
    let (a, a_rec) = member848(&bs, "g-kc");
    let (b, b_rec) = member848(&bs, "g-kc");
    // The records are produced once both members hold their two partitions: produced earlier, the first member
    // could read all of them before handing two partitions over, and the second would have nothing to commit.
    let (a, b) = tokio::task::spawn_blocking(move || {
        let mut got = vec![Vec::new(), Vec::new()];
        poll_until(
            &[&a, &b],
            &mut got,
            "two partitions each",
            Duration::from_secs(60),
            |_| owned(&a).len() == 2 && owned(&b).len() == 2,
        );
        assert!(
            got.iter().all(Vec::is_empty),
            "nothing produced yet: {got:?}"
        );
        (a, b)
    })
    .await
    .unwrap();
    produce(bs.clone(), "before").await;
    let (a, b, held) = tokio::task::spawn_blocking(move || {
        let mut got = vec![Vec::new(), Vec::new()];
        poll_until(
            &[&a, &b],
            &mut got,
            "every record",
            Duration::from_secs(60),
            |got| got.iter().flatten().collect::<BTreeSet<_>>().len() == 20,
        );
        assert!(
            got.iter().all(|g| g.len() == 10),
            "each member reads its two partitions: {got:?}"
        );
        for m in [&a, &b] {
            m.commit_consumer_state(CommitMode::Sync)
                .expect("commit before the restart");
        }
        let held = (owned(&a), owned(&b));
        (a, b, held)
    })
    .await
    .unwrap();
    let events = (
        a_rec.events.lock().unwrap().len(),
        b_rec.events.lock().unwrap().len(),
    );
    server.shutdown().await.unwrap();

    let listener = format!("PLAINTEXT://127.0.0.1:{port}");
    let mut props: Vec<(&str, &str)> = BROKER.to_vec();
    props.push(("listeners", &listener));
    let server = start_broker_with(dir.path(), &props).await;
    produce(bs.clone(), "after").await;
    let (a, b, got) = tokio::task::spawn_blocking(move || {
        let mut got = vec![Vec::new(), Vec::new()];
        poll_until(
            &[&a, &b],
            &mut got,
            "the records produced after the restart",
            Duration::from_secs(60),
            |got| got.iter().map(Vec::len).sum::<usize>() >= 20,
        );
        // A little longer: anything read twice would show now.
        let until = Instant::now() + Duration::from_secs(1);
        poll_until(
            &[&a, &b],
            &mut got,
            "a second",
            Duration::from_secs(5),
            |_| Instant::now() >= until,
        );
        for m in [&a, &b] {
            m.commit_consumer_state(CommitMode::Sync)
                .expect("a commit with the same member epoch after the restart");
        }
        assert_eq!((owned(&a), owned(&b)), held, "partitions moved");
        (a, b, got)
    })
    .await
    .unwrap();
    let all: Vec<(i32, i64)> = got.iter().flatten().copied().collect();
    let distinct: BTreeSet<(i32, i64)> = all.iter().copied().collect();
    assert_eq!(
        (all.len(), distinct.len()),
        (20, 20),
        "nothing consumed twice: {got:?}"
    );
    assert!(
        all.iter().all(|(_, o)| *o >= 5),
        "committed records read again: {all:?}"
    );
    assert_eq!(
        (
            a_rec.events.lock().unwrap().len(),
            b_rec.events.lock().unwrap().len()
        ),
        events,
        "a rebalance after the restart: {:?} {:?}",
        a_rec.events.lock().unwrap(),
        b_rec.events.lock().unwrap()
    );
    drop((a, b));
    server.shutdown().await.unwrap();
}
