//! JoinGroup as Kafka's classic coordinator answers it: new dynamic members (KIP-394: MEMBER_ID_REQUIRED first
//! from v4), new and replacing static members (KIP-345), and known members rejoining in each state.

use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::state::{Group, GroupState, JoinResult, Member};
use super::{unknown_member, valid_group_id, GroupCoordinator, JoinRequest};
use crate::error::GroupError;

type Waiter = oneshot::Sender<JoinResult>;

fn refuse(tx: Waiter, error: GroupError, member_id: &str) {
    let _ = tx.send(JoinResult::error(error, member_id));
}

impl GroupCoordinator {
    /// Joins (or rejoins) a member; the receiver completes when the rebalance does.
    pub fn join(&self, req: JoinRequest) -> oneshot::Receiver<JoinResult> {
        let (tx, rx) = oneshot::channel();
        let now = Instant::now();
        if !valid_group_id(&req.group_id) {
            let bad = GroupError::InvalidGroupId(req.group_id.clone());
            refuse(tx, bad, &req.member_id);
            return rx;
        }
        if req.session_timeout_ms < self.min_session_ms
            || req.session_timeout_ms > self.max_session_ms
        {
            let bad = GroupError::InvalidSessionTimeout {
                timeout_ms: req.session_timeout_ms,
                min_ms: self.min_session_ms,
                max_ms: self.max_session_ms,
            };
            refuse(tx, bad, &req.member_id);
            return rx;
        }
        if self.is_consumer_group(&req.group_id) {
            // A KIP-848 group is refused to classic members (Kafka with group.consumer.migration.policy=disabled).
            let other = GroupError::WrongGroupType {
                group: req.group_id.clone(),
                wanted: "classic",
            };
            refuse(tx, other, &req.member_id);
            return rx;
        }
        let mut groups = self.lock();
        // A member id for a group that does not exist: UNKNOWN_MEMBER_ID (the group is not created).
        if !req.member_id.is_empty() && !groups.contains_key(&req.group_id) {
            refuse(tx, unknown_member(&req.member_id), &req.member_id);
            return rx;
        }
        let group = groups.entry(req.group_id.clone()).or_default();
        if !group.supports(&req.protocol_type, &req.protocols) {
            let bad = GroupError::InconsistentGroupProtocol {
                member: req.member_id.clone(),
                protocol_type: req.protocol_type.clone(),
            };
            refuse(tx, bad, &req.member_id);
            return rx;
        }
        if !req.member_id.is_empty() {
            self.join_existing(group, req, tx, now);
        } else if req.instance_id.is_some() {
            self.join_new_static(group, req, tx, now);
        } else {
            self.join_new_dynamic(group, req, tx, now);
        }
        rx
    }

    /// Kafka's `acceptJoiningMember` for a member not yet in the group: `group.max.size` counts the members
    /// (in PreparingRebalance, those that have rejoined).
    fn accepts_new_member(&self, group: &Group) -> bool {
        let counted = match group.state {
            GroupState::Empty => return true,
            GroupState::PreparingRebalance => group
                .members
                .values()
                .filter(|m| m.join_waiter.is_some())
                .count(),
            _ => group.members.len(),
        };
        counted < self.max_size
    }

    fn join_new_dynamic(&self, group: &mut Group, req: JoinRequest, tx: Waiter, now: Instant) {
        if !self.accepts_new_member(group) {
            let full = GroupError::GroupMaxSizeReached { max: self.max_size };
            refuse(tx, full, "");
            return;
        }
        let member_id = format!("{}-{}", req.client_id, uuid::Uuid::new_v4());
        if req.requires_known_member_id {
            // KIP-394 (JoinGroup v4+): the member is told its id and joins again with it; an id not used within
            // the session timeout is forgotten.
            let expires = now + Duration::from_millis(req.session_timeout_ms.max(0) as u64);
            group.pending.insert(member_id.clone(), expires);
            let required = GroupError::MemberIdRequired {
                member: member_id.clone(),
            };
            refuse(tx, required, &member_id);
            return;
        }
        self.add_member_and_rebalance(group, member_id, req, tx, now);
    }

