//! AlterConfigs (key 33): replaces a topic's overrides with the given set (validated; unknown keys are
//! INVALID_CONFIG). Broker configs are static and refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse, RequestHeader};

use super::describe_configs::{RESOURCE_BROKER, RESOURCE_TOPIC};
use super::{blocking, sb};
use crate::broker::Broker;
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
                let b = broker.clone();
                let name = r.resource_name.to_string();
                let validate_only = req.validate_only;
                blocking(move || b.set_topic_configs(&name, configs, validate_only))
                    .await
                    .map_err(|e| (error_code::code(&e), e.to_string()))
            }
            RESOURCE_BROKER => Err((
                error_code::INVALID_REQUEST,
                "broker configs are static: set them in server.properties".into(),
            )),
            other => Err((
                error_code::INVALID_REQUEST,
                format!("resource type {other} has no configs here"),
            )),
        };
        responses.push(match outcome {
            Ok(()) => resp,
            Err((code, msg)) => resp.with_error_code(code).with_error_message(Some(sb(msg))),
        });
    }
    AlterConfigsResponse::default().with_responses(responses)
}
