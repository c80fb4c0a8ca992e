//! Unit tests of the group module.
use super::*;

/// The broker's defaults without the initial rebalance delay (members join at once, as in Kafka's unit tests).
fn config() -> BrokerConfig {
    let mut cfg = BrokerConfig::default();
    cfg.group_initial_rebalance_delay_ms = 0;
    cfg
}

fn coordinator() -> GroupCoordinator {
    GroupCoordinator::new(&config(), OffsetStore::in_memory())
}

fn join_req(member: &str) -> JoinRequest {
    JoinRequest {
        group_id: "g".into(),
        member_id: member.into(),
        instance_id: None,
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 10_000,
        protocol_type: "consumer".into(),
        protocols: vec![("range".into(), Bytes::from_static(b"meta"))],
        supports_skip_assignment: true,
        requires_known_member_id: false,
    }
}

#[test]
fn first_member_becomes_leader_of_generation_one() {
    let c = coordinator();
    let r = c
        .join(join_req(""))
        .try_recv()
        .expect("completes at once with no initial delay");
    assert_eq!(r.error, None);
    assert_eq!(r.generation_id, 1);
    assert_eq!(r.leader, r.member_id);
    assert_eq!(r.members.len(), 1);
    assert_eq!(r.protocol_name.as_deref(), Some("range"));
}

#[test]
fn second_member_triggers_a_rebalance_that_waits_for_the_first() {
    let c = coordinator();
    let a = c.join(join_req("")).try_recv().unwrap();
    let mut sync_a = c.sync(
        "g",
        (&a.member_id, None),
        1,
        vec![(a.member_id.clone(), Bytes::from_static(b"all"))],
    );
    assert!(sync_a.try_recv().unwrap().is_ok());
    let mut b = c.join(join_req(""));
    assert!(
        b.try_recv().is_err(),
        "must wait for the existing member to rejoin"
    );
    assert_eq!(
        c.heartbeat("g", &a.member_id, None, 1),
        Err(GroupError::RebalanceInProgress)
    );
    let a2 = c.join(join_req(&a.member_id)).try_recv().unwrap();
    let b = b.try_recv().unwrap();
    assert_eq!((a2.generation_id, b.generation_id), (2, 2));
    assert_eq!(a2.leader, a.member_id, "the leader is kept");
    assert_eq!(a2.members.len(), 2);
    assert!(b.members.is_empty(), "only the leader gets the member list");
    // The follower's sync waits for the leader's assignment.
    let mut sb = c.sync("g", (&b.member_id, None), 2, vec![]);
    assert!(sb.try_recv().is_err());
    let assignments = vec![
        (a.member_id.clone(), Bytes::from_static(b"p0")),
        (b.member_id.clone(), Bytes::from_static(b"p1")),
    ];
    assert_eq!(
        c.sync("g", (&a.member_id, None), 2, assignments)
            .try_recv()
            .unwrap()
            .unwrap()
            .2,
        Bytes::from_static(b"p0")
    );
    assert_eq!(sb.try_recv().unwrap().unwrap().2, Bytes::from_static(b"p1"));
    assert_eq!(c.heartbeat("g", &b.member_id, None, 2), Ok(()));
    assert_eq!(
        c.heartbeat("g", &b.member_id, None, 1),
        Err(GroupError::IllegalGeneration {
            generation: 1,
            current: 2
        })
    );
}

fn static_join(member: &str, instance: &str) -> JoinRequest {
    JoinRequest {
        instance_id: Some(instance.into()),
        ..join_req(member)
    }
}

