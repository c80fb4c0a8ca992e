//! The record APIs (`KafkaApis`): Produce WRITE on each topic (and WRITE on the transactional id of a
//! transactional producer), Fetch READ (a follower's fetch CLUSTER_ACTION), ListOffsets and OffsetForLeaderEpoch
//! DESCRIBE (a follower's OffsetForLeaderEpoch CLUSTER_ACTION), DeleteRecords DELETE, DescribeProducers READ. A
//! denied topic's partitions answer TOPIC_AUTHORIZATION_FAILED; the rest of the request is served.

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::{cluster_denied, denied, split, topic_denied, txn_denied, Check, Guard, Guarded};
use crate::authz::acl::AclOperation::{self, *};
use crate::error::Error;

/// A topic's name, or the name of its id (requests naming topics by id: Produce v13+, Fetch v13+); an id the
/// broker does not know is left to the handler (UNKNOWN_TOPIC_ID).
fn named(cx: &Check, name: &StrBytes, id: uuid::Uuid) -> Option<String> {
    if name.is_empty() && !id.is_nil() {
        cx.topic_name(id)
    } else {
        Some(name.to_string())
    }
}

/// Whether the principal may do `op` on the topic (a topic id no topic has: left to the handler).
fn may(cx: &Check, op: AclOperation, name: &StrBytes, id: uuid::Uuid) -> bool {
    named(cx, name, id).is_none_or(|n| cx.topic(op, &n))
}

impl Guarded for ProduceRequest {
    type Response = ProduceResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, ProduceResponse> {
        if let Some(id) = self.transactional_id.as_ref() {
            if !cx.txn_id(Write, id) {
                let topics = std::mem::take(&mut self.topic_data);
                let mut resp = ProduceResponse::default();
                resp.responses = produce_failed(topics, txn_denied());
                return Guard::Answer(resp);
            }
        }
        let (ok, no) = split(std::mem::take(&mut self.topic_data), |t| {
            may(cx, Write, &t.name.0, t.topic_id)
        });
        self.topic_data = ok;
        if no.is_empty() {
            return Guard::run(self);
        }
        Guard::then(self, move |r: &mut ProduceResponse| {
            r.responses.extend(produce_failed(no, topic_denied()))
        })
    }
}

fn produce_failed(
    topics: Vec<produce_request::TopicProduceData>,
    code: i16,
) -> Vec<produce_response::TopicProduceResponse> {
    use produce_response::{PartitionProduceResponse, TopicProduceResponse};
    topics
        .into_iter()
        .map(|t| {
            TopicProduceResponse::default()
                .with_name(t.name)
                .with_topic_id(t.topic_id)
                .with_partition_responses(
                    t.partition_data
                        .iter()
                        .map(|p| {
                            PartitionProduceResponse::default()
                                .with_index(p.index)
                                .with_error_code(code)
                                .with_base_offset(-1)
                                .with_log_append_time_ms(-1)
                                .with_log_start_offset(-1)
                        })
                        .collect(),
                )
        })
        .collect()
}

impl Guarded for FetchRequest {
    type Response = FetchResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, FetchResponse> {
        let follower = self.replica_id.0 >= 0 || self.replica_state.replica_id.0 >= 0;
        let cx = cx.clone();
        if follower && !cx.cluster(ClusterAction) {
            let topics = std::mem::take(&mut self.topics);
            let mut resp = FetchResponse::default();
            resp.responses = topics.into_iter().map(fetch_failed).collect();
            return Guard::Answer(resp);
        }
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            follower || may(&cx, Read, &t.topic, t.topic_id)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut FetchResponse| {
            // A fetch session's cached partitions are answered too: each is checked again.
            for t in r.responses.iter_mut() {
                if !follower && !may(&cx, Read, &t.topic.0, t.topic_id) {
                    for p in t.partitions.iter_mut() {
                        *p = fetch_partition_failed(p.partition_index);
                    }
                }
            }
            r.responses.extend(no.into_iter().map(fetch_failed));
        })
    }
}

