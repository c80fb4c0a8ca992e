//! FindCoordinator (key 10): this broker coordinates every group (single form v0-3, batched form v4+).

use std::sync::Arc;

use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{
    BrokerId, FindCoordinatorRequest, FindCoordinatorResponse, RequestHeader,
};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers FindCoordinator. Key type 1 (transactions) is refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
/// transactions are not supported, and that is the one FindCoordinator error librdkafka does not retry forever.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: FindCoordinatorRequest,
) -> FindCoordinatorResponse {
    let (host, port) = broker.advertised();
    let node = BrokerId(broker.config().node_id);
    let supported = req.key_type == 0;
    let outcome = if supported {
        Ok(())
    } else {
        Err(Error::TransactionsUnsupported)
    };
    let code = error_code::of(&outcome);
    let msg = outcome.err().map(|e| sb(error_code::message(&e)));
    if h.request_api_version >= 4 {
        let coordinators = req
            .coordinator_keys
            .into_iter()
            .map(|key| {
                let c = Coordinator::default()
                    .with_key(key)
                    .with_error_code(code)
                    .with_error_message(msg.clone());
                if supported {
                    c.with_node_id(node).with_host(sb(host)).with_port(port)
                } else {
                    c.with_node_id(BrokerId(-1)).with_port(-1)
                }
            })
            .collect();
        return FindCoordinatorResponse::default().with_coordinators(coordinators);
    }
    let resp = FindCoordinatorResponse::default().with_error_code(code);
    let resp = if h.request_api_version >= 1 {
        resp.with_error_message(msg)
    } else {
        resp
    };
    if supported {
        resp.with_node_id(node).with_host(sb(host)).with_port(port)
    } else {
        resp.with_node_id(BrokerId(-1)).with_port(-1)
    }
}
