//! DeleteGroups (key 42): empty groups and their committed offsets.

use std::sync::Arc;

use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::{DeleteGroupsRequest, DeleteGroupsResponse, RequestHeader};

use crate::broker::Broker;

/// Answers DeleteGroups.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DeleteGroupsRequest,
) -> DeleteGroupsResponse {
    let mut results = Vec::with_capacity(req.groups_names.len());
    for g in req.groups_names {
        let b = broker.clone();
        let id = g.0.to_string();
        let code = tokio::task::spawn_blocking(move || b.groups().delete(&id))
            .await
            .unwrap_or(crate::error_code::UNKNOWN_SERVER_ERROR);
        results.push(
            DeletableGroupResult::default()
                .with_group_id(g)
                .with_error_code(code),
        );
    }
    DeleteGroupsResponse::default().with_results(results)
}
