//! KIP-848 consumer groups (`group.protocol=consumer`): ConsumerGroupHeartbeat with server-side assignment.
//!
//! As Kafka's `GroupMetadataManager`: a member joins with epoch 0, each change of the members' subscriptions
//! (or of the subscribed topics' partitions) bumps the group epoch and computes a new target assignment with the
//! group's assignor (`uniform` or `range`); each member then moves to the target one heartbeat at a time: it first
//! revokes what it must give up (keeping its epoch), then gets the target partitions no other member still
//! holds, with the target epoch. Members leave with epoch -1 (-2 for a static member) or expire after
//! `group.consumer.session.timeout.ms`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::error::GroupError;

/// topic → partitions.
pub type Assignment = BTreeMap<String, BTreeSet<i32>>;

/// One heartbeat, decoded.
#[derive(Debug, Clone, Default)]
pub struct Heartbeat {
    /// Group id.
    pub group_id: String,
    /// Member id (v1: chosen by the client; v0: "" on join).
    pub member_id: String,
    /// 0 = join, -1 = leave, -2 = static leave, else the member's epoch.
    pub member_epoch: i32,
    /// Static membership id.
    pub instance_id: Option<String>,
    /// Rack.
    pub rack_id: Option<String>,
    /// Rebalance timeout (-1 = unchanged).
    pub rebalance_timeout_ms: i32,
    /// Subscribed topics (None = unchanged).
    pub subscribed_topic_names: Option<Vec<String>>,
    /// Subscribed regex (None = unchanged).
    pub subscribed_topic_regex: Option<String>,
    /// Server assignor (None = unchanged).
    pub server_assignor: Option<String>,
    /// With an authorizer: the topics the member's regex may resolve to (those its principal may DESCRIBE).
    pub regex_topics: Option<BTreeSet<String>>,
    /// Partitions the member owns (None = unchanged).
    pub owned: Option<Assignment>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
}

/// The answer: member id, epoch, and the assignment when it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatAnswer {
    /// Member id.
    pub member_id: String,
    /// Member epoch.
    pub member_epoch: i32,
    /// The member's assignment, if it changed since the last answer.
    pub assignment: Option<Assignment>,
}

/// One member of a consumer group.
#[derive(Debug, Clone)]
pub struct ConsumerMember {
    /// Member id.
    pub id: String,
    /// Static membership id.
    pub instance_id: Option<String>,
    /// Rack.
    pub rack_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// Member epoch.
    pub epoch: i32,
    /// Epoch before the last bump (a heartbeat whose answer was lost may still carry it).
    pub previous_epoch: i32,
    /// Subscribed topic names.
    pub topics: Vec<String>,
    /// Subscribed regex (RE2/J syntax; matched with Rust's `regex`).
    pub regex: Option<String>,
    /// With an authorizer: the topics its regex may resolve to, as of its last heartbeat (Kafka's
    /// `filterTopicDescribeAuthorizedTopics`); None = every match.
    pub regex_topics: Option<BTreeSet<String>>,
    /// Preferred server assignor.
    pub assignor: Option<String>,
    /// Rebalance timeout (ms).
    pub rebalance_timeout_ms: i32,
    /// Partitions the member holds (assigned and not yet revoked).
    pub assigned: Assignment,
    /// The last assignment sent.
    pub sent: Option<Assignment>,
    /// Last heartbeat.
    pub last_seen: Instant,
    /// Since when the member has been asked to revoke partitions it still holds (Kafka's UNREVOKED_PARTITIONS
    /// state): past its rebalance timeout it is fenced.
    pub revoking_since: Option<Instant>,
}

