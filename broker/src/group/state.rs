//! One classic consumer group: members and the rebalance state machine
//! (Empty → PreparingRebalance → CompletingRebalance → Stable, as in Kafka's `GroupMetadata`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use super::record::{GroupMetadataValue, MemberMetadataValue};
use crate::error::GroupError;

/// The group's state, named as Kafka prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    /// No members (possibly committed offsets).
    Empty,
    /// Waiting for members to (re)join.
    PreparingRebalance,
    /// Joined; waiting for the leader's assignment.
    CompletingRebalance,
    /// Assignment handed out.
    Stable,
}

impl GroupState {
    /// Kafka's name for the state.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
        }
    }
}

/// What a JoinGroup waiter receives.
#[derive(Debug, Clone)]
pub struct JoinResult {
    /// Why the join failed (`None`: joined).
    pub error: Option<GroupError>,
    /// Generation of the completed rebalance.
    pub generation_id: i32,
    /// Protocol type (e.g. "consumer").
    pub protocol_type: Option<String>,
    /// Chosen protocol (assignor).
    pub protocol_name: Option<String>,
    /// Leader's member id.
    pub leader: String,
    /// The receiver's member id.
    pub member_id: String,
    /// For the leader: every member with its metadata for the chosen protocol.
    pub members: Vec<(String, Option<String>, Bytes)>,
    /// JoinGroup v9 (KIP-814): the leader gets the member list but must not compute a new assignment (a static
    /// leader that replaced itself in a stable group; its SyncGroup gets the current assignment back).
    pub skip_assignment: bool,
}

