//! OffsetDelete (key 47, KIP-496): removes a group's committed offsets of some partitions, refused per partition
//! (GROUP_SUBSCRIBED_TO_TOPIC) for topics a member of the non-empty group subscribes to.

use std::sync::Arc;

use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::{OffsetDeleteRequest, OffsetDeleteResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers OffsetDelete.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: OffsetDeleteRequest,
) -> OffsetDeleteResponse {
    let group = req.group_id.0.to_string();
    // Partitions of unknown topics (or out of range) are answered UNKNOWN_TOPIC_OR_PARTITION, as Kafka does.
    let mut known = Vec::new();
    for t in &req.topics {
        let meta = broker.registry().get(&t.name.0);
        for p in &t.partitions {
            if meta
                .as_ref()
                .is_some_and(|m| (0..m.partitions).contains(&p.partition_index))
            {
                known.push((t.name.0.to_string(), p.partition_index));
            }
        }
    }
    let b = broker.clone();
    let g = group.clone();
    let asked = known.clone();
    let outcomes = match blocking(move || Ok(b.groups().delete_offsets(&g, &asked)))
        .await
        .unwrap_or_else(|e| Err(Error::Internal(e.to_string())))
    {
        Ok(outcomes) => outcomes,
        Err(e) => return OffsetDeleteResponse::default().with_error_code(error_code::code(&e)),
    };
    let code_of = |topic: &str, partition: i32| match known
        .iter()
        .zip(&outcomes)
        .find(|((t, p), _)| t == topic && *p == partition)
    {
        Some((_, outcome)) => error_code::of(outcome),
        None => error_code::code(&Error::UnknownTopicOrPartition(format!(
            "{topic}-{partition}"
        ))),
    };
    let topics = req
        .topics
        .into_iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    OffsetDeleteResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code_of(&t.name.0, p.partition_index))
                })
                .collect();
            OffsetDeleteResponseTopic::default()
                .with_name(t.name)
                .with_partitions(partitions)
        })
        .collect();
    OffsetDeleteResponse::default().with_topics(topics)
}
