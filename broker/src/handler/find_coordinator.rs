//! FindCoordinator (key 10): this broker coordinates every group and every transactional id (single form v0-3,
//! batched form v4+). The first lookup of a transactional id creates `__transaction_state`, as Kafka does.

use std::sync::Arc;

use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{
    BrokerId, FindCoordinatorRequest, FindCoordinatorResponse, RequestHeader,
};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers FindCoordinator for key type 0 (group) and 1 (transactional id); other key types (KIP-932 share
/// groups) are INVALID_REQUEST.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: FindCoordinatorRequest,
) -> FindCoordinatorResponse {
    let (host, port) = broker.advertised();
    let node = BrokerId(broker.config().node_id);
    let outcome = match req.key_type {
        0 => Ok(()),
        1 => {
            let b = broker.clone();
            blocking(move || b.txn().ensure_ready()).await
        }
        other => Err(Error::UnknownCoordinatorType(other)),
    };
    let supported = outcome.is_ok();
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
