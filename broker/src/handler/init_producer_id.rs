//! InitProducerId (key 22): producer ids for idempotent and transactional producers.
//!
//! Without a transactional id every request gets a new producer id with epoch 0, as Kafka's
//! `TransactionCoordinator.handleInitProducerId` answers it ("always blindly accept the request and return a new
//! producerId"), also when the request names a current id and epoch (a KIP-360 epoch bump): bumping the epoch of
//! an id the request names would let any client fence another producer's id, and the bumped epoch would be
//! recorded nowhere. Ids come from durably recorded blocks and are never issued twice ([`crate::txn::producer_ids`]).
//!
//! With a transactional id the transaction coordinator answers ([`crate::txn`]): a new id's producer id at epoch 0,
//! a known id's epoch bumped (the older producer fenced, its open transaction aborted).

use std::sync::Arc;

use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error_code;

/// Answers InitProducerId.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: InitProducerIdRequest,
) -> InitProducerIdResponse {
    let resp = InitProducerIdResponse::default()
        .with_producer_id((-1).into())
        .with_producer_epoch(-1);
    let b = broker.clone();
    let result = match req.transactional_id {
        Some(id) => {
            let id = id.0.to_string();
            let expected =
                (req.producer_id.0 >= 0).then_some((req.producer_id.0, req.producer_epoch));
            let timeout = req.transaction_timeout_ms;
            blocking(move || {
                super::require_transactional_id("InitProducerId", &id)?;
                b.txn().ensure_ready()?;
                b.txn().init_producer_id(&id, timeout, expected)
            })
            .await
        }
        None => blocking(move || Ok((b.producer_ids().generate()?, 0))).await,
    };
    match result {
        Ok((pid, epoch)) => resp.with_producer_id(pid.into()).with_producer_epoch(epoch),
        Err(e) => {
            // The response has no message field: the log names the cause.
            tracing::debug!(error = %e, "InitProducerId refused");
            resp.with_error_code(error_code::versioned_txn_code(
                &e,
                h.request_api_version >= 4,
            ))
        }
    }
}
