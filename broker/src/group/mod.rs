//! The group coordinator for the classic protocol: JoinGroup / SyncGroup / Heartbeat / LeaveGroup with session
//! and rebalance timeouts, and committed offsets in `__consumer_offsets`.

pub mod configs;
pub mod consumer;
pub mod consumer_persist;
pub mod consumer_record;
mod join;
mod kip848;
mod offset_entry;
pub mod offsets;
pub mod record;
pub mod state;
pub mod txn_offsets;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use crate::config::BrokerConfig;
use crate::error::{GroupError, Result};
use offsets::{OffsetEntry, OffsetStore, Tp};
use state::{Group, GroupState, SyncResult};

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
    /// JoinGroup v4+ (KIP-394): a new dynamic member is first answered MEMBER_ID_REQUIRED with its id.
    pub requires_known_member_id: bool,
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

/// Kafka's group type of classic-protocol groups (ListGroups v5, KIP-848).
pub const CLASSIC: &str = "classic";

/// One group as ListGroups reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    /// Group id.
    pub group_id: String,
    /// Protocol type ("consumer"; "" for a group with only committed offsets).
    pub protocol_type: String,
    /// Kafka's state name.
    pub state: &'static str,
    /// "classic" or "consumer".
    pub group_type: &'static str,
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
    /// Serializes writes of group metadata records (see [`persist_dirty`](Self::persist_dirty)).
    persist: Mutex<()>,
    /// KIP-848 consumer groups (see `kip848.rs`); locked after `groups` when both are.
    consumer: Mutex<HashMap<String, consumer::ConsumerGroup>>,
    consumer_enabled: bool,
    consumer_assignors: Vec<String>,
    consumer_session_ms: i32,
    consumer_heartbeat_ms: i32,
    consumer_max_size: usize,
    /// Per-group overrides (Kafka 4.0's group configs).
    configs: configs::GroupConfigs,
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
            persist: Mutex::new(()),
            consumer: Mutex::new(HashMap::new()),
            consumer_enabled: c.group_rebalance_protocols.iter().any(|p| p == "consumer"),
            consumer_assignors: c.group_consumer_assignors.clone(),
            consumer_session_ms: c.group_consumer_session_timeout_ms,
            consumer_heartbeat_ms: c.group_consumer_heartbeat_interval_ms,
            consumer_max_size: c.group_consumer_max_size,
            configs: configs::GroupConfigs::default(),
        }
    }

    /// The same, with the per-group configs kept in `configs` (in memory only without).
    pub fn with_group_configs(mut self, configs: configs::GroupConfigs) -> Self {
        self.configs = configs;
        self
    }

    /// The per-group configs.
    pub fn group_configs(&self) -> &configs::GroupConfigs {
        &self.configs
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Group>> {
        self.groups.lock()
    }

    /// The offset store (shared with the transaction coordinator, whose markers make transactional offsets
    /// visible).
    pub fn offset_store(&self) -> &std::sync::Arc<OffsetStore> {
        &self.offsets
    }

    /// Replays committed offsets and the stored classic groups (their generation, leader and members, whose
    /// sessions start now: members that do not come back expire, as after a Kafka coordinator failover).
    /// Blocking.
    pub fn load_offsets(&self) -> Result<()> {
        self.offsets.load()?;
        let now = Instant::now();
        let mut groups = self.lock();
        for (id, value) in self.offsets.stored_groups() {
            match record::decode_value(value) {
                Some(v) => {
                    let g = Group::from_record(v, now);
                    tracing::info!(group = %id, generation = g.generation, members = g.members.len(),
                        state = g.state.name(), "group loaded");
                    groups.insert(id, g);
                }
                None => tracing::warn!(group = %id, "unreadable group metadata record skipped"),
            }
        }
        drop(groups);
        self.load_consumer_groups();
        Ok(())
    }

    /// Writes the metadata record of every group whose stored record is out of date (a generation completed by
    /// the leader's SyncGroup, a replaced static member, a group that became empty), as Kafka's `storeGroup`.
    /// A failed write is logged and retried at the next call. Then KIP-848 members past their session or
    /// rebalance timeout are removed ([`expire_consumer_members`](Self::expire_consumer_members)). Blocking.
    pub fn persist_dirty(&self) {
        let _one_writer = self.persist.lock();
        // Snapshots are taken under the writer lock, so the last record written is of the newest state.
        let snapshots: Vec<(String, Bytes)> = {
            let mut groups = self.lock();
            groups
                .iter_mut()
                .filter(|(_, g)| g.dirty)
                .map(|(id, g)| {
                    g.dirty = false;
                    (id.clone(), record::encode_value(&g.to_record()))
                })
                .collect()
        };
        for (id, value) in snapshots {
            if let Err(e) = self.offsets.store_group(&id, Some(value)) {
                tracing::warn!(group = %id, error = %e, "storing group metadata failed; retried later");
                if let Some(g) = self.lock().get_mut(&id) {
                    g.dirty = true;
                }
            }
        }
        drop(_one_writer);
        self.expire_consumer_members();
    }

    /// Whether `group_id` is a group: classic (with members or stored), KIP-848, or known by its committed offsets.
    pub fn group_exists(&self, group_id: &str) -> bool {
        self.lock().contains_key(group_id)
            || self.with_consumer_group(group_id, |_| ()).is_some()
            || self.offsets.has_offsets(group_id)
    }

    /// Removes every group's committed offsets of a deleted topic. Blocking.
    pub fn delete_topic_offsets(&self, topic: &str) -> Result<()> {
        self.offsets.delete_topic(topic)
    }

    /// SyncGroup: the leader hands out assignments; everyone receives theirs once the group is stored with them
    /// (Kafka stores the group before answering). If that write fails, as Kafka's coordinator: every member
    /// waiting for its assignment gets Kafka's mapping of the append error ([`GroupError::StoreFailed`]), no
    /// assignment is kept and the group rebalances. Blocking (the leader's SyncGroup appends).
    pub fn sync(
        &self,
        group_id: &str,
        member: (&str, Option<&str>),
        generation: i32,
        assignments: Vec<(String, Bytes)>,
    ) -> oneshot::Receiver<SyncResult> {
        let (member_id, instance) = member;
        let (tx, rx) = oneshot::channel();
        if !valid_group_id(group_id) {
            let _ = tx.send(Err(GroupError::InvalidGroupId(group_id.to_string())));
            return rx;
        }
        let _one_writer = self.persist.lock();
        let to_store = {
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
                GroupState::Empty => {
                    let _ = tx.send(Err(unknown_member(member_id)));
                    None
                }
                GroupState::PreparingRebalance => {
                    let _ = tx.send(Err(GroupError::RebalanceInProgress));
                    None
                }
                GroupState::Stable => {
                    let m = group.members.get_mut(member_id).expect("checked above");
                    m.last_seen = Instant::now();
                    m.pending_sync = false;
                    let _ = tx.send(Ok((pt, pn, m.assignment.clone())));
                    None
                }
                GroupState::CompletingRebalance => {
                    let m = group.members.get_mut(member_id).expect("checked above");
                    m.last_seen = Instant::now();
                    m.pending_sync = false;
                    m.sync_waiter = Some(tx);
                    (group.leader.as_deref() == Some(member_id)).then(|| {
                        let given: HashMap<String, Bytes> = assignments.into_iter().collect();
                        let mut value = group.to_record();
                        for m in &mut value.members {
                            m.assignment = given.get(&m.member_id).cloned().unwrap_or_default();
                        }
                        (record::encode_value(&value), given)
                    })
                }
            }
        };
        // The group lock is not held while appending (a commit holds the store's lock, then the group's).
        let Some((value, given)) = to_store else {
            return rx;
        };
        let written = self.offsets.store_group(group_id, Some(value));
        let mut groups = self.lock();
        match groups.get_mut(group_id) {
            // As Kafka: only if the group still waits for this generation's assignment.
            Some(g) if g.state == GroupState::CompletingRebalance && g.generation == generation => {
                complete_sync(g, group_id, given, written, self.initial_delay)
            }
            _ => {}
        }
        rx
    }

    /// SyncGroup v5: the protocol type and name a member sends, if any, must be the group's
    /// (INCONSISTENT_GROUP_PROTOCOL otherwise), checked after the member and its generation as Kafka does.
    pub fn check_sync_protocol(
        &self,
        group_id: &str,
        member: (&str, Option<&str>),
        generation: i32,
        protocol: (Option<&str>, Option<&str>),
    ) -> Result<(), GroupError> {
        let (protocol_type, protocol_name) = protocol;
        if !valid_group_id(group_id) {
            return Err(GroupError::InvalidGroupId(group_id.to_string()));
        }
        let groups = self.lock();
        let Some(g) = groups.get(group_id) else {
            return Err(unknown_member(member.0));
        };
        check_member(g, member.0, member.1, generation)?;
        if g.state == GroupState::Empty {
            return Err(unknown_member(member.0));
        }
        let differs = |sent: Option<&str>, have: &Option<String>| {
            sent.is_some_and(|s| have.as_deref() != Some(s))
        };
        if differs(protocol_type, &g.protocol_type) || differs(protocol_name, &g.protocol_name) {
            return Err(GroupError::InconsistentGroupProtocol {
                member: String::new(),
                protocol_type: protocol_type.unwrap_or_default().to_string(),
            });
        }
        Ok(())
    }

    /// Heartbeat: keeps the session alive and tells the member about rebalances. Kafka's order: the member
    /// (FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID), then its generation (ILLEGAL_GENERATION), then the state
    /// (REBALANCE_IN_PROGRESS while members rejoin; accepted while the assignment is being handed out).
    pub fn heartbeat(
        &self,
        group_id: &str,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), GroupError> {
        if !valid_group_id(group_id) {
            return Err(GroupError::InvalidGroupId(group_id.to_string()));
        }
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return Err(unknown_member(member_id));
        };
        group.validate_member(member_id, instance)?;
        if generation != group.generation {
            return Err(GroupError::IllegalGeneration {
                generation,
                current: group.generation,
            });
        }
        let state = group.state;
        if state == GroupState::Empty {
            return Err(unknown_member(member_id));
        }
        let m = group.members.get_mut(member_id).expect("validated");
        m.last_seen = Instant::now();
        match state {
            GroupState::PreparingRebalance => Err(GroupError::RebalanceInProgress),
            _ => Ok(()),
        }
    }

    /// LeaveGroup of one member: by member id, or by instance id (KIP-345; with a member id too, it must be the
    /// one holding the instance, else FENCED_INSTANCE_ID). A KIP-394 member id not yet joined is forgotten.
    pub fn leave(
        &self,
        group_id: &str,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Result<(), GroupError> {
        if !valid_group_id(group_id) {
            return Err(GroupError::InvalidGroupId(group_id.to_string()));
        }
        let mut groups = self.lock();
        let Some(group) = groups.get_mut(group_id) else {
            return Err(unknown_member(member_id));
        };
        let id = match instance_id {
            Some(i) => match group.static_member(i) {
                None => return Err(unknown_member(member_id)),
                Some(holder) if !member_id.is_empty() && holder != member_id => {
                    return Err(GroupError::FencedInstanceId {
                        member: member_id.to_string(),
                    })
                }
                Some(holder) => holder.to_string(),
            },
            None => {
                if group.pending.remove(member_id).is_some() {
                    return Ok(());
                }
                member_id.to_string()
            }
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
        {
            let mut groups = self.lock();
            for g in groups.values_mut() {
                g.tick(now, self.initial_delay);
            }
        }
    }

    /// Checks that a commit from (member, generation) is allowed, as Kafka's `validateOffsetCommit`: generation
    /// -1 commits (admin tools, `assign()` consumers) while the group is empty or unknown; otherwise the member
    /// must hold its place (FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID: a member that left or was removed commits
    /// nothing) in the current generation (ILLEGAL_GENERATION), and not while the assignment is being handed
    /// out (REBALANCE_IN_PROGRESS). A group that does not exist is GROUP_ID_NOT_FOUND (OffsetCommit before v9
    /// answers ILLEGAL_GENERATION instead).
    pub fn check_commit(
        &self,
        group_id: &str,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), GroupError> {
        if let Some(checked) = self.check_consumer_commit(group_id, member_id, generation) {
            return checked;
        }
        let groups = self.lock();
        let Some(group) = groups.get(group_id) else {
            if generation < 0 {
                return Ok(());
            }
            if self.offsets.has_offsets(group_id) {
                // An Empty group (offsets only): no member is in it.
                return Err(unknown_member(member_id));
            }
            return Err(not_found(group_id));
        };
        if generation < 0 && group.state == GroupState::Empty {
            return Ok(());
        }
        if generation >= 0 || !member_id.is_empty() || instance.is_some() {
            check_member(group, member_id, instance, generation)?;
        } else if group.state != GroupState::Empty {
            return Err(unknown_member(member_id));
        }
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

    /// Describes a classic group; unknown groups are "Dead", as Kafka reports them, and so are KIP-848 groups
    /// (Kafka's `describeGroups` answers only classic groups: clients describe the others with
    /// ConsumerGroupDescribe).
    pub fn describe(&self, group_id: &str) -> GroupDescription {
        let consumer_group = self.with_consumer_group(group_id, |_| ()).is_some();
        let groups = self.lock();
        match groups.get(group_id) {
            Some(g) => {
                // As Kafka: the protocol, the members' metadata and assignments only of a Stable group.
                let stable = g.state == GroupState::Stable;
                let protocol = g
                    .protocol_name
                    .clone()
                    .filter(|_| stable)
                    .unwrap_or_default();
                GroupDescription {
                    state: g.state.name(),
                    protocol_type: g.protocol_type.clone().unwrap_or_default(),
                    protocol: protocol.clone(),
                    members: g
                        .members
                        .values()
                        .map(|m| {
                            let (meta, assignment) = if stable {
                                (m.metadata(&protocol), m.assignment.clone())
                            } else {
                                Default::default()
                            };
                            (
                                m.id.clone(),
                                m.instance_id.clone(),
                                m.client_id.clone(),
                                m.client_host.clone(),
                                meta,
                                assignment,
                            )
                        })
                        .collect(),
                }
            }
            None if !consumer_group && self.offsets.groups().iter().any(|g| g == group_id) => {
                GroupDescription {
                    state: "Empty",
                    protocol_type: String::new(),
                    protocol: String::new(),
                    members: Vec::new(),
                }
            }
            None => GroupDescription {
                state: "Dead",
                protocol_type: String::new(),
                protocol: String::new(),
                members: Vec::new(),
            },
        }
    }

    /// Every group, as ListGroups reports it. A group known only by its committed offsets is an Empty classic
    /// group with no protocol type (Kafka's "simple" group).
    pub fn list(&self) -> Vec<ListedGroup> {
        let groups = self.lock();
        let mut out: Vec<ListedGroup> = groups
            .iter()
            .filter(|(id, g)| {
                !g.members.is_empty() || g.generation > 0 || self.offsets.has_offsets(id)
            })
            .map(|(id, g)| ListedGroup {
                group_id: id.clone(),
                protocol_type: g.protocol_type.clone().unwrap_or_default(),
                state: g.state.name(),
                group_type: CLASSIC,
            })
            .collect();
        for id in self.offsets.groups() {
            if !groups.contains_key(&id) {
                out.push(ListedGroup {
                    group_id: id,
                    protocol_type: String::new(),
                    state: "Empty",
                    group_type: CLASSIC,
                });
            }
        }
        drop(groups);
        let consumer = self.list_consumer_groups();
        out.retain(|g| !consumer.iter().any(|c| c.group_id == g.group_id));
        out.extend(consumer);
        out.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        out
    }

    /// OffsetDelete (KIP-496): removes committed offsets of `partitions` (known topics' partitions) unless a
    /// member of the non-empty group subscribes to the topic: for a classic group by its protocol metadata, for a
    /// KIP-848 group by its members' topic names and regexes (Kafka's OffsetMetadataManager asks
    /// `group.isSubscribedToTopic` for both). Returns the group-level error, or one outcome per partition
    /// (GROUP_SUBSCRIBED_TO_TOPIC or deleted). Blocking.
    pub fn delete_offsets(
        &self,
        group_id: &str,
        partitions: &[Tp],
    ) -> Result<Vec<Result<(), GroupError>>> {
        if !valid_group_id(group_id) {
            return Err(GroupError::InvalidGroupId(group_id.to_string()).into());
        }
        let consumer =
            self.consumer_group_subscribed(group_id, partitions.iter().map(|(t, _)| t.as_str()));
        // None: every topic counts as subscribed (a member's subscription could not be read).
        let subscribed: Option<std::collections::HashSet<String>> = if consumer.is_some() {
            consumer
        } else {
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

    /// Kafka's offset expiration (KIP-211), run every `offsets.retention.check.interval.ms`: the committed offsets
    /// of a classic group that has been Empty for `retention_ms` expire (tombstones in `__consumer_offsets`), and
    /// those of a group with only committed offsets (no members ever, e.g. `assign()` consumers) `retention_ms`
    /// after each one's commit; a classic group left Empty without offsets is then removed, as Kafka makes it
    /// Dead. Groups with members, and KIP-848 consumer groups, keep theirs. Returns how many offsets expired.
    /// Blocking.
    pub fn expire_offsets(&self, now_ms: i64, retention_ms: i64) -> Result<usize> {
        let mut expired = 0;
        for group_id in self.offsets.groups() {
            if self.consumer.lock().contains_key(&group_id) {
                continue;
            }
            let empty_since = match self.lock().get(&group_id) {
                Some(g) if g.state != GroupState::Empty => continue,
                Some(g) if g.protocol_type.is_some() => Some(g.state_since_ms),
                _ => None,
            };
            expired += self
                .offsets
                .expire(&group_id, now_ms, retention_ms, empty_since)?;
            if self.offsets.has_offsets(&group_id) {
                continue;
            }
            let removed = {
                let mut groups = self.lock();
                let dead = groups
                    .get(&group_id)
                    .is_some_and(|g| g.state == GroupState::Empty && g.members.is_empty());
                dead && groups.remove(&group_id).is_some()
            };
            if removed {
                tracing::info!(group = group_id, "group's offsets expired; group removed");
                self.offsets.store_group(&group_id, None)?;
            }
        }
        Ok(expired)
    }

    /// Deletes an empty group and its offsets. Blocking.
    pub fn delete(&self, group_id: &str) -> Result<()> {
        if self.is_consumer_group(group_id) {
            return Err(not_empty(group_id).into());
        }
        let was_consumer_group = self.forget_consumer_group(group_id);
        {
            let mut groups = self.lock();
            match groups.get(group_id) {
                Some(g) if !g.members.is_empty() => return Err(not_empty(group_id).into()),
                Some(_) => {
                    groups.remove(group_id);
                }
                None if !was_consumer_group && !self.offsets.has_offsets(group_id) => {
                    return Err(not_found(group_id).into())
                }
                None => {}
            }
        }
        self.offsets.store_group(group_id, None)?;
        if was_consumer_group {
            // Tombstones for every record of the group, as Kafka writes when it deletes one.
            self.persist_consumer_group(group_id)?;
        }
        self.offsets.delete_group(group_id)
    }
}

/// The leader's SyncGroup after the group's record was written (`written`): hands out the assignment and makes
/// the group Stable, or, if the write failed, answers every waiting member with the error (Kafka's
/// `resetAndPropagateAssignmentWithError`) and rebalances.
fn complete_sync(
    group: &mut Group,
    group_id: &str,
    mut given: HashMap<String, Bytes>,
    written: Result<()>,
    initial_delay: Duration,
) {
    let (pt, pn) = (group.protocol_type.clone(), group.protocol_name.clone());
    match written {
        Ok(()) => {
            for m in group.members.values_mut() {
                m.assignment = given.remove(&m.id).unwrap_or_default();
                if let Some(w) = m.sync_waiter.take() {
                    let _ = w.send(Ok((pt.clone(), pn.clone(), m.assignment.clone())));
                }
            }
            group.transition(GroupState::Stable);
        }
        Err(e) => {
            let refused = crate::error_code::group_store_failed(group_id, &e);
            tracing::warn!(group = group_id, generation = group.generation, error = %e,
                "storing the group's assignment failed; its members rebalance");
            for m in group.members.values_mut() {
                m.assignment = Bytes::new();
                if let Some(w) = m.sync_waiter.take() {
                    let _ = w.send(Err(refused.clone()));
                }
            }
            let now = Instant::now();
            group.prepare_rebalance(now, initial_delay);
            group.maybe_complete_join(now);
        }
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
    group.validate_member(member_id, instance)?;
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
