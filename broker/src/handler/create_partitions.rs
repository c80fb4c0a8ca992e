//! CreatePartitions (key 37): raises a topic's partition count (validate-only supported).

use std::sync::Arc;

use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse, RequestHeader};

use super::{blocking, create_topics, sb};
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

/// Checks the assignments of a request (if any): one per new partition, each naming only this broker. A topic
/// that does not exist or does not grow is left to [`Broker::create_partitions`] to report.
fn check_assignments(broker: &Broker, t: &CreatePartitionsTopic, node: i32) -> Result<()> {
    let Some(assignments) = &t.assignments else {
        return Ok(());
    };
    if let Some(meta) = broker.topics().get(&t.name.0) {
        let new = i64::from(t.count) - i64::from(meta.partitions);
        if new > 0 && assignments.len() as i64 != new {
            return Err(Error::InvalidReplicaAssignment(format!(
                "increasing the number of partitions by {new} but {} assignments provided",
                assignments.len()
            )));
        }
    }
    create_topics::check_assignments(node, assignments.iter().map(|a| a.broker_ids.as_slice()))
}

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
        let outcome = match check_assignments(broker, &t, node) {
            Err(e) => Err(e),
            Ok(()) => {
                let b = broker.clone();
                let name = t.name.0.to_string();
                let validate_only = req.validate_only;
                blocking(move || b.create_partitions(&name, t.count, validate_only)).await
            }
        };
        results.push(match outcome {
            Ok(()) => r,
            Err(e) => r
                .with_error_code(error_code::code(&e))
                .with_error_message(Some(sb(e.to_string()))),
        });
    }
    CreatePartitionsResponse::default().with_results(results)
}
