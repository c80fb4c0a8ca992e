//! IncrementalAlterConfigs (key 44): SET / DELETE (and APPEND / SUBTRACT on list configs) of topic configs.

use std::sync::Arc;

use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, RequestHeader,
};

use super::alter_configs::{not_alterable, set_topic_configs};
use super::describe_configs::RESOURCE_TOPIC;
use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

const OP_SET: i8 = 0;
const OP_DELETE: i8 = 1;
const OP_APPEND: i8 = 2;
const OP_SUBTRACT: i8 = 3;

/// A topic key of type list (APPEND / SUBTRACT apply to these only).
fn list_key(name: &str) -> Option<&'static strata_storage::config_def::ConfigKey> {
    crate::topic_config::key(name).filter(|k| k.ty == strata_storage::config_def::Type::List)
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
                match broker.topics().get(&name) {
                    None => Err(Error::UnknownTopic(name)),
                    Some(meta) => {
                        let mut configs = meta.configs.clone();
                        let mut bad = None;
                        for c in &r.configs {
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
                                    let default = list_key(&key).and_then(|k| k.default);
                                    let mut list: Vec<String> = configs
                                        .get(&key)
                                        .cloned()
                                        .unwrap_or_else(|| default.unwrap_or_default().into())
                                        .split(',')
                                        .map(|s| s.trim().to_string())
                                        .filter(|s| !s.is_empty())
                                        .collect();
                                    for v in
                                        value.split(',').map(str::trim).filter(|s| !s.is_empty())
                                    {
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
                                    bad = Some(Error::InvalidConfig {
                                        key,
                                        value,
                                        reason: "APPEND and SUBTRACT apply only to list configs"
                                            .into(),
                                    });
                                }
                                op => {
                                    bad = Some(Error::InvalidConfig {
                                        key,
                                        value,
                                        reason: format!("unknown operation {op}"),
                                    })
                                }
                            }
                        }
                        match bad {
                            Some(e) => Err(e),
                            None => {
                                set_topic_configs(broker, name, configs, req.validate_only).await
                            }
                        }
                    }
                }
            }
            other => Err(not_alterable(other)),
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
