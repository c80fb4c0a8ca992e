//! AlterConfigs (key 33): replaces a topic's overrides with the given set (validated; unknown keys are
//! INVALID_CONFIG). Broker configs are static and refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse, RequestHeader};

use super::describe_configs::{RESOURCE_BROKER, RESOURCE_TOPIC};
use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

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
            other => Err(not_alterable(other)),
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
    blocking(move || b.set_topic_configs(&name, configs, validate_only)).await
}

/// The answer for a resource other than a topic: broker configs are static, other types have none.
pub(super) fn not_alterable(resource_type: i8) -> Error {
    match resource_type {
        RESOURCE_BROKER => Error::StaticBrokerConfigs,
        other => Error::NoConfigs(other),
    }
}