impl JoinResult {
    /// An error answer.
    pub fn error(error: GroupError, member_id: &str) -> Self {
        JoinResult {
            error: Some(error),
            generation_id: -1,
            protocol_type: None,
            protocol_name: None,
            leader: String::new(),
            member_id: member_id.to_string(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}

/// What a SyncGroup waiter receives: (protocol type, protocol name, assignment), or why not.
pub type SyncResult = Result<(Option<String>, Option<String>, Bytes), GroupError>;

/// The topics of a consumer-protocol subscription (a member's JoinGroup metadata: version i16, then Kafka's
/// `ConsumerProtocolSubscription`); `None` if it cannot be read.
pub fn subscribed_topics(metadata: &Bytes) -> Option<Vec<String>> {
    use kafka_protocol::messages::ConsumerProtocolSubscription;
    use kafka_protocol::protocol::Decodable;
    let mut b = metadata.clone();
    if b.len() < 2 {
        return None;
    }
    let version = i16::from_be_bytes([b[0], b[1]]);
    let _ = bytes::Buf::get_i16(&mut b);
    // Newer versions than the codec knows start with the same fields; read them as its newest.
    let version = version.clamp(0, 3);
    let s = ConsumerProtocolSubscription::decode(&mut b, version).ok()?;
    Some(s.topics.iter().map(|t| t.to_string()).collect())
}

/// One member.
#[derive(Debug)]
pub struct Member {
    /// Member id.
    pub id: String,
    /// Static membership id.
    pub instance_id: Option<String>,
    /// Client id from the request header.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// Session timeout.
    pub session_timeout: Duration,
    /// Rebalance timeout.
    pub rebalance_timeout: Duration,
    /// (protocol name, metadata) in preference order.
    pub protocols: Vec<(String, Bytes)>,
    /// Assignment from the last SyncGroup.
    pub assignment: Bytes,
    /// Last heartbeat (or join/sync).
    pub last_seen: Instant,
    /// Pending JoinGroup.
    pub join_waiter: Option<oneshot::Sender<JoinResult>>,
    /// Pending SyncGroup.
    pub sync_waiter: Option<oneshot::Sender<SyncResult>>,
    /// Joined the current generation but has not sent its SyncGroup yet (Kafka's pending-sync members: removed
    /// when the rebalance timeout passes first).
    pub pending_sync: bool,
}

impl Member {
    /// Metadata for `protocol`.
    pub fn metadata(&self, protocol: &str) -> Bytes {
        self.protocols
            .iter()
            .find(|(n, _)| n == protocol)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }
}

/// One group.
#[derive(Debug)]
pub struct Group {
    /// Current state.
    pub state: GroupState,
    /// Generation (bumped by every completed rebalance).
    pub generation: i32,
    /// Protocol type of the members.
    pub protocol_type: Option<String>,
    /// Chosen protocol of the current generation.
    pub protocol_name: Option<String>,
    /// Leader's member id.
    pub leader: Option<String>,
    /// Members by id.
    pub members: BTreeMap<String, Member>,
    /// When a join phase must complete (rebalance timeout) and when the first join may complete (delay).
    pub join_deadline: Instant,
    /// Earliest completion of the first join of an empty group (group.initial.rebalance.delay.ms).
    pub join_not_before: Instant,
    /// When every member's SyncGroup must have arrived (the rebalance timeout after the join phase).
    pub sync_deadline: Instant,
    /// KIP-394: member ids handed out with MEMBER_ID_REQUIRED, with when they expire unless the member joins
    /// with them (its session timeout).
    pub pending: BTreeMap<String, Instant>,
    /// `group.initial.rebalance.delay.ms`: how much longer the first join may still be delayed (up to the
    /// rebalance timeout) while new members keep arriving, as Kafka's `InitialDelayedJoin`.
    pub delay_left: Duration,
    /// A new member joined since the initial delay last started.
    pub new_member_added: bool,
    /// The initial delay of the current join phase (zero unless the group was empty).
    pub initial_delay: Duration,
    /// When the group entered its state (ms since the epoch), stored as `current_state_timestamp`.
    pub state_since_ms: i64,
    /// The stored group metadata record is out of date (see [`GroupCoordinator::persist_dirty`](super::GroupCoordinator::persist_dirty)).
    pub dirty: bool,
}

impl Group {
    /// A new empty group.
    pub fn new() -> Self {
        let now = Instant::now();
        Group {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: None,
            protocol_name: None,
            leader: None,
            members: BTreeMap::new(),
            join_deadline: now,
            join_not_before: now,
            sync_deadline: now,
            pending: BTreeMap::new(),
            delay_left: Duration::ZERO,
            new_member_added: false,
            initial_delay: Duration::ZERO,
            state_since_ms: strata_storage::time::now_ms(),
            dirty: false,
        }
    }

    /// Moves to `state`, noting when.
    pub fn transition(&mut self, state: GroupState) {
        if self.state != state {
            self.state = state;
            self.state_since_ms = strata_storage::time::now_ms();
        }
    }

    /// The join answer of the current generation for `member_id` (a member whose join repeats the current
    /// generation gets it again): the leader gets every member's metadata.
    pub fn current_join_result(&self, member_id: &str) -> JoinResult {
        let leader = self.leader.clone().unwrap_or_default();
        let protocol = self.protocol_name.clone().unwrap_or_default();
        JoinResult {
            error: None,
            generation_id: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            members: if leader == member_id {
                self.member_metadata(&protocol)
            } else {
                Vec::new()
            },
            leader,
            member_id: member_id.to_string(),
            skip_assignment: false,
        }
    }

    fn max_rebalance_timeout(&self) -> Duration {
        self.members
            .values()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or(Duration::from_secs(60))
    }

    /// Enters PreparingRebalance (from any state); pending syncs are told to rejoin.
    pub fn prepare_rebalance(&mut self, now: Instant, initial_delay: Duration) {
        if self.state == GroupState::PreparingRebalance {
            return;
        }
        let was_empty = self.state == GroupState::Empty;
        for m in self.members.values_mut() {
            if let Some(w) = m.sync_waiter.take() {
                let _ = w.send(Err(GroupError::RebalanceInProgress));
            }
        }
        self.transition(GroupState::PreparingRebalance);
        let timeout = self.max_rebalance_timeout();
        self.join_deadline = now + timeout;
        self.new_member_added = false;
        if was_empty {
            self.join_not_before = now + initial_delay;
            self.initial_delay = initial_delay;
            self.delay_left = timeout.saturating_sub(initial_delay);
        } else {
            self.join_not_before = now;
            self.initial_delay = Duration::ZERO;
            self.delay_left = Duration::ZERO;
        }
    }

    /// Completes the join phase if every member has rejoined (after the initial delay) or the deadline passed.
    pub fn maybe_complete_join(&mut self, now: Instant) {
        if self.state != GroupState::PreparingRebalance {
            return;
        }
        if now >= self.join_not_before && self.new_member_added && !self.delay_left.is_zero() {
            // Kafka's InitialDelayedJoin: members keep arriving, so wait another delay (bounded by the
            // rebalance timeout) before the first generation.
            let step = self.delay_left.min(self.initial_delay);
            self.join_not_before = now + step;
            self.delay_left -= step;
            self.new_member_added = false;
            return;
        }
        let all_joined = self.members.values().all(|m| m.join_waiter.is_some());
        let ready = (all_joined && now >= self.join_not_before) || now >= self.join_deadline;
        if ready {
            self.complete_join(now);
        }
    }

    fn complete_join(&mut self, now: Instant) {
        // Members that did not rejoin in time are removed.
        self.members.retain(|id, m| {
            if m.join_waiter.is_none() {
                tracing::info!(member = %id, "member did not rejoin within the rebalance timeout; removed");
            }
            m.join_waiter.is_some()
        });
        self.generation += 1;
        if self.members.is_empty() {
            // Kafka stores the empty group (its generation survives a restart).
            self.transition(GroupState::Empty);
            self.leader = None;
            self.protocol_name = None;
            self.dirty = true;
            return;
        }
        if self
            .leader
            .as_ref()
            .is_none_or(|l| !self.members.contains_key(l))
        {
            self.leader = self.members.keys().next().cloned();
        }
        let leader = self.leader.clone().unwrap_or_default();
        self.protocol_name = self.select_protocol(&leader);
        let protocol = self.protocol_name.clone().unwrap_or_default();
        let all = self.member_metadata(&protocol);
        for m in self.members.values_mut() {
            m.last_seen = now;
            m.pending_sync = true;
            if let Some(w) = m.join_waiter.take() {
                let _ = w.send(JoinResult {
                    error: None,
                    generation_id: self.generation,
                    protocol_type: self.protocol_type.clone(),
                    protocol_name: self.protocol_name.clone(),
                    leader: leader.clone(),
                    member_id: m.id.clone(),
                    members: if m.id == leader {
                        all.clone()
                    } else {
                        Vec::new()
                    },
                    skip_assignment: false,
                });
            }
        }
        self.transition(GroupState::CompletingRebalance);
        self.sync_deadline = now + self.max_rebalance_timeout();
    }

    /// Every member with its metadata for `protocol` (what the leader's JoinGroup answer lists).
    pub fn member_metadata(&self, protocol: &str) -> Vec<(String, Option<String>, Bytes)> {
        self.members
            .values()
            .map(|m| (m.id.clone(), m.instance_id.clone(), m.metadata(protocol)))
            .collect()
    }

    /// The member id that static member `instance` holds now.
    pub fn static_member(&self, instance: &str) -> Option<&str> {
        self.members
            .values()
            .find(|m| m.instance_id.as_deref() == Some(instance))
            .map(|m| m.id.as_str())
    }

    /// Kafka's `validateMember`: a static member's instance id must be held by `member_id` (FENCED_INSTANCE_ID
    /// when another member id holds it, UNKNOWN_MEMBER_ID when nobody does); a dynamic member must be in the
    /// group (UNKNOWN_MEMBER_ID).
    pub fn validate_member(
        &self,
        member_id: &str,
        instance: Option<&str>,
    ) -> Result<(), GroupError> {
        let unknown = || GroupError::UnknownMemberId {
            member: member_id.to_string(),
        };
        match instance.map(|i| self.static_member(i)) {
            Some(None) => Err(unknown()),
            Some(Some(holder)) if holder != member_id => Err(GroupError::FencedInstanceId {
                member: member_id.to_string(),
            }),
            _ if !self.members.contains_key(member_id) => Err(unknown()),
            _ => Ok(()),
        }
    }

    /// Gives static member `old`'s entry (assignment, place in the group, leadership) to `new`; `old`'s pending
    /// JoinGroup / SyncGroup are answered FENCED_INSTANCE_ID.
    pub fn replace_static_member(&mut self, old: &str, new: &str) {
        let Some(mut m) = self.members.remove(old) else {
            return;
        };
        if let Some(w) = m.join_waiter.take() {
            let fenced = GroupError::FencedInstanceId {
                member: old.to_string(),
            };
            let _ = w.send(JoinResult::error(fenced, old));
        }
        if let Some(w) = m.sync_waiter.take() {
            let _ = w.send(Err(GroupError::FencedInstanceId {
                member: old.to_string(),
            }));
        }
        m.id = new.to_string();
        self.members.insert(new.to_string(), m);
        if self.leader.as_deref() == Some(old) {
            self.leader = Some(new.to_string());
        }
    }

    /// The leader's most preferred protocol that every member supports.
    pub fn select_protocol(&self, leader: &str) -> Option<String> {
        let leader = self.members.get(leader)?;
        leader
            .protocols
            .iter()
            .map(|(n, _)| n)
            .find(|n| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(p, _)| p == *n))
            })
            .cloned()
    }

