//! Faults on demand in the request path ([`crate::faults`]): [`before`] takes the faults of a request and waits
//! out their latency; error faults are answered in each API's own response shape (kafka-protocol's response
//! types); the topics a request names are decoded only for faults limited to one topic/partition.
//!
//! Produce puts the code on each chosen partition without appending its records; the request's other partitions
//! are served. Fetch, ListOffsets and Metadata (read-only) are served, then the chosen partitions (topics) get the
//! code in place of their data ([`Adjust::set_error`]). The other supported APIs answer with the code in their
//! top-level or per-resource error field, without running.

use std::cell::OnceCell;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};

use crate::broker::Broker;
use crate::dispatch::{decode, encode};
use crate::faults::answers_after;
use crate::handler;

/// What the faults of one request do to it.
#[derive(Debug, Default)]
pub(crate) struct Injected {
    /// The answer in place of the handler's (an error fault).
    pub response: Option<Result<Option<Bytes>, String>>,
    /// `throttle_time_ms` to set in the handler's response.
    pub throttle_ms: Option<i32>,
    /// An error fault applied to the handler's response (read-only APIs with partitions or topics).
    pub error_after: Option<(i16, Option<String>, Option<i32>)>,
    /// Close the connection after the request ran, without its response.
    pub close: bool,
}

/// Takes the faults of one request, waits out their latency, and says what else they do. `None`: no fault
/// applies.
pub(crate) async fn before(
    broker: &Arc<Broker>,
    api: ApiKey,
    version: i16,
    header: &RequestHeader,
    body: &Bytes,
) -> Option<Injected> {
    // Versions below the codec's floor are served by the legacy handlers: no error response for them.
    let errors = !crate::codec::versions::below_codec(api, version);
    let taken = {
        let topics = TopicsOf::new(api, version, body);
        let touches = |t: &str, p: Option<i32>| topics.touches(broker, t, p);
        broker.faults().take(
            api,
            errors,
            &touches,
            broker.metrics(),
            header.correlation_id,
        )?
    };
    if !taken.delay.is_zero() {
        tokio::time::sleep(taken.delay).await;
    }
    let mut out = Injected {
        throttle_ms: taken.throttle_ms,
        close: taken.close,
        ..Injected::default()
    };
    if let Some((code, topic, partition)) = taken.error {
        if answers_after(api) {
            out.error_after = Some((code, topic, partition));
        } else {
            out.response = Some(
                error_response(
                    broker,
                    api,
                    version,
                    header,
                    body.clone(),
                    code,
                    topic.as_deref(),
                    partition,
                )
                .await,
            );
        }
    }
    Some(out)
}

/// The close reason of a connection closed by a fault.
pub(crate) fn close_reason(api: ApiKey) -> String {
    format!("injected fault: closing the connection after a {api:?} request")
}

const MESSAGE: &str = "injected fault (strata /api/v1/faults)";

/// A topic named by name, or by id (Produce v13+, Fetch v13+).
enum Named {
    Name(String),
    Id(uuid::Uuid),
}

impl Named {
    fn of(name: &str, id: uuid::Uuid) -> Self {
        if name.is_empty() && !id.is_nil() {
            Named::Id(id)
        } else {
            Named::Name(name.to_string())
        }
    }

    fn is(&self, broker: &Broker, topic: &str) -> bool {
        match self {
            Named::Name(n) => n == topic,
            Named::Id(id) => broker.registry().name_of(*id).as_deref() == Some(topic),
        }
    }
}

/// A topic a request names, with the partitions it names.
type NamedPartitions = (Named, Vec<i32>);

/// The topics (and partitions) a request names, decoded only when a fault limited to a topic asks.
struct TopicsOf<'a> {
    api: ApiKey,
    version: i16,
    body: &'a Bytes,
    /// `None` inside: every topic (a Metadata request for all topics).
    parsed: OnceCell<Option<Vec<NamedPartitions>>>,
}

impl<'a> TopicsOf<'a> {
    fn new(api: ApiKey, version: i16, body: &'a Bytes) -> Self {
        Self {
            api,
            version,
            body,
            parsed: OnceCell::new(),
        }
    }

