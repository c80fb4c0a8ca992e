//! CreateTopics (key 19): validate-only, configs, defaults (-1 partitions / replication factor).

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, RequestHeader};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;
use crate::topic_config::{self, TOPIC_KEYS};
use crate::topics;

/// Kafka's config sources.
pub(crate) const SOURCE_TOPIC: i8 = 1;
/// DEFAULT_CONFIG.
pub(crate) const SOURCE_DEFAULT: i8 = 5;

/// Checks replica assignments on this single node: each partition must have exactly one replica, on `node`.
pub(crate) fn check_assignments<'a>(
    node: i32,
    assignments: impl IntoIterator<Item = &'a [kafka_protocol::messages::BrokerId]>,
) -> Result<()> {
    for replicas in assignments {
        if let Some(other) = replicas.iter().find(|b| b.0 != node) {
            return Err(Error::InvalidReplicaAssignment(format!(
                "unknown broker {} in replica assignment: this cluster has only broker {node}",
                other.0
            )));
        }
        if replicas.len() != 1 {
            return Err(Error::InvalidReplicaAssignment(format!(
                "{} replicas in an assignment: a single-node broker has exactly one",
                replicas.len()
            )));
        }
    }
    Ok(())
}

/// Partition count and overrides of a topic to create, checked without creating it.
fn check(
    broker: &Broker,
    t: &kafka_protocol::messages::create_topics_request::CreatableTopic,
) -> Result<(i32, BTreeMap<String, String>)> {
    let name = t.name.0.as_str();
    topics::validate_name(name)?;
    if broker.topics().get(name).is_some() {
        return Err(Error::TopicExists(name.into()));
    }
    let names: Vec<String> = broker.topics().all().into_iter().map(|(n, _)| n).collect();
    if let Some(existing) = topics::colliding(&names, name) {
        return Err(Error::TopicCollision {
            name: name.into(),
            existing,
        });
    }
    if t.replication_factor != -1 && t.replication_factor != 1 {
        return Err(Error::InvalidReplicationFactor(t.replication_factor));
    }
    let node = broker.config().node_id;
    let partitions = if !t.assignments.is_empty() {
        if t.num_partitions != -1 || t.replication_factor != -1 {
            return Err(Error::Protocol {
                api: "CreateTopics".into(),
                message:
                    "give either replica assignments or a partition count and replication factor"
                        .into(),
            });
        }
        check_assignments(node, t.assignments.iter().map(|a| a.broker_ids.as_slice()))?;
        t.assignments.len() as i32
    } else if t.num_partitions == -1 {
        broker.config().num_partitions
    } else {
        t.num_partitions
    };
    if partitions < 1 {
        return Err(Error::InvalidPartitions(format!(
            "{partitions} partitions: must be at least 1"
        )));
    }
    let configs: BTreeMap<String, String> = t
        .configs
        .iter()
        .filter_map(|c| {
            c.value
                .as_ref()
                .map(|v| (c.name.to_string(), v.to_string()))
        })
        .collect();
    broker.check_topic_configs(name, None, &configs)?;
    Ok((partitions, configs))
}

/// Answers CreateTopics.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: CreateTopicsRequest,
) -> CreateTopicsResponse {
    let version = h.request_api_version;
    let mut results = Vec::with_capacity(req.topics.len());
    for t in &req.topics {
        let mut r = CreatableTopicResult::default().with_name(t.name.clone());
        let outcome = match check(broker, t) {
            Ok((partitions, configs)) if req.validate_only => {
                Ok((uuid::Uuid::nil(), partitions, configs))
            }
            Ok((partitions, configs)) => {
                let b = broker.clone();
                let name = t.name.0.to_string();
                let c = configs.clone();
                blocking(move || b.create_topic(&name, partitions, c))
                    .await
                    .map(|m| (m.id, partitions, configs))
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok((id, partitions, configs)) => {
                if version >= 5 {
                    let cfg = topic_config::log_config(&broker.config().log, &configs)
                        .unwrap_or_default();
                    r = r
                        .with_num_partitions(partitions)
                        .with_replication_factor(1)
                        .with_configs(Some(
                            TOPIC_KEYS
                                .iter()
                                .map(|k| {
                                    CreatableTopicConfigs::default()
                                        .with_name(sb(k.name))
                                        .with_value(Some(sb(topic_config::value_of(
                                            &cfg, &configs, k.name,
                                        ))))
                                        .with_config_source(if configs.contains_key(k.name) {
                                            SOURCE_TOPIC
                                        } else {
                                            SOURCE_DEFAULT
                                        })
                                })
                                .collect(),
                        ));
                }
                if version >= 7 {
                    r = r.with_topic_id(id);
                }
            }
            Err(e) => {
                r = r.with_error_code(error_code::code(&e));
                if version >= 1 {
                    r = r.with_error_message(Some(sb(e.to_string())));
                }
                if version >= 5 {
                    r = r
                        .with_num_partitions(-1)
                        .with_replication_factor(-1)
                        .with_configs(None);
                }
            }
        }
        results.push(r);
    }
    CreateTopicsResponse::default().with_topics(results)
}
