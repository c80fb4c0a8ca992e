//! OffsetFetch (`KafkaApis.handleOffsetFetchRequest`): DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED: the
//! top-level error in v2-7, each partition's in v0-1, the group's in v8+) and on each topic (a named topic the
//! principal may not describe answers TOPIC_AUTHORIZATION_FAILED per partition; a fetch of every committed topic
//! leaves those out).

use std::collections::HashSet;

use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;

use super::{group_denied, split, topic_denied, Check, Guard};
use crate::authz::acl::AclOperation::Describe;

fn partition(index: i32, code: i16) -> OffsetFetchResponsePartition {
    OffsetFetchResponsePartition::default()
        .with_partition_index(index)
        .with_committed_offset(-1)
        .with_committed_leader_epoch(-1)
        .with_error_code(code)
}

fn partitions(index: i32, code: i16) -> OffsetFetchResponsePartitions {
    OffsetFetchResponsePartitions::default()
        .with_partition_index(index)
        .with_committed_offset(-1)
        .with_committed_leader_epoch(-1)
        .with_error_code(code)
}

/// v0-7: one group.
pub(super) fn single(
    mut req: OffsetFetchRequest,
    cx: &Check,
) -> Guard<OffsetFetchRequest, OffsetFetchResponse> {
    let failed = |topics: Vec<offset_fetch_request::OffsetFetchRequestTopic>, code: i16| {
        topics
            .into_iter()
            .map(|t| {
                let parts = t
                    .partition_indexes
                    .iter()
                    .map(|p| partition(*p, code))
                    .collect();
                OffsetFetchResponseTopic::default()
                    .with_name(t.name)
                    .with_partitions(parts)
            })
            .collect::<Vec<_>>()
    };
    if !cx.group(Describe, &req.group_id) {
        let mut resp = OffsetFetchResponse::default();
        if cx.version >= 2 {
            resp.error_code = group_denied();
        } else {
            resp.topics = failed(req.topics.take().unwrap_or_default(), group_denied());
        }
        return Guard::Answer(resp);
    }
    let cx = cx.clone();
    let Some(topics) = req.topics.take() else {
        return Guard::then(req, move |r: &mut OffsetFetchResponse| {
            r.topics.retain(|t| cx.topic(Describe, &t.name))
        });
    };
    let (ok, no) = split(topics, |t| cx.topic(Describe, &t.name));
    req.topics = Some(ok);
    let no = failed(no, topic_denied());
    Guard::then(req, move |r: &mut OffsetFetchResponse| r.topics.extend(no))
}

/// v8+: several groups, each checked on its own.
pub(super) fn batched(
    mut req: OffsetFetchRequest,
    cx: &Check,
) -> Guard<OffsetFetchRequest, OffsetFetchResponse> {
    let cx = cx.clone();
    let (groups, refused) = split(std::mem::take(&mut req.groups), |g| {
        cx.group(Describe, &g.group_id)
    });
    let mut every_topic = HashSet::new();
    let mut denied_topics = Vec::new();
    req.groups = groups
        .into_iter()
        .map(|mut g| {
            match g.topics.take() {
                None => drop(every_topic.insert(g.group_id.to_string())),
                Some(topics) => {
                    let (ok, no) = split(topics, |t| cx.topic(Describe, &t.name));
                    g.topics = Some(ok);
                    let no: Vec<OffsetFetchResponseTopics> = no
                        .into_iter()
                        .map(|t| {
                            let parts = t
                                .partition_indexes
                                .iter()
                                .map(|p| partitions(*p, topic_denied()))
                                .collect();
                            OffsetFetchResponseTopics::default()
                                .with_name(t.name)
                                .with_topic_id(t.topic_id)
                                .with_partitions(parts)
                        })
                        .collect();
                    denied_topics.push((g.group_id.to_string(), no));
                }
            }
            g
        })
        .collect();
    Guard::then(req, move |r: &mut OffsetFetchResponse| {
        for g in r.groups.iter_mut() {
            if every_topic.contains(g.group_id.as_str()) {
                g.topics.retain(|t| cx.topic(Describe, &t.name));
            }
            if let Some((_, no)) = denied_topics
                .iter_mut()
                .find(|(id, _)| id == g.group_id.as_str())
            {
                g.topics.append(no);
            }
        }
        r.groups.extend(refused.into_iter().map(|g| {
            OffsetFetchResponseGroup::default()
                .with_group_id(g.group_id)
                .with_error_code(group_denied())
        }));
    })
}
