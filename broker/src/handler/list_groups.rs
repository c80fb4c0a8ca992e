//! ListGroups (key 16), with the v4 state filter and the v5 type filter and group type (KIP-848).

use std::sync::Arc;

use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{GroupId, ListGroupsRequest, ListGroupsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;

/// Answers ListGroups. As Kafka, both filters compare case-insensitively, and an unknown state or type
/// matches no group.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: ListGroupsRequest,
) -> ListGroupsResponse {
    let version = h.request_api_version;
    let lower = |v: &[kafka_protocol::protocol::StrBytes]| -> Vec<String> {
        v.iter().map(|s| s.to_ascii_lowercase()).collect()
    };
    let states = lower(&req.states_filter);
    let types = lower(&req.types_filter);
    let groups = broker
        .groups()
        .list()
        .into_iter()
        .filter(|g| states.is_empty() || states.contains(&g.state.to_ascii_lowercase()))
        .filter(|g| types.is_empty() || types.contains(&g.group_type.to_string()))
        .map(|g| {
            let mut l = ListedGroup::default()
                .with_group_id(GroupId(sb(g.group_id)))
                .with_protocol_type(sb(g.protocol_type));
            if version >= 4 {
                l = l.with_group_state(sb(g.state));
            }
            if version >= 5 {
                l = l.with_group_type(sb(g.group_type));
            }
            l
        })
        .collect();
    ListGroupsResponse::default().with_groups(groups)
}
