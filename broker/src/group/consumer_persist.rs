//! KIP-848 consumer groups to and from their `__consumer_offsets` records ([`super::consumer_record`]), as
//! Kafka's `GroupCoordinatorRecordHelpers` writes them and its `GroupMetadataManager.replay` reads them back.
//!
//! A group is stored as the full set of its live records; the offset store writes only what differs from what it
//! holds (new or changed values, tombstones for keys that went), so a heartbeat that changes nothing writes
//! nothing, a member that leaves is three tombstones and a deleted group tombstones every key.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use bytes::Bytes;
use uuid::Uuid;

use super::consumer::{Assignment, ConsumerGroup, ConsumerMember};
use super::consumer_record::{
    self as rec, key, member_state, ConsumerKey, CurrentAssignment, MemberMetadata, TopicPartitions,
};

/// Topic name ↔ id, from the broker's topics.
pub trait TopicIds {
    /// The id of topic `name`, if it exists.
    fn id_of(&self, name: &str) -> Option<Uuid>;
    /// The name of topic `id`, if it exists.
    fn name_of(&self, id: Uuid) -> Option<String>;
}

fn by_id(a: &Assignment, ids: &dyn TopicIds) -> TopicPartitions {
    a.iter()
        .filter(|(_, ps)| !ps.is_empty())
        .filter_map(|(t, ps)| Some((ids.id_of(t)?, ps.clone())))
        .collect()
}

fn by_name(tps: TopicPartitions, ids: &dyn TopicIds) -> Assignment {
    // Partitions of a topic deleted meanwhile are dropped, as Kafka drops them from assignments.
    tps.into_iter()
        .filter(|(_, ps)| !ps.is_empty())
        .filter_map(|(id, ps)| Some((ids.name_of(id)?, ps)))
        .collect()
}

fn split(m: &ConsumerMember, target: &Assignment) -> (Assignment, Assignment) {
    let (mut kept, mut revoking) = (Assignment::new(), Assignment::new());
    for (t, ps) in &m.assigned {
        for p in ps {
            let side = if target.get(t).is_some_and(|x| x.contains(p)) {
                &mut kept
            } else {
                &mut revoking
            };
            side.entry(t.clone()).or_default().insert(*p);
        }
    }
    (kept, revoking)
}

/// Every live record of `group` (key → value).
pub fn records_of(group_id: &str, g: &ConsumerGroup, ids: &dyn TopicIds) -> BTreeMap<Bytes, Bytes> {
    let mut out = BTreeMap::new();
    let mut put = |k: ConsumerKey, v: Bytes| {
        out.insert(k.encode(), v);
    };
    put(
        ConsumerKey::group(key::GROUP_METADATA, group_id),
        rec::encode_epoch(g.epoch),
    );
    let topics: Vec<(Uuid, String, i32)> = g
        .topics_seen
        .iter()
        .filter_map(|(t, n)| Some((ids.id_of(t)?, t.clone(), *n)))
        .collect();
    put(
        ConsumerKey::group(key::PARTITION_METADATA, group_id),
        rec::encode_partition_metadata(&topics),
    );
    put(
        ConsumerKey::group(key::TARGET_ASSIGNMENT_METADATA, group_id),
        rec::encode_epoch(g.assignment_epoch),
    );
    let empty = Assignment::new();
    for (id, m) in &g.members {
        let meta = MemberMetadata {
            instance_id: m.instance_id.clone(),
            rack_id: m.rack_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            subscribed_topic_names: m.topics.clone(),
            subscribed_topic_regex: m.regex.clone(),
            rebalance_timeout_ms: m.rebalance_timeout_ms,
            server_assignor: m.assignor.clone(),
        };
        put(
            ConsumerKey::member(key::MEMBER_METADATA, group_id, id),
            rec::encode_member(&meta),
        );
        let target = g.target.get(id).unwrap_or(&empty);
        put(
            ConsumerKey::member(key::TARGET_ASSIGNMENT_MEMBER, group_id, id),
            rec::encode_target(&by_id(target, ids)),
        );
        let (kept, revoking) = split(m, target);
        let state = if !revoking.is_empty() {
            member_state::UNREVOKED_PARTITIONS
        } else if kept != *target || m.epoch != g.assignment_epoch {
            member_state::UNRELEASED_PARTITIONS
        } else {
            member_state::STABLE
        };
        put(
            ConsumerKey::member(key::CURRENT_MEMBER_ASSIGNMENT, group_id, id),
            rec::encode_current(&CurrentAssignment {
                member_epoch: m.epoch,
                previous_member_epoch: m.previous_epoch,
                state,
                assigned: by_id(&kept, ids),
                pending_revocation: by_id(&revoking, ids),
            }),
        );
    }
    out
}

