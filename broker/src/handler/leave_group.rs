//! LeaveGroup (key 13): one member (v0-2) or a batch of members (v3+).

use std::sync::Arc;

use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{LeaveGroupRequest, LeaveGroupResponse, RequestHeader};

use crate::broker::Broker;
use crate::error_code;

/// Answers LeaveGroup.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: LeaveGroupRequest,
) -> LeaveGroupResponse {
    let group = req.group_id.0.to_string();
    if h.request_api_version < 3 {
        let left = broker.groups().leave(&group, &req.member_id, None);
        super::join_group::persist(broker).await;
        return LeaveGroupResponse::default().with_error_code(error_code::of(&left));
    }
    let members: Vec<MemberResponse> = req
        .members
        .into_iter()
        .map(|m| {
            let left = broker
                .groups()
                .leave(&group, &m.member_id, m.group_instance_id.as_deref());
            MemberResponse::default()
                .with_member_id(m.member_id)
                .with_group_instance_id(m.group_instance_id)
                .with_error_code(error_code::of(&left))
        })
        .collect();
    super::join_group::persist(broker).await;
    let top = if members.iter().all(|m| m.error_code == error_code::NONE) {
        error_code::NONE
    } else if members.len() == 1 {
        members[0].error_code
    } else {
        error_code::NONE
    };
    LeaveGroupResponse::default()
        .with_error_code(top)
        .with_members(members)
}