/// KIP-345: a join without a member id under a known instance id takes over the member's entry at once (same
/// generation, no rebalance, the old assignment); the old member id is fenced everywhere.
#[test]
fn a_replaced_static_member_is_fenced_and_the_group_does_not_rebalance() {
    let c = coordinator();
    let a = c.join(static_join("", "i1")).try_recv().unwrap();
    assert_eq!(a.error, None);
    let assignment = vec![(a.member_id.clone(), Bytes::from_static(b"p0-p3"))];
    let synced = c
        .sync("g", (&a.member_id, Some("i1")), 1, assignment)
        .try_recv()
        .unwrap();
    assert!(synced.is_ok());

    // A restarted (or duplicate) instance i1 joins with no member id.
    let b = c
        .join(static_join("", "i1"))
        .try_recv()
        .expect("answered at once: the group is stable");
    assert_eq!(b.error, None);
    assert_ne!(b.member_id, a.member_id);
    assert_eq!(b.generation_id, 1, "no rebalance");
    assert_eq!(b.leader, b.member_id, "the replaced leader stays leader");
    assert!(b.skip_assignment, "the leader keeps the current assignment");
    assert_eq!(c.describe("g").state, "Stable");
    assert_eq!(c.describe("g").members.len(), 1);
    let synced = c
        .sync("g", (&b.member_id, Some("i1")), 1, vec![])
        .try_recv()
        .unwrap();
    assert_eq!(
        synced.map(|(_, _, assignment)| assignment),
        Ok(Bytes::from_static(b"p0-p3")),
        "the new member id inherits the assignment"
    );

    // The old member id is fenced: heartbeat, sync, commit, join, leave.
    let fenced = GroupError::FencedInstanceId {
        member: a.member_id.clone(),
    };
    assert_eq!(
        c.heartbeat("g", &a.member_id, Some("i1"), 1),
        Err(fenced.clone())
    );
    let sync = c.sync("g", (&a.member_id, Some("i1")), 1, vec![]);
    assert_eq!(sync.blocking_recv().unwrap(), Err(fenced.clone()));
    assert_eq!(
        c.check_commit("g", &a.member_id, Some("i1"), 1),
        Err(fenced.clone())
    );
    let join = c.join(static_join(&a.member_id, "i1")).try_recv().unwrap();
    assert_eq!(join.error, Some(fenced.clone()));
    assert_eq!(c.leave("g", &a.member_id, Some("i1")), Err(fenced));
    // ... while the new one is in good standing.
    assert_eq!(c.heartbeat("g", &b.member_id, Some("i1"), 1), Ok(()));
    assert_eq!(c.check_commit("g", &b.member_id, Some("i1"), 1), Ok(()));
    assert_eq!(c.describe("g").state, "Stable");
}

/// A client older than JoinGroup v9 that replaces the static leader is answered as a follower (the old
/// leader id, no member list), so it does not run its assignor for an assignment that is never handed out.
#[test]
fn a_replaced_static_leader_without_skip_assignment_is_answered_as_a_follower() {
    let c = coordinator();
    let a = c.join(static_join("", "i1")).try_recv().unwrap();
    let assignment = vec![(a.member_id.clone(), Bytes::from_static(b"all"))];
    assert!(c
        .sync("g", (&a.member_id, Some("i1")), 1, assignment)
        .try_recv()
        .unwrap()
        .is_ok());
    let old_client = JoinRequest {
        supports_skip_assignment: false,
        ..static_join("", "i1")
    };
    let b = c.join(old_client).try_recv().expect("answered at once");
    assert_eq!((b.error, b.generation_id), (None, 1));
    assert_eq!(b.leader, a.member_id, "told the leader id from before");
    assert!(b.members.is_empty() && !b.skip_assignment);
    let synced = c
        .sync("g", (&b.member_id, Some("i1")), 1, vec![])
        .try_recv()
        .unwrap();
    assert_eq!(synced.unwrap().2, Bytes::from_static(b"all"));
}

