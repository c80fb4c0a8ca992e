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

/// (epoch, end offset) for `requested`, as Kafka's `LeaderEpochFileCache.endOffsetFor`: the latest epoch ends at
/// the log end offset; an older one at the start of the next epoch, answered with the largest known epoch <=
/// requested (the requested one itself when it is older than every known epoch); -1 or an epoch above every
/// known one is (-1, -1) (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET). With no entry (an empty log) the cache holds
/// the leader's epoch 0 from the log end offset, as Kafka's does once the partition has a leader.
pub fn end_offset_for_epoch(entries: &[(i32, i64)], log_end: i64, requested: i32) -> (i32, i64) {
    const UNDEFINED: (i32, i64) = (-1, -1);
    let empty = [(0, log_end)];
    let entries = if entries.is_empty() {
        &empty[..]
    } else {
        entries
    };
    if requested == -1 {
        return UNDEFINED;
    }
    if entries.last().is_some_and(|(e, _)| *e == requested) {
        return (requested, log_end);
    }
    let Some(higher) = entries.iter().find(|(e, _)| *e > requested) else {
        return UNDEFINED;
    };
    match entries.iter().rev().find(|(e, _)| *e <= requested) {
        Some((floor, _)) => (*floor, higher.1),
        None => (requested, higher.1),
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
        assert_eq!(end_offset_for_epoch(&entries, 30, 5), (5, 30));
        // Kafka 4.4 answers UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET above the latest epoch and for -1; below
        // the oldest, the requested epoch ending where the oldest starts.
        assert_eq!(end_offset_for_epoch(&entries, 30, 9), (-1, -1));
        assert_eq!(end_offset_for_epoch(&entries, 30, -1), (-1, -1));
        assert_eq!(end_offset_for_epoch(&[(2, 5)], 30, 1), (1, 5));
        assert_eq!(end_offset_for_epoch(&[], 7, 0), (0, 7));
        assert_eq!(end_offset_for_epoch(&[], 7, 1), (-1, -1));
    }
}
