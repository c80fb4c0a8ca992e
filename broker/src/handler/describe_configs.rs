//! DescribeConfigs (key 32): topic configs (override or default, with synonyms), the broker's config (static,
//! and the dynamic broker configs: DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG) and group configs
//! ([`super::group_configs`]).

use std::sync::Arc;

use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;
use crate::config::topic::{self, TOPIC_CONFIG};
use crate::config::{BROKER_KEYS, KAFKA_ONLY_KEYS};
use crate::error::Error;
use crate::error_code;
use crate::tiered::TIERING_KEYS;
use crate::topics::dynamic::{dynamic_key, is_dynamic, kept_no_effect};
use crate::topics::{DynamicConfigs, Scope};
use strata_metadata::RLMM_CONFIG;
use strata_storage::config_def::{ConfigKey, Effect, Type, Value};
use strata_storage::LogConfig;
use strata_tiering::rlm::RLM_CONFIG;
use strata_tiering::RSM_CONFIG;

/// Kafka resource types.
pub(crate) const RESOURCE_TOPIC: i8 = 2;
/// BROKER.
pub(crate) const RESOURCE_BROKER: i8 = 4;
/// The prefix under which [`crate::tiered::TIERING_KEYS`] lists the `rsm.config.` table.
const DEFAULT_RSM_PREFIX: &str = "rsm.config.";
const SOURCE_TOPIC: i8 = 1;
const SOURCE_DYNAMIC_BROKER: i8 = 2;
const SOURCE_DYNAMIC_DEFAULT_BROKER: i8 = 3;
const SOURCE_STATIC_BROKER: i8 = 4;
const SOURCE_DEFAULT: i8 = 5;

/// How an entry is asked for: synonyms (v1+) and documentation (v3+) only when the client wants them.
#[derive(Clone, Copy)]
struct Want {
    version: i16,
    synonyms: bool,
    documentation: bool,
}

impl Want {
    /// Adds what was asked for to an entry: synonyms, and (v3+) type and documentation.
    fn finish(
        self,
        e: DescribeConfigsResourceResult,
        syn: Vec<DescribeConfigsSynonym>,
        ty: Type,
        doc: &str,
    ) -> DescribeConfigsResourceResult {
        let mut e = e;
        if self.synonyms {
            e = e.with_synonyms(syn);
        }
        if self.version >= 3 {
            e = e.with_config_type(ty.kafka_id());
            // Kafka's ConfigHelper: null when not asked for.
            e = e.with_documentation(self.documentation.then(|| sb(doc)));
        }
        e
    }
}

fn synonym(name: &str, value: Option<String>, source: i8) -> DescribeConfigsSynonym {
    DescribeConfigsSynonym::default()
        .with_name(sb(name))
        .with_value(value.map(sb))
        .with_source(source)
}

/// The dynamic values of the broker properties `names` (each with its scale to the key's unit), as Kafka's
/// `ConfigHelper` lists them: every per-broker one (DYNAMIC_BROKER_CONFIG), then every cluster-wide default one
/// (DYNAMIC_DEFAULT_BROKER_CONFIG), each under its own name and in its own unit; with the first one's value in
/// the key's unit (the value the broker runs with).
fn dynamic_synonyms(
    dynamic: &DynamicConfigs,
    names: &[(&str, i64)],
) -> (Vec<DescribeConfigsSynonym>, Option<String>) {
    let mut syn = Vec::new();
    let mut value = None;
    for (scope, source) in [
        (Scope::Broker, SOURCE_DYNAMIC_BROKER),
        (Scope::Default, SOURCE_DYNAMIC_DEFAULT_BROKER),
    ] {
        for (name, scale) in names {
            if let Some(v) = dynamic.scope(scope).get(*name) {
                if value.is_none() {
                    value = Some(match v.trim().parse::<i64>() {
                        Ok(n) if *scale != 1 && n >= 0 => n.saturating_mul(*scale).to_string(),
                        _ => v.clone(),
                    });
                }
                syn.push(synonym(name, Some(v.clone()), source));
            }
        }
    }
    (syn, value)
}

/// The table's default of `k` as text (null when it has none or it is a secret).
fn default_value(k: &ConfigKey) -> Option<String> {
    k.default
        .and_then(|d| k.parse_value(d).ok())
        .and_then(|v| v.to_text())
}