fn fetch_partition_failed(partition: i32) -> fetch_response::PartitionData {
    fetch_response::PartitionData::default()
        .with_partition_index(partition)
        .with_error_code(topic_denied())
        .with_high_watermark(-1)
        .with_last_stable_offset(-1)
        .with_log_start_offset(-1)
        .with_records(Some(Default::default()))
}

fn fetch_failed(t: fetch_request::FetchTopic) -> fetch_response::FetchableTopicResponse {
    fetch_response::FetchableTopicResponse::default()
        .with_topic(t.topic)
        .with_topic_id(t.topic_id)
        .with_partitions(
            t.partitions
                .iter()
                .map(|p| fetch_partition_failed(p.partition))
                .collect(),
        )
}

impl Guarded for ListOffsetsRequest {
    type Response = ListOffsetsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, ListOffsetsResponse> {
        use list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cx.topic(Describe, &t.name)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut ListOffsetsResponse| {
            r.topics.extend(no.into_iter().map(|t| {
                ListOffsetsTopicResponse::default()
                    .with_name(t.name)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                ListOffsetsPartitionResponse::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(topic_denied())
                                    .with_timestamp(-1)
                                    .with_offset(-1)
                                    .with_leader_epoch(-1)
                            })
                            .collect(),
                    )
            }))
        })
    }
}

impl Guarded for OffsetForLeaderEpochRequest {
    type Response = OffsetForLeaderEpochResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, OffsetForLeaderEpochResponse> {
        use offset_for_leader_epoch_response::{EpochEndOffset, OffsetForLeaderTopicResult};
        let follower = self.replica_id.0 >= 0;
        let cluster_ok = !follower || cx.cluster(ClusterAction);
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cluster_ok && (follower || cx.topic(Describe, &t.topic))
        });
        self.topics = ok;
        let code = if cluster_ok {
            topic_denied()
        } else {
            cluster_denied()
        };
        Guard::then(self, move |r: &mut OffsetForLeaderEpochResponse| {
            r.topics.extend(no.into_iter().map(|t| {
                OffsetForLeaderTopicResult::default()
                    .with_topic(t.topic)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                EpochEndOffset::default()
                                    .with_partition(p.partition)
                                    .with_error_code(code)
                                    .with_leader_epoch(-1)
                                    .with_end_offset(-1)
                            })
                            .collect(),
                    )
            }))
        })
    }
}

impl Guarded for DeleteRecordsRequest {
    type Response = DeleteRecordsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DeleteRecordsResponse> {
        use delete_records_response::{DeleteRecordsPartitionResult, DeleteRecordsTopicResult};
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cx.topic(Delete, &t.name)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut DeleteRecordsResponse| {
            r.topics.extend(no.into_iter().map(|t| {
                DeleteRecordsTopicResult::default()
                    .with_name(t.name)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                DeleteRecordsPartitionResult::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(topic_denied())
                                    .with_low_watermark(-1)
                            })
                            .collect(),
                    )
            }))
        })
    }
}

impl Guarded for DescribeProducersRequest {
    type Response = DescribeProducersResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DescribeProducersResponse> {
        use describe_producers_response::{PartitionResponse, TopicResponse};
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cx.topic(Read, &t.name)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut DescribeProducersResponse| {
            r.topics.extend(no.into_iter().map(|t| {
                let (code, message) = denied(Error::TopicAuthorizationFailed(t.name.to_string()));
                TopicResponse::default().with_name(t.name).with_partitions(
                    t.partition_indexes
                        .iter()
                        .map(|p| {
                            PartitionResponse::default()
                                .with_partition_index(*p)
                                .with_error_code(code)
                                .with_error_message(message.clone())
                        })
                        .collect(),
                )
            }))
        })
    }
}
