//! DescribeConfigs (key 32): topic configs (override or default, with synonyms) and the broker's static config.

use std::sync::Arc;

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;
use crate::tiered::TIERING_KEYS;
use crate::topic_config::{self, TOPIC_CONFIG};
use strata_storage::config_def::ConfigKey;
use strata_storage::LogConfig;

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

/// Kafka's ConfigType of a broker property: a topic default's (e.g. `log.segment.bytes`) from the topic
/// table, else by name (the broker's own keys).
fn config_type(key: &str) -> i8 {
    if let Some(k) = TOPIC_CONFIG
        .keys()
        .find(|k| k.server_default.first().is_some_and(|s| s.name == key))
    {
        return k.ty.kafka_id();
    }
    match key {
        "log.dirs" | "listeners" | "advertised.listeners" => TYPE_LIST,
        "auto.create.topics.enable" => TYPE_BOOLEAN,
        "node.id" | "num.partitions" | "max.connections" | "socket.request.max.bytes" => TYPE_INT,
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

/// One topic key as DescribeConfigs reports it, as Kafka's `ConfigHelper`: the value the topic runs with; the
/// synonyms in Kafka's order (the topic override, the broker property that sets the default, the default);
/// the source of the first; the type and (v3+) documentation from the table. Internal topics are never tiered:
/// the broker default of `remote.storage.enable` does not apply to them.
fn topic_entry(
    broker: &Broker,
    k: &'static ConfigKey,
    cfg: &LogConfig,
    overrides: &std::collections::BTreeMap<String, String>,
    internal: bool,
    version: i16,
    include_synonyms: bool,
) -> DescribeConfigsResourceResult {
    let config = broker.config();
    let server = if internal && k.name == "remote.storage.enable" {
        &[][..]
    } else {
        k.server_default
    };
    let value = topic_config::value_of(cfg, overrides, k);
    let synonym = |name: &str, value: Option<String>, source: i8| {
        DescribeConfigsSynonym::default()
            .with_name(sb(name))
            .with_value(value.map(sb))
            .with_source(source)
    };
    let mut syn = Vec::new();
    if overrides.contains_key(k.name) {
        syn.push(synonym(k.name, value.clone(), SOURCE_TOPIC));
    }
    // The broker property that won (Kafka's precedence: ms > minutes > hours), in its own unit.
    if let Some(s) = server.iter().find(|s| config.was_given(s.name)) {
        let broker_value = config.log.value(k.name).and_then(|v| match v {
            strata_storage::config_def::Value::Long(n) if s.scale != 1 => {
                Some((n / s.scale).to_string())
            }
            v => v.to_text(),
        });
        if broker_value.is_some() {
            syn.push(synonym(s.name, broker_value, SOURCE_STATIC_BROKER));
        }
    }
    if let Some(s) = server.first() {
        let default = k
            .default
            .and_then(|d| k.parse_value(d).ok())
            .and_then(|v| v.to_text());
        syn.push(synonym(s.name, default, SOURCE_DEFAULT));
    }
    let source = syn.first().map_or(SOURCE_DEFAULT, |s| s.source);
    let mut e = DescribeConfigsResourceResult::default()
        .with_name(sb(k.name))
        .with_value(value.map(sb))
        .with_read_only(false)
        .with_is_sensitive(k.sensitive())
        .with_config_source(source);
    if include_synonyms {
        e = e.with_synonyms(syn);
    }
    if version >= 3 {
        e = e
            .with_config_type(k.ty.kafka_id())
            .with_documentation(Some(sb(k.doc)));
    }
    e
}

/// A resource's answer when it is refused: the error's code and message.
fn refused(res: DescribeConfigsResult, e: &Error) -> DescribeConfigsResult {
    res.with_error_code(error_code::code(e))
        .with_error_message(Some(sb(error_code::message(e))))
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
                    let e = Error::UnknownTopic(r.resource_name.to_string());
                    results.push(refused(res, &e));
                    continue;
                };
                // What the log really runs with (the metadata plane configures `__remote_log_metadata` itself),
                // else what the registry's overrides make of the broker defaults.
                let cfg = match broker.log(&r.resource_name, 0) {
                    Ok(log) => log.config(),
                    Err(_) => broker
                        .topic_log_config(&r.resource_name, &meta.configs)
                        .unwrap_or_else(|_| broker.config().log.clone()),
                };
                let configs = TOPIC_CONFIG
                    .keys()
                    .filter(|k| wanted(&r.configuration_keys, k.name))
                    .map(|k| {
                        topic_entry(
                            broker,
                            k,
                            &cfg,
                            &meta.configs,
                            meta.internal,
                            version,
                            synonyms,
                        )
                    })
                    .collect();
                results.push(res.with_configs(configs));
            }
            RESOURCE_BROKER => {
                let name = r.resource_name.as_str();
                if !name.is_empty() && name != broker.config().node_id.to_string() {
                    let e = Error::NotThisBroker {
                        node_id: broker.config().node_id,
                    };
                    results.push(refused(res, &e));
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
            other => results.push(refused(res, &Error::NoConfigs(other))),
        }
    }
    DescribeConfigsResponse::default().with_results(results)
}
