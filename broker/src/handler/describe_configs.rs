//! DescribeConfigs (key 32): topic configs (override or default, with synonyms) and the broker's static config.

use std::sync::Arc;

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;
use crate::error_code;
use crate::tiered::TIERING_KEYS;
use crate::topic_config::{self, TOPIC_KEYS};

/// Kafka resource types.
pub(crate) const RESOURCE_TOPIC: i8 = 2;
/// BROKER.
pub(crate) const RESOURCE_BROKER: i8 = 4;
const SOURCE_TOPIC: i8 = 1;
const SOURCE_STATIC_BROKER: i8 = 4;
const SOURCE_DEFAULT: i8 = 5;
// Kafka's ConfigType.
const TYPE_BOOLEAN: i8 = 1;
const TYPE_STRING: i8 = 2;
const TYPE_INT: i8 = 3;
const TYPE_LONG: i8 = 5;
const TYPE_DOUBLE: i8 = 6;
const TYPE_LIST: i8 = 7;

fn config_type(key: &str) -> i8 {
    match key {
        "cleanup.policy" | "log.dirs" | "listeners" | "advertised.listeners" => TYPE_LIST,
        "message.timestamp.type" | "log.message.timestamp.type" => TYPE_STRING,
        "remote.storage.enable"
        | "remote.log.copy.disable"
        | "remote.log.delete.on.disable"
        | "auto.create.topics.enable" => TYPE_BOOLEAN,
        "segment.bytes"
        | "segment.index.bytes"
        | "index.interval.bytes"
        | "max.message.bytes"
        | "node.id"
        | "num.partitions"
        | "message.max.bytes"
        | "max.connections"
        | "socket.request.max.bytes" => TYPE_INT,
        _ => TYPE_LONG,
    }
}

