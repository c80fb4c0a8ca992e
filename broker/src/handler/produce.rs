//! Produce (key 0): validated batches appended as the client's bytes; per-partition errors. All partitions of
//! one request are appended in one blocking section.

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse, RequestHeader};
use tracing::debug;

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

fn failed(topic: &str, partition: i32, e: &Error) -> PartitionProduceResponse {
    let (code, msg) = (error_code::code(e), error_code::message(e));
    debug!(topic, partition, code, %msg, "produce rejected");
    PartitionProduceResponse::default()
        .with_index(partition)
        .with_error_code(code)
        .with_base_offset(-1)
        .with_error_message(Some(sb(msg)))
}

/// Checks one partition's target and payload before anything is written.
fn precheck(broker: &Broker, topic: &str, records: Option<Bytes>) -> Result<Bytes> {
    let meta = broker
        .topics()
        .get(topic)
        .ok_or_else(|| Error::UnknownTopic(topic.to_string()))?;
    if meta.internal {
        return Err(Error::InternalTopic(topic.to_string()));
    }
    records
        .filter(|r| !r.is_empty())
        .ok_or(Error::ProduceWithoutRecords)
}

fn append(
    broker: &Broker,
    topic: &str,
    partition: i32,
    records: Bytes,
    acks: i16,
) -> PartitionProduceResponse {
    let log = match broker.log(topic, partition) {
        Ok(log) => log,
        Err(e) => return failed(topic, partition, &e),
    };
    // One broker is the whole in-sync replica set: acks=all needs min.insync.replicas <= 1 (Kafka refuses the
    // append with NOT_ENOUGH_REPLICAS, writing nothing).
    let min_isr = if acks == -1 {
        log.config().min_insync_replicas
    } else {
        1
    };
    if min_isr > 1 {
        let e = Error::NotEnoughReplicas {
            topic: topic.to_string(),
            partition,
            min_isr,
        };
        return failed(topic, partition, &e);
    }
    let result: Result<_> = log.append_as_leader(records, 0).map_err(Error::from);
    match result {
        Ok(info) => PartitionProduceResponse::default()
            .with_index(partition)
            .with_base_offset(info.first_offset)
            .with_log_append_time_ms(info.log_append_time_ms)
            .with_log_start_offset(info.log_start_offset),
        Err(e) => failed(topic, partition, &e),
    }
}

/// Answers Produce (acks 0/1/-1: on one node, -1 is satisfied once the append returns, unless the topic's
/// `min.insync.replicas` asks for more than one replica).
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: ProduceRequest,
) -> ProduceResponse {
    // (topic index, partition, Ok(records) to append | Err(response))
    let mut work: Vec<(usize, String, i32, Result<Bytes, PartitionProduceResponse>)> = Vec::new();
    let mut names = Vec::with_capacity(req.topic_data.len());
    for (ti, t) in req.topic_data.into_iter().enumerate() {
        let topic = t.name.0.to_string();
        for p in t.partition_data {
            let item = precheck(broker, &topic, p.records).map_err(|e| failed(&topic, p.index, &e));
            work.push((ti, topic.clone(), p.index, item));
        }
        names.push(t.name);
    }
    let b = broker.clone();
    let acks = req.acks;
    let done = blocking(move || {
        Ok(work
            .into_iter()
            .map(|(ti, topic, p, item)| {
                let resp = match item {
                    Ok(records) => b.metrics().produced(
                        &topic,
                        &records.clone(),
                        append(&b, &topic, p, records, acks),
                    ),
                    Err(resp) => resp,
                };
                (ti, resp)
            })
            .collect::<Vec<_>>())
    })
    .await;
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // The blocking pool failed: nothing is known to be written; report it for every partition.
            return ProduceResponse::default().with_responses(
                names
                    .into_iter()
                    .map(|n| {
                        TopicProduceResponse::default()
                            .with_name(n)
                            .with_partition_responses(vec![failed("", 0, &e)])
                    })
                    .collect(),
            );
        }
    };
    if done.iter().any(|(_, r)| r.error_code == error_code::NONE) {
        broker.notify_appended();
    }
    let mut per_topic: Vec<Vec<PartitionProduceResponse>> =
        names.iter().map(|_| Vec::new()).collect();
    for (ti, resp) in done {
        per_topic[ti].push(resp);
    }
    let responses = names
        .into_iter()
        .zip(per_topic)
        .map(|(n, parts)| {
            TopicProduceResponse::default()
                .with_name(n)
                .with_partition_responses(parts)
        })
        .collect();
    ProduceResponse::default().with_responses(responses)
}
