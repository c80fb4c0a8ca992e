//! IncrementalAlterConfigs (key 44): SET / DELETE (and APPEND / SUBTRACT on list configs) of topic configs and
//! of the dynamic broker configs (BROKER resource: this node's id, or `""` for the cluster-wide default; DELETE
//! reverts a key to its static value) and of group configs (GROUP resource, [`super::group_configs`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::incremental_alter_configs_request::AlterableConfig;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, RequestHeader,
};

use super::alter_configs::{broker_scope, set_broker_configs, set_topic_configs};
use super::describe_configs::{RESOURCE_BROKER, RESOURCE_TOPIC};
use super::sb;
use crate::broker::Broker;
use crate::config::BROKER_DEF;
use crate::error::Error;
use crate::error_code;
use strata_storage::config_def::Type;

const OP_SET: i8 = 0;
const OP_DELETE: i8 = 1;
const OP_APPEND: i8 = 2;
const OP_SUBTRACT: i8 = 3;

/// A topic key of type list (APPEND / SUBTRACT apply to these only), with its default.
fn topic_list_key(name: &str) -> Option<Option<String>> {
    crate::config::topic::key(name)
        .filter(|k| k.ty == Type::List)
        .map(|k| k.default.map(String::from))
}

/// A broker key of type list, with its static value (what APPEND / SUBTRACT start from when not set
/// dynamically).
fn broker_list_key(broker: &Broker, name: &str) -> Option<Option<String>> {
    BROKER_DEF
        .key(name)
        .filter(|k| k.ty == Type::List)
        .map(|k| {
            let values = broker.config().config_values();
            Some(values.list(k.name).join(","))
        })
}

/// Applies one resource's operations to `configs`: SET, DELETE, and APPEND / SUBTRACT on the keys `list_key`
/// names as lists (from the value set, else the one it returns). The first bad operation is the error.
fn apply_ops(
    configs: &mut BTreeMap<String, String>,
    ops: &[AlterableConfig],
    list_key: impl Fn(&str) -> Option<Option<String>>,
) -> Result<(), Error> {
    for c in ops {
        let key = c.name.to_string();
        let value = c.value.as_ref().map(|v| v.to_string()).unwrap_or_default();
        match c.config_operation {
            OP_SET => {
                configs.insert(key, value);
            }
            OP_DELETE => {
                configs.remove(&key);
            }
            OP_APPEND | OP_SUBTRACT if list_key(&key).is_some() => {
                let default = list_key(&key).flatten();
                let mut list: Vec<String> = configs
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| default.unwrap_or_default())
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                for v in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if c.config_operation == OP_APPEND {
                        if !list.iter().any(|x| x == v) {
                            list.push(v.to_string());
                        }
                    } else {
                        list.retain(|x| x != v);
                    }
                }
                configs.insert(key, list.join(","));
            }
            OP_APPEND | OP_SUBTRACT => {
                return Err(Error::config(
                    key,
                    value,
                    "APPEND and SUBTRACT apply only to list configs".into(),
                ));
            }
            op => return Err(Error::config(key, value, format!("unknown operation {op}"))),
        }
    }
    Ok(())
}

/// Answers IncrementalAlterConfigs.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsResponse {
    let mut responses = Vec::with_capacity(req.resources.len());
    for r in req.resources {
        let resp = AlterConfigsResourceResponse::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        let outcome: Result<(), Error> = match r.resource_type {
            RESOURCE_TOPIC => {
                let name = r.resource_name.to_string();
                match broker.registry().get(&name) {
                    None => Err(Error::UnknownTopic(name)),
                    Some(meta) => {
                        let mut configs = meta.configs.clone();
                        match apply_ops(&mut configs, &r.configs, topic_list_key) {
                            Err(e) => Err(e),
                            Ok(()) => {
                                set_topic_configs(broker, name, configs, req.validate_only).await
                            }
                        }
                    }
                }
            }
            RESOURCE_BROKER => match broker_scope(broker, r.resource_name.as_str()) {
                Err(e) => Err(e),
                Ok(scope) => {
                    let mut configs = broker.topics().dynamic_configs().scope(scope).clone();
                    match apply_ops(&mut configs, &r.configs, |k| broker_list_key(broker, k)) {
                        Err(e) => Err(e),
                        Ok(()) => {
                            set_broker_configs(broker, scope, configs, req.validate_only).await
                        }
                    }
                }
            },
            super::group_configs::RESOURCE_GROUP => {
                let group = r.resource_name.to_string();
                let mut configs = broker.groups().group_configs().of(&group);
                match apply_ops(&mut configs, &r.configs, super::group_configs::list_key) {
                    Err(e) => Err(e),
                    Ok(()) => {
                        super::group_configs::set(broker, group, configs, req.validate_only).await
                    }
                }
            }
            other => Err(Error::NoConfigs(other)),
        };
        responses.push(match outcome {
            Ok(()) => resp,
            Err(e) => resp
                .with_error_code(error_code::code(&e))
                .with_error_message(Some(sb(error_code::message(&e)))),
        });
    }
    IncrementalAlterConfigsResponse::default().with_responses(responses)
}
