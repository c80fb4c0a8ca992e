//! InitProducerId (key 22): producer ids for idempotent producers. Transactions are not supported, so a
//! transactional id is answered with TRANSACTIONAL_ID_AUTHORIZATION_FAILED (like FindCoordinator key type 1).
//!
//! Without a transactional id every request gets a new producer id with epoch 0, as Kafka's
//! `TransactionCoordinator.handleInitProducerId` answers it ("always blindly accept the request and return a new
//! producerId"), also when the request names a current id and epoch (a KIP-360 epoch bump): bumping the epoch of
//! an id the request names would let any client fence another producer's id, and the bumped epoch would be
//! recorded nowhere. Ids come from durably recorded blocks and are never issued twice ([`crate::producer_ids`]).

use std::sync::Arc;

use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers InitProducerId.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: InitProducerIdRequest,
) -> InitProducerIdResponse {
    let resp = InitProducerIdResponse::default()
        .with_producer_id((-1).into())
        .with_producer_epoch(-1);
    if req.transactional_id.is_some() {
        return resp.with_error_code(error_code::code(&Error::TransactionsUnsupported));
    }
    let b = broker.clone();
    match blocking(move || b.allocate_producer_id()).await {
        Ok(pid) => resp.with_producer_id(pid.into()).with_producer_epoch(0),
        Err(e) => {
            // The response has no message field: the log names the cause.
            tracing::warn!(error = %e, "no producer id could be allocated");
            resp.with_error_code(error_code::code(&e))
        }
    }
}
