//! AddOffsetsToTxn (key 25): the `__consumer_offsets` partition of a group joins the producer's open transaction,
//! so TxnOffsetCommit may write there and the transaction's marker reaches it.

use std::sync::Arc;

use kafka_protocol::messages::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error_code;

/// Answers AddOffsetsToTxn.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: AddOffsetsToTxnRequest,
) -> AddOffsetsToTxnResponse {
    let b = broker.clone();
    let r = blocking(move || {
        super::require_transactional_id("AddOffsetsToTxn", &req.transactional_id.0)?;
        b.txn().ensure_ready()?;
        let partition = b.offsets_partition(&req.group_id.0);
        b.txn().add_offsets(
            &req.transactional_id.0,
            req.producer_id.0,
            req.producer_epoch,
            partition,
        )
    })
    .await;
    let code = match &r {
        Ok(()) => error_code::NONE,
        Err(e) => {
            tracing::debug!(error = %e, "AddOffsetsToTxn refused");
            error_code::versioned_txn_code(e, h.request_api_version >= 2)
        }
    };
    AddOffsetsToTxnResponse::default().with_error_code(code)
}
