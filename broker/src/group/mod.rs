//! The group coordinator for the classic protocol: JoinGroup / SyncGroup / Heartbeat / LeaveGroup with session
//! and rebalance timeouts, and committed offsets in `__consumer_offsets`.

pub mod offsets;
pub mod state;
pub mod txn_offsets;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use crate::config::BrokerConfig;
use crate::error::{GroupError, Result};
use offsets::{OffsetEntry, OffsetStore, Tp};
use state::{Group, GroupState, JoinResult, Member, SyncResult};

/// A JoinGroup request, decoded from any version.
#[derive(Debug)]
pub struct JoinRequest {
    /// Group id.
    pub group_id: String,
    /// Member id ("" for a new member).
    pub member_id: String,
    /// Static membership id.
    pub instance_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// Session timeout (ms).
    pub session_timeout_ms: i32,
    /// Rebalance timeout (ms).
    pub rebalance_timeout_ms: i32,
    /// Protocol type.
    pub protocol_type: String,
    /// (name, metadata) in preference order.
    pub protocols: Vec<(String, Bytes)>,
    /// JoinGroup v9+ (KIP-814): the client can be told to skip the assignment as leader.
    pub supports_skip_assignment: bool,
}

/// A group's description for DescribeGroups.
#[derive(Debug)]
pub struct GroupDescription {
    /// State name.
    pub state: &'static str,
    /// Protocol type.
    pub protocol_type: String,
    /// Chosen protocol.
    pub protocol: String,
    /// (member id, instance id, client id, host, metadata, assignment).
    pub members: Vec<(String, Option<String>, String, String, Bytes, Bytes)>,
}

/// Whether a group id can be stored: non-empty and at most i16::MAX bytes (the `__consumer_offsets` key
/// stores it with an i16 length). Others get INVALID_GROUP_ID.
pub fn valid_group_id(group: &str) -> bool {
    !group.is_empty() && group.len() <= i16::MAX as usize
}

/// The coordinator: every group of this broker.
#[derive(Debug)]
pub struct GroupCoordinator {
    groups: Mutex<HashMap<String, Group>>,
    offsets: std::sync::Arc<OffsetStore>,
    initial_delay: Duration,
    min_session_ms: i32,
    max_session_ms: i32,
    max_size: usize,
}

