//! DeleteTopics (key 20): removes the topic from the registry and its logs from disk. v6+ (KIP-516) names each
//! topic by name or by id; an unknown id is answered UNKNOWN_TOPIC_ID.

use std::sync::Arc;

use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse, RequestHeader};
use uuid::Uuid;

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers DeleteTopics.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: DeleteTopicsRequest,
) -> DeleteTopicsResponse {
    let version = h.request_api_version;
    // v0-5 send names only; v6+ send (name | id) pairs.
    let wanted: Vec<(Option<String>, Uuid)> = if version >= 6 {
        req.topics
            .into_iter()
            .map(|t| (t.name.map(|n| n.0.to_string()), t.topic_id))
            .collect()
    } else {
        req.topic_names
            .into_iter()
            .map(|n| (Some(n.0.to_string()), Uuid::nil()))
            .collect()
    };
    let mut responses = Vec::with_capacity(wanted.len());
    for (name, id) in wanted {
        let resolved = match (name, id.is_nil()) {
            (Some(n), true) => Ok(n),
            // Kafka: "You may not specify both topic name and topic id." (INVALID_REQUEST).
            (Some(n), false) => Err((
                Some(n.clone()),
                Error::Protocol {
                    api: "DeleteTopics".into(),
                    message: format!("topic {n} is named both by name and by id {id}; name one"),
                },
            )),
            (None, false) => broker
                .registry()
                .name_of(id)
                .ok_or((None, Error::UnknownTopicId(id))),
            (None, true) => Err((None, Error::UnknownTopicId(id))),
        };
        let b = broker.clone();
        let result = match resolved {
            Ok(n) => {
                let name = n.clone();
                b.delete_topic(&n)
                    .await
                    .map(|meta| (name.clone(), meta.id))
                    .map_err(|e| (Some(name), e))
            }
            Err(e) => Err(e),
        };
        let mut r = DeletableTopicResult::default();
        match result {
            Ok((n, deleted_id)) => {
                r = r.with_name(Some(sb(n).into()));
                if version >= 6 {
                    r = r.with_topic_id(deleted_id);
                }
            }
            Err((n, e)) => {
                r = r.with_error_code(error_code::code(&e));
                if version >= 6 {
                    r = r.with_topic_id(id);
                }
                if version >= 5 {
                    r = r.with_error_message(Some(sb(e.to_string())));
                }
                r = r.with_name(n.map(|n| sb(n).into()));
            }
        }
        responses.push(r);
    }
    DeleteTopicsResponse::default().with_responses(responses)
}
