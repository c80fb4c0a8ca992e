//! DeleteTopics (key 20): removes the topic from the registry and its logs from disk.

use std::sync::Arc;

use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse, RequestHeader};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error_code;

/// Answers DeleteTopics.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: DeleteTopicsRequest,
) -> DeleteTopicsResponse {
    let mut responses = Vec::with_capacity(req.topic_names.len());
    for name in req.topic_names {
        let b = broker.clone();
        let n = name.0.to_string();
        let mut r = DeletableTopicResult::default().with_name(Some(name));
        if let Err(e) = blocking(move || b.delete_topic(&n)).await {
            r = r.with_error_code(error_code::code(&e));
            if h.request_api_version >= 5 {
                r = r.with_error_message(Some(sb(e.to_string())));
            }
        }
        responses.push(r);
    }
    DeleteTopicsResponse::default().with_responses(responses)
}