    /// Whether a joining member's protocols fit the group.
    pub fn supports(&self, protocol_type: &str, protocols: &[(String, Bytes)]) -> bool {
        if self.members.is_empty() {
            return !protocols.is_empty();
        }
        if self.protocol_type.as_deref() != Some(protocol_type) {
            return false;
        }
        protocols.iter().any(|(n, _)| {
            self.members
                .values()
                .all(|m| m.protocols.iter().any(|(p, _)| p == n))
        })
    }

    /// Removes a member, failing its pending requests; the group rebalances (or becomes empty).
    pub fn remove_member(&mut self, id: &str, now: Instant, initial_delay: Duration) {
        if let Some(mut m) = self.members.remove(id) {
            if let Some(w) = m.join_waiter.take() {
                let gone = GroupError::UnknownMemberId {
                    member: id.to_string(),
                };
                let _ = w.send(JoinResult::error(gone, id));
            }
            if let Some(w) = m.sync_waiter.take() {
                let _ = w.send(Err(GroupError::UnknownMemberId {
                    member: id.to_string(),
                }));
            }
        }
        if self.leader.as_deref() == Some(id) {
            self.leader = None;
        }
        self.prepare_rebalance(now, initial_delay);
        self.maybe_complete_join(now);
    }

    /// Periodic check: expired KIP-394 member ids, expired sessions (members waiting for their JoinGroup or
    /// SyncGroup answer are kept alive, as Kafka does), join deadline, and members that did not send SyncGroup
    /// within the rebalance timeout (removed, and the group rebalances, as Kafka's pending-sync expiry).
    pub fn tick(&mut self, now: Instant, initial_delay: Duration) {
        self.pending.retain(|_, expires| *expires > now);
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| {
                m.join_waiter.is_none()
                    && m.sync_waiter.is_none()
                    && now.saturating_duration_since(m.last_seen) > m.session_timeout
            })
            .map(|m| m.id.clone())
            .collect();
        for id in expired {
            tracing::info!(member = %id, "group member session expired");
            self.remove_member(&id, now, initial_delay);
        }
        self.maybe_complete_join(now);
        if matches!(
            self.state,
            GroupState::CompletingRebalance | GroupState::Stable
        ) && now >= self.sync_deadline
        {
            let unsynced: Vec<String> = self
                .members
                .values()
                .filter(|m| m.pending_sync)
                .map(|m| m.id.clone())
                .collect();
            for id in unsynced {
                tracing::info!(member = %id, "member sent no SyncGroup within the rebalance timeout; removed");
                self.remove_member(&id, now, initial_delay);
            }
        }
    }

    /// The group as its `__consumer_offsets` record.
    pub fn to_record(&self) -> GroupMetadataValue {
        let protocol = self.protocol_name.clone().unwrap_or_default();
        GroupMetadataValue {
            protocol_type: self.protocol_type.clone().unwrap_or_default(),
            generation: self.generation,
            protocol: self.protocol_name.clone(),
            leader: self.leader.clone(),
            current_state_timestamp: self.state_since_ms,
            members: self
                .members
                .values()
                .map(|m| MemberMetadataValue {
                    member_id: m.id.clone(),
                    group_instance_id: m.instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    rebalance_timeout: m.rebalance_timeout.as_millis().min(i32::MAX as u128) as i32,
                    session_timeout: m.session_timeout.as_millis().min(i32::MAX as u128) as i32,
                    subscription: m.metadata(&protocol),
                    assignment: m.assignment.clone(),
                })
                .collect(),
        }
    }

    /// A group loaded from its record: Stable with its members (whose sessions start now, so members that
    /// do not come back expire), or Empty, as Kafka loads it.
    pub fn from_record(v: GroupMetadataValue, now: Instant) -> Self {
        let mut g = Group::new();
        g.generation = v.generation;
        g.protocol_type = Some(v.protocol_type).filter(|t| !t.is_empty());
        g.protocol_name = v.protocol.clone();
        g.leader = v.leader;
        g.state_since_ms = v.current_state_timestamp;
        let protocol = v.protocol.unwrap_or_default();
        for m in v.members {
            let ms = |x: i32| Duration::from_millis(x.max(0) as u64);
            g.members.insert(
                m.member_id.clone(),
                Member {
                    id: m.member_id,
                    instance_id: m.group_instance_id,
                    client_id: m.client_id,
                    client_host: m.client_host,
                    session_timeout: ms(m.session_timeout),
                    rebalance_timeout: ms(m.rebalance_timeout),
                    protocols: vec![(protocol.clone(), m.subscription)],
                    assignment: m.assignment,
                    last_seen: now,
                    join_waiter: None,
                    sync_waiter: None,
                    pending_sync: false,
                },
            );
        }
        g.state = if g.members.is_empty() {
            GroupState::Empty
        } else {
            GroupState::Stable
        };
        g
    }
}

impl Default for Group {
    fn default() -> Self {
        Self::new()
    }
}