    fn parse(&self) -> Option<Vec<(Named, Vec<i32>)>> {
        let mut b = self.body.clone();
        let v = self.version;
        match self.api {
            ApiKey::Produce => ProduceRequest::decode(&mut b, v).ok().map(|r| {
                r.topic_data
                    .iter()
                    .map(|t| {
                        let parts = t.partition_data.iter().map(|p| p.index).collect();
                        (Named::of(t.name.0.as_str(), t.topic_id), parts)
                    })
                    .collect()
            }),
            ApiKey::Fetch => FetchRequest::decode(&mut b, v).ok().map(|r| {
                r.topics
                    .iter()
                    .map(|t| {
                        let parts = t.partitions.iter().map(|p| p.partition).collect();
                        (Named::of(t.topic.0.as_str(), t.topic_id), parts)
                    })
                    .collect()
            }),
            ApiKey::ListOffsets => ListOffsetsRequest::decode(&mut b, v).ok().map(|r| {
                r.topics
                    .iter()
                    .map(|t| {
                        let parts = t.partitions.iter().map(|p| p.partition_index).collect();
                        (Named::Name(t.name.0.to_string()), parts)
                    })
                    .collect()
            }),
            ApiKey::Metadata => match MetadataRequest::decode(&mut b, v) {
                Ok(r) => r.topics.map(|ts| {
                    ts.iter()
                        .map(|t| {
                            let name = t.name.as_ref().map_or("", |n| n.0.as_str());
                            (Named::of(name, t.topic_id), Vec::new())
                        })
                        .collect()
                }),
                Err(_) => Some(Vec::new()),
            },
            _ => Some(Vec::new()),
        }
    }

    /// Whether the request names `topic` (and `partition`).
    fn touches(&self, broker: &Broker, topic: &str, partition: Option<i32>) -> bool {
        match self.parsed.get_or_init(|| self.parse()) {
            None => true,
            Some(topics) => topics.iter().any(|(t, parts)| {
                t.is(broker, topic) && partition.is_none_or(|p| parts.contains(&p))
            }),
        }
    }
}

fn chosen(name: &str, partition: i32, topic: Option<&str>, only: Option<i32>) -> bool {
    topic.is_none_or(|t| t == name) && only.is_none_or(|p| p == partition)
}

/// The answer to a request of `api` failed with `code` (the chosen topic/partition only, when given).
#[allow(clippy::too_many_arguments)]
async fn error_response(
    broker: &Arc<Broker>,
    api: ApiKey,
    version: i16,
    header: &RequestHeader,
    mut body: Bytes,
    code: i16,
    topic: Option<&str>,
    partition: Option<i32>,
) -> Result<Option<Bytes>, String> {
    macro_rules! answer {
        ($req:ty, |$r:ident| $build:expr) => {{
            let $r: $req = decode(&mut body, version, api)?;
            let resp = $build;
            encode(header, api, version, &resp).map(Some)
        }};
    }
    match api {
        ApiKey::Produce => {
            let req: ProduceRequest = decode(&mut body, version, api)?;
            produce(broker, header, req, code, topic, partition).await
        }
        // Groups: the code in the top-level error, or per partition for OffsetCommit.
        ApiKey::FindCoordinator => answer!(FindCoordinatorRequest, |r| {
            find_coordinator_failed(r, version, code)
        }),
        ApiKey::JoinGroup => answer!(JoinGroupRequest, |r| {
            JoinGroupResponse::default()
                .with_error_code(code)
                .with_generation_id(-1)
                .with_member_id(r.member_id)
        }),
        ApiKey::SyncGroup => answer!(SyncGroupRequest, |_r| {
            SyncGroupResponse::default().with_error_code(code)
        }),
        ApiKey::Heartbeat => answer!(HeartbeatRequest, |_r| {
            HeartbeatResponse::default().with_error_code(code)
        }),
        ApiKey::LeaveGroup => answer!(LeaveGroupRequest, |_r| {
            LeaveGroupResponse::default().with_error_code(code)
        }),
        ApiKey::OffsetCommit => answer!(OffsetCommitRequest, |r| offset_commit_failed(r, code)),
        // Topics: the code per topic.
        ApiKey::CreateTopics => answer!(CreateTopicsRequest, |r| create_topics_failed(r, code)),
        ApiKey::DeleteTopics => answer!(DeleteTopicsRequest, |r| delete_topics_failed(r, code)),
        // Transactions: the code in the top-level error.
        ApiKey::InitProducerId => answer!(InitProducerIdRequest, |_r| {
            InitProducerIdResponse::default()
                .with_error_code(code)
                .with_producer_id((-1).into())
                .with_producer_epoch(-1)
        }),
        ApiKey::EndTxn => answer!(EndTxnRequest, |_r| {
            EndTxnResponse::default()
                .with_error_code(code)
                .with_producer_id((-1).into())
                .with_producer_epoch(-1)
        }),
        ApiKey::AddOffsetsToTxn => answer!(AddOffsetsToTxnRequest, |_r| {
            AddOffsetsToTxnResponse::default().with_error_code(code)
        }),
        other => Err(format!("error faults are not supported on {other:?}")),
    }
}

