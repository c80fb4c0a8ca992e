//! AlterConfigs (key 33): replaces a topic's overrides, or the dynamic broker configs of a BROKER resource
//! (this node's id, or `""` for the cluster-wide default), with the given set (validated; unknown keys and bad
//! values are INVALID_CONFIG, keys Kafka does not change at run time INVALID_REQUEST; nothing applied then).

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse, RequestHeader};

use super::describe_configs::{RESOURCE_BROKER, RESOURCE_TOPIC};
use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;
use crate::topics::Scope;

/// Answers AlterConfigs.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: AlterConfigsRequest,
) -> AlterConfigsResponse {
    let mut responses = Vec::with_capacity(req.resources.len());
    for r in req.resources {
        let resp = AlterConfigsResourceResponse::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        let outcome = match r.resource_type {
            RESOURCE_TOPIC => {
                let configs: BTreeMap<String, String> = r
                    .configs
                    .iter()
                    .filter_map(|c| {
                        c.value
                            .as_ref()
                            .map(|v| (c.name.to_string(), v.to_string()))
                    })
                    .collect();
                let name = r.resource_name.to_string();
                set_topic_configs(broker, name, configs, req.validate_only).await
            }
            RESOURCE_BROKER => {
                let values = r
                    .configs
                    .iter()
                    .filter_map(|c| {
                        c.value
                            .as_ref()
                            .map(|v| (c.name.to_string(), v.to_string()))
                    })
                    .collect();
                match broker_scope(broker, r.resource_name.as_str()) {
                    Ok(scope) => set_broker_configs(broker, scope, values, req.validate_only).await,
                    Err(e) => Err(e),
                }
            }
            super::group_configs::RESOURCE_GROUP => {
                let values = r
                    .configs
                    .iter()
                    .filter_map(|c| {
                        c.value
                            .as_ref()
                            .map(|v| (c.name.to_string(), v.to_string()))
                    })
                    .collect();
                let group = r.resource_name.to_string();
                super::group_configs::set(broker, group, values, req.validate_only).await
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
    AlterConfigsResponse::default().with_responses(responses)
}

/// Replaces a topic's overrides (both AlterConfigs APIs end here).
pub(super) async fn set_topic_configs(
    broker: &Arc<Broker>,
    name: String,
    configs: BTreeMap<String, String>,
    validate_only: bool,
) -> Result<(), Error> {
    let b = broker.clone();
    blocking(move || b.topics().set_topic_configs(&name, configs, validate_only)).await
}

/// The dynamic-config scope a BROKER resource names: `""` the cluster-wide default, this node's id its own;
/// another id is not this broker.
pub(super) fn broker_scope(broker: &Broker, name: &str) -> Result<Scope, Error> {
    let node_id = broker.config().node_id;
    if name.is_empty() {
        Ok(Scope::Default)
    } else if name == node_id.to_string() {
        Ok(Scope::Broker)
    } else {
        Err(Error::NotThisBroker { node_id })
    }
}

/// Replaces the dynamic broker configs of `scope` (both AlterConfigs APIs end here).
pub(super) async fn set_broker_configs(
    broker: &Arc<Broker>,
    scope: Scope,
    values: BTreeMap<String, String>,
    validate_only: bool,
) -> Result<(), Error> {
    let b = broker.clone();
    blocking(move || b.topics().set_dynamic_configs(scope, values, validate_only)).await
}
