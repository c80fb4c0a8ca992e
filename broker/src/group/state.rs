//! One classic consumer group: members and the rebalance state machine
//! (Empty → PreparingRebalance → CompletingRebalance → Stable, as in Kafka's `GroupMetadata`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

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

/// One member./// One member.
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
    /// When the leader's SyncGroup must have arrived.
    pub sync_deadline: Instant,
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
        self.state = GroupState::PreparingRebalance;
        self.join_deadline = now + self.max_rebalance_timeout();
        self.join_not_before = if was_empty { now + initial_delay } else { now };
    }

    /// Completes the join phase if every member has rejoined (after the initial delay) or the deadline passed.
    pub fn maybe_complete_join(&mut self, now: Instant) {
        if self.state != GroupState::PreparingRebalance {
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
        self.members.retain(|_, m| m.join_waiter.is_some());
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.leader = None;
            self.protocol_name = None;
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
        self.state = GroupState::CompletingRebalance;
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

    /// KIP-345: whether `member_id` claims static instance `instance` that a newer member id holds now (the
    /// request gets FENCED_INSTANCE_ID, which clients treat as fatal: a duplicate instance stops).
    pub fn is_fenced(&self, member_id: &str, instance: Option<&str>) -> bool {
        instance
            .and_then(|i| self.static_member(i))
            .is_some_and(|holder| holder != member_id)
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

    /// Periodic check: expired sessions, join and sync deadlines.
    pub fn tick(&mut self, now: Instant, initial_delay: Duration) {
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| {
                m.join_waiter.is_none()
                    && now.saturating_duration_since(m.last_seen) > m.session_timeout
            })
            .map(|m| m.id.clone())
            .collect();
        for id in expired {
            tracing::info!(member = %id, "group member session expired");
            self.remove_member(&id, now, initial_delay);
        }
        self.maybe_complete_join(now);
        if self.state == GroupState::CompletingRebalance && now >= self.sync_deadline {
            self.prepare_rebalance(now, initial_delay);
        }
    }
}

impl Default for Group {
    fn default() -> Self {
        Self::new()
    }
}
