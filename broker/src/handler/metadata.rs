//! Metadata (key 3): this broker, the topics with ids and partitions, auto-creation of unknown topics.

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
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
use crate::topics::NewTopic;
use crate::topics::{TopicMeta, CONSUMER_OFFSETS, REMOTE_LOG_METADATA, TRANSACTION_STATE};

/// What this broker answers for every partition of its topics, in Metadata and DescribeTopicPartitions: it leads
/// each one, at leader epoch 0, and is its only replica and in-sync replica.
pub(crate) struct PartitionState {
    pub leader: BrokerId,
    pub leader_epoch: i32,
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
}

/// The state of every partition of this broker (see [`PartitionState`]).
pub(crate) fn partition_state(broker: &Broker) -> PartitionState {
    let node = BrokerId(broker.config().node_id);
    PartitionState {
        leader: node,
        leader_epoch: 0,
        replicas: vec![node],
        isr: vec![node],
    }
}

/// Whether a topic is answered as internal: the ones strata keeps apart ([`TopicMeta::internal`]) and
/// `__transaction_state`, as Kafka's `Topic.isInternal` (registries written before it was marked did not mark it).
pub(crate) fn is_internal(name: &str, meta: &TopicMeta) -> bool {
    meta.internal || name == TRANSACTION_STATE
}

/// The response entry of one existing topic.
pub(crate) fn topic_entry(broker: &Broker, name: &str, meta: &TopicMeta) -> MetadataResponseTopic {
    MetadataResponseTopic::default()
        .with_name(Some(TopicName(sb(name))))
        .with_topic_id(meta.id)
        .with_is_internal(is_internal(name, meta))
        .with_partitions(
            (0..meta.partitions)
                .map(|p| {
                    let s = partition_state(broker);
                    MetadataResponsePartition::default()
                        .with_partition_index(p)
                        .with_leader_id(s.leader)
                        .with_leader_epoch(s.leader_epoch)
                        .with_replica_nodes(s.replicas)
                        .with_isr_nodes(s.isr)
                })
                .collect(),
        )
}

/// Shows `__remote_log_metadata` (written by the metadata plane, not created through the registry) once its logs
/// exist, before a request that lists every topic or names it is answered.
pub(crate) fn show_remote_log_metadata(broker: &Broker) {
    if let Err(e) = broker.topics().register_internal_topic(REMOTE_LOG_METADATA) {
        warn!(error = %e, "registering {REMOTE_LOG_METADATA} failed");
    }
}

/// The topic a request names by `name` (requests before the topic-id versions) or by `id` (KIP-516 versions,
/// where the name is empty): (name, `Some(UNKNOWN_TOPIC_ID error)` when no topic has the id).
pub(crate) fn topic_by_name_or_id(
    broker: &Broker,
    name: &TopicName,
    id: Uuid,
) -> (String, Option<Error>) {
    if id.is_nil() || !name.0.is_empty() {
        return (name.0.to_string(), None);
    }
    match broker.registry().name_of(id) {
        Some(n) => (n, None),
        None => (String::new(), Some(Error::UnknownTopicId(id))),
    }
}

/// The id a Metadata request names a topic by, or `None` when it names it by name. Kafka's Java client asks by id
/// with an empty name (`MetadataRequestTopic`'s default), others with a null one; a non-empty name wins, as does
/// an empty name with no id (then the name is looked up, and is invalid).
fn requested_id(name: Option<&TopicName>, id: Uuid) -> Option<Uuid> {
    match name {
        Some(n) if !n.0.is_empty() || id.is_nil() => None,
        _ => Some(id),
    }
}

fn error_entry(name: Option<&str>, id: Uuid, e: &Error) -> MetadataResponseTopic {
    MetadataResponseTopic::default()
        .with_name(name.map(|n| TopicName(sb(n))))
        .with_topic_id(id)
        .with_error_code(error_code::code(e))
}

/// Answers Metadata. Authorized operations (cluster's in v8-10, each topic's in v8+) are every supported one, as
/// Kafka answers without an authorizer (see describe_cluster).
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: MetadataRequest,
) -> MetadataResponse {
    let version = h.request_api_version;
    let cluster_ops = version <= 10 && req.include_cluster_authorized_operations;
    let topic_ops = version >= 8 && req.include_topic_authorized_operations;
    let mut resp = answer(broker, version, req).await;
    if cluster_ops {
        resp.cluster_authorized_operations = super::describe_cluster::CLUSTER_OPERATIONS;
    }
    if topic_ops {
        for t in resp.topics.iter_mut().filter(|t| t.error_code == 0) {
            t.topic_authorized_operations = super::describe_cluster::TOPIC_OPERATIONS;
        }
    }
    resp
}

