//! ElectLeaders (key 43): on a single node every partition's one replica is its preferred leader and leads, so
//! each partition named is ELECTION_NOT_NEEDED (preferred and unclean elections alike), and an unknown topic or
//! partition UNKNOWN_TOPIC_OR_PARTITION — Kafka's `ReplicationControlManager.electLeader`. A null topic list
//! means every partition; Kafka then leaves out the partitions whose election was not needed, so the answer is
//! empty here.

use std::sync::Arc;

use kafka_protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_protocol::messages::{ElectLeadersRequest, ElectLeadersResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers ElectLeaders.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: ElectLeadersRequest,
) -> ElectLeadersResponse {
    let resp = ElectLeadersResponse::default();
    // PREFERRED (0) and UNCLEAN (1) are Kafka's election types (v1+; v0 is preferred only).
    if !(0..=1).contains(&req.election_type) {
        let e = Error::UnknownElectionType(req.election_type);
        return resp.with_error_code(error_code::code(&e));
    }
    let Some(topics) = req.topic_partitions else {
        return resp;
    };
    let results = topics
        .into_iter()
        .map(|t| {
            let meta = broker.registry().get(t.topic.0.as_str());
            let partition_result = t
                .partitions
                .iter()
                .map(|&p| {
                    let outcome = match &meta {
                        Some(m) if (0..m.partitions).contains(&p) => Error::ElectionNotNeeded,
                        _ => Error::UnknownTopicOrPartition(format!("{}-{p}", t.topic.0.as_str())),
                    };
                    let message = match outcome {
                        // Kafka sends no message with ELECTION_NOT_NEEDED.
                        Error::ElectionNotNeeded => None,
                        ref e => Some(sb(error_code::message(e))),
                    };
                    PartitionResult::default()
                        .with_partition_id(p)
                        .with_error_code(error_code::code(&outcome))
                        .with_error_message(message)
                })
                .collect();
            ReplicaElectionResult::default()
                .with_topic(t.topic)
                .with_partition_result(partition_result)
        })
        .collect();
    resp.with_replica_election_results(results)
}