/// The broker's keys as Kafka's `ConfigHelper` reports a broker's static config: every key strata uses (and each
/// Kafka key given that has no effect here), from the table: the value it runs with; STATIC_BROKER_CONFIG when
/// given in the file, the environment or an override (Kafka's one source for all three), else DEFAULT_CONFIG;
/// synonyms the names given (the key's own, then its synonyms in their own unit: `log.retention.hours`) and the
/// default, after the dynamic values (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG), which win; read-only
/// unless Kafka changes the key at run time ([`crate::topics::dynamic::dynamic_key`]); secrets null.
fn broker_entries<'a>(
    broker: &'a Broker,
    keys: &'a Option<Vec<kafka_protocol::protocol::StrBytes>>,
    want: Want,
) -> impl Iterator<Item = DescribeConfigsResourceResult> + 'a {
    let config = broker.config();
    let dynamic = broker.topics().dynamic_configs();
    // Kafka's other keys: those given, and those set at run time (kept with no effect).
    let dynamic_set = dynamic.clone();
    let given_kafka_keys = KAFKA_ONLY_KEYS
        .iter()
        .filter(move |k| config.is_explicit(k.name) || dynamic_set.get(k.name).is_some());
    BROKER_KEYS
        .iter()
        .chain(given_kafka_keys)
        .filter(move |k| wanted(keys, k.name))
        .map(move |k| {
            let values = config.config_values();
            let explicit = config.is_explicit(k.name);
            let source = if explicit {
                SOURCE_STATIC_BROKER
            } else {
                SOURCE_DEFAULT
            };
            // What was parsed (a default computed from other keys resolved at parse time); Kafka's
            // log.flush.interval.ms defaults to null (use log.flush.scheduler).
            let value = if k.sensitive() {
                None
            } else {
                values.get(k.name).to_text()
            };
            let all_names: Vec<(&str, i64)> = std::iter::once((k.name, 1))
                .chain(k.synonyms.iter().map(|s| (s.name, s.scale)))
                .collect();
            let (mut syn, dynamic_value) = dynamic_synonyms(&dynamic, &all_names);
            let names = all_names.iter().copied();
            for (name, scale) in names.filter(|(n, _)| config.was_given(n)) {
                let v = match values.get(k.name) {
                    _ if k.sensitive() => None,
                    Value::Long(n) if scale != 1 => Some((n / scale).to_string()),
                    Value::Int(n) if scale != 1 => Some((*n as i64 / scale).to_string()),
                    _ => value.clone(),
                };
                syn.push(synonym(name, v, SOURCE_STATIC_BROKER));
            }
            if k.default.is_some() {
                syn.push(synonym(k.name, default_value(k), SOURCE_DEFAULT));
            }
            let doc = match k.effect {
                Effect::Used => k.doc.to_string(),
                Effect::NoEffect(why) => format!("{} (no effect in strata: {why})", k.doc),
                Effect::Unsupported(why) => format!("{} (refused by strata: {why})", k.doc),
            };
            let source = match syn.first() {
                Some(s) if dynamic_value.is_some() => s.source,
                _ => source,
            };
            let value = dynamic_value.or(value);
            let e = DescribeConfigsResourceResult::default()
                .with_name(sb(k.name))
                .with_value(value.map(sb))
                .with_read_only(!is_dynamic(k.name))
                .with_is_sensitive(k.sensitive())
                .with_config_source(source);
            // A key kept with no effect is described with Kafka's type (the catalog's is text).
            let ty = kept_no_effect(k.name).map_or(k.ty, |(kept, _)| kept.ty);
            want.finish(e, syn, ty, &doc)
        })
}

/// The broker keys strata knows as another key's synonym (`log.retention.hours` and `.minutes`, `log.roll.hours`,
/// `broker.id`, `log.dir`), each listed under its own name as Kafka's DescribeConfigs lists every broker key: the
/// value given (STATIC_BROKER_CONFIG, in the key's own unit), else Kafka's default (DEFAULT_CONFIG): the main
/// key's default in hours for the `.hours` keys (168 for `log.retention.hours`), the node id for `broker.id`, null
/// for the others.
fn synonym_entries<'a>(
    broker: &'a Broker,
    keys: &'a Option<Vec<kafka_protocol::protocol::StrBytes>>,
    want: Want,
) -> impl Iterator<Item = DescribeConfigsResourceResult> + 'a {
    let config = broker.config();
    let dynamic = broker.topics().dynamic_configs();
    BROKER_KEYS
        .iter()
        .flat_map(|k| k.synonyms.iter().map(move |s| (k, s)))
        .filter(move |(_, s)| wanted(keys, s.name))
        .map(move |(k, s)| {
            let values = config.config_values();
            let scaled = |v: &Value| match v {
                Value::Long(n) => Some((n / s.scale).to_string()),
                Value::Int(n) => Some((*n as i64 / s.scale).to_string()),
                other => other.to_text(),
            };
            let given = config.was_given(s.name);
            let default = if s.name.ends_with(".hours") {
                k.default
                    .and_then(|d| k.parse_value(d).ok())
                    .and_then(|v| scaled(&v))
            } else if s.name == "broker.id" {
                // KRaft's KafkaConfig: broker.id is node.id when only node.id is given.
                Some(config.node_id.to_string())
            } else {
                None
            };
            let (value, source) = if given {
                (scaled(values.get(k.name)), SOURCE_STATIC_BROKER)
            } else {
                (default.clone(), SOURCE_DEFAULT)
            };
            let (mut syn, dynamic_value) = dynamic_synonyms(&dynamic, &[(s.name, 1)]);
            let source = match syn.first() {
                Some(d) if dynamic_value.is_some() => d.source,
                _ => source,
            };
            let value = dynamic_value.or(value);
            if given {
                syn.push(synonym(s.name, value.clone(), SOURCE_STATIC_BROKER));
            }
            if default.is_some() {
                syn.push(synonym(s.name, default, SOURCE_DEFAULT));
            }
            let e = DescribeConfigsResourceResult::default()
                .with_name(sb(s.name))
                .with_value(value.map(sb))
                .with_read_only(!is_dynamic(s.name))
                .with_is_sensitive(false)
                .with_config_source(source);
            let doc = format!("{} (in the unit of {}; see {})", k.doc, s.name, k.name);
            // Kafka's types: the unit keys are INT, log.dir a STRING.
            let ty = match k.ty {
                _ if s.scale != 1 => Type::Int,
                Type::List => Type::String,
                t => t,
            };
            want.finish(e, syn, ty, &doc)
        })
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
        let sensitive = tiering_key(k).is_some_and(|t| t.sensitive())
            || k.ends_with("secret.access.key")
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

