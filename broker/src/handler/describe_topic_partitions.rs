//! DescribeTopicPartitions (key 75, KIP-966): the partitions of the topics named, or of every topic when none is
//! named, a page at a time, as Kafka 4.4's `DescribeTopicPartitionsRequestHandler` answers it. Kafka's Admin client
//! describes topics by name with it (`kafka-topics --describe` prints each partition's ELR from it).
//!
//! - Topics are answered in name order, each once, from the cursor's topic on (names before it are skipped); the
//!   cursor's partition index is where that topic starts. Named topics must include the cursor's topic and the
//!   cursor's partition must not be negative, else the whole request is INVALID_REQUEST (every named topic with
//!   that error, as Kafka's error response).
//! - At most `min(response_partition_limit, max.request.partition.size.limit)` partitions are answered, at least
//!   one. When a topic's partitions do not all fit, `next_cursor` names the first one left out; when the limit is
//!   used up exactly, it names the next topic at partition 0 (which need not exist).
//! - A named topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for a name no topic
//!   can have), with the nil id and no partitions; when listing every topic, only existing ones are answered.
//! - Each partition as Metadata answers it ([`super::metadata::partition_state`]), with an empty eligible leader
//!   replica set, last known ELR and offline replicas: a single node has no ELR (KIP-966).
//! - Authorization (`crate::guard`): named topics the principal may not DESCRIBE are answered
//!   TOPIC_AUTHORIZATION_FAILED; when listing every topic they are left out (before the limit is counted).
//!   Every answered topic carries its authorized operations (every supported one without an authorizer).

use std::collections::BTreeSet;
use std::sync::Arc;

use kafka_protocol::messages::describe_topic_partitions_response::{
    Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use kafka_protocol::messages::{
    DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, RequestHeader, TopicName,
};
use uuid::Uuid;

use super::metadata::{is_internal, partition_state, show_remote_log_metadata};
use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;
use crate::topics::registry::validate_name;
use crate::topics::{TopicMeta, CONSUMER_OFFSETS, REMOTE_LOG_METADATA, TRANSACTION_STATE};

/// Kafka's `max.request.partition.size.limit` default: the most partitions one response carries.
pub const MAX_REQUEST_PARTITION_SIZE_LIMIT: i32 = 2000;

/// Answers DescribeTopicPartitions.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeTopicPartitionsRequest,
) -> DescribeTopicPartitionsResponse {
    let all = req.topics.is_empty();
    if all
        || req
            .topics
            .iter()
            .any(|t| t.name.0.as_str() == REMOTE_LOG_METADATA)
    {
        show_remote_log_metadata(broker);
    }
    let (cursor_topic, cursor_partition) = match &req.cursor {
        Some(c) => (c.topic_name.0.to_string(), Some(c.partition_index)),
        None => (String::new(), None),
    };
    // Named topics, from the cursor's on, each once; every topic is listed in `page` (lazily: only as far as the
    // limit reaches, each checked for DESCRIBE there).
    let named: BTreeSet<String> = req
        .topics
        .iter()
        .map(|t| t.name.0.to_string())
        .filter(|n| *n >= cursor_topic)
        .collect();
    let invalid = match cursor_partition {
        Some(_) if !all && !named.contains(&cursor_topic) => Some(format!(
            "the cursor's topic {cursor_topic:?} is not among the topics named"
        )),
        Some(p) if p < 0 => Some(format!("the cursor's partition {p} is negative")),
        _ => None,
    };
    if let Some(message) = invalid {
        let e = Error::Protocol {
            api: "DescribeTopicPartitions".into(),
            message,
        };
        return error_response(&req, &e);
    }
    // Kafka answers at least one partition.
    let limit = MAX_REQUEST_PARTITION_SIZE_LIMIT
        .min(req.response_partition_limit)
        .max(1);
    let start = |name: &str| match cursor_partition {
        Some(p) if name == cursor_topic => p,
        _ => 0,
    };
    let mut resp = if all {
        let describable = crate::guard::topic_filter(broker);
        let topics = broker
            .registry()
            .names_from(&cursor_topic)
            .into_iter()
            .filter(move |n| describable.as_ref().is_none_or(|may| may(n)));
        page(broker, topics, limit, start, all)
    } else {
        page(broker, named.into_iter(), limit, start, all)
    };
    for t in &mut resp.topics {
        t.topic_authorized_operations = super::describe_cluster::TOPIC_OPERATIONS;
    }
    resp
}

