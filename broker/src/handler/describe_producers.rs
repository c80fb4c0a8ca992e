//! DescribeProducers (key 61, KIP-664): per partition, the producers its log remembers (producer id, epoch, last
//! sequence and timestamp, coordinator epoch, the start offset of its open transaction), as
//! `kafka-transactions.sh describe-producers` shows them to find a hanging transaction.

use std::sync::Arc;

use kafka_protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use kafka_protocol::messages::{
    DescribeProducersRequest, DescribeProducersResponse, RequestHeader,
};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error_code;

/// One partition's answer: its producers, or UNKNOWN_TOPIC_OR_PARTITION (with the message) for a topic or
/// partition this broker does not have, as Kafka.
fn partition(broker: &Broker, topic: &str, index: i32) -> PartitionResponse {
    let resp = PartitionResponse::default().with_partition_index(index);
    let log = match broker.topics().log(topic, index) {
        Ok(log) => log,
        Err(e) => {
            return resp
                .with_error_code(error_code::code(&e))
                .with_error_message(Some(sb(error_code::message(&e))));
        }
    };
    let producers = log
        .active_producers()
        .into_iter()
        .map(|p| {
            ProducerState::default()
                .with_producer_id(p.producer_id.into())
                .with_producer_epoch(p.producer_epoch.into())
                .with_last_sequence(p.last_sequence)
                .with_last_timestamp(p.last_timestamp)
                .with_coordinator_epoch(p.coordinator_epoch)
                .with_current_txn_start_offset(p.current_txn_start_offset)
        })
        .collect();
    resp.with_active_producers(producers)
}

/// Answers DescribeProducers.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeProducersRequest,
) -> DescribeProducersResponse {
    let b = broker.clone();
    let topics = blocking(move || {
        Ok(req
            .topics
            .iter()
            .map(|t| {
                let parts = t
                    .partition_indexes
                    .iter()
                    .map(|p| partition(&b, &t.name.0, *p))
                    .collect();
                TopicResponse::default()
                    .with_name(t.name.clone())
                    .with_partitions(parts)
            })
            .collect())
    })
    .await
    .unwrap_or_default();
    DescribeProducersResponse::default().with_topics(topics)
}
