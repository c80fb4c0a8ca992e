//! The classic group protocol at the wire: Kafka's error codes for JoinGroup / SyncGroup / Heartbeat /
//! LeaveGroup / OffsetCommit in each group state, static membership (KIP-345), KIP-394 member ids, the rebalance
//! timeout, `group.max.size`, and groups surviving a broker restart (group metadata in `__consumer_offsets`).

use crate::common;
use crate::groups::raw as group_raw;

use std::time::{Duration, Instant};

use common::{bootstrap, create_topic, start_broker_with};
use group_raw::{describe, RawMember};

const NONE: i16 = 0;
const ILLEGAL_GENERATION: i16 = 22;
const UNKNOWN_MEMBER_ID: i16 = 25;
const REBALANCE_IN_PROGRESS: i16 = 27;
const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
const GROUP_ID_NOT_FOUND: i16 = 69;
const MEMBER_ID_REQUIRED: i16 = 79;
const GROUP_MAX_SIZE_REACHED: i16 = 81;
const FENCED_INSTANCE_ID: i16 = 82;

/// Kafka (KIP-394, JoinGroup v4+): a new dynamic member is answered MEMBER_ID_REQUIRED with its member id and
/// joins with it; a commit, heartbeat or sync from a member that has left is UNKNOWN_MEMBER_ID (Kafka's
/// `validateOffsetCommit`); a generation -1 commit is accepted once the group is empty.
#[tokio::test]
async fn a_commit_from_a_member_that_left_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    create_topic(&bootstrap(&server), "t", 1).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-left", None).await;
    let first = a.join_once(5).await;
    assert_eq!(first.error_code, MEMBER_ID_REQUIRED);
    assert!(!first.member_id.is_empty(), "the member id is handed out");
    let joined = a.join_once(5).await;
    assert_eq!((joined.error_code, joined.generation_id), (NONE, 1));
    assert_eq!(joined.leader, joined.member_id);
    let me = a.member_id.clone();
    assert_eq!(a.sync(&[(&me, b"p0")]).await.error_code, NONE);
    assert_eq!(a.commit("t", 5).await, NONE);
    assert_eq!(a.leave().await, (NONE, NONE));
    assert_eq!(a.commit("t", 6).await, UNKNOWN_MEMBER_ID);
    assert_eq!(a.heartbeat().await, UNKNOWN_MEMBER_ID);
    assert_eq!(a.sync(&[]).await.error_code, UNKNOWN_MEMBER_ID);
    assert_eq!(
        a.commit_as(8, "", -1, "t", 7).await,
        NONE,
        "a generation -1 commit to the empty group"
    );
    server.shutdown().await.unwrap();
}

/// Kafka: OffsetCommit to a group that does not exist is GROUP_ID_NOT_FOUND from v9 and ILLEGAL_GENERATION
/// before (generation >= 0); generation -1 creates a simple group.
#[tokio::test]
async fn a_commit_to_an_unknown_group_depends_on_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    create_topic(&bootstrap(&server), "t", 1).await;
    let mut a = RawMember::new(server.local_addr(), "g-nobody", None).await;
    assert_eq!(a.commit_as(8, "m", 3, "t", 1).await, ILLEGAL_GENERATION);
    assert_eq!(a.commit_as(9, "m", 3, "t", 1).await, GROUP_ID_NOT_FOUND);
    assert_eq!(a.commit_as(9, "", -1, "t", 1).await, NONE);
    server.shutdown().await.unwrap();
}

