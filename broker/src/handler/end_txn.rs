//! EndTxn (key 26): commits or aborts the producer's open transaction. The coordinator writes the Prepare state,
//! a COMMIT or ABORT marker to every partition of the transaction (its `__consumer_offsets` partition included:
//! the offsets sent to the transaction become visible at a commit), then the Complete state; the answer comes once
//! the markers are in the logs, so a read_committed consumer sees the records as soon as the producer returns.
//!
//! v5 is transaction version 2 (KIP-890 part 2): the epoch is bumped at every end (a new producer id taken when
//! it is exhausted) and the answer carries the producer id and epoch the producer goes on with.

use std::sync::Arc;

use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error_code;
use crate::txn::TV2;

/// Answers EndTxn.
pub async fn handle(broker: &Arc<Broker>, h: &RequestHeader, req: EndTxnRequest) -> EndTxnResponse {
    let b = broker.clone();
    let transaction_version = if h.request_api_version >= 5 { TV2 } else { 0 };
    let r = blocking(move || {
        super::require_transactional_id("EndTxn", &req.transactional_id.0)?;
        b.txn().ensure_ready()?;
        b.txn().end_txn(
            &req.transactional_id.0,
            crate::txn::EndTxnRequest {
                producer_id: req.producer_id.0,
                epoch: req.producer_epoch,
                commit: req.committed,
                transaction_version,
            },
        )
    })
    .await;
    if r.is_ok() {
        broker.notify_appended();
    }
    let (code, (pid, epoch)) = match &r {
        Ok(pair) => (error_code::NONE, *pair),
        Err(e) => {
            tracing::debug!(error = %e, "EndTxn refused");
            (
                error_code::versioned_txn_code(e, h.request_api_version >= 2),
                (-1, -1),
            )
        }
    };
    EndTxnResponse::default()
        .with_error_code(code)
        .with_producer_id(pid.into())
        .with_producer_epoch(epoch)
}
