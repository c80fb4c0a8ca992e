//! Metadata (key 3): this broker, the topics with ids and partitions, auto-creation of unknown topics.

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId, MetadataRequest, MetadataResponse, RequestHeader, TopicName,
};
use tracing::warn;
use uuid::Uuid;

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;
use crate::topics::{TopicMeta, CONSUMER_OFFSETS, REMOTE_LOG_METADATA};

/// The response entry of one existing topic.
pub(crate) fn topic_entry(broker: &Broker, name: &str, meta: &TopicMeta) -> MetadataResponseTopic {
    let node = BrokerId(broker.config().node_id);
    MetadataResponseTopic::default()
        .with_name(Some(TopicName(sb(name))))
        .with_topic_id(meta.id)
        .with_is_internal(meta.internal)
        .with_partitions(
            (0..meta.partitions)
                .map(|p| {
                    MetadataResponsePartition::default()
                        .with_partition_index(p)
                        .with_leader_id(node)
                        .with_leader_epoch(0)
                        .with_replica_nodes(vec![node])
                        .with_isr_nodes(vec![node])
                })
                .collect(),
        )
}

fn error_entry(name: Option<&str>, id: Uuid, code: i16) -> MetadataResponseTopic {
    MetadataResponseTopic::default()
        .with_name(name.map(|n| TopicName(sb(n))))
        .with_topic_id(id)
        .with_error_code(code)
}

/// Answers Metadata.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: MetadataRequest,
) -> MetadataResponse {
    let version = h.request_api_version;
    let (host, port) = broker.advertised();
    let node = BrokerId(broker.config().node_id);
    let mut resp = MetadataResponse::default()
        .with_brokers(vec![MetadataResponseBroker::default()
            .with_node_id(node)
            .with_host(sb(host))
            .with_port(port)])
        .with_controller_id(node);
    if version >= 2 {
        resp.cluster_id = Some(sb(broker.topics().cluster_id()));
    }

    let all = match &req.topics {
        None => true,
        Some(t) => t.is_empty() && version == 0,
    };
    // Internal topics written by other components (the metadata plane) appear once their logs exist.
    let wants_rlm = req.topics.iter().flatten().any(|t| {
        t.name
            .as_ref()
            .is_some_and(|n| n.0.as_str() == REMOTE_LOG_METADATA)
    });
    if all || wants_rlm {
        if let Err(e) = broker.register_internal_topic(REMOTE_LOG_METADATA) {
            warn!(error = %e, "registering {REMOTE_LOG_METADATA} failed");
        }
    }
    if all {
        resp.topics = broker
            .topics()
            .all()
            .iter()
            .map(|(n, m)| topic_entry(broker, n, m))
            .collect();
        return resp;
    }
    let auto_create =
        broker.config().auto_create_topics_enable && (version < 4 || req.allow_auto_topic_creation);
    for t in req.topics.unwrap_or_default() {
        let name = match (&t.name, t.topic_id) {
            (Some(n), _) => n.0.to_string(),
            (None, id) => match broker.topics().name_of(id) {
                Some(n) => n,
                None => {
                    resp.topics
                        .push(error_entry(None, id, error_code::UNKNOWN_TOPIC_ID));
                    continue;
                }
            },
        };
        if let Some(meta) = broker.topics().get(&name) {
            resp.topics.push(topic_entry(broker, &name, &meta));
            continue;
        }
        if !auto_create || name == CONSUMER_OFFSETS || name == REMOTE_LOG_METADATA {
            resp.topics.push(error_entry(
                Some(&name),
                Uuid::nil(),
                error_code::UNKNOWN_TOPIC_OR_PARTITION,
            ));
            continue;
        }
        let b = broker.clone();
        let n = name.clone();
        let partitions = broker.config().num_partitions;
        match blocking(move || b.create_topic(&n, partitions, BTreeMap::new())).await {
            Ok(meta) => resp.topics.push(topic_entry(broker, &name, &meta)),
            Err(Error::TopicExists(_)) => match broker.topics().get(&name) {
                Some(meta) => resp.topics.push(topic_entry(broker, &name, &meta)),
                None => resp.topics.push(error_entry(
                    Some(&name),
                    Uuid::nil(),
                    error_code::UNKNOWN_TOPIC_OR_PARTITION,
                )),
            },
            Err(e) => {
                warn!(topic = %name, error = %e, "auto-creating a topic failed");
                resp.topics
                    .push(error_entry(Some(&name), Uuid::nil(), error_code::code(&e)));
            }
        }
    }
    resp
}
