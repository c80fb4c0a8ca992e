//! SyncGroup (key 14): the leader's assignment is handed to every member.

use std::sync::Arc;

use kafka_protocol::messages::{RequestHeader, SyncGroupRequest, SyncGroupResponse};

use super::sb;
use crate::broker::Broker;
use crate::error::GroupError;
use crate::error_code;

/// Answers SyncGroup.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: SyncGroupRequest,
) -> SyncGroupResponse {
    if h.request_api_version >= 5 {
        // SyncGroup v5: protocol type and name are mandatory (Kafka answers INCONSISTENT_GROUP_PROTOCOL before
        // looking at anything else), and the protocol the member thinks it syncs must be the group's.
        if req.protocol_type.is_none() || req.protocol_name.is_none() {
            let e = GroupError::InconsistentGroupProtocol {
                member: req.member_id.to_string(),
                protocol_type: req.protocol_type.as_deref().unwrap_or_default().to_string(),
            };
            return SyncGroupResponse::default().with_error_code(error_code::group_code(&e));
        }
        if let Err(e) = broker.groups().check_sync_protocol(
            &req.group_id.0,
            (&req.member_id, req.group_instance_id.as_deref()),
            req.generation_id,
            (req.protocol_type.as_deref(), req.protocol_name.as_deref()),
        ) {
            return SyncGroupResponse::default().with_error_code(error_code::group_code(&e));
        }
    }
    let assignments = req
        .assignments
        .into_iter()
        .map(|a| (a.member_id.to_string(), a.assignment))
        .collect();
    // The leader's SyncGroup stores the group with its assignment before anyone is answered (blocking).
    let b = broker.clone();
    let (group_id, member_id) = (req.group_id.0.to_string(), req.member_id.to_string());
    let instance = req.group_instance_id.as_ref().map(|s| s.to_string());
    let generation = req.generation_id;
    let rx = super::blocking(move || {
        Ok(b.groups().sync(
            &group_id,
            (&member_id, instance.as_deref()),
            generation,
            assignments,
        ))
    })
    .await;
    let cancel = broker.cancel_token();
    let result = match rx {
        Ok(rx) => tokio::select! {
            r = rx => r.ok(),
            _ = cancel.cancelled() => None,
        },
        Err(e) => Some(Err(crate::error_code::group_store_failed(
            &req.group_id.0,
            &e,
        ))),
    };
    // Shutting down: the member is told to rejoin.
    let result = result.unwrap_or(Err(GroupError::RebalanceInProgress));
    let code = error_code::of(&result);
    let (pt, pn, assignment) = result.unwrap_or_default();
    let resp = SyncGroupResponse::default()
        .with_error_code(code)
        .with_assignment(assignment);
    if h.request_api_version >= 5 {
        resp.with_protocol_type(pt.map(sb))
            .with_protocol_name(pn.map(sb))
    } else {
        resp
    }
}
