//! OffsetCommit (key 8): validated against the group's generation and `offset.metadata.max.bytes`, stored in
//! `__consumer_offsets`.

use std::sync::Arc;

use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse, RequestHeader};
use strata_storage::time::now_ms;

use super::blocking;

use crate::broker::Broker;
use crate::error::{Error, GroupError};
use crate::error_code;
use crate::group::offsets::{OffsetEntry, Tp};

/// One partition's commit as stored, or why it is refused (shared with TxnOffsetCommit): an unknown topic or
/// partition is UNKNOWN_TOPIC_OR_PARTITION, metadata longer than `offset.metadata.max.bytes` is
/// OFFSET_METADATA_TOO_LARGE (Kafka refuses that partition and stores nothing for it).
pub(super) fn checked_entry(
    broker: &Broker,
    topic: &str,
    (partition, offset, leader_epoch): (i32, i64, i32),
    metadata: Option<&str>,
    now: i64,
) -> Result<(Tp, OffsetEntry), Error> {
    let known = broker
        .registry()
        .get(topic)
        .is_some_and(|m| partition >= 0 && partition < m.partitions);
    if !known {
        return Err(Error::UnknownTopicOrPartition(format!(
            "{topic}-{partition}"
        )));
    }
    let max = broker.config().offset_metadata_max_bytes;
    let size = metadata.map_or(0, str::len);
    if size > max {
        return Err(Error::OffsetMetadataTooLarge {
            topic: topic.to_string(),
            partition,
            size,
            max,
        });
    }
    let entry = OffsetEntry {
        offset,
        leader_epoch,
        metadata: metadata.unwrap_or_default().to_string(),
        commit_timestamp: now,
    };
    Ok(((topic.to_string(), partition), entry))
}

/// Answers OffsetCommit.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: OffsetCommitRequest,
) -> OffsetCommitResponse {
    commit(broker, h, req, &[]).await
}

/// Answers OffsetCommit, with v1's `commit_timestamp` per partition (`timestamps[topic][partition]`, in request
/// order; -1 or absent = now), as Kafka's `OffsetAndMetadata.fromRequest` keeps it.
pub(super) async fn commit(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: OffsetCommitRequest,
    timestamps: &[Vec<i64>],
) -> OffsetCommitResponse {
    let version = h.request_api_version;
    let generation = req.generation_id_or_member_epoch;
    let group = req.group_id.0.to_string();
    let allowed = if crate::group::valid_group_id(&group) {
        broker.groups().check_commit(
            &group,
            &req.member_id,
            req.group_instance_id.as_deref(),
            generation,
        )
    } else {
        Err(GroupError::InvalidGroupId(group.clone()))
    }
    .map_err(|e| for_version(e, version, generation));
    let (entries, mut per_partition) =
        checked_entries(broker, &req, timestamps, error_code::of(&allowed));
    if !entries.is_empty() {
        let b = broker.clone();
        let g = group.clone();
        let (member, instance) = (req.member_id.to_string(), req.group_instance_id.clone());
        let stored = blocking(move || {
            let member = (member.as_str(), instance.as_deref());
            b.groups().commit_offsets(&g, member, generation, entries)
        })
        .await;
        let stored = stored.map_err(|e| match e {
            Error::Group(g) => Error::Group(for_version(g, version, generation)),
            e => e,
        });
        let c = error_code::of(&stored);
        if c != error_code::NONE {
            for x in per_partition.iter_mut().filter(|x| x.2 == error_code::NONE) {
                x.2 = c;
            }
        }
    }
    respond(&req, &per_partition)
}

/// Kafka answers a commit to a group that does not exist GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION
/// before.
fn for_version(e: GroupError, version: i16, generation: i32) -> GroupError {
    match e {
        GroupError::GroupIdNotFound { .. } if version < 9 => GroupError::IllegalGeneration {
            generation,
            current: -1,
        },
        e => e,
    }
}

/// Each partition's code: (topic index in the request, partition, error code).
type PartitionCodes = Vec<(usize, i32, i16)>;

/// Each partition's entry to store, and each partition's code so far: (topic index, partition, code); every
/// partition gets `code` when the commit as a whole is refused.
fn checked_entries(
    broker: &Broker,
    req: &OffsetCommitRequest,
    timestamps: &[Vec<i64>],
    code: i16,
) -> (Vec<(Tp, OffsetEntry)>, PartitionCodes) {
    let now = now_ms();
    let mut entries = Vec::new();
    let mut per_partition: PartitionCodes = Vec::new();
    for (ti, t) in req.topics.iter().enumerate() {
        for (pi, p) in t.partitions.iter().enumerate() {
            let given = timestamps.get(ti).and_then(|t| t.get(pi)).copied();
            let pcode = if code != error_code::NONE {
                code
            } else {
                let checked = checked_entry(
                    broker,
                    &t.name.0,
                    (
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                    ),
                    p.committed_metadata.as_deref(),
                    given.filter(|ts| *ts != -1).unwrap_or(now),
                );
                match checked {
                    Ok(entry) => {
                        entries.push(entry);
                        error_code::NONE
                    }
                    Err(e) => error_code::code(&e),
                }
            };
            per_partition.push((ti, p.partition_index, pcode));
        }
    }
    (entries, per_partition)
}

/// The response: each requested topic with its partitions' codes.
fn respond(req: &OffsetCommitRequest, per_partition: &[(usize, i32, i16)]) -> OffsetCommitResponse {
    let topics = req
        .topics
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            OffsetCommitResponseTopic::default()
                .with_name(t.name.clone())
                .with_partitions(
                    per_partition
                        .iter()
                        .filter(|x| x.0 == ti)
                        .map(|x| {
                            OffsetCommitResponsePartition::default()
                                .with_partition_index(x.1)
                                .with_error_code(x.2)
                        })
                        .collect(),
                )
        })
        .collect();
    OffsetCommitResponse::default().with_topics(topics)
}
