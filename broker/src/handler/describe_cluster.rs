//! DescribeCluster (key 60): one broker, which is also the controller (never fenced). Authorized operations, when
//! asked, are every operation Kafka supports on the resource: strata has no authorizer, and Kafka without one
//! reports each operation allowed (`AuthHelper.authorizedOperations`).

use std::sync::Arc;

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{
    BrokerId, DescribeClusterRequest, DescribeClusterResponse, RequestHeader,
};

use super::sb;
use crate::broker::Broker;

/// Kafka's `AclOperation` codes, as bits of an authorized-operations field.
const fn ops(codes: &[u8]) -> i32 {
    let mut bits = 0i32;
    let mut i = 0;
    while i < codes.len() {
        bits |= 1 << codes[i];
        i += 1;
    }
    bits
}

/// `AclEntry.supportedOperations(CLUSTER)`: CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
/// ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
pub(crate) const CLUSTER_OPERATIONS: i32 = ops(&[5, 7, 8, 9, 10, 11, 12]);

/// `AclEntry.supportedOperations(TOPIC)`: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
/// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11.
pub(crate) const TOPIC_OPERATIONS: i32 = ops(&[3, 4, 5, 6, 7, 8, 10, 11]);

/// `AclEntry.supportedOperations(GROUP)`: READ 3, DELETE 6, DESCRIBE 8.
pub(crate) const GROUP_OPERATIONS: i32 = ops(&[3, 6, 8]);

/// Answers DescribeCluster.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeClusterRequest,
) -> DescribeClusterResponse {
    let (host, port) = broker.advertised();
    let node = BrokerId(broker.config().node_id);
    let mut resp = DescribeClusterResponse::default();
    if req.include_cluster_authorized_operations {
        resp.cluster_authorized_operations = CLUSTER_OPERATIONS;
    }
    resp.with_cluster_id(sb(broker.registry().cluster_id()))
        .with_controller_id(node)
        .with_brokers(vec![DescribeClusterBroker::default()
            .with_broker_id(node)
            .with_host(sb(host))
            .with_port(port)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values a Kafka broker without an authorizer answers (bit fields of `AclOperation` codes).
    #[test]
    fn authorized_operations_are_kafkas_bit_fields() {
        assert_eq!(CLUSTER_OPERATIONS, 8096);
        assert_eq!(TOPIC_OPERATIONS, 3576);
        assert_eq!(GROUP_OPERATIONS, 328);
    }
}
