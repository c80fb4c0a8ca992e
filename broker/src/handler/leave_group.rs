//! LeaveGroup (key 13): one member (v0-2) or a batch of members (v3+).
//!
//! Kafka's rules (`GroupMetadataManager.classicGroupLeave`, `LeaveGroupResponse`): a group that does not exist is
//! UNKNOWN_MEMBER_ID for the whole request; otherwise v3+ answers each member on its own (UNKNOWN_MEMBER_ID,
//! FENCED_INSTANCE_ID) with no top-level error, and v0-2 carry the member's error at the top.

use std::sync::Arc;

use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{LeaveGroupRequest, LeaveGroupResponse, RequestHeader};

use crate::broker::Broker;
use crate::error::GroupError;
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
    if !crate::group::valid_group_id(&group) {
        let e = GroupError::InvalidGroupId(group);
        return LeaveGroupResponse::default().with_error_code(error_code::group_code(&e));
    }
    if !broker.groups().group_exists(&group) {
        let e = GroupError::UnknownMemberId {
            member: String::new(),
        };
        return LeaveGroupResponse::default().with_error_code(error_code::group_code(&e));
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
    LeaveGroupResponse::default().with_members(members)
}
