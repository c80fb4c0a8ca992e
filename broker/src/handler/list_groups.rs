//! ListGroups (key 16), with the v4 state filter.

use std::sync::Arc;

use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{GroupId, ListGroupsRequest, ListGroupsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;

/// Answers ListGroups.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: ListGroupsRequest,
) -> ListGroupsResponse {
    let version = h.request_api_version;
    let filter: Vec<String> = req
        .states_filter
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let groups = broker
        .groups()
        .list()
        .into_iter()
        .filter(|(_, _, state)| filter.is_empty() || filter.contains(&state.to_ascii_lowercase()))
        .map(|(id, pt, state)| {
            let g = ListedGroup::default()
                .with_group_id(GroupId(sb(id)))
                .with_protocol_type(sb(pt));
            if version >= 4 {
                g.with_group_state(sb(state))
            } else {
                g
            }
        })
        .collect();
    ListGroupsResponse::default().with_groups(groups)
}
