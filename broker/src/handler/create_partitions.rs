//! CreatePartitions (key 37): raises a topic's partition count (validate-only supported).

use std::sync::Arc;

use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse, RequestHeader};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers CreatePartitions.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: CreatePartitionsRequest,
) -> CreatePartitionsResponse {
    let node = broker.config().node_id;
    let mut results = Vec::with_capacity(req.topics.len());
    for t in req.topics {
        let r = CreatePartitionsTopicResult::default().with_name(t.name.clone());
        let bad_assignment = t.assignments.as_ref().is_some_and(|a| {
            a.iter()
                .any(|x| x.broker_ids.len() != 1 || x.broker_ids[0].0 != node)
        });
        let outcome = if bad_assignment {
            Err(Error::InvalidPartitions(format!(
                "every replica must be on broker {node}"
            )))
        } else {
            let b = broker.clone();
            let name = t.name.0.to_string();
            let validate_only = req.validate_only;
            blocking(move || b.create_partitions(&name, t.count, validate_only)).await
        };
        results.push(match outcome {
            Ok(()) => r,
            Err(e) => {
                let code = match e {
                    Error::InvalidPartitions(_) if bad_assignment => {
                        error_code::INVALID_REPLICA_ASSIGNMENT
                    }
                    ref e => error_code::code(e),
                };
                r.with_error_code(code)
                    .with_error_message(Some(sb(e.to_string())))
            }
        });
    }
    CreatePartitionsResponse::default().with_results(results)
}