/// Rebuilds a group from its replayed records; members' sessions (and a pending revocation's rebalance timeout)
/// start at `now`, as Kafka's `onLoaded` schedules them. `default_assignor`: the broker's first assignor. Records
/// that cannot be read are skipped with a warning; a member without its metadata record is dropped.
pub fn group_from_records(
    group_id: &str,
    records: &BTreeMap<Bytes, Bytes>,
    ids: &dyn TopicIds,
    default_assignor: &str,
    now: Instant,
) -> ConsumerGroup {
    let mut g = ConsumerGroup::default();
    let mut targets: BTreeMap<String, Assignment> = BTreeMap::new();
    let mut currents: BTreeMap<String, CurrentAssignment> = BTreeMap::new();
    for (k, v) in records {
        let Some(k) = ConsumerKey::decode(k.clone()) else {
            continue;
        };
        let member = k.member.clone().unwrap_or_default();
        let ok = match k.version {
            key::GROUP_METADATA => rec::decode_epoch(v.clone()).map(|e| g.epoch = e),
            key::TARGET_ASSIGNMENT_METADATA => {
                rec::decode_epoch(v.clone()).map(|e| g.assignment_epoch = e)
            }
            key::PARTITION_METADATA => rec::decode_partition_metadata(v.clone()).map(|ts| {
                // The current name of each topic (by id): one deleted and recreated is a new topic.
                g.topics_seen = ts
                    .into_iter()
                    .filter_map(|(id, _, n)| Some((ids.name_of(id)?, n)))
                    .collect();
            }),
            key::MEMBER_METADATA => rec::decode_member(v.clone()).map(|m| {
                g.members.insert(
                    member.clone(),
                    ConsumerMember {
                        id: member.clone(),
                        instance_id: m.instance_id,
                        rack_id: m.rack_id,
                        client_id: m.client_id,
                        client_host: m.client_host,
                        epoch: 0,
                        previous_epoch: -1,
                        topics: m.subscribed_topic_names,
                        regex: m.subscribed_topic_regex,
                        regex_topics: None,
                        assignor: m.server_assignor,
                        rebalance_timeout_ms: m.rebalance_timeout_ms.max(0),
                        assigned: Assignment::new(),
                        sent: None,
                        last_seen: now,
                        revoking_since: None,
                    },
                );
            }),
            key::TARGET_ASSIGNMENT_MEMBER => rec::decode_target(v.clone()).map(|t| {
                targets.insert(member.clone(), by_name(t, ids));
            }),
            key::CURRENT_MEMBER_ASSIGNMENT => rec::decode_current(v.clone()).map(|c| {
                currents.insert(member.clone(), c);
            }),
            _ => Some(()),
        };
        if ok.is_none() {
            tracing::warn!(group = group_id, version = k.version, member = ?k.member,
                "unreadable consumer group record skipped");
        }
    }
    for (id, c) in currents {
        let Some(m) = g.members.get_mut(&id) else {
            continue;
        };
        m.epoch = c.member_epoch;
        m.previous_epoch = c.previous_member_epoch;
        let mut assigned = by_name(c.assigned, ids);
        for (t, ps) in by_name(c.pending_revocation, ids) {
            assigned.entry(t).or_default().extend(ps);
        }
        m.assigned = assigned;
    }
    g.target = targets
        .into_iter()
        .filter(|(id, _)| g.members.contains_key(id))
        .collect();
    // The stored target already holds what the members' regexes resolved to (Kafka keeps the resolutions).
    g.resolve_regexes();
    for m in g.members.values_mut() {
        let target = g.target.get(&m.id);
        let revoking = m.assigned.iter().any(|(t, ps)| {
            let kept: BTreeSet<i32> = target.and_then(|x| x.get(t)).cloned().unwrap_or_default();
            !ps.is_subset(&kept)
        });
        m.revoking_since = revoking.then_some(now);
    }
    g.assignor = g
        .members
        .values()
        .find_map(|m| m.assignor.clone())
        .unwrap_or_else(|| default_assignor.to_string());
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::consumer::Heartbeat;

    struct Ids;
    impl TopicIds for Ids {
        fn id_of(&self, name: &str) -> Option<Uuid> {
            (name != "gone").then(|| Uuid::from_u128(name.len() as u128))
        }
        fn name_of(&self, id: Uuid) -> Option<String> {
            Some("t".repeat(id.as_u128() as usize))
        }
    }

    fn hb(member: &str, epoch: i32) -> Heartbeat {
        Heartbeat {
            group_id: "g".into(),
            member_id: member.into(),
            member_epoch: epoch,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["t".into()]),
            ..Default::default()
        }
    }

    /// A group rebuilt from its records has the same epochs, members, targets and assignments, so its members'
    /// next heartbeats (with their epochs) change nothing: no epoch bump, no reassignment.
    #[test]
    fn a_group_rebuilt_from_its_records_continues_where_it_was() {
        let topics = BTreeMap::from([("t".to_string(), 4)]);
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        let a = g.heartbeat(hb("a", 0), &topics, "uniform", now).unwrap();
        let b = g.heartbeat(hb("b", 0), &topics, "uniform", now).unwrap();
        // a revokes half of its partitions (it reports owning only what it keeps), b then gets them.
        let a_keeps = g.target["a"].clone();
        let mut hb_a = hb("a", a.member_epoch);
        hb_a.owned = Some(a_keeps.clone());
        let a = g.heartbeat(hb_a, &topics, "uniform", now).unwrap();
        let mut hb_b = hb("b", b.member_epoch);
        hb_b.owned = Some(Assignment::new());
        let b = g.heartbeat(hb_b, &topics, "uniform", now).unwrap();
        assert_eq!(g.state(), "Stable");

        let recs = records_of("g", &g, &Ids);
        assert_eq!(recs.len(), 3 + 2 * 3);
        let mut back = group_from_records("g", &recs, &Ids, "uniform", now);
        assert_eq!(back.epoch, g.epoch);
        assert_eq!(back.assignment_epoch, g.assignment_epoch);
        assert_eq!(back.target, g.target);
        assert_eq!(back.topics_seen, g.topics_seen);
        for (id, m) in &g.members {
            let n = &back.members[id];
            assert_eq!(
                (n.epoch, n.previous_epoch, &n.assigned),
                (m.epoch, m.previous_epoch, &m.assigned)
            );
            assert_eq!(
                (&n.topics, n.rebalance_timeout_ms),
                (&m.topics, m.rebalance_timeout_ms)
            );
        }
        assert_eq!(back.state(), "Stable");
        let epoch = back.epoch;
        let mut hb_a = hb("a", a.member_epoch);
        hb_a.owned = Some(a_keeps.clone());
        let again = back.heartbeat(hb_a, &topics, "uniform", now).unwrap();
        assert_eq!(again.member_epoch, a.member_epoch);
        assert_eq!(
            again.assignment,
            Some(a_keeps),
            "the same partitions, told again"
        );
        let again = back
            .heartbeat(hb("b", b.member_epoch), &topics, "uniform", now)
            .unwrap();
        assert_eq!(again.member_epoch, b.member_epoch);
        assert_eq!(back.epoch, epoch, "no rebalance after the reload");
        assert_eq!(records_of("g", &back, &Ids), recs);
    }

    /// A member that left has no records any more (the store tombstones its three keys); the group keeps its
    /// epoch and target records.
    #[test]
    fn a_member_that_left_has_no_records() {
        let topics = BTreeMap::from([("t".to_string(), 2)]);
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        g.heartbeat(hb("a", 0), &topics, "uniform", now).unwrap();
        g.heartbeat(hb("a", -1), &topics, "uniform", now).unwrap();
        let recs = records_of("g", &g, &Ids);
        assert_eq!(recs.len(), 3);
        assert!(recs
            .keys()
            .all(|k| ConsumerKey::decode(k.clone()).unwrap().member.is_none()));
    }
}
