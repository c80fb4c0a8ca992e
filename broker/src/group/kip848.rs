//! The coordinator's KIP-848 side: consumer groups next to classic ones (a group id belongs to one protocol; a
//! member of the other is refused while the group has members, as Kafka does with
//! `group.consumer.migration.policy=disabled`, and takes the id over once it is empty, as Kafka does with any
//! policy), their session expiry and offset commit checks.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use uuid::Uuid;

use super::consumer::{ConsumerGroup, Heartbeat, HeartbeatAnswer};
use super::consumer_persist::{self, TopicIds};
use super::{valid_group_id, GroupCoordinator, ListedGroup};
use crate::error::{GroupError, Result};
use crate::topics::TopicManager;

/// Topic ids from the broker's topic registry.
struct RegistryIds<'a>(Option<&'a TopicManager>);

impl TopicIds for RegistryIds<'_> {
    fn id_of(&self, name: &str) -> Option<Uuid> {
        self.0?.registry().get(name).map(|m| m.id)
    }
    fn name_of(&self, id: Uuid) -> Option<String> {
        self.0?.registry().name_of(id)
    }
}

/// Kafka's group type of KIP-848 groups.
pub const CONSUMER: &str = "consumer";

impl GroupCoordinator {
    fn consumer_groups(
        &self,
    ) -> parking_lot::MutexGuard<'_, std::collections::HashMap<String, ConsumerGroup>> {
        self.consumer.lock()
    }

    /// Whether `group_id` is a non-empty KIP-848 group (a classic JoinGroup for it is refused).
    pub(crate) fn is_consumer_group(&self, group_id: &str) -> bool {
        self.consumer_groups()
            .get(group_id)
            .is_some_and(|g| !g.members.is_empty())
    }

    /// Of `topics`, those the members of the non-empty KIP-848 group `group_id` subscribe to (by name or regex);
    /// `None` when there is no such group.
    pub(crate) fn consumer_group_subscribed<'a>(
        &self,
        group_id: &str,
        topics: impl Iterator<Item = &'a str>,
    ) -> Option<std::collections::HashSet<String>> {
        let groups = self.consumer_groups();
        let g = groups.get(group_id).filter(|g| !g.members.is_empty())?;
        Some(
            topics
                .filter(|t| g.subscribes_to(t))
                .map(str::to_string)
                .collect(),
        )
    }

    /// Drops an empty consumer group (DeleteGroups); whether there was one.
    pub(crate) fn forget_consumer_group(&self, group_id: &str) -> bool {
        let mut groups = self.consumer_groups();
        if groups.get(group_id).is_some_and(|g| g.members.is_empty()) {
            groups.remove(group_id);
            return true;
        }
        false
    }

    /// Kafka's `maybeDeleteEmptyConsumerGroup`, run before a classic JoinGroup: an empty consumer group of that id
    /// is deleted (tombstones for its records; its committed offsets stay) so a classic group takes the id. A
    /// failed write leaves the consumer group as it was. Blocking.
    pub fn replace_empty_consumer_group(&self, group_id: &str) -> Result<()> {
        let empty = |groups: &std::collections::HashMap<String, ConsumerGroup>| {
            groups.get(group_id).is_some_and(|g| g.members.is_empty())
        };
        // Most joins find no consumer group: they do not wait for the KIP-848 writer.
        if !empty(&self.consumer_groups()) {
            return Ok(());
        }
        let _one_writer = self.persist.lock();
        let removed = {
            let mut groups = self.consumer_groups();
            // Checked again under the writer lock: a heartbeat may have joined since.
            empty(&groups).then(|| groups.remove(group_id)).flatten()
        };
        let Some(group) = removed else {
            return Ok(());
        };
        if let Err(e) = self.store_consumer_group(group_id) {
            self.consumer_groups()
                .entry(group_id.to_string())
                .or_insert(group);
            return Err(e);
        }
        tracing::info!(
            group = group_id,
            "empty consumer group deleted for a classic member (its offsets are kept)"
        );
        Ok(())
    }

    /// Run before a ConsumerGroupHeartbeat: a classic group of that id with members refuses it (WrongGroupType);
    /// an empty one is deleted, as Kafka's `maybeDeleteEmptyClassicGroup` (a tombstone for its metadata; its
    /// committed offsets stay), so a consumer group takes the id.
    fn replace_empty_classic_group(&self, group_id: &str) -> Result<(), GroupError> {
        let removed = {
            let mut groups = self.lock();
            match groups.get(group_id) {
                Some(g) if !g.members.is_empty() => {
                    return Err(GroupError::WrongGroupType {
                        group: group_id.to_string(),
                        wanted: CONSUMER,
                    })
                }
                Some(_) => groups.remove(group_id),
                None => None,
            }
        };
        let Some(group) = removed else {
            return Ok(());
        };
        if let Err(e) = self.offsets.store_group(group_id, None) {
            self.lock().entry(group_id.to_string()).or_insert(group);
            return Err(crate::error_code::group_store_failed(group_id, &e));
        }
        tracing::info!(
            group = group_id,
            "empty classic group deleted for a consumer-protocol member (its offsets are kept)"
        );
        Ok(())
    }

    /// ConsumerGroupHeartbeat, answered once its records are in `__consumer_offsets` (as Kafka's coordinator
    /// runtime appends a heartbeat's records before answering). A failed write undoes the heartbeat — the group
    /// is what it was, as Kafka reverts to its last written state — and is answered with Kafka's mapping of
    /// the append error ([`GroupError::StoreFailed`]). `topics`: the broker's topics and partition counts.
    /// Blocking.
    pub fn consumer_heartbeat(
        &self,
        hb: Heartbeat,
        topics: &BTreeMap<String, i32>,
    ) -> Result<HeartbeatAnswer, GroupError> {
        let _one_writer = self.persist.lock();
        let group_id = hb.group_id.clone();
        let before = self.consumer_groups().get(&group_id).cloned();
        let answer = self.consumer_heartbeat_in_memory(hb, topics)?;
        match self.store_consumer_group(&group_id) {
            Ok(()) => Ok(answer),
            Err(e) => {
                tracing::warn!(group = %group_id, error = %e,
                    "storing the heartbeat's consumer group records failed; the heartbeat is undone");
                let mut groups = self.consumer_groups();
                match before {
                    Some(g) => groups.insert(group_id.clone(), g),
                    None => groups.remove(&group_id),
                };
                Err(crate::error_code::group_store_failed(&group_id, &e))
            }
        }
    }

    fn consumer_heartbeat_in_memory(
        &self,
        hb: Heartbeat,
        topics: &BTreeMap<String, i32>,
    ) -> Result<HeartbeatAnswer, GroupError> {
        if !valid_group_id(&hb.group_id) {
            return Err(GroupError::InvalidGroupId(hb.group_id));
        }
        if hb.member_epoch == 0 {
            // Kafka's join validation: a member id (v1: the client's), a rebalance timeout, a subscription.
            if hb.rebalance_timeout_ms < 0 {
                return Err(GroupError::InvalidHeartbeat(
                    "RebalanceTimeoutMs must be provided when joining".into(),
                ));
            }
            if hb.subscribed_topic_names.is_none() && hb.subscribed_topic_regex.is_none() {
                return Err(GroupError::InvalidHeartbeat(
                    "SubscribedTopicNames or SubscribedTopicRegex must be set when joining".into(),
                ));
            }
        }
        if let Some(r) = &hb.subscribed_topic_regex {
            if regex::Regex::new(r).is_err() {
                return Err(GroupError::InvalidHeartbeat(format!(
                    "SubscribedTopicRegex {r:?} is not a valid regular expression"
                )));
            }
        }
        if let Some(a) = &hb.server_assignor {
            if !self.consumer_assignors.contains(a) {
                return Err(GroupError::UnsupportedAssignor {
                    name: a.clone(),
                    known: self.consumer_assignors.clone(),
                });
            }
        }
        self.replace_empty_classic_group(&hb.group_id)?;
        let default_assignor = self.default_assignor();
        let mut groups = self.consumer_groups();
        if let Some(g) = groups.get(&hb.group_id) {
            // Kafka's throwIfConsumerGroupIsFull: a member not yet in a full group is refused.
            if g.members.len() >= self.consumer_max_size && !g.members.contains_key(&hb.member_id) {
                return Err(GroupError::GroupMaxSizeReached {
                    max: self.consumer_max_size,
                });
            }
        }
        let group = groups.entry(hb.group_id.clone()).or_default();
        group.heartbeat(hb, topics, &default_assignor, Instant::now())
    }

    fn default_assignor(&self) -> String {
        self.consumer_assignors
            .first()
            .cloned()
            .unwrap_or_else(|| "uniform".into())
    }

    /// Rebuilds the consumer groups from the records [`OffsetStore::load`](super::offsets::OffsetStore::load)
    /// replayed (their members continue with their epochs and assignments; sessions start now).
    pub(crate) fn load_consumer_groups(&self) {
        let ids = RegistryIds(self.offsets.topics().map(|t| t.as_ref()));
        let assignor = self.default_assignor();
        let now = Instant::now();
        let mut groups = self.consumer_groups();
        for (id, records) in self.offsets.stored_consumer_records() {
            let g = consumer_persist::group_from_records(&id, &records, &ids, &assignor, now);
            tracing::info!(group = %id, epoch = g.epoch, members = g.members.len(), state = g.state(),
                "consumer group loaded");
            groups.insert(id, g);
        }
    }

    /// Writes what changed in consumer group `group_id`'s records (all tombstones if the group is gone), as
    /// Kafka appends a heartbeat's records before answering it. Blocking.
    pub fn persist_consumer_group(&self, group_id: &str) -> Result<()> {
        let _one_writer = self.persist.lock();
        self.store_consumer_group(group_id)
    }

    /// [`persist_consumer_group`](Self::persist_consumer_group) with the writer lock held.
    fn store_consumer_group(&self, group_id: &str) -> Result<()> {
        let ids = RegistryIds(self.offsets.topics().map(|t| t.as_ref()));
        let wanted = {
            let groups = self.consumer_groups();
            match groups.get(group_id) {
                Some(g) => consumer_persist::records_of(group_id, g, &ids),
                None => Default::default(),
            }
        };
        self.offsets.store_consumer_records(group_id, wanted)
    }

    /// Periodic: KIP-848 members past `group.consumer.session.timeout.ms`, or not revoking within their rebalance
    /// timeout, are removed, the target is recomputed over the topics the group subscribed to, and the group's
    /// records are written. A failed write leaves the group as it was, so the next tick tries again (Kafka's
    /// coordinator timers retry an operation whose write failed). Blocking.
    pub(crate) fn expire_consumer_members(&self) {
        let _one_writer = self.persist.lock();
        let now = Instant::now();
        let expiring: Vec<String> = self
            .consumer_groups()
            .iter()
            .filter(|(id, g)| !g.expired(now, self.consumer_session(id)).is_empty())
            .map(|(id, _)| id.clone())
            .collect();
        for id in expiring {
            let session = self.consumer_session(&id);
            let before = {
                let mut groups = self.consumer_groups();
                let Some(g) = groups.get_mut(&id) else {
                    continue;
                };
                let before = g.clone();
                if g.expire(now, session) {
                    let topics = g.topics_seen.clone();
                    g.after_expiry(&topics);
                }
                before
            };
            if let Err(e) = self.store_consumer_group(&id) {
                tracing::warn!(group = %id, error = %e,
                    "storing consumer group records after expiry failed; the members stay until it is written");
                self.consumer_groups().insert(id, before);
            }
        }
    }

    /// OffsetFetch v9+ of a consumer group, as Kafka's `ConsumerGroup.validateOffsetFetch`: without a member id
    /// and with epoch -1 (admin tools) anyone fetches; otherwise the member must be in the group
    /// (UNKNOWN_MEMBER_ID) with its current epoch (STALE_MEMBER_EPOCH). `None`: not a consumer group.
    pub fn check_consumer_fetch(
        &self,
        group_id: &str,
        member_id: Option<&str>,
        epoch: i32,
    ) -> Option<Result<(), GroupError>> {
        let groups = self.consumer_groups();
        let g = groups.get(group_id)?;
        if member_id.is_none() && epoch < 0 {
            return Some(Ok(()));
        }
        let member_id = member_id.unwrap_or_default();
        let Some(m) = g.members.get(member_id) else {
            return Some(Err(GroupError::UnknownMemberId {
                member: member_id.to_string(),
            }));
        };
        Some(if m.epoch == epoch {
            Ok(())
        } else {
            Err(GroupError::StaleMemberEpoch {
                member: member_id.to_string(),
                epoch,
                current: m.epoch,
            })
        })
    }

    /// The KIP-848 commit check of `group_id`, if it is a consumer group.
    pub(crate) fn check_consumer_commit(
        &self,
        group_id: &str,
        member_id: &str,
        epoch: i32,
    ) -> Option<Result<(), GroupError>> {
        let groups = self.consumer_groups();
        let g = groups.get(group_id)?;
        Some(g.check_commit(member_id, epoch))
    }

    /// Runs `f` on a consumer group (ConsumerGroupDescribe).
    pub fn with_consumer_group<T>(
        &self,
        group_id: &str,
        f: impl FnOnce(&ConsumerGroup) -> T,
    ) -> Option<T> {
        self.consumer_groups().get(group_id).map(f)
    }

    /// The consumer groups, for ListGroups.
    pub(crate) fn list_consumer_groups(&self) -> Vec<ListedGroup> {
        self.consumer_groups()
            .iter()
            .filter(|(id, g)| !g.members.is_empty() || g.epoch > 0 || self.offsets.has_offsets(id))
            .map(|(id, g)| ListedGroup {
                group_id: id.clone(),
                protocol_type: "consumer".into(),
                state: g.state(),
                group_type: CONSUMER,
            })
            .collect()
    }

    /// The KIP-848 heartbeat interval (ms) given to the members of `group_id`: its `consumer.heartbeat.interval.ms`
    /// group config, else the broker's `group.consumer.heartbeat.interval.ms`.
    pub fn consumer_heartbeat_interval_ms(&self, group_id: &str) -> i32 {
        self.configs
            .int(group_id, "consumer.heartbeat.interval.ms")
            .unwrap_or(self.consumer_heartbeat_ms)
    }

    /// The KIP-848 session timeout of `group_id`: its `consumer.session.timeout.ms` group config, else the broker's
    /// `group.consumer.session.timeout.ms`.
    fn consumer_session(&self, group_id: &str) -> Duration {
        let ms = self
            .configs
            .int(group_id, "consumer.session.timeout.ms")
            .unwrap_or(self.consumer_session_ms);
        Duration::from_millis(ms.max(0) as u64)
    }

    /// Whether the consumer protocol is enabled (`group.coordinator.rebalance.protocols`).
    pub fn consumer_protocol_enabled(&self) -> bool {
        self.consumer_enabled
    }
}
