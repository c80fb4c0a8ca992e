//! InitProducerId (key 22): producer ids for idempotent producers. Transactions are not supported, so a
//! transactional id is answered with TRANSACTIONAL_ID_AUTHORIZATION_FAILED (like FindCoordinator key type 1).

use std::sync::Arc;

use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, RequestHeader};

use crate::broker::Broker;
use crate::error_code;

/// Answers InitProducerId.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: InitProducerIdRequest,
) -> InitProducerIdResponse {
    let resp = InitProducerIdResponse::default();
    if req.transactional_id.is_some() {
        return resp
            .with_error_code(error_code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            .with_producer_id((-1).into())
            .with_producer_epoch(-1);
    }
    // KIP-360: a producer that already has an id may ask for an epoch bump.
    let (pid, epoch) =
        if req.producer_id.0 >= 0 && req.producer_epoch >= 0 && req.producer_epoch < i16::MAX - 1 {
            (req.producer_id.0, req.producer_epoch + 1)
        } else {
            (broker.allocate_producer_id(), 0)
        };
    resp.with_producer_id(pid.into()).with_producer_epoch(epoch)
}
