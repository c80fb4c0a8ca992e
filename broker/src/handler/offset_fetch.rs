//! OffsetFetch (key 9): committed offsets of one group (v1-7) or of several groups (v8+).

use std::sync::Arc;

use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse, RequestHeader, TopicName};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// (topic, partitions); `None` = every committed partition of the group.
fn wanted(
    broker: &Broker,
    group: &str,
    topics: Option<Vec<(TopicName, Vec<i32>)>>,
) -> Vec<(TopicName, Vec<i32>)> {
    match topics {
        Some(t) => t,
        None => {
            let mut out: Vec<(TopicName, Vec<i32>)> = Vec::new();
            for ((t, p), _) in broker.groups().committed_all(group) {
                match out.last_mut() {
                    Some((name, parts)) if name.0.as_str() == t => parts.push(p),
                    _ => out.push((TopicName(sb(t)), vec![p])),
                }
            }
            out
        }
    }
}

/// (offset, leader epoch, metadata, error code) of one partition; -1 / -1 / "" when nothing was committed. With
/// `require_stable` (KIP-447, v7+), a partition whose offsets wait for a transaction to end is
/// UNSTABLE_OFFSET_COMMIT (the consumer retries) instead of answering the older offset.
fn lookup(
    broker: &Broker,
    group: &str,
    topic: &str,
    p: i32,
    require_stable: bool,
) -> (i64, i32, String, i16) {
    let tp = (topic.to_string(), p);
    if require_stable && broker.groups().offset_store().has_pending(group, &tp) {
        let e = Error::UnstableOffsetCommit {
            group: group.to_string(),
            topic: topic.to_string(),
            partition: p,
        };
        return (-1, -1, String::new(), error_code::code(&e));
    }
    match broker.groups().committed(group, topic, p) {
        Some(e) => (e.offset, e.leader_epoch, e.metadata, error_code::NONE),
        None => (-1, -1, String::new(), error_code::NONE),
    }
}

/// Answers OffsetFetch.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: OffsetFetchRequest,
) -> OffsetFetchResponse {
    let version = h.request_api_version;
    let require_stable = version >= 7 && req.require_stable;
    if version >= 8 {
        let groups = req
            .groups
            .into_iter()
            .map(|g| {
                let id = g.group_id.0.to_string();
                // v9+ (KIP-848): a consumer group's member fetches with its member id and epoch, checked as
                // Kafka's ConsumerGroup.validateOffsetFetch (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH for the
                // whole group); classic groups are not checked (Kafka's ClassicGroup.validateOffsetFetch).
                let checked = broker.groups().check_consumer_fetch(
                    &id,
                    g.member_id.as_deref(),
                    g.member_epoch,
                );
                if let Some(Err(e)) = checked {
                    return OffsetFetchResponseGroup::default()
                        .with_group_id(g.group_id)
                        .with_error_code(error_code::group_code(&e));
                }
                let topics = g.topics.map(|ts| {
                    ts.into_iter()
                        .map(|t| (t.name, t.partition_indexes))
                        .collect()
                });
                let topics = wanted(broker, &id, topics)
                    .into_iter()
                    .map(|(name, parts)| {
                        let partitions = parts
                            .into_iter()
                            .map(|p| {
                                let (o, e, m, code) =
                                    lookup(broker, &id, &name.0, p, require_stable);
                                OffsetFetchResponsePartitions::default()
                                    .with_partition_index(p)
                                    .with_error_code(code)
                                    .with_committed_offset(o)
                                    .with_committed_leader_epoch(e)
                                    .with_metadata(Some(sb(m)))
                            })
                            .collect();
                        OffsetFetchResponseTopics::default()
                            .with_name(name)
                            .with_partitions(partitions)
                    })
                    .collect();
                OffsetFetchResponseGroup::default()
                    .with_group_id(g.group_id)
                    .with_topics(topics)
            })
            .collect();
        return OffsetFetchResponse::default().with_groups(groups);
    }
    let id = req.group_id.0.to_string();
    let topics = req.topics.map(|ts| {
        ts.into_iter()
            .map(|t| (t.name, t.partition_indexes))
            .collect()
    });
    let topics = wanted(broker, &id, topics)
        .into_iter()
        .map(|(name, parts)| {
            let partitions = parts
                .into_iter()
                .map(|p| {
                    let (o, e, m, code) = lookup(broker, &id, &name.0, p, require_stable);
                    let r = OffsetFetchResponsePartition::default()
                        .with_partition_index(p)
                        .with_error_code(code)
                        .with_committed_offset(o)
                        .with_metadata(Some(sb(m)));
                    if version >= 5 {
                        r.with_committed_leader_epoch(e)
                    } else {
                        r
                    }
                })
                .collect();
            OffsetFetchResponseTopic::default()
                .with_name(name)
                .with_partitions(partitions)
        })
        .collect();
    OffsetFetchResponse::default().with_topics(topics)
}