async fn answer(broker: &Arc<Broker>, version: i16, req: MetadataRequest) -> MetadataResponse {
    let mut resp = cluster(broker, version);
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
        show_remote_log_metadata(broker);
    }
    if all {
        resp.topics = broker
            .registry()
            .all()
            .iter()
            .map(|(n, m)| topic_entry(broker, n, m))
            .collect();
        return resp;
    }
    let auto_create =
        broker.config().auto_create_topics_enable && (version < 4 || req.allow_auto_topic_creation);
    let entries = entries(broker, req.topics.unwrap_or_default(), auto_create);
    let created = auto_create_topics(broker, &entries).await;
    for e in entries {
        resp.topics.push(match e {
            Entry::Ready(t) => t,
            Entry::Create(name) => match created.get(&name) {
                Some(Ok(meta)) => topic_entry(broker, &name, meta),
                Some(Err(e)) if !matches!(e, Error::TopicExists(_)) => {
                    error_entry(Some(&name), Uuid::nil(), e)
                }
                // Created meanwhile by another request: answer what exists.
                _ => match broker.registry().get(&name) {
                    Some(meta) => topic_entry(broker, &name, &meta),
                    None => {
                        error_entry(Some(&name), Uuid::nil(), &Error::UnknownTopic(name.clone()))
                    }
                },
            },
        });
    }
    resp
}

/// The response's cluster part: this broker (the controller too) and the cluster id (v2+).
fn cluster(broker: &Broker, version: i16) -> MetadataResponse {
    let (host, port) = broker.advertised();
    let node = BrokerId(broker.config().node_id);
    let mut resp = MetadataResponse::default()
        .with_brokers(vec![MetadataResponseBroker::default()
            .with_node_id(node)
            .with_host(sb(host))
            .with_port(port)])
        .with_controller_id(node);
    if version >= 2 {
        resp.cluster_id = Some(sb(broker.registry().cluster_id()));
    }
    resp
}

/// A requested topic's answer, or the name of a topic to auto-create first.
enum Entry {
    Ready(MetadataResponseTopic),
    Create(String),
}

/// Known topics are answered as they are; unknown ones to auto-create are named, to be created together (one
/// check of the partition limits for the request, one registry write), never one by one.
fn entries(broker: &Broker, topics: Vec<MetadataRequestTopic>, auto_create: bool) -> Vec<Entry> {
    let mut entries = Vec::new();
    for t in topics {
        let name = match requested_id(t.name.as_ref(), t.topic_id) {
            None => t.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default(),
            Some(id) => match broker.registry().name_of(id) {
                Some(n) => n,
                None => {
                    entries.push(Entry::Ready(error_entry(
                        None,
                        id,
                        &Error::UnknownTopicId(id),
                    )));
                    continue;
                }
            },
        };
        entries.push(match broker.registry().get(&name) {
            Some(meta) => Entry::Ready(topic_entry(broker, &name, &meta)),
            // A name no topic can have: INVALID_TOPIC_EXCEPTION, as Kafka answers (not UNKNOWN_TOPIC_OR_PARTITION).
            None if crate::topics::registry::validate_name(&name).is_err() => {
                let invalid = crate::topics::registry::validate_name(&name).unwrap_err();
                Entry::Ready(error_entry(Some(&name), Uuid::nil(), &invalid))
            }
            None if !auto_create || name == CONSUMER_OFFSETS || name == REMOTE_LOG_METADATA => {
                let unknown = Error::UnknownTopic(name.clone());
                Entry::Ready(error_entry(Some(&name), Uuid::nil(), &unknown))
            }
            None => Entry::Create(name),
        });
    }
    entries
}

/// Creates the topics `entries` name for auto-creation, in one request; each name's result.
async fn auto_create_topics(
    broker: &Arc<Broker>,
    entries: &[Entry],
) -> BTreeMap<String, Result<TopicMeta, Error>> {
    let mut wanted: Vec<NewTopic> = Vec::new();
    let mut named = std::collections::HashSet::new();
    for e in entries {
        if let Entry::Create(name) = e {
            if named.insert(name.as_str()) {
                wanted.push(NewTopic {
                    name: name.clone(),
                    partitions: broker.config().num_partitions,
                    configs: BTreeMap::new(),
                });
            }
        }
    }
    let mut created: BTreeMap<String, Result<TopicMeta, Error>> = BTreeMap::new();
    if wanted.is_empty() {
        return created;
    }
    let names: Vec<String> = wanted.iter().map(|w| w.name.clone()).collect();
    let b = broker.clone();
    let results = match blocking(move || Ok(b.topics().create_topics(wanted, false))).await {
        Ok(r) => r,
        Err(e) => names
            .iter()
            .map(|_| {
                Err(Error::io(
                    "auto-creating topics",
                    std::io::Error::other(e.to_string()),
                ))
            })
            .collect(),
    };
    let mut refused = 0usize;
    let mut first_error = None;
    for (name, r) in names.into_iter().zip(results) {
        if let Err(e) = &r {
            if !matches!(e, Error::TopicExists(_)) {
                refused += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
        created.insert(name, r);
    }
    if let Some(error) = first_error {
        warn!(refused, %error, "auto-creating topics failed");
    }
    created
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_id_takes_the_id_when_the_name_is_empty_or_null() {
        let id = Uuid::from_u128(7);
        let empty = TopicName(sb(""));
        let named = TopicName(sb("t"));
        assert_eq!(
            requested_id(Some(&empty), id),
            Some(id),
            "Java client by id"
        );
        assert_eq!(requested_id(None, id), Some(id), "null name by id");
        assert_eq!(requested_id(Some(&named), id), None, "a name wins");
        assert_eq!(requested_id(Some(&named), Uuid::nil()), None);
        assert_eq!(
            requested_id(Some(&empty), Uuid::nil()),
            None,
            "empty name, no id"
        );
        assert_eq!(
            requested_id(None, Uuid::nil()),
            Some(Uuid::nil()),
            "unknown id"
        );
    }
}