/// Kafka's `describeTopicResponse`: the topics in order until `limit` partitions are answered.
fn page(
    broker: &Broker,
    topics: impl Iterator<Item = String>,
    limit: i32,
    start: impl Fn(&str) -> i32,
    all: bool,
) -> DescribeTopicPartitionsResponse {
    let mut resp = DescribeTopicPartitionsResponse::default();
    let mut remaining = limit;
    for name in topics {
        if remaining <= 0 {
            // The previous topics used the limit up exactly: the next page starts at this one.
            resp.next_cursor = Some(cursor(&name, 0));
            break;
        }
        let Some(meta) = broker.registry().get(&name) else {
            if !all {
                resp.topics.push(missing_topic(&name));
            }
            continue;
        };
        let (entry, next) = topic(broker, &name, &meta, start(&name), remaining);
        remaining -= entry.partitions.len() as i32;
        resp.topics.push(entry);
        if let Some(next) = next {
            resp.next_cursor = Some(cursor(&name, next));
            break;
        }
    }
    resp
}

/// One existing topic's partitions from `first`, at most `max` of them, and the index of the first one left out.
/// Indexes are counted as Kafka's `int`s (a cursor near `i32::MAX` wraps, and negative indexes are skipped).
fn topic(
    broker: &Broker,
    name: &str,
    meta: &TopicMeta,
    first: i32,
    max: i32,
) -> (DescribeTopicPartitionsResponseTopic, Option<i32>) {
    let upper = meta.partitions.min(first.wrapping_add(max));
    let partitions = (first.max(0)..upper)
        .map(|p| {
            let s = partition_state(broker);
            DescribeTopicPartitionsResponsePartition::default()
                .with_partition_index(p)
                .with_leader_id(s.leader)
                .with_leader_epoch(s.leader_epoch)
                .with_replica_nodes(s.replicas)
                .with_isr_nodes(s.isr)
                .with_eligible_leader_replicas(Some(Vec::new()))
                .with_last_known_elr(Some(Vec::new()))
                .with_offline_replicas(Vec::new())
        })
        .collect();
    let entry = DescribeTopicPartitionsResponseTopic::default()
        .with_name(Some(TopicName(sb(name))))
        .with_topic_id(meta.id)
        .with_is_internal(is_internal(name, meta))
        .with_partitions(partitions);
    (entry, (upper < meta.partitions).then_some(upper))
}

/// A named topic that does not exist.
fn missing_topic(name: &str) -> DescribeTopicPartitionsResponseTopic {
    let e = match validate_name(name) {
        Ok(()) => Error::UnknownTopic(name.to_string()),
        Err(invalid) => invalid,
    };
    DescribeTopicPartitionsResponseTopic::default()
        .with_error_code(error_code::code(&e))
        .with_name(Some(TopicName(sb(name))))
        .with_topic_id(Uuid::nil())
        // Kafka's `Topic.isInternal`, which knows the two topics every Kafka cluster has.
        .with_is_internal(name == CONSUMER_OFFSETS || name == TRANSACTION_STATE)
}

fn cursor(topic: &str, partition: i32) -> Cursor {
    Cursor::default()
        .with_topic_name(TopicName(sb(topic)))
        .with_partition_index(partition)
}

/// Kafka's error response: every named topic (in request order) with the error, nothing else.
fn error_response(
    req: &DescribeTopicPartitionsRequest,
    e: &Error,
) -> DescribeTopicPartitionsResponse {
    tracing::debug!(%e, "DescribeTopicPartitions refused");
    DescribeTopicPartitionsResponse::default().with_topics(
        req.topics
            .iter()
            .map(|t| {
                DescribeTopicPartitionsResponseTopic::default()
                    .with_error_code(error_code::code(e))
                    .with_name(Some(t.name.clone()))
            })
            .collect(),
    )
}
