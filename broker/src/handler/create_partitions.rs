//! CreatePartitions (key 37): raises a topic's partition count (validate-only supported).

use std::sync::Arc;

use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse, RequestHeader};

use super::{blocking, create_topics, sb};
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

/// Checks a topic's growth against `max.partitions.per.request` (Kafka checks its fixed `MAX_PARTITIONS_PER_BATCH`
/// before the assignments: POLICY_VIOLATION), then the assignments of a request (if any): one per new partition,
/// each naming only this broker. A topic that does not exist or does not grow is left to
/// [`Broker::create_partitions`] to report; the limits of the whole request are checked there.
fn check_assignments(broker: &Broker, t: &CreatePartitionsTopic, node: i32) -> Result<()> {
    let meta = broker.registry().get(&t.name.0);
    let new = meta.map(|m| i64::from(t.count) - i64::from(m.partitions));
    let limit = broker.config().max_partitions_per_request;
    if let Some(new) = new.filter(|n| *n > limit) {
        return Err(Error::PartitionLimit(format!(
            "excessively large number of partitions per request: {new} requested, limit {limit} \
             (max.partitions.per.request)"
        )));
    }
    let Some(assignments) = &t.assignments else {
        return Ok(());
    };
    if let Some(new) = new.filter(|n| *n > 0 && assignments.len() as i64 != *n) {
        return Err(Error::InvalidReplicaAssignment(format!(
            "increasing the number of partitions by {new} but {} assignments provided",
            assignments.len()
        )));
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