/// A consumer group.
#[derive(Debug, Clone, Default)]
pub struct ConsumerGroup {
    /// Group epoch: bumped by every change of members or subscriptions.
    pub epoch: i32,
    /// Epoch of the target assignment.
    pub assignment_epoch: i32,
    /// Members by id.
    pub members: BTreeMap<String, ConsumerMember>,
    /// Target assignment per member.
    pub target: BTreeMap<String, Assignment>,
    /// Assignor of the target assignment.
    pub assignor: String,
    /// The subscribed topics' partition counts the target was computed from.
    pub topics_seen: BTreeMap<String, i32>,
    /// The regexes resolved against the topics. Kafka 4.x resolves a regex new to the group asynchronously,
    /// after the heartbeat that brought it: until then the target holds the members' listed topics only, and
    /// the regex's topics come with a later heartbeat (a new group epoch). A regex no member subscribes to any
    /// more is forgotten.
    pub resolved_regexes: BTreeSet<String>,
}

impl ConsumerGroup {
    /// Kafka's state name: Empty, Assigning (target behind the group epoch), Reconciling, Stable.
    pub fn state(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.assignment_epoch != self.epoch {
            "Assigning"
        } else if self.members.values().any(|m| {
            m.epoch != self.assignment_epoch || Some(&m.assigned) != self.target.get(&m.id)
        }) {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    /// Whether some member subscribes to `topic`, by name or by a regex matching it (Kafka's
    /// `ConsumerGroup.isSubscribedToTopic`; `topic` is an existing topic, so a matching regex resolves to it).
    pub fn subscribes_to(&self, topic: &str) -> bool {
        self.members.values().any(|m| subscribes(m, topic))
    }

    /// Every topic some member subscribes to (by name or a resolved regex) among `topics`.
    fn subscribed(&self, topics: &BTreeMap<String, i32>) -> BTreeMap<String, i32> {
        let resolved = |m: &ConsumerMember, topic: &str| {
            m.regex
                .as_ref()
                .is_some_and(|r| self.resolved_regexes.contains(r) && regex_resolves(m, r, topic))
        };
        topics
            .iter()
            .filter(|(t, _)| {
                self.members
                    .values()
                    .any(|m| m.topics.iter().any(|x| x == *t) || resolved(m, t))
            })
            .map(|(t, n)| (t.clone(), *n))
            .collect()
    }

    /// Kafka's asynchronous regex resolution, done after each heartbeat: the regexes the members subscribe to
    /// are resolved from now on (a new one counts from the group's next heartbeat); the others are forgotten.
    pub fn resolve_regexes(&mut self) {
        self.resolved_regexes = self
            .members
            .values()
            .filter_map(|m| m.regex.clone())
            .collect();
    }

    /// Recomputes the target assignment if the members, subscriptions or subscribed topics changed.
    fn refresh_target(&mut self, topics: &BTreeMap<String, i32>, assignor: &str, bumped: bool) {
        let seen = self.subscribed(topics);
        if !bumped && seen == self.topics_seen && self.assignor == assignor {
            return;
        }
        if !bumped {
            self.epoch += 1;
        }
        self.topics_seen = seen;
        self.assignor = assignor.to_string();
        self.target = match assignor {
            "range" => range_assign(&self.members, &self.topics_seen),
            _ => uniform_assign(&self.members, &self.topics_seen, &self.target),
        };
        self.assignment_epoch = self.epoch;
    }

    /// Moves `member` one step towards its target (revocation first), as Kafka's `CurrentAssignmentBuilder`.
    fn reconcile(&mut self, member_id: &str, owned: Option<&Assignment>, now: Instant) {
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let held_by_others: BTreeSet<(String, i32)> = self
            .members
            .values()
            .filter(|m| m.id != member_id)
            .flat_map(|m| flatten(&m.assigned))
            .collect();
        let epoch = self.assignment_epoch;
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        let revoking: BTreeSet<(String, i32)> = flatten(&m.assigned)
            .into_iter()
            .filter(|(t, p)| !target.get(t).is_some_and(|ps| ps.contains(p)))
            .collect();
        if !revoking.is_empty() {
            // The member keeps its epoch until it reports the partitions gone (its owned partitions).
            let released = owned.is_some_and(|o| {
                revoking
                    .iter()
                    .all(|(t, p)| !o.get(t).is_some_and(|ps| ps.contains(p)))
            });
            if !released {
                m.revoking_since.get_or_insert(now);
                return;
            }
        }
        m.revoking_since = None;
        let mut next: Assignment = Assignment::new();
        for (t, ps) in &target {
            for p in ps {
                let mine = m.assigned.get(t).is_some_and(|x| x.contains(p));
                if mine || !held_by_others.contains(&(t.clone(), *p)) {
                    next.entry(t.clone()).or_default().insert(*p);
                }
            }
        }
        m.assigned = next;
        if m.epoch != epoch {
            m.previous_epoch = m.epoch;
            m.epoch = epoch;
        }
    }

    /// What `member` is told to own now: its assignment minus what it must revoke.
    fn answer_for(&mut self, member_id: &str) -> Option<HeartbeatAnswer> {
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let m = self.members.get_mut(member_id)?;
        let keep: Assignment = m
            .assigned
            .iter()
            .map(|(t, ps)| {
                let tgt = target.get(t);
                let kept: BTreeSet<i32> = ps
                    .iter()
                    .filter(|p| tgt.is_some_and(|x| x.contains(p)))
                    .copied()
                    .collect();
                (t.clone(), kept)
            })
            .filter(|(_, ps)| !ps.is_empty())
            .collect();
        let changed = m.sent.as_ref() != Some(&keep);
        if changed {
            m.sent = Some(keep.clone());
        }
        Some(HeartbeatAnswer {
            member_id: m.id.clone(),
            member_epoch: m.epoch,
            assignment: changed.then_some(keep),
        })
    }

    /// Handles one heartbeat. `topics` are the broker's topics with their partition counts.
    pub fn heartbeat(
        &mut self,
        mut hb: Heartbeat,
        topics: &BTreeMap<String, i32>,
        default_assignor: &str,
        now: Instant,
    ) -> Result<HeartbeatAnswer, GroupError> {
        let member_id = hb.member_id.clone();
        // A target left behind the group epoch (a deferred subscription change) is computed now.
        let behind = self.assignment_epoch != self.epoch;
        let mut bumped = match hb.member_epoch {
            0 => self.join(&hb, now)?,
            -1 | -2 => return self.leave(&hb, member_id, topics),
            epoch => {
                self.check_member_epoch(&member_id, epoch, hb.owned.as_ref())?;
                false
            }
        };
        let mut deferred = false;
        if self.update_member(&member_id, &mut hb, now) && !bumped {
            self.epoch += 1;
            bumped = true;
            // Kafka 4.4 computes the new target off the heartbeat path (group.consumer.assignor.offload.enable,
            // default true): the heartbeat that changes a member's subscription is answered from the current
            // target (the group is Assigning), a later heartbeat gets the new one. Answering it at once made
            // librdkafka start a revocation that an unsubscribe and resubscribe right after it raced with.
            deferred = hb.member_epoch > 0;
        }
        let assignor = self
            .members
            .values()
            .find_map(|m| m.assignor.clone())
            .unwrap_or_else(|| default_assignor.to_string());
        if !deferred {
            self.refresh_target(topics, &assignor, bumped || behind);
        }
        self.reconcile(&member_id, hb.owned.as_ref(), now);
        let answer = self.answer_for(&member_id).expect("member present");
        self.resolve_regexes();
        Ok(answer)
    }

    /// A heartbeat with epoch 0: a new member joins (bumping the group epoch, returned true), a static member
    /// takes the place its instance id held, or a known member starts over.
    fn join(&mut self, hb: &Heartbeat, now: Instant) -> Result<bool, GroupError> {
        let member_id = &hb.member_id;
        if let Some(inst) = &hb.instance_id {
            // KIP-345 in KIP-848: a new member under a held instance id replaces it only once the old
            // one left with epoch -2; otherwise UNRELEASED_INSTANCE_ID.
            if let Some(old) = self
                .members
                .values()
                .find(|m| m.instance_id.as_ref() == Some(inst) && m.id != *member_id)
            {
                if old.epoch != -2 {
                    return Err(GroupError::UnreleasedInstanceId {
                        instance: inst.clone(),
                    });
                }
                let old = old.id.clone();
                let prev = self.members.remove(&old).expect("found above");
                let assigned = prev.assigned.clone();
                let target = self.target.remove(&old);
                self.insert_member(hb, now);
                let m = self.members.get_mut(member_id).expect("inserted");
                m.assigned = assigned;
                m.epoch = prev.previous_epoch.max(0);
                if let Some(t) = target {
                    self.target.insert(member_id.clone(), t);
                }
            }
        }
        if !self.members.contains_key(member_id) {
            self.insert_member(hb, now);
            self.epoch += 1;
            return Ok(true);
        }
        // A member rejoining with epoch 0 starts over (its partitions are free again).
        let m = self.members.get_mut(member_id).expect("checked");
        m.assigned.clear();
        m.sent = None;
        m.epoch = 0;
        Ok(false)
    }

    /// A heartbeat with epoch -1 (leave) or -2 (a static member leaving for a while).
    fn leave(
        &mut self,
        hb: &Heartbeat,
        member_id: String,
        topics: &BTreeMap<String, i32>,
    ) -> Result<HeartbeatAnswer, GroupError> {
        if !self.members.contains_key(&member_id) {
            return Err(GroupError::UnknownMemberId { member: member_id });
        }
        if hb.member_epoch == -2 && hb.instance_id.is_some() {
            // A static member leaving for a while keeps its place (and partitions) until its session
            // expires or a new instance takes over.
            let m = self.members.get_mut(&member_id).expect("checked");
            m.previous_epoch = m.epoch;
            m.epoch = -2;
            return Ok(HeartbeatAnswer {
                member_id,
                member_epoch: -2,
                assignment: None,
            });
        }
        self.remove(&member_id);
        self.refresh_target(topics, &self.assignor.clone(), true);
        Ok(HeartbeatAnswer {
            member_id,
            member_epoch: hb.member_epoch,
            assignment: None,
        })
    }

    /// A heartbeat of a known member must carry its epoch, or its previous one with no partition it does not
    /// own (a lost answer); otherwise FENCED_MEMBER_EPOCH.
    fn check_member_epoch(
        &self,
        member_id: &str,
        epoch: i32,
        owned: Option<&Assignment>,
    ) -> Result<(), GroupError> {
        let Some(m) = self.members.get(member_id) else {
            return Err(GroupError::UnknownMemberId {
                member: member_id.to_string(),
            });
        };
        let owned_ok = owned.is_none_or(|o| {
            flatten(o)
                .iter()
                .all(|tp| flatten(&m.assigned).contains(tp))
        });
        if epoch != m.epoch && !(epoch == m.previous_epoch && owned_ok) {
            return Err(GroupError::FencedMemberEpoch {
                member: member_id.to_string(),
                epoch,
                current: m.epoch,
            });
        }
        Ok(())
    }

    /// Takes what the heartbeat changes of the member (liveness, rebalance timeout, subscription, assignor);
    /// true when its subscription changed (the group epoch is bumped for it).
    fn update_member(&mut self, member_id: &str, hb: &mut Heartbeat, now: Instant) -> bool {
        let mut changed = false;
        let m = self.members.get_mut(member_id).expect("member present");
        m.last_seen = now;
        if hb.rebalance_timeout_ms >= 0 {
            m.rebalance_timeout_ms = hb.rebalance_timeout_ms;
        }
        if let Some(mut t) = hb.subscribed_topic_names.take() {
            t.sort();
            t.dedup();
            if t != m.topics {
                m.topics = t;
                changed = true;
            }
        }
        if let Some(r) = hb.subscribed_topic_regex.take() {
            let r = Some(r).filter(|r| !r.is_empty());
            if r != m.regex {
                m.regex = r;
                changed = true;
            }
        }
        if let Some(a) = hb.server_assignor.take() {
            m.assignor = Some(a);
        }
        m.regex_topics = hb.regex_topics.take();
        changed
    }

    fn insert_member(&mut self, hb: &Heartbeat, now: Instant) {
        self.members.insert(
            hb.member_id.clone(),
            ConsumerMember {
                id: hb.member_id.clone(),
                instance_id: hb.instance_id.clone(),
                rack_id: hb.rack_id.clone(),
                client_id: hb.client_id.clone(),
                client_host: hb.client_host.clone(),
                epoch: 0,
                previous_epoch: -1,
                topics: Vec::new(),
                regex: None,
                regex_topics: None,
                assignor: None,
                rebalance_timeout_ms: hb.rebalance_timeout_ms.max(0),
                assigned: Assignment::new(),
                sent: None,
                last_seen: now,
                revoking_since: None,
            },
        );
    }

    /// Removes a member; the group epoch is bumped (the caller recomputes the target).
    pub fn remove(&mut self, member_id: &str) {
        if self.members.remove(member_id).is_some() {
            self.target.remove(member_id);
            self.epoch += 1;
            let used: BTreeSet<&String> = self
                .members
                .values()
                .filter_map(|m| m.regex.as_ref())
                .collect();
            self.resolved_regexes.retain(|r| used.contains(r));
        }
    }

    /// Members whose session expired (`session` after their last heartbeat) are removed, and so are members
    /// that did not revoke partitions within their rebalance timeout (Kafka's rebalance timeout: the member is
    /// fenced and its partitions reassigned). Returns whether any was.
    pub fn expire(&mut self, now: Instant, session: Duration) -> bool {
        let gone = self.expired(now, session);
        for (id, why) in &gone {
            tracing::info!(member = %id, reason = why, "consumer group member fenced");
            self.remove(id);
        }
        !gone.is_empty()
    }

    /// The members [`expire`](Self::expire) would remove at `now`, with why.
    pub fn expired(&self, now: Instant, session: Duration) -> Vec<(String, &'static str)> {
        self.members
            .values()
            .filter_map(|m| {
                if now.saturating_duration_since(m.last_seen) > session {
                    return Some((m.id.clone(), "session expired"));
                }
                let timeout = Duration::from_millis(m.rebalance_timeout_ms.max(0) as u64);
                m.revoking_since
                    .filter(|since| now.saturating_duration_since(*since) > timeout)
                    .map(|_| {
                        (
                            m.id.clone(),
                            "partitions not revoked within the rebalance timeout",
                        )
                    })
            })
            .collect()
    }

    /// Recomputes the target after members expired.
    pub fn after_expiry(&mut self, topics: &BTreeMap<String, i32>) {
        let assignor = self.assignor.clone();
        self.refresh_target(topics, &assignor, true);
    }

    /// KIP-848 OffsetCommit check: the member must be in the group with its current epoch (STALE_MEMBER_EPOCH),
    /// generation -1 with no member commits only while the group is empty.
    pub fn check_commit(&self, member_id: &str, epoch: i32) -> Result<(), GroupError> {
        if epoch < 0 && member_id.is_empty() {
            return if self.members.is_empty() {
                Ok(())
            } else {
                Err(GroupError::UnknownMemberId {
                    member: String::new(),
                })
            };
        }
        let Some(m) = self.members.get(member_id) else {
            return Err(GroupError::UnknownMemberId {
                member: member_id.to_string(),
            });
        };
        if epoch != m.epoch {
            return Err(GroupError::StaleMemberEpoch {
                member: member_id.to_string(),
                epoch,
                current: m.epoch,
            });
        }
        Ok(())
    }
}

fn subscribes(m: &ConsumerMember, topic: &str) -> bool {
    m.topics.iter().any(|t| t == topic)
        || m.regex
            .as_deref()
            .is_some_and(|r| regex_resolves(m, r, topic))
}

/// Whether `m`'s regex `re` resolves to `topic`: it matches, and the member's principal may DESCRIBE it.
fn regex_resolves(m: &ConsumerMember, re: &str, topic: &str) -> bool {
    m.regex_topics.as_ref().is_none_or(|ts| ts.contains(topic)) && regex_matches(re, topic)
}

/// Whether `topic` fully matches `re` (Kafka matches the whole name). Internal topics match too: Kafka's
/// `TopicRegexResolver` matches every topic name in the metadata image, `__consumer_offsets` included.
fn regex_matches(re: &str, topic: &str) -> bool {
    full_match(re).is_some_and(|r| r.is_match(topic))
}

/// `re` matching whole topic names, if it compiles.
pub(crate) fn full_match(re: &str) -> Option<regex::Regex> {
    regex::Regex::new(&format!("^(?:{re})$")).ok()
}

fn flatten(a: &Assignment) -> BTreeSet<(String, i32)> {
    a.iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
        .collect()
}

/// Kafka's server-side `range` assignor: per topic, its subscribers in member id order get contiguous ranges,
/// the first `partitions % members` one more.
pub fn range_assign(
    members: &BTreeMap<String, ConsumerMember>,
    topics: &BTreeMap<String, i32>,
) -> BTreeMap<String, Assignment> {
    let mut out: BTreeMap<String, Assignment> = members
        .keys()
        .map(|id| (id.clone(), Assignment::new()))
        .collect();
    for (t, n) in topics {
        let subs: Vec<&String> = members
            .values()
            .filter(|m| subscribes(m, t))
            .map(|m| &m.id)
            .collect();
        if subs.is_empty() {
            continue;
        }
        let (per, extra) = (*n / subs.len() as i32, *n % subs.len() as i32);
        let mut next = 0;
        for (i, id) in subs.iter().enumerate() {
            let count = per + i32::from((i as i32) < extra);
            let ps: BTreeSet<i32> = (next..next + count).collect();
            next += count;
            if !ps.is_empty() {
                out.get_mut(*id).expect("member").insert(t.clone(), ps);
            }
        }
    }
    out
}

/// Kafka's server-side `uniform` assignor, sticky: every subscribed partition to one subscriber, balanced
/// (counts differ by at most one among members of the same subscription), keeping each partition with its
/// previous owner while that owner is under its share.
pub fn uniform_assign(
    members: &BTreeMap<String, ConsumerMember>,
    topics: &BTreeMap<String, i32>,
    previous: &BTreeMap<String, Assignment>,
) -> BTreeMap<String, Assignment> {
    let mut out: BTreeMap<String, Assignment> = members
        .keys()
        .map(|id| (id.clone(), Assignment::new()))
        .collect();
    let mut count: BTreeMap<&str, usize> = members.keys().map(|id| (id.as_str(), 0)).collect();
    let partitions: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|(t, n)| (0..*n).map(move |p| (t.clone(), p)))
        .collect();
    let eligible = |t: &str| -> Vec<&str> {
        members
            .values()
            .filter(|m| subscribes(m, t))
            .map(|m| m.id.as_str())
            .collect()
    };
    // Each member's share: its eligible partitions over the members sharing them, rounded up.
    let share: BTreeMap<&str, usize> = members
        .values()
        .map(|m| {
            let mine = partitions.iter().filter(|(t, _)| subscribes(m, t)).count();
            let peers = members
                .values()
                .filter(|o| o.topics == m.topics && o.regex == m.regex)
                .count()
                .max(1);
            (m.id.as_str(), mine.div_ceil(peers))
        })
        .collect();
    let mut unassigned = Vec::new();
    for (t, p) in &partitions {
        let owner = previous
            .iter()
            .find(|(id, a)| members.contains_key(*id) && a.get(t).is_some_and(|ps| ps.contains(p)));
        match owner {
            Some((id, _))
                if subscribes(&members[id], t) && count[id.as_str()] < share[id.as_str()] =>
            {
                out.get_mut(id)
                    .expect("member")
                    .entry(t.clone())
                    .or_default()
                    .insert(*p);
                *count.get_mut(id.as_str()).expect("member") += 1;
            }
            _ => unassigned.push((t.clone(), *p)),
        }
    }
    for (t, p) in unassigned {
        let Some(id) = eligible(&t).into_iter().min_by_key(|id| (count[id], *id)) else {
            continue;
        };
        out.get_mut(id)
            .expect("member")
            .entry(t)
            .or_default()
            .insert(p);
        *count.get_mut(id).expect("member") += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hb(member: &str, epoch: i32, topics: &[&str]) -> Heartbeat {
        Heartbeat {
            group_id: "g".into(),
            member_id: member.into(),
            member_epoch: epoch,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(topics.iter().map(|t| t.to_string()).collect()),
            ..Default::default()
        }
    }

    fn count(a: &Option<Assignment>) -> usize {
        a.as_ref()
            .map_or(0, |a| a.values().map(BTreeSet::len).sum())
    }

    /// Kafka's uniform assignor is sticky: a joining member takes only the share it needs, from the members
    /// over their share; nobody else's partitions move.
    #[test]
    fn uniform_moves_only_what_a_new_member_needs() {
        let topics = BTreeMap::from([("t".to_string(), 6)]);
        let mut g = ConsumerGroup::default();
        let now = Instant::now();
        let a = g
            .heartbeat(hb("a", 0, &["t"]), &topics, "uniform", now)
            .unwrap();
        assert_eq!(count(&a.assignment), 6);
        g.heartbeat(hb("b", 0, &["t"]), &topics, "uniform", now)
            .unwrap();
        let before_c: Assignment = g.target["a"].clone();
        g.heartbeat(hb("c", 0, &["t"]), &topics, "uniform", now)
            .unwrap();
        let after: &Assignment = &g.target["a"];
        assert_eq!(after.values().map(BTreeSet::len).sum::<usize>(), 2);
        assert!(
            after["t"].is_subset(&before_c["t"]),
            "a kept part of what it had"
        );
        let b = &g.target["b"]["t"];
        assert_eq!(b.len(), 2);
    }

    /// Kafka's range assignor: contiguous ranges per topic, the first members one more.
    #[test]
    fn range_gives_contiguous_ranges() {
        let now = Instant::now();
        let mut members = BTreeMap::new();
        for id in ["m1", "m2"] {
            let mut g = ConsumerGroup::default();
            g.insert_member(&hb(id, 0, &["t"]), now);
            let mut m = g.members.remove(id).unwrap();
            m.topics = vec!["t".into()];
            members.insert(id.to_string(), m);
        }
        let out = range_assign(&members, &BTreeMap::from([("t".to_string(), 5)]));
        assert_eq!(out["m1"]["t"], BTreeSet::from([0, 1, 2]));
        assert_eq!(out["m2"]["t"], BTreeSet::from([3, 4]));
    }

    /// A member that stops heartbeating is removed after the session timeout and its partitions go to the rest.
    #[test]
    fn an_expired_member_is_removed_and_its_partitions_reassigned() {
        let topics = BTreeMap::from([("t".to_string(), 4)]);
        let mut g = ConsumerGroup::default();
        let now = Instant::now();
        g.heartbeat(hb("a", 0, &["t"]), &topics, "uniform", now)
            .unwrap();
        g.heartbeat(hb("b", 0, &["t"]), &topics, "uniform", now)
            .unwrap();
        g.members.get_mut("a").unwrap().last_seen = now - Duration::from_secs(60);
        assert!(g.expire(now, Duration::from_secs(45)));
        g.after_expiry(&topics);
        assert_eq!(g.target["b"]["t"].len(), 4);
        assert!(!g.members.contains_key("a"));
    }
}
