//! DescribeCluster (key 60): one broker, which is also the controller.

use std::sync::Arc;

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{
    BrokerId, DescribeClusterRequest, DescribeClusterResponse, RequestHeader,
};

use super::sb;
use crate::broker::Broker;

/// Answers DescribeCluster.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    _req: DescribeClusterRequest,
) -> DescribeClusterResponse {
    let (host, port) = broker.advertised();
    let node = BrokerId(broker.config().node_id);
    DescribeClusterResponse::default()
        .with_cluster_id(sb(broker.topics().cluster_id()))
        .with_controller_id(node)
        .with_brokers(vec![DescribeClusterBroker::default()
            .with_broker_id(node)
            .with_host(sb(host))
            .with_port(port)])
}
