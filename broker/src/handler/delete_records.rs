//! DeleteRecords (key 21): moves a partition's log start offset (-1 = up to the high watermark).

use std::sync::Arc;

use kafka_protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_protocol::messages::{DeleteRecordsRequest, DeleteRecordsResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers DeleteRecords.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DeleteRecordsRequest,
) -> DeleteRecordsResponse {
    let mut topics = Vec::with_capacity(req.topics.len());
    let mut moved = false;
    for t in req.topics {
        let mut parts = Vec::with_capacity(t.partitions.len());
        for p in t.partitions {
            let b = broker.clone();
            let name = t.name.0.to_string();
            let r = DeleteRecordsPartitionResult::default().with_partition_index(p.partition_index);
            let outcome = blocking(move || {
                if b.registry().get(&name).is_some_and(|m| m.internal) {
                    return Err(Error::InternalTopic(name));
                }
                let log = b.topics().log(&name, p.partition_index)?;
                let offset = if p.offset == -1 {
                    log.high_watermark()
                } else {
                    p.offset
                };
                Ok(log.delete_records(offset)?)
            })
            .await;
            parts.push(match outcome {
                Ok(low) => {
                    moved = true;
                    r.with_low_watermark(low)
                }
                Err(e) => r
                    .with_error_code(error_code::code(&e))
                    .with_low_watermark(-1),
            });
        }
        topics.push(
            DeleteRecordsTopicResult::default()
                .with_name(t.name)
                .with_partitions(parts),
        );
    }
    // Durable before the answer: the periodic checkpoint is up to a minute away, and a crash before it would bring
    // the deleted records back.
    if moved {
        let b = broker.clone();
        if let Err(e) = blocking(move || Ok(b.log_manager().checkpoint_now()?)).await {
            tracing::error!(error = %e, "checkpointing the log start offsets after DeleteRecords failed");
            for p in topics.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                if p.error_code == 0 {
                    p.error_code = error_code::code(&e);
                    p.low_watermark = -1;
                }
            }
        }
    }
    DeleteRecordsResponse::default().with_topics(topics)
}