/// Kafka's checks in order: member (UNKNOWN_MEMBER_ID), generation (ILLEGAL_GENERATION), state: heartbeats
/// during PreparingRebalance are REBALANCE_IN_PROGRESS, commits of the current generation are accepted then;
/// during CompletingRebalance heartbeats are accepted and commits are REBALANCE_IN_PROGRESS; SyncGroup v5 with
/// another protocol is INCONSISTENT_GROUP_PROTOCOL.
#[tokio::test]
async fn generation_and_state_checks_answer_as_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    create_topic(&bootstrap(&server), "t", 1).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-checks", None).await;
    a.join().await;
    let a_id = a.member_id.clone();
    assert_eq!(a.sync(&[(&a_id, b"all")]).await.error_code, NONE);
    assert_eq!(a.heartbeat_as(0).await, ILLEGAL_GENERATION);
    let stale = a.generation - 1;
    assert_eq!(
        a.commit_as(8, &a_id, stale, "t", 1).await,
        ILLEGAL_GENERATION
    );

    // b joins: the group prepares a rebalance and waits for a.
    let mut b = RawMember::new(addr, "g-checks", None).await;
    let b_join = tokio::spawn(async move {
        let r = b.join().await;
        (b, r)
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.heartbeat().await != REBALANCE_IN_PROGRESS {
        assert!(Instant::now() < deadline, "no rebalance started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        a.commit("t", 2).await,
        NONE,
        "the current generation commits while members rejoin"
    );
    let a_join = a.join().await;
    assert_eq!((a_join.error_code, a_join.generation_id), (NONE, 2));
    let (mut b, b_resp) = b_join.await.unwrap();
    assert_eq!((b_resp.error_code, b_resp.generation_id), (NONE, 2));

    // CompletingRebalance: the leader has not synced yet.
    assert_eq!(b.heartbeat().await, NONE);
    assert_eq!(b.commit("t", 3).await, REBALANCE_IN_PROGRESS);
    assert_eq!(
        b.sync_as(1, Some("range"), &[]).await.error_code,
        ILLEGAL_GENERATION
    );
    assert_eq!(
        b.sync_as(2, Some("roundrobin"), &[]).await.error_code,
        INCONSISTENT_GROUP_PROTOCOL
    );
    let b_id = b.member_id.clone();
    let b_sync = tokio::spawn(async move {
        let r = b.sync(&[]).await;
        (b, r)
    });
    let a_sync = a.sync(&[(&a_id, b"p0"), (&b_id, b"p1")]).await;
    assert_eq!(
        (a_sync.error_code, &a_sync.assignment[..]),
        (NONE, &b"p0"[..])
    );
    let (mut b, b_sync) = b_sync.await.unwrap();
    assert_eq!(
        (b_sync.error_code, &b_sync.assignment[..]),
        (NONE, &b"p1"[..])
    );
    assert_eq!(b.commit("t", 4).await, NONE);
    assert_eq!(b.heartbeat().await, NONE);
    server.shutdown().await.unwrap();
}

/// KIP-345: a static member restarting (JoinGroup with its `group.instance.id` and no member id) within its
/// session gets the current generation and its assignment with no rebalance; the old member id is then
/// FENCED_INSTANCE_ID on heartbeat and commit; LeaveGroup by instance id removes the member.
#[tokio::test]
async fn a_restarted_static_member_takes_its_place_without_a_rebalance() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    create_topic(&bootstrap(&server), "t", 1).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-static", Some("i1")).await;
    let first = a.join_once(5).await;
    assert_eq!(
        (first.error_code, first.generation_id),
        (NONE, 1),
        "static members need no second join"
    );
    let a_id = a.member_id.clone();
    assert_eq!(a.sync(&[(&a_id, b"p0-p3")]).await.error_code, NONE);

    let mut a2 = RawMember::new(addr, "g-static", Some("i1")).await;
    let again = a2.join_once(5).await;
    assert_eq!(
        (again.error_code, again.generation_id),
        (NONE, 1),
        "no rebalance"
    );
    assert_ne!(a2.member_id, a_id);
    let synced = a2.sync(&[]).await;
    assert_eq!(
        (synced.error_code, &synced.assignment[..]),
        (NONE, &b"p0-p3"[..])
    );
    assert_eq!(a.heartbeat().await, FENCED_INSTANCE_ID);
    assert_eq!(a.commit("t", 1).await, FENCED_INSTANCE_ID);
    assert_eq!(a2.heartbeat().await, NONE);
    assert_eq!(a2.commit("t", 1).await, NONE);
    assert_eq!(
        describe(addr, "g-static", 5).await.group_state.as_str(),
        "Stable"
    );

    a2.member_id = String::new();
    assert_eq!(a2.leave().await, (NONE, NONE), "leave by instance id");
    assert_eq!(
        describe(addr, "g-static", 5).await.group_state.as_str(),
        "Empty"
    );
    server.shutdown().await.unwrap();
}

/// Kafka: the join phase lasts at most the group's rebalance timeout (a consumer's `max.poll.interval.ms`); a
/// member that keeps heartbeating but does not rejoin by then is removed, and the others' generation goes on
/// without it.
#[tokio::test]
async fn a_member_that_does_not_rejoin_within_the_rebalance_timeout_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-stall", None).await;
    a.rebalance_ms = 800;
    a.join().await;
    let a_id = a.member_id.clone();
    assert_eq!(a.sync(&[(&a_id, b"all")]).await.error_code, NONE);
    let mut b = RawMember::new(addr, "g-stall", None).await;
    b.rebalance_ms = 800;
    let started = Instant::now();
    let b_join = tokio::spawn(async move {
        let r = b.join().await;
        (b, r)
    });
    // a heartbeats (told to rejoin) but never does.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !b_join.is_finished() {
        let code = a.heartbeat().await;
        if code == UNKNOWN_MEMBER_ID {
            // The join phase ended and removed a; b's answer is on its way.
            break;
        }
        assert!(matches!(code, NONE | REBALANCE_IN_PROGRESS), "{code}");
        assert!(Instant::now() < deadline, "the join phase never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, resp) = b_join.await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(700));
    assert_eq!((resp.error_code, resp.generation_id), (NONE, 2));
    assert_eq!(resp.leader, resp.member_id, "b leads the group alone");
    assert_eq!(resp.members.len(), 1);
    assert_eq!(a.heartbeat().await, UNKNOWN_MEMBER_ID);
    server.shutdown().await.unwrap();
}

/// Kafka's `group.max.size`: a member beyond it is refused GROUP_MAX_SIZE_REACHED.
#[tokio::test]
async fn a_member_beyond_group_max_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[("group.max.size", "1")]).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-full", None).await;
    assert_eq!(a.join().await.error_code, NONE);
    let mut b = RawMember::new(addr, "g-full", None).await;
    assert_eq!(b.join().await.error_code, GROUP_MAX_SIZE_REACHED);
    server.shutdown().await.unwrap();
}

