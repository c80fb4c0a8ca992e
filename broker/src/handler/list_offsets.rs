//! ListOffsets (key 2): earliest (-2), latest (-1), max timestamp (-3), earliest local (-4), latest tiered
//! (-5) and by timestamp. With `isolation_level` READ_COMMITTED (v2+), latest is the last stable offset and a
//! timestamp lookup finds only offsets below it (Kafka's `lastFetchableOffset`).

use std::sync::Arc;

use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse, RequestHeader};

use super::blocking;
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

/// Kafka's timestamp sentinels as an enum at the protocol edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// -2: the log start offset.
    Earliest,
    /// -1: the high watermark.
    Latest,
    /// -3: the offset of the record with the largest timestamp.
    MaxTimestamp,
    /// -4: the first offset on local disk (KIP-405).
    EarliestLocal,
    /// -5: the highest offset in remote storage (KIP-1005).
    LatestTiered,
    /// >= 0: the first offset whose timestamp is at or after it.
    Timestamp(i64),
}

impl OffsetSpec {
    /// Maps a request timestamp of a ListOffsets of `version`; `None` for an unknown negative sentinel or one
    /// the version does not carry (Kafka: -3 from v7, -4 from v8, -5 from v9; else UNSUPPORTED_VERSION).
    pub fn from_timestamp(ts: i64, version: i16) -> Option<Self> {
        let (spec, since) = match ts {
            -1 => (OffsetSpec::Latest, 0),
            -2 => (OffsetSpec::Earliest, 0),
            -3 => (OffsetSpec::MaxTimestamp, 7),
            -4 => (OffsetSpec::EarliestLocal, 8),
            -5 => (OffsetSpec::LatestTiered, 9),
            t if t >= 0 => (OffsetSpec::Timestamp(t), 0),
            _ => return None,
        };
        (version >= since).then_some(spec)
    }
}

/// (timestamp, offset, leader epoch of the offset when known) for one partition: a lookup over remote segments
/// (tiering on, -3 or a timestamp) is awaited from the tier; the rest reads the local log on the blocking pool.
async fn lookup(
    broker: &Arc<Broker>,
    topic: String,
    partition: i32,
    spec: OffsetSpec,
    read_committed: bool,
) -> Result<(i64, i64, Option<i32>)> {
    if let (Some(t), OffsetSpec::MaxTimestamp | OffsetSpec::Timestamp(_)) = (broker.tiering(), spec)
    {
        let log = broker.topics().log(&topic, partition)?;
        let tp = log.topic_partition();
        return Ok(match spec {
            OffsetSpec::Timestamp(ts) => {
                let last_fetchable = if read_committed {
                    log.last_stable_offset()
                } else {
                    log.high_watermark()
                };
                match t.offset_for_timestamp(tp, ts).await? {
                    Some((off, ts)) if off < last_fetchable => (ts, off, None),
                    _ => (-1, -1, Some(-1)),
                }
            }
            _ => match t.max_timestamp(tp).await? {
                Some((ts, off)) => (ts, off, None),
                None => (-1, -1, Some(-1)),
            },
        });
    }
    let b = broker.clone();
    blocking(move || lookup_local(&b, &topic, partition, spec, read_committed)).await
}

/// [`lookup`] of what the tier does not serve. Blocking.
fn lookup_local(
    broker: &Broker,
    topic: &str,
    partition: i32,
    spec: OffsetSpec,
    read_committed: bool,
) -> Result<(i64, i64, Option<i32>)> {
    let log = broker.topics().log(topic, partition)?;
    let last_fetchable = if read_committed {
        log.last_stable_offset()
    } else {
        log.high_watermark()
    };
    let tiering = broker.tiering();
    let tp = log.topic_partition();
    Ok(match spec {
        OffsetSpec::Earliest => (-1, log.log_start_offset(), None),
        OffsetSpec::Latest => (-1, last_fetchable, None),
        OffsetSpec::EarliestLocal => match tiering {
            Some(t) => {
                let (off, epoch) = t.earliest_local(tp)?;
                (-1, off, Some(epoch))
            }
            None => (-1, log.local_log_start_offset(), None),
        },
        OffsetSpec::LatestTiered => match tiering {
            Some(t) => {
                let (off, epoch) = t.latest_tiered(tp)?;
                (-1, off, Some(epoch))
            }
            None => (-1, log.highest_offset_in_remote_storage(), Some(-1)),
        },
        // With tiering on, these are the tier's ([`lookup`]): remote segments first, then the local log.
        OffsetSpec::MaxTimestamp => match log.max_timestamp_and_offset() {
            Some((ts, off)) => (ts, off, None),
            None => (-1, -1, Some(-1)),
        },
        OffsetSpec::Timestamp(t) => match log.fetch_offset_by_timestamp(t)? {
            Some((off, ts)) if off < last_fetchable => (ts, off, None),
            _ => (-1, -1, Some(-1)),
        },
    })
}

/// Answers ListOffsets.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: ListOffsetsRequest,
) -> ListOffsetsResponse {
    // A single broker never changes leader: every record carries epoch 0.
    let epoch = |known: Option<i32>| {
        if h.request_api_version >= 4 {
            known.unwrap_or(0)
        } else {
            -1
        }
    };
    // IsolationLevel: 0 READ_UNCOMMITTED, 1 READ_COMMITTED (v2+).
    let read_committed = req.isolation_level == 1;
    let mut topics = Vec::with_capacity(req.topics.len());
    for t in req.topics {
        let topic = t.name.0.to_string();
        let mut parts = Vec::with_capacity(t.partitions.len());
        for p in t.partitions {
            let resp =
                ListOffsetsPartitionResponse::default().with_partition_index(p.partition_index);
            let Some(spec) = OffsetSpec::from_timestamp(p.timestamp, h.request_api_version) else {
                let e = Error::UnknownOffsetSpec {
                    timestamp: p.timestamp,
                    version: h.request_api_version,
                };
                parts.push(
                    resp.with_error_code(error_code::code(&e))
                        .with_offset(-1)
                        .with_timestamp(-1),
                );
                continue;
            };
            let idx = p.partition_index;
            parts.push(
                match lookup(broker, topic.clone(), idx, spec, read_committed).await {
                    Ok((ts, off, known)) => resp
                        .with_timestamp(ts)
                        .with_offset(off)
                        .with_leader_epoch(epoch(known)),
                    Err(e) => resp
                        .with_error_code(error_code::code(&e))
                        .with_offset(-1)
                        .with_timestamp(-1),
                },
            );
        }
        topics.push(
            ListOffsetsTopicResponse::default()
                .with_name(t.name)
                .with_partitions(parts),
        );
    }
    ListOffsetsResponse::default().with_topics(topics)
}