impl GroupCoordinator {
    /// An empty coordinator configured from the broker config, storing committed offsets in `offsets`.
    pub fn new(c: &BrokerConfig, offsets: impl Into<std::sync::Arc<OffsetStore>>) -> Self {
        GroupCoordinator {
            groups: Mutex::new(HashMap::new()),
            offsets: offsets.into(),
            initial_delay: Duration::from_millis(c.group_initial_rebalance_delay_ms),
            min_session_ms: c.group_min_session_timeout_ms,
            max_session_ms: c.group_max_session_timeout_ms,
            max_size: c.group_max_size,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Group>> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The offset store (shared with the transaction coordinator, whose markers make transactional offsets
    /// visible).
    pub fn offset_store(&self) -> &std::sync::Arc<OffsetStore> {
        &self.offsets
    }

    /// Replays committed offsets. Blocking.
    pub fn load_offsets(&self) -> Result<()> {
        self.offsets.load()
    }

    /// Removes every group's committed offsets of a deleted topic. Blocking.
    pub fn delete_topic_offsets(&self, topic: &str) -> Result<()> {
        self.offsets.delete_topic(topic)
    }

    /// Joins (or rejoins) a member; the receiver completes when the rebalance does.
    pub fn join(&self, req: JoinRequest) -> oneshot::Receiver<JoinResult> {
        let (tx, rx) = oneshot::channel();
        let now = Instant::now();
        if !valid_group_id(&req.group_id) {
            let _ = tx.send(JoinResult::error(
                GroupError::InvalidGroupId(req.group_id.clone()),
                &req.member_id,
            ));
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
            let _ = tx.send(JoinResult::error(bad, &req.member_id));
            return rx;
        }
        let mut groups = self.lock();
        let group = groups.entry(req.group_id.clone()).or_default();
        if !group.supports(&req.protocol_type, &req.protocols) {
            let bad = GroupError::InconsistentGroupProtocol {
                member: req.member_id.clone(),
                protocol_type: req.protocol_type.clone(),
            };
            let _ = tx.send(JoinResult::error(bad, &req.member_id));
            return rx;
        }
        // Static membership (KIP-345): a join without a member id under a known instance id takes over the old
        // member's entry (a restarted or duplicate instance); the old member id is fenced from then on.
        let mut member_id = req.member_id.clone();
        let mut replaced = false;
        let leader_before = group.leader.clone();
        if let Some(inst) = &req.instance_id {
            if let Some(old) = group.static_member(inst).map(str::to_string) {
                if member_id.is_empty() {
                    let new = format!("{inst}-{}", uuid::Uuid::new_v4());
                    tracing::info!(
                        group = %req.group_id, instance = %inst, old = %old, new = %new,
                        "static member replaced; the old member id is fenced"
                    );
                    group.replace_static_member(&old, &new);
                    member_id = new;
                    replaced = true;
                } else if member_id != old {
                    let fenced = GroupError::FencedInstanceId {
                        member: member_id.clone(),
                    };
                    let _ = tx.send(JoinResult::error(fenced, &member_id));
                    return rx;
                }
            }
        }
        if member_id.is_empty() {
            if group.members.len() >= self.max_size {
                let full = GroupError::GroupMaxSizeReached { max: self.max_size };
                let _ = tx.send(JoinResult::error(full, ""));
                return rx;
            }
            member_id = format!("{}-{}", req.client_id, uuid::Uuid::new_v4());
        } else if !group.members.contains_key(&member_id) {
            let unknown = GroupError::UnknownMemberId {
                member: member_id.clone(),
            };
            let _ = tx.send(JoinResult::error(unknown, &member_id));
            return rx;
        }
        if group.members.is_empty() {
            group.protocol_type = Some(req.protocol_type.clone());
        }
        let member = group
            .members
            .entry(member_id.clone())
            .or_insert_with(|| Member {
                id: member_id.clone(),
                instance_id: req.instance_id.clone(),
                client_id: req.client_id.clone(),
                client_host: req.client_host.clone(),
                session_timeout: Duration::ZERO,
                rebalance_timeout: Duration::ZERO,
                protocols: Vec::new(),
                assignment: Bytes::new(),
                last_seen: now,
                join_waiter: None,
                sync_waiter: None,
            });
        member.session_timeout = Duration::from_millis(req.session_timeout_ms.max(0) as u64);
        // The join phase waits at most the group's largest rebalance timeout (JoinGroup v0 has none: the handler
        // passes the session timeout, as Kafka does), then drops members that did not rejoin.
        member.rebalance_timeout = Duration::from_millis(req.rebalance_timeout_ms.max(0) as u64);
        member.protocols = req.protocols;
        member.last_seen = now;
        if let Some(old) = member.join_waiter.replace(tx) {
            // A second join of the same member id replaces the pending one.
            let replaced = GroupError::UnknownMemberId {
                member: member_id.clone(),
            };
            let _ = old.send(JoinResult::error(replaced, &member_id));
        }
        if replaced && group.state == GroupState::Stable {
            // A replaced static member of a stable group gets the current generation at once, with no rebalance,
            // unless its protocols change the group's choice (as Kafka).
            let leader = group.leader.clone().unwrap_or_default();
            if group.select_protocol(&leader) == group.protocol_name {
                let protocol = group.protocol_name.clone().unwrap_or_default();
                // A replaced leader learns it leads only if it can skip the assignment (v9): an older client
                // would run its assignor (with side effects) for an assignment the stable group never hands
                // out, so it is answered as a follower with the leader id from before the replacement.
                let is_leader = leader == member_id && req.supports_skip_assignment;
                let (leader, members) = if is_leader {
                    (leader, group.member_metadata(&protocol))
                } else if leader == member_id {
                    (leader_before.unwrap_or_default(), Vec::new())
                } else {
                    (leader, Vec::new())
                };
                let m = group.members.get_mut(&member_id).expect("inserted above");
                if let Some(w) = m.join_waiter.take() {
                    let _ = w.send(JoinResult {
                        error: None,
                        generation_id: group.generation,
                        protocol_type: group.protocol_type.clone(),
                        protocol_name: group.protocol_name.clone(),
                        leader,
                        member_id: member_id.clone(),
                        members,
                        skip_assignment: is_leader,
                    });
                }
                return rx;
            }
        }
        group.prepare_rebalance(now, self.initial_delay);
        group.maybe_complete_join(now);
        rx
    }

    /// SyncGroup: the leader hands out assignments; everyone receives theirs.
    pub fn sync(
        &self,
        group_id: &str,
        member: (&str, Option<&str>),
        generation: i32,
        assignments: Vec<(String, Bytes)>,
    ) -> oneshot::Receiver<SyncResult> {
        let (member_id, instance) = member;
        let (tx, rx) = oneshot::channel();
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            let _ = tx.send(Err(unknown_member(member_id)));
            return rx;
        };
        if let Err(e) = check_member(group, member_id, instance, generation) {
            let _ = tx.send(Err(e));
            return rx;
        }
        let (pt, pn) = (group.protocol_type.clone(), group.protocol_name.clone());
        match group.state {
            GroupState::Empty | GroupState::PreparingRebalance => {
                let _ = tx.send(Err(GroupError::RebalanceInProgress));
            }
            GroupState::Stable => {
                let m = group.members.get_mut(member_id).expect("checked above");
                m.last_seen = Instant::now();
                let _ = tx.send(Ok((pt, pn, m.assignment.clone())));
            }
            GroupState::CompletingRebalance => {
                let now = Instant::now();
                {
                    let m = group.members.get_mut(member_id).expect("checked above");
                    m.last_seen = now;
                    m.sync_waiter = Some(tx);
                }
                if group.leader.as_deref() == Some(member_id) {
                    let mut given: HashMap<String, Bytes> = assignments.into_iter().collect();
                    for m in group.members.values_mut() {
                        m.assignment = given.remove(&m.id).unwrap_or_default();
                        if let Some(w) = m.sync_waiter.take() {
                            let _ = w.send(Ok((pt.clone(), pn.clone(), m.assignment.clone())));
                        }
                    }
                    group.state = GroupState::Stable;
                }
            }
        }
        rx
    }

    /// Heartbeat: keeps the session alive and tells the member about rebalances.
    pub fn heartbeat(
        &self,
        group_id: &str,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), GroupError> {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return Err(unknown_member(member_id));
        };
        if group.is_fenced(member_id, instance) {
            return Err(GroupError::FencedInstanceId {
                member: member_id.to_string(),
            });
        }
        let state = group.state;
        let current = group.generation;
        let Some(m) = group.members.get_mut(member_id) else {
            return Err(unknown_member(member_id));
        };
        m.last_seen = Instant::now();
        if generation != current {
            return Err(GroupError::IllegalGeneration {
                generation,
                current,
            });
        }
        match state {
            GroupState::PreparingRebalance => Err(GroupError::RebalanceInProgress),
            _ => Ok(()),
        }
    }

    /// LeaveGroup of one member (by member id, or by instance id when member id is empty).
    pub fn leave(
        &self,
        group_id: &str,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Result<(), GroupError> {
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return Err(unknown_member(member_id));
        };
        let id = if member_id.is_empty() {
            match instance_id.and_then(|i| {
                group
                    .members
                    .values()
                    .find(|m| m.instance_id.as_deref() == Some(i))
            }) {
                Some(m) => m.id.clone(),
                None => return Err(unknown_member(member_id)),
            }
        } else if group.is_fenced(member_id, instance_id) {
            return Err(GroupError::FencedInstanceId {
                member: member_id.to_string(),
            });
        } else {
            member_id.to_string()
        };
        if !group.members.contains_key(&id) {
            return Err(unknown_member(&id));
        }
        tracing::info!(group = group_id, member = %id, "member left the group");
        group.remove_member(&id, Instant::now(), self.initial_delay);
        Ok(())
    }

    /// Periodic: session expiry and rebalance deadlines.
    pub fn tick(&self) {
        let now = Instant::now();
        let mut groups = self.lock();
        for g in groups.values_mut() {
            g.tick(now, self.initial_delay);
        }
    }

    /// Checks that a commit from (member, generation) is allowed.
    pub fn check_commit(
        &self,
        group_id: &str,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), GroupError> {
        let groups = self.lock();
        let group = groups.get(group_id);
        let has_members = group.is_some_and(|g| !g.members.is_empty());
        if generation < 0 && member_id.is_empty() {
            // A commit from outside the group (admin tools, assign() consumers) is allowed while it is empty.
            return if has_members {
                Err(unknown_member(member_id))
            } else {
                Ok(())
            };
        }
        let Some(group) = group else {
            return Err(unknown_member(member_id));
        };
        check_member(group, member_id, instance, generation)?;
        if group.state == GroupState::CompletingRebalance {
            return Err(GroupError::RebalanceInProgress);
        }
        Ok(())
    }

    /// Stores commits. Blocking.
    /// Stores commits of (member, generation) if [`check_commit`](Self::check_commit) still allows them once the
    /// offset store's write lock is held (a member fenced or a generation ended meanwhile commits nothing, as in
    /// Kafka, which checks and appends under the group lock): the refusal is [`Error::Group`](crate::Error).
    /// Blocking.
    pub fn commit_offsets(
        &self,
        group_id: &str,
        member: (&str, Option<&str>),
        generation: i32,
        entries: Vec<(Tp, OffsetEntry)>,
    ) -> Result<()> {
        self.offsets.commit(group_id, entries, || {
            self.check_commit(group_id, member.0, member.1, generation)
        })
    }

    /// One committed offset.
    pub fn committed(&self, group_id: &str, topic: &str, partition: i32) -> Option<OffsetEntry> {
        self.offsets.get(group_id, topic, partition)
    }

    /// Every committed offset of a group.
    pub fn committed_all(&self, group_id: &str) -> std::collections::BTreeMap<Tp, OffsetEntry> {
        self.offsets.all(group_id)
    }

    /// Describes a group; unknown groups are "Dead", as Kafka reports them.
    pub fn describe(&self, group_id: &str) -> GroupDescription {
        let groups = self.lock();
        match groups.get(group_id) {
            Some(g) => {
                let protocol = g.protocol_name.clone().unwrap_or_default();
                GroupDescription {
                    state: g.state.name(),
                    protocol_type: g.protocol_type.clone().unwrap_or_default(),
                    protocol: if g.state == GroupState::Stable
                        || g.state == GroupState::CompletingRebalance
                    {
                        protocol.clone()
                    } else {
                        String::new()
                    },
                    members: g
                        .members
                        .values()
                        .map(|m| {
                            (
                                m.id.clone(),
                                m.instance_id.clone(),
                                m.client_id.clone(),
                                m.client_host.clone(),
                                m.metadata(&protocol),
                                m.assignment.clone(),
                            )
                        })
                        .collect(),
                }
            }
            None if self.offsets.groups().iter().any(|g| g == group_id) => GroupDescription {
                state: "Empty",
                protocol_type: String::new(),
                protocol: String::new(),
                members: Vec::new(),
            },
            None => GroupDescription {
                state: "Dead",
                protocol_type: String::new(),
                protocol: String::new(),
                members: Vec::new(),
            },
        }
    }

    /// Every group: (id, protocol type, state).
    pub fn list(&self) -> Vec<(String, String, &'static str)> {
        let groups = self.lock();
        let mut out: Vec<(String, String, &'static str)> = groups
            .iter()
            .filter(|(id, g)| !g.members.is_empty() || self.offsets.groups().contains(id))
            .map(|(id, g)| {
                (
                    id.clone(),
                    g.protocol_type.clone().unwrap_or_default(),
                    g.state.name(),
                )
            })
            .collect();
        for id in self.offsets.groups() {
            if !groups.contains_key(&id) {
                out.push((id, "consumer".to_string(), "Empty"));
            }
        }
        out.sort();
        out
    }

    /// OffsetDelete (KIP-496): removes committed offsets of `partitions` (known topics' partitions) unless a
    /// member of the non-empty group subscribes to the topic. Returns the group-level error, or one outcome per
    /// partition (GROUP_SUBSCRIBED_TO_TOPIC or deleted). Blocking.
    pub fn delete_offsets(
        &self,
        group_id: &str,
        partitions: &[Tp],
    ) -> Result<Vec<Result<(), GroupError>>> {
        if !valid_group_id(group_id) {
            return Err(GroupError::InvalidGroupId(group_id.to_string()).into());
        }
        // None: every topic counts as subscribed (a member's subscription could not be read).
        let subscribed: Option<std::collections::HashSet<String>> = {
            let groups = self.lock();
            match groups.get(group_id) {
                Some(g) if !g.members.is_empty() => {
                    if g.protocol_type.as_deref() != Some("consumer") {
                        return Err(not_empty(group_id).into());
                    }
                    let protocol = g.protocol_name.clone().unwrap_or_default();
                    g.members
                        .values()
                        .map(|m| state::subscribed_topics(&m.metadata(&protocol)))
                        .try_fold(std::collections::HashSet::new(), |mut all, t| {
                            all.extend(t?);
                            Some(all)
                        })
                }
                Some(_) => Some(Default::default()),
                None if self.offsets.groups().iter().any(|g| g == group_id) => {
                    Some(Default::default())
                }
                None => return Err(not_found(group_id).into()),
            }
        };
        let outcomes: Vec<Result<(), GroupError>> = partitions
            .iter()
            .map(|(t, _)| match &subscribed {
                Some(s) if !s.contains(t) => Ok(()),
                _ => Err(GroupError::GroupSubscribedToTopic {
                    group: group_id.to_string(),
                    topic: t.clone(),
                }),
            })
            .collect();
        let deletable: Vec<Tp> = partitions
            .iter()
            .zip(&outcomes)
            .filter(|(_, o)| o.is_ok())
            .map(|(tp, _)| tp.clone())
            .collect();
        self.offsets.delete_partitions(group_id, &deletable)?;
        Ok(outcomes)
    }

    /// Deletes an empty group and its offsets. Blocking.
    pub fn delete(&self, group_id: &str) -> Result<()> {
        {
            let mut groups = self.lock();
            match groups.get(group_id) {
                Some(g) if !g.members.is_empty() => return Err(not_empty(group_id).into()),
                Some(_) => {
                    groups.remove(group_id);
                }
                None if !self.offsets.groups().iter().any(|g| g == group_id) => {
                    return Err(not_found(group_id).into())
                }
                None => {}
            }
        }
        self.offsets.delete_group(group_id)
    }
}

fn unknown_member(member_id: &str) -> GroupError {
    GroupError::UnknownMemberId {
        member: member_id.to_string(),
    }
}

fn not_empty(group_id: &str) -> GroupError {
    GroupError::GroupNotEmpty {
        group: group_id.to_string(),
    }
}

fn not_found(group_id: &str) -> GroupError {
    GroupError::GroupIdNotFound {
        group: group_id.to_string(),
    }
}

/// A request of (member, generation) to a group: the member is not fenced, is in the group, and is of its current
/// generation (checked in that order, as Kafka does).
fn check_member(
    group: &Group,
    member_id: &str,
    instance: Option<&str>,
    generation: i32,
) -> Result<(), GroupError> {
    if group.is_fenced(member_id, instance) {
        return Err(GroupError::FencedInstanceId {
            member: member_id.to_string(),
        });
    }
    if !group.members.contains_key(member_id) {
        return Err(unknown_member(member_id));
    }
    if generation != group.generation {
        return Err(GroupError::IllegalGeneration {
            generation,
            current: group.generation,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