/// Kafka's `group.initial.rebalance.delay.ms`: the first generation of an empty group waits the delay (extended
/// while members keep joining), so members starting together land in one generation.
#[tokio::test]
async fn the_initial_rebalance_delay_gathers_members_into_one_generation() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        start_broker_with(dir.path(), &[("group.initial.rebalance.delay.ms", "600")]).await;
    let addr = server.local_addr();
    let started = Instant::now();
    let mut joins = Vec::new();
    for _ in 0..2 {
        let mut m = RawMember::new(addr, "g-delay", None).await;
        joins.push(tokio::spawn(async move { m.join().await }));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for j in joins {
        let r = j.await.unwrap();
        assert_eq!((r.error_code, r.generation_id), (NONE, 1));
    }
    assert!(started.elapsed() >= Duration::from_millis(600));
    server.shutdown().await.unwrap();
}

/// Kafka stores each completed generation in `__consumer_offsets` (GroupMetadata records), so a restarted
/// coordinator knows the group: members go on heartbeating in their generation, and the next rebalance
/// continues the generation count.
#[tokio::test]
async fn a_restarted_broker_knows_its_groups_and_their_generation() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    create_topic(&bootstrap(&server), "t", 1).await;
    let port = server.local_addr().port();
    let mut a = RawMember::new(server.local_addr(), "g-restart", Some("s1")).await;
    a.join().await;
    let a_id = a.member_id.clone();
    assert_eq!(a.sync(&[(&a_id, b"mine")]).await.error_code, NONE);
    assert_eq!(a.commit("t", 11).await, NONE);
    server.shutdown().await.unwrap();

    let listener = format!("PLAINTEXT://127.0.0.1:{port}");
    let server = start_broker_with(dir.path(), &[("listeners", &listener)]).await;
    let addr = server.local_addr();
    let d = describe(addr, "g-restart", 5).await;
    assert_eq!(d.group_state.as_str(), "Stable");
    assert_eq!(d.members.len(), 1);
    assert_eq!(d.members[0].member_id.as_str(), a_id);
    assert_eq!(&d.members[0].member_assignment[..], b"mine");
    let mut again = RawMember::new(addr, "g-restart", Some("s1")).await;
    again.member_id = a_id.clone();
    again.generation = a.generation;
    assert_eq!(
        again.heartbeat().await,
        NONE,
        "the member goes on in its generation"
    );
    assert_eq!(again.commit("t", 12).await, NONE);
    let mut b = RawMember::new(addr, "g-restart", None).await;
    let b_join = tokio::spawn(async move { b.join().await });
    let deadline = Instant::now() + Duration::from_secs(10);
    while again.heartbeat().await != REBALANCE_IN_PROGRESS {
        assert!(Instant::now() < deadline, "b's join started no rebalance");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rejoined = again.join().await;
    assert_eq!((rejoined.error_code, rejoined.generation_id), (NONE, 2));
    assert_eq!(b_join.await.unwrap().generation_id, 2);
    server.shutdown().await.unwrap();
}

/// Kafka's LeaveGroup rules (`GroupMetadataManager.classicGroupLeave`, `LeaveGroupResponse`): from v3 each member
/// is answered on its own and the top-level error stays NONE even when the only member named is unknown (one
/// member's error is not copied to the top); v0-2 carry the member's error at the top; a group that does not exist
/// is UNKNOWN_MEMBER_ID for the whole request, with no member answers.
#[tokio::test]
async fn leave_group_errors_are_per_member_from_v3() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-leave", None).await;
    assert_eq!(a.join().await.error_code, NONE);
    let me = a.member_id.clone();
    assert_eq!(a.sync(&[(&me, b"p0")]).await.error_code, NONE);
    let mut ghost = RawMember::new(addr, "g-leave", None).await;
    ghost.member_id = "ghost".into();
    assert_eq!(ghost.leave_at(5).await, (NONE, UNKNOWN_MEMBER_ID));
    assert_eq!(ghost.leave_at(3).await, (NONE, UNKNOWN_MEMBER_ID));
    assert_eq!(ghost.leave_at(2).await, (UNKNOWN_MEMBER_ID, -1));
    let mut nowhere = RawMember::new(addr, "g-no-such-group", None).await;
    nowhere.member_id = "m".into();
    assert_eq!(nowhere.leave_at(5).await, (UNKNOWN_MEMBER_ID, -1));
    assert_eq!(a.leave_at(5).await, (NONE, NONE));
    server.shutdown().await.unwrap();
}
