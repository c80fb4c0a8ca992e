//! DeleteGroups (key 42): empty groups and their committed offsets.

use std::sync::Arc;

use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::{DeleteGroupsRequest, DeleteGroupsResponse, RequestHeader};

use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

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
        let deleted = tokio::task::spawn_blocking(move || b.groups().delete(&id))
            .await
            .unwrap_or_else(|e| Err(Error::Internal(format!("deleting a group: {e}"))));
        results.push(
            DeletableGroupResult::default()
                .with_group_id(g)
                .with_error_code(error_code::of(&deleted)),
        );
    }
    DeleteGroupsResponse::default().with_results(results)
}
