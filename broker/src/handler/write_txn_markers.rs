//! WriteTxnMarkers (key 27): on Kafka the transaction coordinator sends it to partition leaders; admin clients
//! send it too, to abort a hanging transaction (`Admin.abortTransaction`, `kafka-transactions.sh abort`). Strata's
//! own coordinator writes its markers in-process, so this serves the admin case: each marker is appended to each
//! named partition (`crate::txn::TransactionCoordinator::write_marker`), with a per-partition error code —
//! UNKNOWN_TOPIC_OR_PARTITION for a partition strata does not have, INVALID_PRODUCER_EPOCH /
//! TRANSACTION_COORDINATOR_FENCED when the log refuses the marker, as Kafka's leader answers.

use std::sync::Arc;

use kafka_protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use kafka_protocol::messages::{RequestHeader, WriteTxnMarkersRequest, WriteTxnMarkersResponse};

use super::blocking;
use crate::broker::Broker;
use crate::error_code;

/// Answers WriteTxnMarkers: every marker written to every partition it names, one result each.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: WriteTxnMarkersRequest,
) -> WriteTxnMarkersResponse {
    let b = broker.clone();
    let markers = blocking(move || {
        Ok(req
            .markers
            .iter()
            .map(|m| {
                let topics = m
                    .topics
                    .iter()
                    .map(|t| {
                        let partitions = t
                            .partition_indexes
                            .iter()
                            .map(|p| {
                                let written = b.txn().write_marker(
                                    t.name.0.as_str(),
                                    *p,
                                    m.transaction_result,
                                    m.producer_id.0,
                                    m.producer_epoch,
                                    m.coordinator_epoch,
                                );
                                WritableTxnMarkerPartitionResult::default()
                                    .with_partition_index(*p)
                                    .with_error_code(
                                        written.err().map_or(0, |e| error_code::code(&e)),
                                    )
                            })
                            .collect();
                        WritableTxnMarkerTopicResult::default()
                            .with_name(t.name.clone())
                            .with_partitions(partitions)
                    })
                    .collect();
                WritableTxnMarkerResult::default()
                    .with_producer_id(m.producer_id)
                    .with_topics(topics)
            })
            .collect())
    })
    .await
    .unwrap_or_default();
    WriteTxnMarkersResponse::default().with_markers(markers)
}
