//! EndTxn (key 26): commits or aborts the producer's open transaction. The coordinator writes the Prepare state,
//! a COMMIT or ABORT marker to every partition of the transaction (its `__consumer_offsets` partition included:
//! the offsets sent to the transaction become visible at a commit), then the Complete state; the answer comes once
//! the markers are in the logs, so a read_committed consumer sees the records as soon as the producer returns.

use std::sync::Arc;

use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error_code;

/// Answers EndTxn.
pub async fn handle(broker: &Arc<Broker>, h: &RequestHeader, req: EndTxnRequest) -> EndTxnResponse {
    let b = broker.clone();
    let r = blocking(move || {
        super::require_transactional_id("EndTxn", &req.transactional_id.0)?;
        b.txn().ensure_ready()?;
        b.txn().end_txn(
            &req.transactional_id.0,
            req.producer_id.0,
            req.producer_epoch,
            req.committed,
        )
    })
    .await;
    if r.is_ok() {
        broker.notify_appended();
    }
    let code = match &r {
        Ok(()) => error_code::NONE,
        Err(e) => {
            tracing::debug!(error = %e, "EndTxn refused");
            error_code::versioned_txn_code(e, h.request_api_version >= 2)
        }
    };
    EndTxnResponse::default()
        .with_error_code(code)
        .with_producer_id((-1).into())
        .with_producer_epoch(-1)
}