/// A static member replaced while the group waits for the leader's assignment causes a new rebalance (the
/// leader may be assigning to the old member id); the old member's pending sync is fenced.
#[test]
fn a_static_member_replaced_during_completing_rebalance_rejoins_the_group() {
    let c = coordinator();
    let a = c.join(static_join("", "i1")).try_recv().unwrap();
    let b = c.join(static_join("", "i2"));
    let a2 = c.join(static_join(&a.member_id, "i1")).try_recv().unwrap();
    let b = b.blocking_recv().unwrap();
    assert_eq!((a2.generation_id, b.generation_id), (2, 2));
    assert_eq!(c.describe("g").state, "CompletingRebalance");
    // i2's follower sync waits for the leader ...
    let mut b_sync = c.sync("g", (&b.member_id, Some("i2")), 2, vec![]);
    assert!(b_sync.try_recv().is_err());
    // ... when a new i2 instance replaces it.
    let mut b2 = c.join(static_join("", "i2"));
    assert_eq!(
        b_sync.try_recv().unwrap(),
        Err(GroupError::FencedInstanceId {
            member: b.member_id.clone()
        })
    );
    assert_eq!(c.describe("g").state, "PreparingRebalance");
    assert!(b2.try_recv().is_err(), "waits for i1 to rejoin");
    let a3 = c.join(static_join(&a.member_id, "i1")).try_recv().unwrap();
    let b2 = b2.try_recv().unwrap();
    assert_eq!((a3.generation_id, b2.generation_id), (3, 3));
    assert_eq!(a3.members.len(), 2);
    assert!(a3.members.iter().any(|(id, _, _)| *id == b2.member_id));
}

