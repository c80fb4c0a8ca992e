//! AddPartitionsToTxn (key 24): partitions join a producer's open transaction (v0-3, one transaction per request,
//! as producers send it), and the batched form of v4+ (several transactions; `verify_only` asks whether partitions
//! are already in the transaction, as brokers ask the coordinator under KIP-890).
//!
//! As Kafka: a partition of an unknown topic is UNKNOWN_TOPIC_OR_PARTITION and the other partitions of the request
//! OPERATION_NOT_ATTEMPTED (nothing is added); a coordinator refusal is every partition's error.

use std::sync::Arc;

use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, RequestHeader, TopicName,
};

use super::blocking;
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

/// One transaction's part of the request.
struct Part {
    id: String,
    producer_id: i64,
    epoch: i16,
    verify_only: bool,
    topics: Vec<AddPartitionsToTxnTopic>,
}

/// Per partition, its error code.
type Codes = Vec<(TopicName, Vec<(i32, i16)>)>;

fn all(topics: &[AddPartitionsToTxnTopic], code: i16) -> Codes {
    topics
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.partitions.iter().map(|p| (*p, code)).collect(),
            )
        })
        .collect()
}

/// Adds (or verifies) one transaction's partitions. Blocking.
fn add(broker: &Broker, part: &Part, fenced_supported: bool) -> Codes {
    let known = |name: &str, p: i32| {
        broker
            .registry()
            .get(name)
            .is_some_and(|m| p >= 0 && p < m.partitions)
    };
    let unknown: Vec<(String, i32)> = part
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t.name.0.to_string(), *p)))
        .filter(|(t, p)| !known(t, *p))
        .collect();
    if !unknown.is_empty() {
        let codes = error_code::code(&Error::UnknownTopicOrPartition(String::new()));
        let not_attempted = error_code::code(&Error::OperationNotAttempted);
        return part
            .topics
            .iter()
            .map(|t| {
                let parts = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let bad = unknown
                            .iter()
                            .any(|(n, q)| n == t.name.0.as_str() && q == p);
                        (*p, if bad { codes } else { not_attempted })
                    })
                    .collect();
                (t.name.clone(), parts)
            })
            .collect();
    }
    let partitions: Vec<(String, i32)> = part
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t.name.0.to_string(), *p)))
        .collect();
    let coded = |r: &Result<()>| match r {
        Ok(()) => error_code::NONE,
        Err(e) => error_code::versioned_txn_code(e, fenced_supported),
    };
    let txn = broker.txn();
    if part.verify_only {
        let mut out = Vec::new();
        for t in &part.topics {
            let parts = t
                .partitions
                .iter()
                .map(|p| {
                    let tp = (t.name.0.to_string(), *p);
                    let r = txn.verify_partition(&part.id, part.producer_id, part.epoch, &tp);
                    // Kafka's coordinator answers a partition not in the transaction TRANSACTION_ABORTABLE.
                    let code = match &r {
                        Ok(()) => error_code::NONE,
                        Err(e) => error_code::verified_write_code(e, fenced_supported, true),
                    };
                    (*p, code)
                })
                .collect();
            out.push((t.name.clone(), parts));
        }
        return out;
    }
    let r = txn.add_partitions(&part.id, part.producer_id, part.epoch, partitions);
    if let Err(e) = &r {
        tracing::debug!(transactional_id = %part.id, error = %e, "AddPartitionsToTxn refused");
    }
    all(&part.topics, coded(&r))
}

fn topic_results(codes: Codes) -> Vec<AddPartitionsToTxnTopicResult> {
    codes
        .into_iter()
        .map(|(name, parts)| {
            AddPartitionsToTxnTopicResult::default()
                .with_name(name)
                .with_results_by_partition(
                    parts
                        .into_iter()
                        .map(|(p, code)| {
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(p)
                                .with_partition_error_code(code)
                        })
                        .collect(),
                )
        })
        .collect()
}

/// Answers AddPartitionsToTxn.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: AddPartitionsToTxnRequest,
) -> AddPartitionsToTxnResponse {
    let version = h.request_api_version;
    let parts: Vec<Part> = if version <= 3 {
        vec![Part {
            id: req.v3_and_below_transactional_id.0.to_string(),
            producer_id: req.v3_and_below_producer_id.0,
            epoch: req.v3_and_below_producer_epoch,
            verify_only: false,
            topics: req.v3_and_below_topics,
        }]
    } else {
        req.transactions
            .into_iter()
            .map(|t| Part {
                id: t.transactional_id.0.to_string(),
                producer_id: t.producer_id.0,
                epoch: t.producer_epoch,
                verify_only: t.verify_only,
                topics: t.topics,
            })
            .collect()
    };
    let b = broker.clone();
    let fenced_supported = version >= 2;
    let done = blocking(move || {
        b.txn().ensure_ready()?;
        Ok(parts
            .into_iter()
            .map(|p| {
                let codes = add(&b, &p, fenced_supported);
                (p.id, codes)
            })
            .collect::<Vec<_>>())
    })
    .await;
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            return AddPartitionsToTxnResponse::default().with_error_code(error_code::code(&e));
        }
    };
    if version <= 3 {
        let codes = done.into_iter().next().map(|(_, c)| c).unwrap_or_default();
        return AddPartitionsToTxnResponse::default()
            .with_results_by_topic_v3_and_below(topic_results(codes));
    }
    AddPartitionsToTxnResponse::default().with_results_by_transaction(
        done.into_iter()
            .map(|(id, codes)| {
                AddPartitionsToTxnResult::default()
                    .with_transactional_id(super::sb(id).into())
                    .with_topic_results(topic_results(codes))
            })
            .collect(),
    )
}
