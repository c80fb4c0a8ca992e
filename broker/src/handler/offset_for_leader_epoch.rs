//! OffsetForLeaderEpoch (key 23): end offset of a leader epoch, from the leader-epoch cache.

use std::sync::Arc;

use kafka_protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_protocol::messages::{
    OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, RequestHeader,
};

use super::blocking;
use crate::broker::Broker;
use crate::error::Result;
use crate::error_code;

/// (epoch, end offset) for `requested`: the largest epoch <= requested and the start of the next epoch (or the
/// log end offset); (-1, -1) when the requested epoch is older than every known epoch.
pub fn end_offset_for_epoch(entries: &[(i32, i64)], log_end: i64, requested: i32) -> (i32, i64) {
    if entries.is_empty() {
        return (requested, log_end);
    }
    match entries.iter().rposition(|(e, _)| *e <= requested) {
        None => (-1, -1),
        Some(i) => (
            entries[i].0,
            entries.get(i + 1).map_or(log_end, |(_, start)| *start),
        ),
    }
}

fn lookup(broker: &Broker, topic: &str, partition: i32, epoch: i32) -> Result<(i32, i64)> {
    let log = broker.topics().log(topic, partition)?;
    Ok(end_offset_for_epoch(
        &log.leader_epoch_entries(),
        log.log_end_offset(),
        epoch,
    ))
}

/// Answers OffsetForLeaderEpoch.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: OffsetForLeaderEpochRequest,
) -> OffsetForLeaderEpochResponse {
    let mut topics = Vec::with_capacity(req.topics.len());
    for t in req.topics {
        let mut parts = Vec::with_capacity(t.partitions.len());
        for p in t.partitions {
            let b = broker.clone();
            let name = t.topic.0.to_string();
            let r = EpochEndOffset::default().with_partition(p.partition);
            parts.push(
                match blocking(move || lookup(&b, &name, p.partition, p.leader_epoch)).await {
                    Ok((epoch, end)) => r.with_leader_epoch(epoch).with_end_offset(end),
                    Err(e) => r
                        .with_error_code(error_code::code(&e))
                        .with_leader_epoch(-1)
                        .with_end_offset(-1),
                },
            );
        }
        topics.push(
            OffsetForLeaderTopicResult::default()
                .with_topic(t.topic)
                .with_partitions(parts),
        );
    }
    OffsetForLeaderEpochResponse::default().with_topics(topics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_offset_is_next_epoch_start_or_log_end() {
        let entries = [(0, 0), (3, 10), (5, 20)];
        assert_eq!(end_offset_for_epoch(&entries, 30, 0), (0, 10));
        assert_eq!(end_offset_for_epoch(&entries, 30, 4), (3, 20));
        assert_eq!(end_offset_for_epoch(&entries, 30, 9), (5, 30));
        assert_eq!(end_offset_for_epoch(&[(2, 5)], 30, 1), (-1, -1));
        assert_eq!(end_offset_for_epoch(&[], 7, 0), (0, 7));
    }
}