    fn join_new_static(&self, group: &mut Group, req: JoinRequest, tx: Waiter, now: Instant) {
        let inst = req.instance_id.clone().unwrap_or_default();
        let Some(old) = group.static_member(&inst).map(str::to_string) else {
            if !self.accepts_new_member(group) {
                let full = GroupError::GroupMaxSizeReached { max: self.max_size };
                refuse(tx, full, "");
                return;
            }
            let member_id = format!("{inst}-{}", uuid::Uuid::new_v4());
            self.add_member_and_rebalance(group, member_id, req, tx, now);
            return;
        };
        // KIP-345: a join without a member id under a known instance id takes over the old member's entry (a
        // restarted or duplicate instance); the old member id is fenced from then on.
        let new = format!("{inst}-{}", uuid::Uuid::new_v4());
        tracing::info!(
            group = %req.group_id, instance = %inst, old = %old, new = %new,
            "static member replaced; the old member id is fenced"
        );
        let leader_before = group.leader.clone();
        group.replace_static_member(&old, &new);
        let supports_skip_assignment = req.supports_skip_assignment;
        update_member(group, &new, req, tx, now);
        if group.state == GroupState::Stable {
            // A replaced static member of a stable group gets the current generation at once, with no rebalance,
            // unless its protocols change the group's choice (as Kafka). The group is stored with the new id.
            let leader = group.leader.clone().unwrap_or_default();
            if group.select_protocol(&leader) == group.protocol_name {
                group.dirty = true;
                // A replaced leader learns it leads only if it can skip the assignment (v9): an older client
                // would run its assignor (with side effects) for an assignment the stable group never hands
                // out, so it is answered as a follower with the leader id from before the replacement.
                let mut answer = group.current_join_result(&new);
                if leader == new {
                    if supports_skip_assignment {
                        answer.skip_assignment = true;
                    } else {
                        answer.leader = leader_before.unwrap_or_default();
                        answer.members.clear();
                    }
                }
                let m = group.members.get_mut(&new).expect("inserted above");
                if let Some(w) = m.join_waiter.take() {
                    let _ = w.send(answer);
                }
                return;
            }
        }
        group.prepare_rebalance(now, self.initial_delay);
        group.maybe_complete_join(now);
    }

    fn join_existing(&self, group: &mut Group, req: JoinRequest, tx: Waiter, now: Instant) {
        let member_id = req.member_id.clone();
        if group.pending.remove(&member_id).is_some() {
            // KIP-394: the second join of a new member, with the id it was given.
            if !self.accepts_new_member(group) {
                let full = GroupError::GroupMaxSizeReached { max: self.max_size };
                refuse(tx, full, &member_id);
                return;
            }
            self.add_member_and_rebalance(group, member_id, req, tx, now);
            return;
        }
        if let Err(e) = group.validate_member(&member_id, req.instance_id.as_deref()) {
            refuse(tx, e, &member_id);
            return;
        }
        let known = group.members.get(&member_id).expect("validated");
        let same_protocols = known.protocols == req.protocols;
        let is_leader = group.leader.as_deref() == Some(member_id.as_str());
        match group.state {
            GroupState::CompletingRebalance if same_protocols => {
                // The member lost its join answer: the current generation's again (Kafka).
                let _ = tx.send(group.current_join_result(&member_id));
            }
            GroupState::Stable if same_protocols && !is_leader => {
                // A follower rejoining with unchanged metadata does not start a rebalance (Kafka).
                let m = group.members.get_mut(&member_id).expect("validated");
                m.last_seen = now;
                let _ = tx.send(group.current_join_result(&member_id));
            }
            GroupState::Empty => refuse(tx, unknown_member(&member_id), &member_id),
            _ => {
                update_member(group, &member_id, req, tx, now);
                group.prepare_rebalance(now, self.initial_delay);
                group.maybe_complete_join(now);
            }
        }
    }

    fn add_member_and_rebalance(
        &self,
        group: &mut Group,
        member_id: String,
        req: JoinRequest,
        tx: Waiter,
        now: Instant,
    ) {
        if group.members.is_empty() {
            group.protocol_type = Some(req.protocol_type.clone());
        }
        group.members.insert(
            member_id.clone(),
            Member {
                id: member_id.clone(),
                instance_id: req.instance_id.clone(),
                client_id: req.client_id.clone(),
                client_host: req.client_host.clone(),
                session_timeout: Duration::ZERO,
                rebalance_timeout: Duration::ZERO,
                protocols: Vec::new(),
                assignment: bytes::Bytes::new(),
                last_seen: now,
                join_waiter: None,
                sync_waiter: None,
                pending_sync: false,
            },
        );
        update_member(group, &member_id, req, tx, now);
        group.prepare_rebalance(now, self.initial_delay);
        // Counted after the delay started: a member joining an empty group starts it, later ones extend it.
        if group.state == GroupState::PreparingRebalance && group.members.len() > 1 {
            group.new_member_added = true;
        }
        group.maybe_complete_join(now);
    }
}

/// Updates a member from its JoinGroup and parks the answer until the join phase completes.
fn update_member(group: &mut Group, member_id: &str, req: JoinRequest, tx: Waiter, now: Instant) {
    let Some(member) = group.members.get_mut(member_id) else {
        refuse(tx, unknown_member(member_id), member_id);
        return;
    };
    member.session_timeout = Duration::from_millis(req.session_timeout_ms.max(0) as u64);
    // The join phase waits at most the group's largest rebalance timeout (JoinGroup v0 has none: the handler
    // passes the session timeout, as Kafka does), then drops members that did not rejoin.
    member.rebalance_timeout = Duration::from_millis(req.rebalance_timeout_ms.max(0) as u64);
    member.protocols = req.protocols;
    member.client_id = req.client_id;
    member.client_host = req.client_host;
    member.last_seen = now;
    if let Some(old) = member.join_waiter.replace(tx) {
        // A second join of the same member id replaces the pending one.
        refuse(old, unknown_member(member_id), member_id);
    }
}
