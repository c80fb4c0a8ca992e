//! Produce (key 0): validated batches appended as the client's bytes; per-partition errors.

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse, RequestHeader};
use tracing::debug;

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Appends one partition's records; returns the response entry.
async fn append(
    broker: &Arc<Broker>,
    topic: &str,
    partition: i32,
    records: Option<Bytes>,
) -> PartitionProduceResponse {
    let resp = PartitionProduceResponse::default().with_index(partition);
    let fail = |code: i16, msg: String| {
        debug!(topic, partition, code, %msg, "produce rejected");
        PartitionProduceResponse::default()
            .with_index(partition)
            .with_error_code(code)
            .with_base_offset(-1)
            .with_error_message(Some(sb(msg)))
    };
    let meta = match broker.topics().get(topic) {
        Some(m) => m,
        None => {
            return fail(
                error_code::UNKNOWN_TOPIC_OR_PARTITION,
                format!("unknown topic {topic}"),
            )
        }
    };
    if meta.internal {
        let e = Error::InternalTopic(topic.to_string());
        return fail(error_code::code(&e), e.to_string());
    }
    let Some(records) = records.filter(|r| !r.is_empty()) else {
        return fail(
            error_code::INVALID_RECORD,
            "a produce request must carry at least one record batch".into(),
        );
    };
    let log = match broker.log(topic, partition) {
        Ok(l) => l,
        Err(e) => return fail(error_code::code(&e), e.to_string()),
    };
    match blocking(move || Ok(log.append_as_leader(records, 0)?)).await {
        Ok(info) => {
            broker.notify_appended();
            resp.with_base_offset(info.first_offset)
                .with_log_append_time_ms(info.log_append_time_ms)
                .with_log_start_offset(info.log_start_offset)
        }
        Err(e) => fail(error_code::code(&e), e.to_string()),
    }
}

/// Answers Produce (acks 0/1/-1: on one node, -1 is satisfied once the append returns).
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: ProduceRequest,
) -> ProduceResponse {
    let mut responses = Vec::with_capacity(req.topic_data.len());
    for t in req.topic_data {
        let topic = t.name.0.to_string();
        let mut partitions = Vec::with_capacity(t.partition_data.len());
        for p in t.partition_data {
            partitions.push(append(broker, &topic, p.index, p.records).await);
        }
        responses.push(
            TopicProduceResponse::default()
                .with_name(t.name)
                .with_partition_responses(partitions),
        );
    }
    ProduceResponse::default().with_responses(responses)
}