/// The RemoteLogManager's, `rsm.config.` or `rlmm.config.` table's key of a tiered-storage property, if it is one.
fn tiering_key(name: &str) -> Option<&'static ConfigKey> {
    name.strip_prefix(DEFAULT_RSM_PREFIX)
        .and_then(|n| RSM_CONFIG.keys().find(|k| k.name == n))
        .or_else(|| RLMM_CONFIG.keys().find(|k| k.name == name))
        .or_else(|| RLM_CONFIG.key(name))
}

/// Kafka's ConfigType of a tiered-storage property, from its table.
fn tiering_type(key: &str) -> Type {
    // Not in a table: the two prefixes and http.listener, all strings.
    tiering_key(key).map_or(Type::String, |k| k.ty)
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
    want: Want,
) -> DescribeConfigsResourceResult {
    let config = broker.config();
    let server = if internal && k.name == "remote.storage.enable" {
        &[][..]
    } else {
        k.server_default
    };
    let value = topic::value_of(cfg, overrides, k);
    let mut syn = Vec::new();
    if overrides.contains_key(k.name) {
        syn.push(synonym(k.name, value.clone(), SOURCE_TOPIC));
    }
    let server_names: Vec<(&str, i64)> = server
        .iter()
        .filter(|s| dynamic_key(s.name).is_some())
        .map(|s| (s.name, s.scale))
        .collect();
    syn.extend(dynamic_synonyms(&broker.topics().dynamic_configs(), &server_names).0);
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
        syn.push(synonym(s.name, default_value(k), SOURCE_DEFAULT));
    }
    let source = syn.first().map_or(SOURCE_DEFAULT, |s| s.source);
    let e = DescribeConfigsResourceResult::default()
        .with_name(sb(k.name))
        .with_value(value.map(sb))
        .with_read_only(false)
        .with_is_sensitive(k.sensitive())
        .with_config_source(source);
    want.finish(e, syn, k.ty, k.doc)
}

/// The cluster-wide default BROKER resource (name `""`), as Kafka's `ConfigHelper` answers it: only the dynamic
/// defaults set (DYNAMIC_DEFAULT_BROKER_CONFIG), each under the name it was set with, secrets null.
fn cluster_default_entries(
    broker: &Broker,
    keys: &Option<Vec<kafka_protocol::protocol::StrBytes>>,
    want: Want,
) -> Vec<DescribeConfigsResourceResult> {
    broker
        .topics()
        .dynamic_configs()
        .default
        .iter()
        .filter(|(name, _)| wanted(keys, name))
        .map(|(name, value)| {
            let key = crate::config::BROKER_DEF
                .key(name)
                .or_else(|| RLM_CONFIG.key(name));
            let sensitive = key.is_some_and(|k| k.sensitive());
            let value = (!sensitive).then(|| value.clone());
            let e = DescribeConfigsResourceResult::default()
                .with_name(sb(name.as_str()))
                .with_value(value.clone().map(sb))
                .with_read_only(!is_dynamic(name))
                .with_is_sensitive(sensitive)
                .with_config_source(SOURCE_DYNAMIC_DEFAULT_BROKER);
            let syn = vec![synonym(name, value, SOURCE_DYNAMIC_DEFAULT_BROKER)];
            let (ty, doc) = key.map_or((Type::String, ""), |k| (k.ty, k.doc));
            want.finish(e, syn, ty, doc)
        })
        .collect()
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
    let want = Want {
        version: h.request_api_version,
        synonyms: req.include_synonyms,
        documentation: req.include_documentation,
    };
    let mut results = Vec::with_capacity(req.resources.len());
    for r in req.resources {
        let res = DescribeConfigsResult::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        results.push(match r.resource_type {
            RESOURCE_TOPIC => describe_topic(broker, &r, res, want),
            RESOURCE_BROKER => describe_broker(broker, &r, res, want),
            super::group_configs::RESOURCE_GROUP => {
                let keys = &r.configuration_keys;
                match super::group_configs::describe(broker, &r.resource_name, |k| wanted(keys, k))
                {
                    Ok(entries) => {
                        let configs = entries
                            .into_iter()
                            .map(|(e, syn, ty, doc)| want.finish(e, syn, ty, doc))
                            .collect();
                        res.with_configs(configs)
                    }
                    Err(e) => refused(res, &e),
                }
            }
            other => refused(res, &Error::NoConfigs(other)),
        });
    }
    DescribeConfigsResponse::default().with_results(results)
}

