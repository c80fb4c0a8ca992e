//! OffsetFetch (key 9): committed offsets of one group (v1-7) or of several groups (v8+).

use std::sync::Arc;

use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse, RequestHeader, TopicName};

use super::sb;
use crate::broker::Broker;

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

/// (offset, leader epoch, metadata) of one partition; -1 / -1 / "" when nothing was committed.
fn lookup(broker: &Broker, group: &str, topic: &str, p: i32) -> (i64, i32, String) {
    match broker.groups().committed(group, topic, p) {
        Some(e) => (e.offset, e.leader_epoch, e.metadata),
        None => (-1, -1, String::new()),
    }
}

/// Answers OffsetFetch.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: OffsetFetchRequest,
) -> OffsetFetchResponse {
    let version = h.request_api_version;
    if version >= 8 {
        let groups = req
            .groups
            .into_iter()
            .map(|g| {
                let id = g.group_id.0.to_string();
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
                                let (o, e, m) = lookup(broker, &id, &name.0, p);
                                OffsetFetchResponsePartitions::default()
                                    .with_partition_index(p)
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
                    let (o, e, m) = lookup(broker, &id, &name.0, p);
                    let r = OffsetFetchResponsePartition::default()
                        .with_partition_index(p)
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
