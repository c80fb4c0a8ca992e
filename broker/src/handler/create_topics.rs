//! CreateTopics (key 19): validate-only, configs, defaults (-1 partitions / replication factor).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, RequestHeader};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::config::topic::{self, TOPIC_CONFIG};
use crate::error::{Error, Result};
use crate::error_code;
use crate::topics;
use crate::topics::NewTopic;

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

/// The topic a request entry asks for, resolved (default partition count, assignments) and checked for what
/// only the request can tell (replication factor, assignments); the broker checks the rest.
fn shape(
    broker: &Broker,
    t: &kafka_protocol::messages::create_topics_request::CreatableTopic,
) -> Result<NewTopic> {
    let name = t.name.0.as_str();
    topics::validate_name(name)?;
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
        // Kafka's ReplicationControlManager: the assigned partitions are 0, 1, ... n-1, each once.
        let mut indexes: Vec<i32> = t.assignments.iter().map(|a| a.partition_index).collect();
        indexes.sort_unstable();
        if indexes.iter().enumerate().any(|(i, p)| *p != i as i32) {
            return Err(Error::InvalidReplicaAssignment(format!(
                "partitions should be a consecutive 0-based integer sequence, got {indexes:?}"
            )));
        }
        i32::try_from(t.assignments.len()).unwrap_or(i32::MAX)
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
    Ok(NewTopic {
        name: name.to_string(),
        partitions,
        configs,
    })
}

/// The names `req` gives more than once; the later entries of each are dropped (it is answered once).
fn keep_first_of_each_name(req: &mut CreateTopicsRequest) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let twice: BTreeSet<String> = req
        .topics
        .iter()
        .filter(|t| !seen.insert(t.name.0.as_str()))
        .map(|t| t.name.0.to_string())
        .collect();
    let mut answered = BTreeSet::new();
    req.topics
        .retain(|t| !twice.contains(t.name.0.as_str()) || answered.insert(t.name.0.to_string()));
    twice
}

/// Answers CreateTopics: every topic is checked and the request's partitions are held against the limits
/// before any is created; the registry is written once. A name given twice is answered once, INVALID_REQUEST,
/// and not created (Kafka's `ControllerApis.createTopics`).
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    mut req: CreateTopicsRequest,
) -> CreateTopicsResponse {
    let version = h.request_api_version;
    let twice = keep_first_of_each_name(&mut req);
    let shaped: Vec<Result<NewTopic>> = req
        .topics
        .iter()
        .map(|t| match twice.contains(t.name.0.as_str()) {
            true => Err(Error::Protocol {
                api: "CreateTopics".into(),
                message: format!("topic {} is named more than once in the request", t.name.0),
            }),
            false => shape(broker, t),
        })
        .collect();
    let wanted: Vec<NewTopic> = shaped
        .iter()
        .filter_map(|r| r.as_ref().ok().cloned())
        .collect();
    let b = broker.clone();
    let validate_only = req.validate_only;
    let mut created =
        match blocking(move || Ok(b.topics().create_topics(wanted, validate_only))).await {
            Ok(c) => c.into_iter(),
            Err(e) => {
                let msg = e.to_string();
                let n = shaped.iter().filter(|r| r.is_ok()).count();
                (0..n)
                    .map(|_| {
                        Err(Error::io(
                            "creating topics",
                            std::io::Error::other(msg.clone()),
                        ))
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
            }
        };
    let mut results = Vec::with_capacity(req.topics.len());
    for (t, shaped) in req.topics.iter().zip(shaped) {
        let mut r = CreatableTopicResult::default().with_name(t.name.clone());
        let outcome = shaped.and_then(|new| {
            created
                .next()
                .unwrap_or(Err(Error::ShuttingDown))
                .map(|m| (m.id, new.partitions, new.configs))
        });
        match outcome {
            Ok((id, partitions, configs)) => {
                if version >= 5 {
                    let cfg = topic::log_config(&broker.topics().log_defaults(), &configs)
                        .unwrap_or_default();
                    r = r
                        .with_num_partitions(partitions)
                        .with_replication_factor(1)
                        .with_configs(Some(
                            TOPIC_CONFIG
                                .keys()
                                .map(|k| {
                                    CreatableTopicConfigs::default()
                                        .with_name(sb(k.name))
                                        .with_value(topic::value_of(&cfg, &configs, k).map(sb))
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
                        .with_configs(Some(Vec::new()));
                }
            }
        }
        results.push(r);
    }
    CreateTopicsResponse::default().with_topics(results)
}
