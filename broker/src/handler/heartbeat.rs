//! Heartbeat (key 12).

use std::sync::Arc;

use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse, RequestHeader};

use crate::broker::Broker;
use crate::error_code;

/// Answers Heartbeat.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: HeartbeatRequest,
) -> HeartbeatResponse {
    let beat = broker.groups().heartbeat(
        &req.group_id.0,
        &req.member_id,
        req.group_instance_id.as_deref(),
        req.generation_id,
    );
    HeartbeatResponse::default().with_error_code(error_code::of(&beat))
}
