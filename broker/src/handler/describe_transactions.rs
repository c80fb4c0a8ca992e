//! DescribeTransactions (key 65) and ListTransactions (key 66): the coordinator's transactional ids, as
//! `kafka-transactions.sh describe` / `list` show them.

use std::sync::Arc;

use kafka_protocol::messages::describe_transactions_response::{self, TopicData};
use kafka_protocol::messages::list_transactions_response;
use kafka_protocol::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, ListTransactionsRequest,
    ListTransactionsResponse, RequestHeader,
};
use strata_storage::time::now_ms;

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::TxnError;
use crate::error_code;
use crate::txn::TransactionMetadata;

async fn known(broker: &Arc<Broker>) -> Result<Vec<TransactionMetadata>, crate::error::Error> {
    if !broker.txn().is_ready()
        && broker
            .registry()
            .get(crate::txn::TRANSACTION_STATE)
            .is_none()
    {
        return Ok(Vec::new());
    }
    let b = broker.clone();
    blocking(move || {
        b.txn().ensure_ready()?;
        Ok(b.txn().list())
    })
    .await
}

/// Answers DescribeTransactions.
pub async fn describe(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeTransactionsRequest,
) -> DescribeTransactionsResponse {
    let all = known(broker).await;
    let states = req
        .transactional_ids
        .into_iter()
        .map(|id| {
            let state = describe_transactions_response::TransactionState::default()
                .with_transactional_id(id.clone())
                .with_producer_id((-1).into())
                .with_producer_epoch(-1)
                .with_transaction_start_time_ms(-1);
            let meta = match &all {
                Ok(all) => all.iter().find(|m| m.transactional_id == id.0.as_str()),
                Err(e) => return state.with_error_code(error_code::code(e)),
            };
            let Some(m) = meta else {
                let e = TxnError::TransactionalIdNotFound {
                    transactional_id: id.0.to_string(),
                };
                return state.with_error_code(error_code::code(&e.into()));
            };
            let mut topics: Vec<TopicData> = Vec::new();
            for (t, p) in &m.partitions {
                match topics.iter_mut().find(|d| d.topic.0.as_str() == t) {
                    Some(d) => d.partitions.push(*p),
                    None => topics.push(
                        TopicData::default()
                            .with_topic(sb(t.clone()).into())
                            .with_partitions(vec![*p]),
                    ),
                }
            }
            state
                .with_transaction_state(sb(m.state.name()))
                .with_transaction_timeout_ms(m.timeout_ms)
                .with_transaction_start_time_ms(m.start_ms)
                .with_producer_id(m.producer_id.into())
                .with_producer_epoch(m.producer_epoch)
                .with_topics(topics)
        })
        .collect();
    DescribeTransactionsResponse::default().with_transaction_states(states)
}

/// Kafka's state names a ListTransactions filter may name.
const STATE_NAMES: &[&str] = &[
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
];

/// Answers ListTransactions: filtered by state, producer id and (v1+) open longer than `duration_filter` ms.
pub async fn list(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: ListTransactionsRequest,
) -> ListTransactionsResponse {
    let unknown: Vec<_> = req
        .state_filters
        .iter()
        .filter(|s| !STATE_NAMES.contains(&s.as_str()))
        .cloned()
        .collect();
    let all = match known(broker).await {
        Ok(all) => all,
        Err(e) => return ListTransactionsResponse::default().with_error_code(error_code::code(&e)),
    };
    let now = now_ms();
    let states = all
        .into_iter()
        .filter(|m| {
            req.state_filters.is_empty()
                || req
                    .state_filters
                    .iter()
                    .any(|s| s.as_str() == m.state.name())
        })
        .filter(|m| {
            req.producer_id_filters.is_empty()
                || req.producer_id_filters.iter().any(|p| p.0 == m.producer_id)
        })
        .filter(|m| {
            req.duration_filter < 0 || (m.start_ms >= 0 && now - m.start_ms >= req.duration_filter)
        })
        .map(|m| {
            list_transactions_response::TransactionState::default()
                .with_transactional_id(sb(m.transactional_id).into())
                .with_producer_id(m.producer_id.into())
                .with_transaction_state(sb(m.state.name()))
        })
        .collect();
    ListTransactionsResponse::default()
        .with_unknown_state_filters(unknown)
        .with_transaction_states(states)
}