/// A topic's configs: what its log runs with, each with its source.
fn describe_topic(
    broker: &Broker,
    r: &DescribeConfigsResource,
    res: DescribeConfigsResult,
    want: Want,
) -> DescribeConfigsResult {
    let Some(meta) = broker.registry().get(&r.resource_name) else {
        let e = Error::UnknownTopic(r.resource_name.to_string());
        return refused(res, &e);
    };
    // What the log really runs with (the metadata plane configures `__remote_log_metadata` itself),
    // else what the registry's overrides make of the broker defaults.
    let cfg = match broker.topics().log(&r.resource_name, 0) {
        Ok(log) => log.config(),
        Err(_) => broker
            .topics()
            .topic_log_config(&r.resource_name, &meta.configs)
            .unwrap_or_else(|_| (*broker.topics().log_defaults()).clone()),
    };
    let configs = TOPIC_CONFIG
        .keys()
        .filter(|k| wanted(&r.configuration_keys, k.name))
        .map(|k| topic_entry(broker, k, &cfg, &meta.configs, meta.internal, want))
        .collect();
    res.with_configs(configs)
}

/// This broker's configs (named by its node id), or the cluster-wide defaults (an empty name).
fn describe_broker(
    broker: &Broker,
    r: &DescribeConfigsResource,
    res: DescribeConfigsResult,
    want: Want,
) -> DescribeConfigsResult {
    let name = r.resource_name.as_str();
    if !name.is_empty() && name != broker.config().node_id.to_string() {
        let e = Error::NotThisBroker {
            node_id: broker.config().node_id,
        };
        return refused(res, &e);
    }
    let keys = &r.configuration_keys;
    if name.is_empty() {
        return res.with_configs(cluster_default_entries(broker, keys, want));
    }
    let configs = broker_entries(broker, keys, want)
        .chain(synonym_entries(broker, keys, want))
        .chain(
            tiering_values(broker)
                .filter(|(k, ..)| wanted(keys, k))
                .map(|value| tiering_entry(broker, value, want)),
        )
        .collect();
    res.with_configs(configs)
}

/// One tiering key of the broker (`remote.log.*`, `rsm.config.*`, `rlmm.config.*`), from
/// [`tiering_values`]: its value, source and synonyms.
fn tiering_entry(
    broker: &Broker,
    (k, value, explicit, sensitive): (&'static str, Option<String>, bool, bool),
    want: Want,
) -> DescribeConfigsResourceResult {
    let source = if explicit {
        SOURCE_STATIC_BROKER
    } else {
        SOURCE_DEFAULT
    };
    // The remote storage quotas are dynamic: their dynamic values first.
    let (mut syn, dynamic_value) = if is_dynamic(k) {
        dynamic_synonyms(&broker.topics().dynamic_configs(), &[(k, 1)])
    } else {
        (Vec::new(), None)
    };
    let source = match syn.first() {
        Some(d) if dynamic_value.is_some() => d.source,
        _ => source,
    };
    if explicit {
        syn.push(synonym(k, value.clone(), SOURCE_STATIC_BROKER));
    }
    let value = dynamic_value.or(value);
    let (ty, doc) = TIERING_KEYS
        .iter()
        .find(|(n, ..)| *n == k)
        .map(|(_, d, doc)| (d, *doc))
        .unwrap_or((&"", ""));
    if !ty.starts_with('(') && !sensitive {
        syn.push(synonym(k, Some(ty.to_string()), SOURCE_DEFAULT));
    }
    let e = DescribeConfigsResourceResult::default()
        .with_name(sb(k))
        .with_value(value.map(sb))
        .with_read_only(!is_dynamic(k))
        .with_is_sensitive(sensitive)
        .with_config_source(source);
    want.finish(e, syn, tiering_type(k), doc)
}
