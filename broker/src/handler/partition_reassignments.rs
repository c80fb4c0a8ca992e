//! AlterPartitionReassignments (key 45) and ListPartitionReassignments (key 46), as Kafka's
//! `ReplicationControlManager` answers them on a single node: every partition has one replica, this node, so the
//! only valid target is `[node.id]`, which is already the assignment and completes at once; no reassignment is ever
//! in progress, so the list is empty and a cancellation (null replicas) is NO_REASSIGNMENT_IN_PROGRESS. A target
//! naming another broker, a broker twice or no broker is INVALID_REPLICA_ASSIGNMENT with Kafka's reason; an
//! unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION. `kafka-reassign-partitions.sh` works through these.

use std::sync::Arc;

use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, BrokerId,
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, RequestHeader,
};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Why a target replica list is refused on node `node`, if it is (Kafka's `validateManualPartitionAssignment`).
fn invalid_target(replicas: &[BrokerId], node: i32) -> Option<String> {
    if replicas.is_empty() {
        return Some("the manual partition assignment includes an empty replica list".into());
    }
    for (i, r) in replicas.iter().enumerate() {
        if replicas[..i].contains(r) {
            return Some(format!(
                "the manual partition assignment includes the broker {} more than once",
                r.0
            ));
        }
        if r.0 != node {
            return Some(format!(
                "the manual partition assignment includes broker {}, but no such broker is registered",
                r.0
            ));
        }
    }
    None
}

/// The outcome of one partition's reassignment.
fn alter_one(
    broker: &Broker,
    topic: &str,
    partition: i32,
    target: Option<&[BrokerId]>,
) -> Option<Error> {
    let exists = broker
        .registry()
        .get(topic)
        .is_some_and(|m| (0..m.partitions).contains(&partition));
    if !exists {
        return Some(Error::UnknownTopicOrPartition(format!(
            "{topic}-{partition}"
        )));
    }
    match target {
        None => Some(Error::NoReassignmentInProgress(format!(
            "{topic}-{partition}"
        ))),
        Some(replicas) => {
            invalid_target(replicas, broker.config().node_id).map(Error::InvalidReplicaAssignment)
        }
    }
}

/// Answers AlterPartitionReassignments: one result per partition named.
pub async fn alter(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: AlterPartitionReassignmentsRequest,
) -> AlterPartitionReassignmentsResponse {
    let responses = req
        .topics
        .into_iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let r = ReassignablePartitionResponse::default()
                        .with_partition_index(p.partition_index);
                    match alter_one(
                        broker,
                        t.name.0.as_str(),
                        p.partition_index,
                        p.replicas.as_deref(),
                    ) {
                        None => r,
                        Some(e) => r
                            .with_error_code(error_code::code(&e))
                            .with_error_message(Some(sb(error_code::message(&e)))),
                    }
                })
                .collect();
            ReassignableTopicResponse::default()
                .with_name(t.name)
                .with_partitions(partitions)
        })
        .collect();
    AlterPartitionReassignmentsResponse::default()
        .with_allow_replication_factor_change(req.allow_replication_factor_change)
        .with_responses(responses)
}

/// Answers ListPartitionReassignments: none in progress.
pub async fn list(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    _req: ListPartitionReassignmentsRequest,
) -> ListPartitionReassignmentsResponse {
    ListPartitionReassignmentsResponse::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_node_alone_is_a_valid_target() {
        let ids = |v: &[i32]| v.iter().map(|&i| BrokerId(i)).collect::<Vec<_>>();
        assert_eq!(invalid_target(&ids(&[1]), 1), None);
        for bad in [&[][..], &[2], &[1, 1], &[1, 2]] {
            assert!(invalid_target(&ids(bad), 1).is_some(), "{bad:?}");
        }
        assert!(invalid_target(&ids(&[2]), 1).unwrap().contains("broker 2"));
    }
}
