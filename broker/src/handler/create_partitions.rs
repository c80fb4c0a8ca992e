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
    if let Some(meta) = broker.registry().get(&t.name.0) {
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

/// Answers CreatePartitions: every topic is checked and the partitions the request adds are held against the
/// limits before any is created; the registry is written once.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: CreatePartitionsRequest,
) -> CreatePartitionsResponse {
    let node = broker.config().node_id;
    let checked: Vec<Result<()>> = req
        .topics
        .iter()
        .map(|t| check_assignments(broker, t, node))
        .collect();
    let changes: Vec<(String, i32)> = req
        .topics
        .iter()
        .zip(&checked)
        .filter(|(_, c)| c.is_ok())
        .map(|(t, _)| (t.name.0.to_string(), t.count))
        .collect();
    let n = changes.len();
    let b = broker.clone();
    let validate_only = req.validate_only;
    let mut done = match blocking(move || {
        Ok(b.topics().create_partitions_batch(changes, validate_only))
    })
    .await
    {
        Ok(d) => d.into_iter(),
        Err(e) => {
            let msg = e.to_string();
            (0..n)
                .map(|_| {
                    Err(Error::io(
                        "creating partitions",
                        std::io::Error::other(msg.clone()),
                    ))
                })
                .collect::<Vec<_>>()
                .into_iter()
        }
    };
    let results = req
        .topics
        .into_iter()
        .zip(checked)
        .map(|(t, c)| {
            let r = CreatePartitionsTopicResult::default().with_name(t.name);
            match c.and_then(|()| done.next().unwrap_or(Err(Error::ShuttingDown))) {
                Ok(()) => r,
                Err(e) => r
                    .with_error_code(error_code::code(&e))
                    .with_error_message(Some(sb(e.to_string()))),
            }
        })
        .collect();
    CreatePartitionsResponse::default().with_results(results)
}
