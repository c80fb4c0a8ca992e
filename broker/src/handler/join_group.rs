//! JoinGroup (key 11): joins a classic group; the answer comes when the rebalance completes.

use std::sync::Arc;

use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::{JoinGroupRequest, JoinGroupResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;
use crate::error::GroupError;
use crate::error_code;
use crate::group::JoinRequest;

/// Answers JoinGroup.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: JoinGroupRequest,
) -> JoinGroupResponse {
    let version = h.request_api_version;
    let join = JoinRequest {
        group_id: req.group_id.0.to_string(),
        member_id: req.member_id.to_string(),
        instance_id: req.group_instance_id.map(|s| s.to_string()),
        client_id: h
            .client_id
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default(),
        client_host: crate::broker::request::peer_host(),
        session_timeout_ms: req.session_timeout_ms,
        rebalance_timeout_ms: if version >= 1 {
            req.rebalance_timeout_ms
        } else {
            req.session_timeout_ms
        },
        protocol_type: req.protocol_type.to_string(),
        protocols: req
            .protocols
            .into_iter()
            .map(|p| (p.name.to_string(), p.metadata))
            .collect(),
        supports_skip_assignment: version >= 9,
        requires_known_member_id: version >= 4,
    };
    // An empty consumer group of this id gives way to the classic group (Kafka's maybeDeleteEmptyConsumerGroup).
    let (b, gid) = (broker.clone(), join.group_id.clone());
    if let Err(e) = super::blocking(move || b.groups().replace_empty_consumer_group(&gid)).await {
        let refused = error_code::group_store_failed(&join.group_id, &e);
        return JoinGroupResponse::default()
            .with_error_code(error_code::group_code(&refused))
            .with_generation_id(-1)
            .with_member_id(sb(join.member_id));
    }
    let rx = broker.groups().join(join);
    let cancel = broker.cancel_token();
    let result = tokio::select! {
        r = rx => r.ok(),
        _ = cancel.cancelled() => None,
    };
    persist(broker).await;
    let Some(r) = result else {
        // Shutting down: the member is told to rejoin (elsewhere or after the restart).
        return JoinGroupResponse::default()
            .with_error_code(error_code::group_code(&GroupError::RebalanceInProgress))
            .with_generation_id(-1);
    };
    let mut resp = JoinGroupResponse::default()
        .with_error_code(error_code::of_error(r.error.as_ref()))
        .with_generation_id(r.generation_id)
        // Null when no protocol was chosen (an error answer), from v7 where the field is nullable, as Kafka.
        .with_protocol_name(match r.protocol_name {
            None if version >= 7 => None,
            name => Some(sb(name.unwrap_or_default())),
        })
        .with_leader(sb(r.leader))
        .with_member_id(sb(r.member_id))
        .with_members(
            r.members
                .into_iter()
                .map(|(id, inst, meta)| {
                    let m = JoinGroupResponseMember::default()
                        .with_member_id(sb(id))
                        .with_metadata(meta);
                    if version >= 5 {
                        m.with_group_instance_id(inst.map(sb))
                    } else {
                        m
                    }
                })
                .collect(),
        );
    if version >= 7 {
        resp.protocol_type = r.protocol_type.map(sb);
    }
    if version >= 9 {
        resp.skip_assignment = r.skip_assignment;
    }
    resp
}

/// Stores the groups a join changed (a replaced static member, a group that became empty).
pub(crate) async fn persist(broker: &Arc<Broker>) {
    let b = broker.clone();
    let _ = super::blocking(move || {
        b.groups().persist_dirty();
        Ok(())
    })
    .await;
}
