//! ConsumerGroupHeartbeat (key 68, KIP-848): joins, heartbeats and leaves a consumer group; the answer carries
//! the member's epoch and, when it changed, its assignment (by topic id).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kafka_protocol::messages::consumer_group_heartbeat_response::{Assignment, TopicPartitions};
use kafka_protocol::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, RequestHeader,
};

use super::sb;
use crate::broker::Broker;
use crate::error::GroupError;
use crate::error_code;
use crate::group::consumer::{full_match, Heartbeat};

/// Kafka's request checks (INVALID_REQUEST), made before the group is looked at; the member id to use (v0
/// makes one for a joining member).
fn checked_member_id(
    version: i16,
    req: &ConsumerGroupHeartbeatRequest,
) -> Result<String, GroupError> {
    let mut member_id = req.member_id.to_string();
    if member_id.is_empty() && req.member_epoch == 0 {
        if version >= 1 {
            // KIP-1082: from v1 the client chooses its member id.
            return Err(GroupError::InvalidHeartbeat(
                "MemberId must be set from ConsumerGroupHeartbeat v1".into(),
            ));
        }
        member_id = uuid::Uuid::new_v4().simple().to_string();
    }
    if req.group_id.0.is_empty() {
        return Err(GroupError::InvalidHeartbeat(
            "GroupId can't be empty".into(),
        ));
    }
    if req.rack_id.as_ref().is_some_and(|r| r.is_empty()) {
        return Err(GroupError::InvalidHeartbeat("RackId can't be empty".into()));
    }
    Ok(member_id)
}

/// With an authorizer, the topics the member's regex (this heartbeat's, else the one it subscribed with) may
/// resolve to: those its principal may DESCRIBE, as Kafka 4.x filters a resolved regex with the authorizer.
fn regex_topics(
    broker: &Broker,
    req: &ConsumerGroupHeartbeatRequest,
    member_id: &str,
    topics: &BTreeMap<String, i32>,
) -> Option<BTreeSet<String>> {
    broker.authorizer()?;
    let regex = match &req.subscribed_topic_regex {
        Some(r) => Some(r.to_string()),
        None => broker
            .groups()
            .with_consumer_group(&req.group_id.0, |g| {
                g.members.get(member_id).and_then(|m| m.regex.clone())
            })
            .flatten(),
    };
    let regex = regex.filter(|r| !r.is_empty())?;
    // A regex that does not compile is refused before the group is touched; it resolves to nothing.
    let Some(re) = full_match(&regex) else {
        return Some(BTreeSet::new());
    };
    crate::guard::regex_topics(broker, &re, topics.keys())
}

/// Answers ConsumerGroupHeartbeat.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: ConsumerGroupHeartbeatRequest,
) -> ConsumerGroupHeartbeatResponse {
    let groups = broker.groups();
    // Kafka's error answers leave member_epoch at its default, 0.
    let refuse = |e: GroupError| {
        ConsumerGroupHeartbeatResponse::default()
            .with_error_code(error_code::group_code(&e))
            .with_error_message(Some(sb(e.to_string())))
    };
    if !groups.consumer_protocol_enabled() {
        return refuse(GroupError::ConsumerProtocolDisabled);
    }
    let topics = broker.registry();
    let all: Vec<(String, crate::topics::TopicMeta)> = topics.all();
    // Every topic, internal ones included: Kafka resolves names and regexes against the whole metadata image.
    let counts: BTreeMap<String, i32> =
        all.iter().map(|(t, m)| (t.clone(), m.partitions)).collect();
    let member_id = match checked_member_id(h.request_api_version, &req) {
        Ok(m) => m,
        Err(e) => return refuse(e),
    };
    let owned = req.topic_partitions.as_ref().map(|tps| {
        tps.iter()
            .filter_map(|tp| {
                let name = topics.name_of(tp.topic_id)?;
                Some((name, tp.partitions.iter().copied().collect()))
            })
            .collect()
    });
    let regex_topics = regex_topics(broker, &req, &member_id, &counts);
    let hb = Heartbeat {
        group_id: req.group_id.0.to_string(),
        member_id,
        member_epoch: req.member_epoch,
        instance_id: req.instance_id.map(|s| s.to_string()),
        rack_id: req.rack_id.map(|s| s.to_string()),
        rebalance_timeout_ms: req.rebalance_timeout_ms,
        subscribed_topic_names: req
            .subscribed_topic_names
            .map(|ts| ts.into_iter().map(|t| t.0.to_string()).collect()),
        subscribed_topic_regex: req.subscribed_topic_regex.map(|s| s.to_string()),
        server_assignor: req.server_assignor.map(|s| s.to_string()),
        regex_topics,
        owned,
        client_id: h
            .client_id
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default(),
        client_host: crate::broker::request::peer_host(),
    };
    tracing::debug!(
        group = %hb.group_id, member = %hb.member_id, epoch = hb.member_epoch,
        topics = ?hb.subscribed_topic_names, regex = ?hb.subscribed_topic_regex, owned = ?hb.owned,
        "ConsumerGroupHeartbeat"
    );
    // Kafka appends the heartbeat's records before answering it; a failed write undoes the heartbeat.
    let b = broker.clone();
    let answered = super::blocking(move || Ok(b.groups().consumer_heartbeat(hb, &counts))).await;
    let answered = match answered {
        Ok(a) => a,
        Err(e) => return refuse(crate::error_code::group_store_failed(&req.group_id.0, &e)),
    };
    tracing::debug!(group = %req.group_id.0, answer = ?answered, "ConsumerGroupHeartbeat answer");
    match answered {
        Err(e) => refuse(e),
        Ok(a) => {
            let assignment = a.assignment.map(|asg| {
                Assignment::default().with_topic_partitions(
                    asg.into_iter()
                        .filter_map(|(t, ps)| {
                            let id = all.iter().find(|(n, _)| *n == t)?.1.id;
                            Some(
                                TopicPartitions::default()
                                    .with_topic_id(id)
                                    .with_partitions(ps.into_iter().collect()),
                            )
                        })
                        .collect(),
                )
            });
            ConsumerGroupHeartbeatResponse::default()
                .with_member_id(Some(sb(a.member_id)))
                .with_member_epoch(a.member_epoch)
                .with_heartbeat_interval_ms(groups.consumer_heartbeat_interval_ms(&req.group_id.0))
                .with_assignment(assignment)
        }
    }
}