/// The tiered-storage properties `strata --help` lists, as (name, value, given explicitly, sensitive). Secrets
/// have no value (Kafka reports sensitive configs as null).
/// `remote.log.storage.system.enable` is whether tiered storage runs on this broker.
fn tiering_values(
    broker: &Broker,
) -> impl Iterator<Item = (&'static str, Option<String>, bool, bool)> + '_ {
    let config = broker.config();
    TIERING_KEYS.iter().map(move |(k, default, _)| {
        let explicit = config.tiering_props.get(*k);
        let sensitive = k.ends_with("secret.access.key")
            || k.ends_with("session.token")
            || k.ends_with("access.key.id");
        let value = if *k == "remote.log.storage.system.enable" {
            Some(broker.tiering().is_some().to_string())
        } else if sensitive {
            None
        } else if let Some(v) = explicit {
            Some(v.clone())
        } else if *k == "rsm.config.storage.filesystem.root" {
            config
                .log_dirs
                .first()
                .map(|d| d.join("remote").display().to_string())
        } else if default.starts_with('(') {
            None
        } else {
            Some(default.to_string())
        };
        (*k, value, explicit.is_some(), sensitive)
    })
}

/// Kafka's ConfigType of a tiered-storage property, from its default.
fn tiering_type(key: &str) -> i8 {
    let default = TIERING_KEYS
        .iter()
        .find(|(k, ..)| *k == key)
        .map(|(_, d, _)| *d)
        .unwrap_or("");
    if default == "true" || default == "false" {
        TYPE_BOOLEAN
    } else if default.parse::<i64>().is_ok() {
        TYPE_LONG
    } else if default.parse::<f64>().is_ok() {
        TYPE_DOUBLE
    } else {
        TYPE_STRING
    }
}

fn wanted(keys: &Option<Vec<kafka_protocol::protocol::StrBytes>>, name: &str) -> bool {
    keys.as_ref()
        .is_none_or(|k| k.is_empty() || k.iter().any(|x| x.as_str() == name))
}

/// Answers DescribeConfigs.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: DescribeConfigsRequest,
) -> DescribeConfigsResponse {
    let version = h.request_api_version;
    let synonyms = req.include_synonyms;
    let entry = |name: &str,
                 value: Option<String>,
                 source: i8,
                 read_only: bool,
                 syn: Vec<DescribeConfigsSynonym>| {
        let mut e = DescribeConfigsResourceResult::default()
            .with_name(sb(name))
            .with_value(value.map(sb))
            .with_read_only(read_only)
            .with_config_source(source);
        if synonyms {
            e = e.with_synonyms(syn);
        }
        if version >= 3 {
            e = e.with_config_type(config_type(name));
        }
        e
    };
    let mut results = Vec::with_capacity(req.resources.len());
    for r in req.resources {
        let res = DescribeConfigsResult::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        match r.resource_type {
            RESOURCE_TOPIC => {
                let Some(meta) = broker.topics().get(&r.resource_name) else {
                    results.push(
                        res.with_error_code(error_code::UNKNOWN_TOPIC_OR_PARTITION)
                            .with_error_message(Some(sb(format!(
                                "unknown topic {}",
                                r.resource_name.as_str()
                            )))),
                    );
                    continue;
                };
                let defaults = &broker.config().log;
                // What the log really runs with (the metadata plane configures `__remote_log_metadata` itself),
                // else what the registry's overrides make of the broker defaults.
                let cfg = match broker.log(&r.resource_name, 0) {
                    Ok(log) => log.config(),
                    Err(_) => broker
                        .topic_log_config(&r.resource_name, &meta.configs)
                        .unwrap_or_else(|_| defaults.clone()),
                };
                // Internal topics are never tiered: the broker default of remote.storage.enable does not apply.
                let synonym_of = |k: &topic_config::TopicKey| {
                    k.broker_synonym
                        .filter(|_| !(meta.internal && k.name == "remote.storage.enable"))
                };
                let none = Default::default();
                let configs = TOPIC_KEYS
                    .iter()
                    .filter(|k| wanted(&r.configuration_keys, k.name))
                    .map(|k| {
                        let value = topic_config::value_of(&cfg, &meta.configs, k.name);
                        let default_value = topic_config::value_of(defaults, &none, k.name);
                        let overridden = meta.configs.contains_key(k.name);
                        let mut syn = Vec::new();
                        if overridden {
                            syn.push(
                                DescribeConfigsSynonym::default()
                                    .with_name(sb(k.name))
                                    .with_value(Some(sb(value.clone())))
                                    .with_source(SOURCE_TOPIC),
                            );
                        }
                        if let Some(b) = synonym_of(k) {
                            syn.push(
                                DescribeConfigsSynonym::default()
                                    .with_name(sb(b))
                                    .with_value(Some(sb(default_value)))
                                    .with_source(if broker.config().is_explicit(b) {
                                        SOURCE_STATIC_BROKER
                                    } else {
                                        SOURCE_DEFAULT
                                    }),
                            );
                        }
                        entry(
                            k.name,
                            Some(value),
                            if overridden {
                                SOURCE_TOPIC
                            } else if synonym_of(k).is_some_and(|b| broker.config().is_explicit(b))
                            {
                                SOURCE_STATIC_BROKER
                            } else {
                                SOURCE_DEFAULT
                            },
                            false,
                            syn,
                        )
                    })
                    .collect();
                results.push(res.with_configs(configs));
            }
            RESOURCE_BROKER => {
                let name = r.resource_name.as_str();
                if !name.is_empty() && name != broker.config().node_id.to_string() {
                    results.push(
                        res.with_error_code(error_code::INVALID_REQUEST)
                            .with_error_message(Some(sb(format!(
                                "this is broker {}",
                                broker.config().node_id
                            )))),
                    );
                    continue;
                }
                let configs = broker
                    .config()
                    .values()
                    .into_iter()
                    .filter(|(k, _)| wanted(&r.configuration_keys, k))
                    .map(|(k, v)| {
                        // Only properties given in the file or an override are STATIC_BROKER_CONFIG; the
                        // rest are at their defaults (tools diff "non-default" broker configs by source).
                        let source = if broker.config().is_explicit(k) {
                            SOURCE_STATIC_BROKER
                        } else {
                            SOURCE_DEFAULT
                        };
                        // Kafka's log.flush.interval.ms defaults to null (use log.flush.scheduler).
                        let value = (source == SOURCE_STATIC_BROKER
                            || k != "log.flush.interval.ms")
                            .then_some(v);
                        let syn = vec![DescribeConfigsSynonym::default()
                            .with_name(sb(k))
                            .with_value(value.clone().map(sb))
                            .with_source(source)];
                        entry(k, value, source, true, syn)
                    })
                    .chain(
                        tiering_values(broker)
                            .filter(|(k, ..)| wanted(&r.configuration_keys, k))
                            .map(|(k, value, explicit, sensitive)| {
                                let source = if explicit {
                                    SOURCE_STATIC_BROKER
                                } else {
                                    SOURCE_DEFAULT
                                };
                                let syn = vec![DescribeConfigsSynonym::default()
                                    .with_name(sb(k))
                                    .with_value(value.clone().map(sb))
                                    .with_source(source)];
                                let mut e = entry(k, value, source, true, syn);
                                if version >= 3 {
                                    e = e.with_config_type(tiering_type(k));
                                }
                                e.with_is_sensitive(sensitive)
                            }),
                    )
                    .collect();
                results.push(res.with_configs(configs));
            }
            other => results.push(
                res.with_error_code(error_code::INVALID_REQUEST)
                    .with_error_message(Some(sb(format!(
                        "resource type {other} has no configs here"
                    )))),
            ),
        }
    }
    DescribeConfigsResponse::default().with_results(results)
}