/// FindCoordinator failed with `code`: the top-level error, and each key's (v4+ batches keys).
fn find_coordinator_failed(
    r: FindCoordinatorRequest,
    version: i16,
    code: i16,
) -> FindCoordinatorResponse {
    let keys = if version >= 4 {
        r.coordinator_keys
    } else {
        Vec::new()
    };
    FindCoordinatorResponse::default()
        .with_error_code(code)
        .with_error_message(Some(StrBytes::from_static_str(MESSAGE)))
        .with_node_id((-1).into())
        .with_coordinators(
            keys.into_iter()
                .map(|k| {
                    find_coordinator_response::Coordinator::default()
                        .with_key(k)
                        .with_node_id((-1).into())
                        .with_error_code(code)
                        .with_error_message(Some(StrBytes::from_static_str(MESSAGE)))
                })
                .collect(),
        )
}

/// OffsetCommit failed with `code` on every partition it names.
fn offset_commit_failed(r: OffsetCommitRequest, code: i16) -> OffsetCommitResponse {
    OffsetCommitResponse::default().with_topics(
        r.topics
            .into_iter()
            .map(|t| {
                offset_commit_response::OffsetCommitResponseTopic::default()
                    .with_name(t.name)
                    .with_topic_id(t.topic_id)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                offset_commit_response::OffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(code)
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}

/// CreateTopics failed with `code` on every topic it names.
fn create_topics_failed(r: CreateTopicsRequest, code: i16) -> CreateTopicsResponse {
    CreateTopicsResponse::default().with_topics(
        r.topics
            .into_iter()
            .map(|t| {
                create_topics_response::CreatableTopicResult::default()
                    .with_name(t.name)
                    .with_error_code(code)
                    .with_error_message(Some(StrBytes::from_static_str(MESSAGE)))
                    .with_num_partitions(-1)
                    .with_replication_factor(-1)
            })
            .collect(),
    )
}

/// DeleteTopics failed with `code` on every topic it names (by name before v6, by name or id from v6).
fn delete_topics_failed(r: DeleteTopicsRequest, code: i16) -> DeleteTopicsResponse {
    let mut results: Vec<_> = r
        .topic_names
        .into_iter()
        .map(|n| {
            delete_topics_response::DeletableTopicResult::default()
                .with_name(Some(n))
                .with_error_code(code)
        })
        .collect();
    results.extend(r.topics.into_iter().map(|t| {
        delete_topics_response::DeletableTopicResult::default()
            .with_name(t.name)
            .with_topic_id(t.topic_id)
            .with_error_code(code)
            .with_error_message(Some(StrBytes::from_static_str(MESSAGE)))
    }));
    DeleteTopicsResponse::default().with_responses(results)
}

/// Produce: the chosen partitions fail with `code` (their records not appended); the others are served.
async fn produce(
    broker: &Arc<Broker>,
    header: &RequestHeader,
    mut req: ProduceRequest,
    code: i16,
    topic: Option<&str>,
    partition: Option<i32>,
) -> Result<Option<Bytes>, String> {
    let (api, version) = (ApiKey::Produce, header.request_api_version);
    let mut failed = Vec::new();
    for t in req.topic_data.iter_mut() {
        let (name, _) = handler::metadata::topic_by_name_or_id(broker, &t.name, t.topic_id);
        let (hit, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut t.partition_data)
            .into_iter()
            .partition(|p| chosen(&name, p.index, topic, partition));
        t.partition_data = kept;
        if !hit.is_empty() {
            let parts = hit
                .iter()
                .map(|p| {
                    produce_response::PartitionProduceResponse::default()
                        .with_index(p.index)
                        .with_error_code(code)
                        .with_base_offset(-1)
                        .with_log_append_time_ms(-1)
                        .with_log_start_offset(-1)
                        .with_error_message(Some(StrBytes::from_static_str(MESSAGE)))
                })
                .collect::<Vec<_>>();
            failed.push((t.name.clone(), t.topic_id, parts));
        }
    }
    req.topic_data.retain(|t| !t.partition_data.is_empty());
    let acks = req.acks;
    let mut resp = if req.topic_data.is_empty() {
        ProduceResponse::default()
    } else {
        handler::produce::handle(broker, header, req).await
    };
    for (name, id, parts) in failed {
        match resp
            .responses
            .iter_mut()
            .find(|t| t.name == name && t.topic_id == id)
        {
            Some(t) => t.partition_responses.extend(parts),
            None => resp.responses.push(
                produce_response::TopicProduceResponse::default()
                    .with_name(name)
                    .with_topic_id(id)
                    .with_partition_responses(parts),
            ),
        }
    }
    if acks == 0 {
        // No response; like Kafka, a failed acks=0 produce closes the connection so the client notices.
        return Err("injected fault on an acks=0 produce: closing the connection".into());
    }
    encode(header, api, version, &resp).map(Some)
}

/// What a fault changes in a served response: `throttle_time_ms`, and for read-only APIs an error on the
/// chosen partitions (topics).
pub(crate) trait Adjust {
    /// Sets `throttle_time_ms` (no-op where the response has none).
    fn set_throttle_ms(&mut self, ms: i32);

    /// Fails the chosen partitions (topics) with `code` in place of their data.
    fn set_error(
        &mut self,
        _broker: &Broker,
        _code: i16,
        _topic: Option<&str>,
        _partition: Option<i32>,
    ) {
    }
}

macro_rules! throttled {
    ($($t:ty),* $(,)?) => {$(
        impl Adjust for $t {
            fn set_throttle_ms(&mut self, ms: i32) {
                self.throttle_time_ms = ms;
            }
        }
    )*};
}

macro_rules! unthrottled {
    ($($t:ty),* $(,)?) => {$(
        impl Adjust for $t {
            fn set_throttle_ms(&mut self, _ms: i32) {}
        }
    )*};
}

throttled!(
    ApiVersionsResponse,
    ProduceResponse,
    FindCoordinatorResponse,
    JoinGroupResponse,
    SyncGroupResponse,
    HeartbeatResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    OffsetDeleteResponse,
    DescribeGroupsResponse,
    ListGroupsResponse,
    DeleteGroupsResponse,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupDescribeResponse,
    CreateTopicsResponse,
    DeleteTopicsResponse,
    CreatePartitionsResponse,
    DescribeConfigsResponse,
    AlterConfigsResponse,
    IncrementalAlterConfigsResponse,
    DeleteRecordsResponse,
    OffsetForLeaderEpochResponse,
    DescribeClusterResponse,
    DescribeTopicPartitionsResponse,
    DescribeClientQuotasResponse,
    DescribeUserScramCredentialsResponse,
    AlterUserScramCredentialsResponse,
    DescribeLogDirsResponse,
    AddPartitionsToTxnResponse,
    AddOffsetsToTxnResponse,
    EndTxnResponse,
    TxnOffsetCommitResponse,
    DescribeTransactionsResponse,
    ListTransactionsResponse,
    InitProducerIdResponse,
    DescribeProducersResponse,
    DescribeAclsResponse,
    CreateAclsResponse,
    DeleteAclsResponse,
    ElectLeadersResponse,
    UpdateFeaturesResponse,
    AlterPartitionReassignmentsResponse,
    ListPartitionReassignmentsResponse,
);

unthrottled!(
    SaslHandshakeResponse,
    SaslAuthenticateResponse,
    WriteTxnMarkersResponse
);

impl Adjust for FetchResponse {
    fn set_throttle_ms(&mut self, ms: i32) {
        self.throttle_time_ms = ms;
    }

    fn set_error(&mut self, broker: &Broker, code: i16, topic: Option<&str>, only: Option<i32>) {
        for t in self.responses.iter_mut() {
            let named = Named::of(t.topic.0.as_str(), t.topic_id);
            if topic.is_some_and(|want| !named.is(broker, want)) {
                continue;
            }
            for p in t.partitions.iter_mut() {
                if only.is_none_or(|want| want == p.partition_index) {
                    p.error_code = code;
                    p.records = None;
                    p.aborted_transactions = None;
                    p.high_watermark = -1;
                    p.last_stable_offset = -1;
                    p.log_start_offset = -1;
                }
            }
        }
    }
}

impl Adjust for ListOffsetsResponse {
    fn set_throttle_ms(&mut self, ms: i32) {
        self.throttle_time_ms = ms;
    }

    fn set_error(&mut self, _broker: &Broker, code: i16, topic: Option<&str>, only: Option<i32>) {
        for t in self.topics.iter_mut() {
            for p in t.partitions.iter_mut() {
                if chosen(t.name.0.as_str(), p.partition_index, topic, only) {
                    p.error_code = code;
                    p.offset = -1;
                    p.timestamp = -1;
                }
            }
        }
    }
}

impl Adjust for MetadataResponse {
    fn set_throttle_ms(&mut self, ms: i32) {
        self.throttle_time_ms = ms;
    }

    fn set_error(&mut self, _broker: &Broker, code: i16, topic: Option<&str>, _only: Option<i32>) {
        for t in self.topics.iter_mut() {
            let name = t.name.as_ref().map_or("", |n| n.0.as_str());
            if topic.is_none_or(|want| want == name) {
                t.error_code = code;
                t.partitions.clear();
            }
        }
    }
}