/// The join phase ends at the rebalance timeout even when it is shorter than the session timeout: a member
/// that heartbeats but does not rejoin is dropped then (not after its session timeout).
#[test]
fn a_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout() {
    let c = coordinator();
    let slow = || JoinRequest {
        rebalance_timeout_ms: 100,
        session_timeout_ms: 30_000,
        ..join_req("")
    };
    let a = c.join(slow()).try_recv().unwrap();
    assert!(c
        .sync("g", (&a.member_id, None), 1, vec![])
        .try_recv()
        .unwrap()
        .is_ok());
    // (The group's rebalance timeout is the largest of its members'.)
    let mut b = c.join(slow());
    assert!(b.try_recv().is_err(), "waits for the first member");
    let deadline = Instant::now() + Duration::from_secs(10);
    let b = loop {
        // a keeps its session alive but never rejoins.
        assert_eq!(
            c.heartbeat("g", &a.member_id, None, 1),
            Err(GroupError::RebalanceInProgress)
        );
        c.tick();
        if let Ok(b) = b.try_recv() {
            break b;
        }
        assert!(
            Instant::now() < deadline,
            "the join phase outlived the rebalance timeout"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!((b.error, b.generation_id), (None, 2));
    assert_eq!(c.describe("g").members.len(), 1, "a was dropped");
}

#[test]
fn leave_of_the_last_member_empties_the_group() {
    let c = coordinator();
    let a = c.join(join_req("")).try_recv().unwrap();
    assert_eq!(c.leave("g", &a.member_id, None), Ok(()));
    assert_eq!(c.describe("g").state, "Empty");
    assert_eq!(
        c.leave("g", &a.member_id, None),
        Err(GroupError::UnknownMemberId {
            member: a.member_id.clone()
        })
    );
    assert_eq!(
        c.check_commit("g", "", None, -1),
        Ok(()),
        "admin commits allowed on an empty group"
    );
}

#[test]
fn unknown_member_and_bad_session_timeout_are_refused() {
    let c = coordinator();
    assert_eq!(
        c.join(join_req("ghost")).try_recv().unwrap().error,
        Some(GroupError::UnknownMemberId {
            member: "ghost".into()
        })
    );
    let mut r = join_req("");
    r.session_timeout_ms = 10;
    let refused = c.join(r).try_recv().unwrap().error;
    assert!(
        matches!(
            refused,
            Some(GroupError::InvalidSessionTimeout { timeout_ms: 10, .. })
        ),
        "{refused:?}"
    );
}

#[test]
fn expired_session_removes_the_member() {
    let c = coordinator();
    let a = c.join(join_req("")).try_recv().unwrap();
    {
        let mut groups = c.lock();
        let g = groups.get_mut("g").unwrap();
        g.members.get_mut(&a.member_id).unwrap().last_seen =
            Instant::now() - Duration::from_secs(60);
    }
    c.tick();
    assert_eq!(c.describe("g").state, "Empty");
    assert_eq!(
        c.heartbeat("g", &a.member_id, None, 1),
        Err(GroupError::UnknownMemberId {
            member: a.member_id.clone()
        })
    );
}

/// KIP-394: from JoinGroup v4 a new dynamic member first gets MEMBER_ID_REQUIRED with its id, and is only a
/// member once it joins with that id; leaving with the id before that just forgets it.
#[test]
fn a_new_member_must_join_again_with_the_member_id_it_is_given() {
    let c = coordinator();
    let first = c
        .join(JoinRequest {
            requires_known_member_id: true,
            ..join_req("")
        })
        .try_recv()
        .unwrap();
    assert!(
        matches!(&first.error, Some(GroupError::MemberIdRequired { member }) if *member == first.member_id),
        "{first:?}"
    );
    assert_eq!(c.describe("g").members.len(), 0, "not a member yet");
    let joined = c.join(join_req(&first.member_id)).try_recv().unwrap();
    assert_eq!((joined.error, joined.generation_id), (None, 1));
    assert_eq!(joined.member_id, first.member_id);
}

/// Kafka: a follower rejoining a Stable group with unchanged metadata gets the current generation back without
/// a rebalance; changed metadata (e.g. a cooperative member's owned partitions) starts one.
#[test]
fn a_follower_rejoining_with_the_same_metadata_does_not_rebalance() {
    let c = coordinator();
    let a = c.join(join_req("")).try_recv().unwrap();
    let mut b = c.join(join_req(""));
    let _ = c.join(join_req(&a.member_id)).try_recv().unwrap();
    let b = b.try_recv().unwrap();
    let mut sb = c.sync("g", (&b.member_id, None), 2, vec![]);
    c.sync("g", (&a.member_id, None), 2, vec![]);
    assert!(sb.try_recv().unwrap().is_ok());
    assert_eq!(c.describe("g").state, "Stable");
    let again = c.join(join_req(&b.member_id)).try_recv().unwrap();
    assert_eq!((again.error, again.generation_id), (None, 2));
    assert_eq!(c.describe("g").state, "Stable");
    let changed = JoinRequest {
        protocols: vec![("range".into(), Bytes::from_static(b"owned:p1"))],
        ..join_req(&b.member_id)
    };
    let mut pending = c.join(changed);
    assert!(
        pending.try_recv().is_err(),
        "waits for the leader to rejoin"
    );
    assert_eq!(c.describe("g").state, "PreparingRebalance");
}

/// Kafka's pending-sync expiry: a member that joined a generation but sends no SyncGroup within the rebalance
/// timeout is removed and the group rebalances.
#[test]
fn a_member_that_never_syncs_is_removed_at_the_rebalance_timeout() {
    let c = coordinator();
    let quick = JoinRequest {
        rebalance_timeout_ms: 50,
        ..join_req("")
    };
    let a = c.join(quick).try_recv().unwrap();
    assert_eq!(c.describe("g").state, "CompletingRebalance");
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.describe("g").state != "Empty" {
        assert!(Instant::now() < deadline, "the unsynced member stayed");
        c.tick();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        c.heartbeat("g", &a.member_id, None, 1),
        Err(GroupError::UnknownMemberId {
            member: a.member_id.clone()
        })
    );
}

/// Kafka's `validateOffsetCommit`: generation -1 commits only while the group is empty; a member of another
/// generation is ILLEGAL_GENERATION; commits wait out CompletingRebalance; an unknown group with a generation
/// is GROUP_ID_NOT_FOUND.
#[test]
fn commit_checks_follow_kafka() {
    let c = coordinator();
    assert_eq!(
        c.check_commit("nobody", "m", None, 3),
        Err(GroupError::GroupIdNotFound {
            group: "nobody".into()
        })
    );
    assert_eq!(c.check_commit("nobody", "", None, -1), Ok(()));
    let a = c.join(join_req("")).try_recv().unwrap();
    assert_eq!(
        c.check_commit("g", &a.member_id, None, 1),
        Err(GroupError::RebalanceInProgress),
        "CompletingRebalance"
    );
    assert!(c
        .sync("g", (&a.member_id, None), 1, vec![])
        .try_recv()
        .unwrap()
        .is_ok());
    assert_eq!(c.check_commit("g", &a.member_id, None, 1), Ok(()));
    assert_eq!(
        c.check_commit("g", "", None, -1),
        Err(GroupError::UnknownMemberId { member: "".into() }),
        "an outside commit to a group with members"
    );
    assert_eq!(
        c.check_commit("g", &a.member_id, None, 0),
        Err(GroupError::IllegalGeneration {
            generation: 0,
            current: 1
        })
    );
    assert_eq!(
        c.check_commit("g", &a.member_id, Some("nobody"), 1),
        Err(GroupError::UnknownMemberId {
            member: a.member_id.clone()
        }),
        "an instance id nobody holds"
    );
}

/// The stored record of a stable group loads as the same group: Stable, same generation, leader, members and
/// assignments; its members go on heartbeating.
#[test]
fn a_group_loaded_from_its_record_is_the_group_that_was_stored() {
    let c = coordinator();
    let a = c.join(static_join("", "i1")).try_recv().unwrap();
    let given = vec![(a.member_id.clone(), Bytes::from_static(b"p0"))];
    assert!(c
        .sync("g", (&a.member_id, Some("i1")), 1, given)
        .try_recv()
        .unwrap()
        .is_ok());
    let (_, value) = c
        .offsets
        .stored_groups()
        .into_iter()
        .find(|(id, _)| id == "g")
        .expect("a completed generation is stored before it is answered");
    let loaded = Group::from_record(record::decode_value(value).unwrap(), Instant::now());
    assert_eq!(loaded.state, GroupState::Stable);
    assert_eq!(loaded.generation, 1);
    assert_eq!(loaded.leader.as_deref(), Some(a.member_id.as_str()));
    let m = &loaded.members[&a.member_id];
    assert_eq!(m.instance_id.as_deref(), Some("i1"));
    assert_eq!(m.assignment, Bytes::from_static(b"p0"));
    assert_eq!(m.metadata("range"), Bytes::from_static(b"meta"));

    let c2 = coordinator();
    c2.lock().insert("g".into(), loaded);
    assert_eq!(c2.heartbeat("g", &a.member_id, Some("i1"), 1), Ok(()));
}

/// Kafka's InitialDelayedJoin: each member arriving during `group.initial.rebalance.delay.ms` extends the wait by
/// another delay (up to the rebalance timeout).
#[test]
fn members_arriving_during_the_initial_delay_extend_it() {
    let mut cfg = BrokerConfig::default();
    cfg.group_initial_rebalance_delay_ms = 200;
    let c = GroupCoordinator::new(&cfg, OffsetStore::in_memory());
    let started = Instant::now();
    let mut a = c.join(join_req(""));
    std::thread::sleep(Duration::from_millis(150));
    let mut b = c.join(join_req(""));
    let deadline = Instant::now() + Duration::from_secs(10);
    let a = loop {
        c.tick();
        if let Ok(r) = a.try_recv() {
            break r;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "extended once: {:?}",
        started.elapsed()
    );
    let b = b.try_recv().unwrap();
    assert_eq!((a.generation_id, b.generation_id), (1, 1));
}

/// A coordinator whose every `__consumer_offsets` write fails (no log: UNKNOWN_TOPIC_OR_PARTITION).
fn coordinator_failing_writes() -> GroupCoordinator {
    GroupCoordinator::new(&config(), OffsetStore::default())
}

/// Kafka's coordinator answers a leader's SyncGroup only once the group is stored with its assignment; a failed
/// write is answered with `appendGroupMetadataErrorToResponseError` of the append error (here
/// COORDINATOR_NOT_AVAILABLE for a missing partition), no assignment is kept and the group rebalances.
#[test]
fn a_sync_whose_assignment_cannot_be_stored_is_refused_and_the_group_rebalances() {
    let c = coordinator_failing_writes();
    let a = c.join(join_req("")).try_recv().unwrap();
    let given = vec![(a.member_id.clone(), Bytes::from_static(b"all"))];
    let refused = c
        .sync("g", (&a.member_id, None), 1, given)
        .try_recv()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(refused, GroupError::StoreFailed { .. }),
        "{refused:?}"
    );
    assert_eq!(crate::error_code::group_code(&refused), 15);
    {
        let groups = c.lock();
        let g = &groups["g"];
        assert_eq!(g.state, GroupState::PreparingRebalance);
        assert!(g.members[&a.member_id].assignment.is_empty());
    }
    assert_eq!(
        c.heartbeat("g", &a.member_id, None, 1),
        Err(GroupError::RebalanceInProgress)
    );
    assert!(c.offsets.stored_groups().is_empty());
}

/// A KIP-848 heartbeat whose records cannot be written is undone (Kafka reverts its coordinator to the last
/// written state) and answered with the mapped append error: the joining member is not in the group.
#[test]
fn a_consumer_heartbeat_that_cannot_be_stored_is_undone() {
    let c = coordinator_failing_writes();
    let topics = std::collections::BTreeMap::from([("t".to_string(), 2)]);
    let hb = consumer::Heartbeat {
        group_id: "g".into(),
        member_id: "m".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        subscribed_topic_names: Some(vec!["t".into()]),
        ..Default::default()
    };
    let refused = c.consumer_heartbeat(hb, &topics).unwrap_err();
    assert_eq!(crate::error_code::group_code(&refused), 15, "{refused:?}");
    assert!(
        c.with_consumer_group("g", |_| ()).is_none(),
        "the group the heartbeat created is gone"
    );
    assert!(c.offsets.stored_consumer_records().is_empty());
}

fn entry(offset: i64, commit_timestamp: i64) -> OffsetEntry {
    OffsetEntry {
        offset,
        leader_epoch: -1,
        metadata: String::new(),
        commit_timestamp,
    }
}

/// KIP-211: a group's offsets expire `offsets.retention.minutes` after the group became Empty (not after the
/// commit), never while it has members; the group is removed with its last offset.
#[test]
fn offsets_of_a_group_expire_only_after_it_has_been_empty_for_the_retention() {
    const RETENTION: i64 = 60_000;
    let c = coordinator();
    let a = c.join(join_req("")).try_recv().unwrap();
    assert!(c
        .sync("g", (&a.member_id, None), 1, vec![])
        .try_recv()
        .unwrap()
        .is_ok());
    let tp: Tp = ("t".into(), 0);
    c.commit_offsets(
        "g",
        (&a.member_id, None),
        1,
        vec![(tp.clone(), entry(7, 1000))],
    )
    .unwrap();
    assert_eq!(
        c.expire_offsets(i64::MAX / 2, RETENTION).unwrap(),
        0,
        "members"
    );
    assert_eq!(c.committed("g", "t", 0).map(|e| e.offset), Some(7));
    c.leave("g", &a.member_id, None).unwrap();
    let empty_since = c.lock().get("g").unwrap().state_since_ms;
    assert_eq!(
        c.expire_offsets(empty_since + RETENTION - 1, RETENTION)
            .unwrap(),
        0,
        "the commit is old but the group became empty less than the retention ago"
    );
    assert!(c.group_exists("g"));
    assert_eq!(
        c.expire_offsets(empty_since + RETENTION, RETENTION)
            .unwrap(),
        1
    );
    assert_eq!(c.committed("g", "t", 0), None);
    assert!(
        !c.group_exists("g"),
        "an Empty group without offsets is removed"
    );
}

/// A group with only committed offsets (generation -1 commits, no members) expires each offset its retention
/// after its own commit.
#[test]
fn offsets_of_a_group_without_members_expire_after_their_commit() {
    const RETENTION: i64 = 60_000;
    let c = coordinator();
    c.commit_offsets(
        "solo",
        ("", None),
        -1,
        vec![
            (("t".into(), 0), entry(1, 5000)),
            (("t".into(), 1), entry(2, 9000)),
        ],
    )
    .unwrap();
    assert_eq!(
        c.expire_offsets(5000 + RETENTION - 1, RETENTION).unwrap(),
        0
    );
    assert_eq!(c.expire_offsets(5000 + RETENTION, RETENTION).unwrap(), 1);
    assert_eq!(c.committed("solo", "t", 0), None);
    assert_eq!(c.committed("solo", "t", 1).map(|e| e.offset), Some(2));
    assert_eq!(c.expire_offsets(9000 + RETENTION, RETENTION).unwrap(), 1);
    assert!(c.committed_all("solo").is_empty());
}
