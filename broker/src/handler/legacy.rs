//! Kafka 3.9's oldest versions that the codec (`kafka-protocol`, whose floors are Kafka 4.0's after KIP-896) cannot
//! decode: Produce v0-2, Fetch v0-3, ListOffsets v0, DescribeConfigs v0, OffsetCommit v0-1, OffsetFetch v0,
//! CreateTopics v0-1, DeleteTopics v0, OffsetForLeaderEpoch v0-1 and DescribeLogDirs v0 (the list is
//! [`crate::codec::versions::BELOW_CODEC`]). Each request body is rewritten to (or read as) the codec's oldest version
//! (the older layouts are that version minus fields with a fixed meaning), answered by the ordinary handler, and
//! the response written in the old layout here — or encoded at the codec's floor where the old layout is the same.
//! Field layouts are Kafka's `<Api>Request.json` / `<Api>Response.json` at those versions; all are non-flexible
//! (response header v0: the correlation id only).
//!
//! OffsetCommit v0 and OffsetFetch v0 read and wrote ZooKeeper in Kafka 3.x; without ZooKeeper (KRaft) Kafka 3.9
//! answers them UNSUPPORTED_VERSION on every partition (`KafkaApis`: "Version 0 offset commit requests"), and so
//! does strata — an answer, not a closed connection.

use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use super::records;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Why a connection is closed (as [`crate::dispatch`]).
type Close = String;

/// A bounds-checked reader of an old request body.
struct Reader {
    buf: Bytes,
    api: ApiKey,
    version: i16,
}

impl Reader {
    fn need(&self, n: usize, what: &str) -> Result<(), Close> {
        if self.buf.remaining() < n {
            return Err(format!(
                "cannot decode {:?} v{} request: {what} is cut short",
                self.api, self.version
            ));
        }
        Ok(())
    }
    fn i32(&mut self, what: &str) -> Result<i32, Close> {
        self.need(4, what)?;
        Ok(self.buf.get_i32())
    }
    fn i64(&mut self, what: &str) -> Result<i64, Close> {
        self.need(8, what)?;
        Ok(self.buf.get_i64())
    }
    /// A non-null string.
    fn string(&mut self, what: &str) -> Result<StrBytes, Close> {
        self.need(2, what)?;
        let len = self.buf.get_i16();
        if len < 0 {
            return Err(format!(
                "cannot decode {:?} v{} request: {what} is null",
                self.api, self.version
            ));
        }
        self.need(len as usize, what)?;
        let b = self.buf.split_to(len as usize);
        StrBytes::from_utf8(b).map_err(|e| {
            format!(
                "cannot decode {:?} v{} request: {what} is not UTF-8: {e}",
                self.api, self.version
            )
        })
    }
    /// A nullable string.
    fn nullable_string(&mut self, what: &str) -> Result<Option<StrBytes>, Close> {
        self.need(2, what)?;
        if i16::from_be_bytes([self.buf[0], self.buf[1]]) < 0 {
            self.buf.advance(2);
            return Ok(None);
        }
        self.string(what).map(Some)
    }
    /// An array of `each` (null read as empty).
    fn array<T>(
        &mut self,
        what: &str,
        mut each: impl FnMut(&mut Reader) -> Result<T, Close>,
    ) -> Result<Vec<T>, Close> {
        let n = self.count(what)?.unwrap_or(0);
        (0..n).map(|_| each(self)).collect()
    }
    /// An array length (-1 = null).
    fn count(&mut self, what: &str) -> Result<Option<usize>, Close> {
        let n = self.i32(what)?;
        if n < 0 {
            return Ok(None);
        }
        // Every element takes at least one byte: a count above the bytes left is a lie.
        self.need(n as usize, what)?;
        Ok(Some(n as usize))
    }
}

fn put_str(out: &mut BytesMut, s: &str) {
    out.put_i16(s.len() as i16);
    out.put_slice(s.as_bytes());
}

fn put_nullable_str(out: &mut BytesMut, s: Option<&str>) {
    match s {
        Some(s) => put_str(out, s),
        None => out.put_i16(-1),
    }
}

/// Writes an array: its length, then each element.
fn put_array<T>(out: &mut BytesMut, items: &[T], mut each: impl FnMut(&mut BytesMut, &T)) {
    out.put_i32(items.len() as i32);
    for item in items {
        each(out, item);
    }
}

/// Writes the `[name, [partition …]]` shape every per-partition response here has: each topic's name, then its
/// partitions by `each` (given the topic's index, for per-request values kept aside).
fn put_topics<T, P>(
    out: &mut BytesMut,
    topics: &[T],
    name: impl Fn(&T) -> &str,
    partitions: impl Fn(&T) -> &[P],
    mut each: impl FnMut(&mut BytesMut, usize, &P),
) {
    out.put_i32(topics.len() as i32);
    for (i, t) in topics.iter().enumerate() {
        put_str(out, name(t));
        put_array(out, partitions(t), |out, p| each(out, i, p));
    }
}

/// Frames `resp` encoded at `version` (a codec version whose layout the old one shares) behind a v0 header.
fn encode_as<T: Encodable>(
    correlation_id: i32,
    resp: &T,
    api: ApiKey,
    version: i16,
) -> Result<Bytes, Close> {
    let mut body = BytesMut::new();
    resp.encode(&mut body, version)
        .map_err(|e| format!("cannot encode {api:?} response (as v{version}): {e}"))?;
    Ok(frame(correlation_id, body))
}

/// Frames a v0-header response body.
fn frame(correlation_id: i32, body: BytesMut) -> Bytes {
    let mut out = BytesMut::with_capacity(8 + body.len());
    out.put_i32(4 + body.len() as i32);
    out.put_i32(correlation_id);
    out.put_slice(&body);
    out.freeze()
}

fn decode<T: Decodable>(mut body: Bytes, api: ApiKey, as_version: i16) -> Result<T, Close> {
    let req = T::decode(&mut body, as_version).map_err(|e| {
        format!(
            "cannot decode {api:?} request (read as v{as_version}): {}",
            e.to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        )
    })?;
    Ok(req)
}

/// Answers a request of `api` v`version` that [`serves`] says is handled here.
pub(crate) async fn handle(
    broker: &Arc<Broker>,
    api: ApiKey,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    match api {
        ApiKey::Produce => produce(broker, version, header, body).await,
        ApiKey::Fetch => fetch(broker, version, header, body).await,
        ApiKey::ListOffsets => list_offsets(broker, version, header, body).await,
        ApiKey::DescribeConfigs => describe_configs(broker, version, header, body).await,
        ApiKey::OffsetCommit => offset_commit(broker, version, header, body).await,
        ApiKey::OffsetFetch => offset_fetch(header, body),
        ApiKey::CreateTopics => create_topics(broker, version, header, body).await,
        ApiKey::DeleteTopics => delete_topics(broker, header, body).await,
        ApiKey::OffsetForLeaderEpoch => {
            offset_for_leader_epoch(broker, version, header, body).await
        }
        ApiKey::DescribeLogDirs => {
            // v0 is v1 (v1 only said that throttling happens before the answer), request and response.
            let req: DescribeLogDirsRequest = decode(body, ApiKey::DescribeLogDirs, 1)?;
            let resp = crate::guard::guarded(broker, version, req, |req| {
                super::describe_log_dirs::handle(broker, &header, req)
            })
            .await;
            encode_as(header.correlation_id, &resp, api, 1).map(Some)
        }
        ApiKey::DescribeAcls | ApiKey::CreateAcls | ApiKey::DeleteAcls => {
            super::acls::legacy_v0(broker, api, body)
                .map(|out| Some(frame(header.correlation_id, out)))
        }
        other => Err(format!("{other:?} v{version} has no legacy handler")),
    }
}

/// Produce v0-2: v3 without `transactional_id`. Response: `[name, [index, error_code, base_offset,
/// log_append_time_ms (v2)]]`, then `throttle_time_ms` (v1+).
async fn produce(
    broker: &Arc<Broker>,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    let mut v3 = BytesMut::with_capacity(body.len() + 2);
    v3.put_i16(-1); // transactional_id: null
    v3.put_slice(&body);
    let req: ProduceRequest = decode(v3.freeze(), ApiKey::Produce, 3)?;
    let acks = req.acks;
    let resp = crate::guard::guarded(broker, version, req, |req| {
        super::produce::handle(broker, &header, req)
    })
    .await;
    if acks == 0 {
        // As dispatch: no response; a failed partition closes the connection so the client notices.
        return match resp
            .responses
            .iter()
            .flat_map(|t| t.partition_responses.iter().map(move |p| (t, p)))
            .find(|(_, p)| p.error_code != 0)
        {
            Some((t, p)) => Err(format!(
                "acks=0 produce failed: {}-{}: error {}",
                t.name.0.as_str(),
                p.index,
                p.error_code
            )),
            None => Ok(None),
        };
    }
    let mut out = BytesMut::new();
    put_topics(
        &mut out,
        &resp.responses,
        |t| t.name.0.as_str(),
        |t| &t.partition_responses,
        |out, _, p| {
            out.put_i32(p.index);
            out.put_i16(p.error_code);
            out.put_i64(p.base_offset);
            if version >= 2 {
                out.put_i64(p.log_append_time_ms);
            }
        },
    );
    if version >= 1 {
        out.put_i32(resp.throttle_time_ms);
    }
    Ok(Some(frame(header.correlation_id, out)))
}

/// Fetch v0-3: v4 without `isolation_level` (read uncommitted) and, before v3, without `max_bytes` (no response
/// limit). Records are down-converted to the message format the version carries. Response: `throttle_time_ms`
/// (v1+), `[topic, [partition, error_code, high_watermark, records]]`.
async fn fetch(
    broker: &Arc<Broker>,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    let fixed = if version >= 3 { 16 } else { 12 };
    if body.len() < fixed {
        return Err(format!(
            "cannot decode Fetch v{version} request: {} bytes are too few",
            body.len()
        ));
    }
    let mut v4 = BytesMut::with_capacity(body.len() + 5);
    v4.put_slice(&body[..12]); // replica_id, max_wait_ms, min_bytes
    if version < 3 {
        v4.put_i32(i32::MAX); // max_bytes: none before v3
    } else {
        v4.put_slice(&body[12..16]);
    }
    v4.put_i8(0); // isolation_level: READ_UNCOMMITTED
    v4.put_slice(&body[fixed..]);
    let req: FetchRequest = decode(v4.freeze(), ApiKey::Fetch, 4)?;
    let mut resp = crate::guard::guarded(broker, version, req, |req| {
        super::fetch::handle(broker, &header, req)
    })
    .await;
    // Down-conversion, per partition, as the topic allows it.
    for t in &mut resp.responses {
        for p in &mut t.partitions {
            let Some(recs) = p.records.take() else {
                continue;
            };
            let converted = match broker.topics().log(t.topic.0.as_str(), p.partition_index) {
                Ok(log) => records::for_fetch(&log.config(), recs, version),
                Err(_) => Ok(recs),
            };
            match converted {
                Ok(r) => p.records = Some(r),
                Err(e) => {
                    p.error_code = error_code::code(&e);
                    p.records = Some(Bytes::new());
                }
            }
        }
    }
    let mut out = BytesMut::new();
    if version >= 1 {
        out.put_i32(resp.throttle_time_ms);
    }
    if resp.error_code != 0 {
        // A request-level error has no place in v0-3: report it on every partition asked for.
        for t in &mut resp.responses {
            for p in &mut t.partitions {
                p.error_code = resp.error_code;
            }
        }
    }
    put_topics(
        &mut out,
        &resp.responses,
        |t| t.topic.0.as_str(),
        |t| &t.partitions,
        |out, _, p| {
            out.put_i32(p.partition_index);
            out.put_i16(p.error_code);
            out.put_i64(p.high_watermark);
            let recs = p.records.as_deref().unwrap_or_default();
            out.put_i32(recs.len() as i32);
            out.put_slice(recs);
        },
    );
    Ok(Some(frame(header.correlation_id, out)))
}

/// ListOffsets v0: `replica_id, [name, [partition, timestamp, max_num_offsets]]`. Response `[name, [partition,
/// error_code, old_style_offsets [i64]]]`: the offset v1 finds, as a one-element list (empty when there is none
/// or `max_num_offsets` is 0), as Kafka 3.x answered for a partition with one answer.
async fn list_offsets(
    broker: &Arc<Broker>,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    let mut r = Reader {
        buf: body,
        api: ApiKey::ListOffsets,
        version,
    };
    let replica_id = r.i32("replica_id")?;
    let mut topics = Vec::new();
    let mut max_nums = Vec::new();
    for _ in 0..r.count("topics")?.unwrap_or(0) {
        let name = r.string("topic name")?;
        let mut parts = Vec::new();
        let mut nums = Vec::new();
        for _ in 0..r.count("partitions")?.unwrap_or(0) {
            let partition = r.i32("partition_index")?;
            let timestamp = r.i64("timestamp")?;
            nums.push(r.i32("max_num_offsets")?);
            parts.push(
                ListOffsetsPartition::default()
                    .with_partition_index(partition)
                    .with_timestamp(timestamp),
            );
        }
        max_nums.push(nums);
        topics.push(
            ListOffsetsTopic::default()
                .with_name(TopicName(name))
                .with_partitions(parts),
        );
    }
    let req = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(replica_id))
        .with_topics(topics);
    let resp = crate::guard::guarded(broker, version, req, |req| {
        super::list_offsets::handle(broker, &header, req)
    })
    .await;
    let mut out = BytesMut::new();
    let mut next = vec![0usize; max_nums.len()];
    put_topics(
        &mut out,
        &resp.topics,
        |t| t.name.0.as_str(),
        |t| &t.partitions,
        |out, ti, p| {
            let max = max_nums.get(ti).and_then(|n| n.get(next[ti])).copied();
            next[ti] += 1;
            out.put_i32(p.partition_index);
            out.put_i16(p.error_code);
            if p.error_code == 0 && p.offset >= 0 && max.is_some_and(|m| m > 0) {
                out.put_i32(1);
                out.put_i64(p.offset);
            } else {
                out.put_i32(0);
            }
        },
    );
    Ok(Some(frame(header.correlation_id, out)))
}

/// DescribeConfigs v0: v1 without `include_synonyms`. Response: `throttle_time_ms, [error_code, error_message,
/// resource_type, resource_name, [name, value, read_only, is_default, is_sensitive]]` — `is_default` where v1
/// says source DEFAULT_CONFIG (5), as Kafka's v0 conversion.
async fn describe_configs(
    broker: &Arc<Broker>,
    _version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    let mut v1 = BytesMut::with_capacity(body.len() + 1);
    v1.put_slice(&body);
    v1.put_i8(0); // include_synonyms: false
    let req: DescribeConfigsRequest = decode(v1.freeze(), ApiKey::DescribeConfigs, 1)?;
    let resp = crate::guard::guarded(broker, 1, req, |req| {
        super::describe_configs::handle(broker, &header, req)
    })
    .await;
    let mut out = BytesMut::new();
    out.put_i32(resp.throttle_time_ms);
    put_array(&mut out, &resp.results, |out, r| {
        out.put_i16(r.error_code);
        put_nullable_str(out, r.error_message.as_deref());
        out.put_i8(r.resource_type);
        put_str(out, r.resource_name.as_str());
        put_array(out, &r.configs, |out, c| {
            put_str(out, c.name.as_str());
            put_nullable_str(out, c.value.as_deref());
            out.put_i8(c.read_only as i8);
            out.put_i8((c.config_source == 5) as i8);
            out.put_i8(c.is_sensitive as i8);
        });
    });
    Ok(Some(frame(header.correlation_id, out)))
}

/// UNSUPPORTED_VERSION, as Kafka 3.9 without ZooKeeper answers OffsetCommit v0 / OffsetFetch v0.
fn zookeeper_only(api: ApiKey) -> i16 {
    error_code::code(&Error::UnsupportedVersion {
        api: format!("{api:?}"),
        version: 0,
    })
}

/// OffsetCommit v0: `group_id, [name, [partition_index, committed_offset, committed_metadata]]`; v1 adds
/// `generation_id, member_id` after the group and `commit_timestamp` before the metadata. v1 is answered as v2
/// with no `retention_time_ms` (-1: the broker's) and each partition's commit timestamp kept (-1 = now); v0 is
/// UNSUPPORTED_VERSION on every partition (see the module docs). The response of v0-1 is v2's layout
/// (`[name, [partition_index, error_code]]`).
async fn offset_commit(
    broker: &Arc<Broker>,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    use offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
    use offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
    let mut r = Reader {
        buf: body,
        api: ApiKey::OffsetCommit,
        version,
    };
    let group = r.string("group_id")?;
    let (generation, member) = if version >= 1 {
        (r.i32("generation_id")?, r.string("member_id")?)
    } else {
        (-1, StrBytes::default())
    };
    let mut timestamps = Vec::new();
    let topics = r.array("topics", |r| {
        let name = r.string("topic name")?;
        let mut ts = Vec::new();
        let partitions = r.array("partitions", |r| {
            let index = r.i32("partition_index")?;
            let offset = r.i64("committed_offset")?;
            ts.push(if version >= 1 {
                r.i64("commit_timestamp")?
            } else {
                -1
            });
            let metadata = r.nullable_string("committed_metadata")?;
            Ok(OffsetCommitRequestPartition::default()
                .with_partition_index(index)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(metadata))
        })?;
        timestamps.push(ts);
        Ok(OffsetCommitRequestTopic::default()
            .with_name(TopicName(name))
            .with_partitions(partitions))
    })?;
    let resp = if version == 0 {
        let code = zookeeper_only(ApiKey::OffsetCommit);
        let topics = topics
            .iter()
            .map(|t| {
                OffsetCommitResponseTopic::default()
                    .with_name(t.name.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                OffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(code)
                            })
                            .collect(),
                    )
            })
            .collect();
        OffsetCommitResponse::default().with_topics(topics)
    } else {
        let req = OffsetCommitRequest::default()
            .with_group_id(GroupId(group))
            .with_generation_id_or_member_epoch(generation)
            .with_member_id(member)
            .with_retention_time_ms(-1)
            .with_topics(topics);
        // The guard may leave topics out: each topic kept keeps its own timestamps.
        let names: Vec<TopicName> = req.topics.iter().map(|t| t.name.clone()).collect();
        let h = &header;
        crate::guard::guarded(broker, 2, req, |req| {
            let ts: Vec<Vec<i64>> = req
                .topics
                .iter()
                .map(|t| {
                    let i = names.iter().position(|n| *n == t.name).unwrap_or(0);
                    timestamps.get(i).cloned().unwrap_or_default()
                })
                .collect();
            async move { super::offset_commit::commit(broker, h, req, &ts).await }
        })
        .await
    };
    encode_as(header.correlation_id, &resp, ApiKey::OffsetCommit, 2).map(Some)
}

/// OffsetFetch v0: v1's layout (`group_id, [name, [partition_indexes]]`; response `[name, [partition_index,
/// committed_offset, metadata, error_code]]`), answered UNSUPPORTED_VERSION on every partition asked for with
/// offset -1 and empty metadata, as Kafka 3.9's error response at v0 (see the module docs).
fn offset_fetch(header: RequestHeader, body: Bytes) -> Result<Option<Bytes>, Close> {
    let req: OffsetFetchRequest = decode(body, ApiKey::OffsetFetch, 1)?;
    let code = zookeeper_only(ApiKey::OffsetFetch);
    let topics = req.topics.unwrap_or_default();
    let mut out = BytesMut::new();
    put_topics(
        &mut out,
        &topics,
        |t| t.name.0.as_str(),
        |t| &t.partition_indexes,
        |out, _, p| {
            out.put_i32(*p);
            out.put_i64(-1);
            put_str(out, "");
            out.put_i16(code);
        },
    );
    Ok(Some(frame(header.correlation_id, out)))
}

/// CreateTopics v0-1: v2 without `validate_only` before v1 (false). Response `[name, error_code,
/// error_message (v1)]`, no throttle time.
async fn create_topics(
    broker: &Arc<Broker>,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    let mut v2 = BytesMut::with_capacity(body.len() + 1);
    v2.put_slice(&body);
    if version == 0 {
        v2.put_i8(0); // validate_only: false
    }
    let req: CreateTopicsRequest = decode(v2.freeze(), ApiKey::CreateTopics, 2)?;
    let resp = crate::guard::guarded(broker, version, req, |req| {
        super::create_topics::handle(broker, &header, req)
    })
    .await;
    let mut out = BytesMut::new();
    put_array(&mut out, &resp.topics, |out, t| {
        put_str(out, t.name.0.as_str());
        out.put_i16(t.error_code);
        if version >= 1 {
            put_nullable_str(out, t.error_message.as_deref());
        }
    });
    Ok(Some(frame(header.correlation_id, out)))
}

/// DeleteTopics v0: v1's request (`[topic_names], timeout_ms`); response `[name, error_code]` without v1's
/// throttle time.
async fn delete_topics(
    broker: &Arc<Broker>,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    let req: DeleteTopicsRequest = decode(body, ApiKey::DeleteTopics, 1)?;
    let resp = crate::guard::guarded(broker, 0, req, |req| {
        super::delete_topics::handle(broker, &header, req)
    })
    .await;
    let mut out = BytesMut::new();
    put_array(&mut out, &resp.responses, |out, t| {
        put_str(out, t.name.as_ref().map_or("", |n| n.0.as_str()));
        out.put_i16(t.error_code);
    });
    Ok(Some(frame(header.correlation_id, out)))
}

/// OffsetForLeaderEpoch v0-1: `[topic, [partition, leader_epoch]]`, answered as v2 with no current leader epoch
/// (-1) from a consumer (replica id -2, the default of v3's field). Response `[topic, [error_code, partition,
/// leader_epoch (v1), end_offset]]`, no throttle time.
async fn offset_for_leader_epoch(
    broker: &Arc<Broker>,
    version: i16,
    header: RequestHeader,
    body: Bytes,
) -> Result<Option<Bytes>, Close> {
    use offset_for_leader_epoch_request::{OffsetForLeaderPartition, OffsetForLeaderTopic};
    let mut r = Reader {
        buf: body,
        api: ApiKey::OffsetForLeaderEpoch,
        version,
    };
    let topics = r.array("topics", |r| {
        let name = r.string("topic")?;
        let partitions = r.array("partitions", |r| {
            Ok(OffsetForLeaderPartition::default()
                .with_partition(r.i32("partition")?)
                .with_current_leader_epoch(-1)
                .with_leader_epoch(r.i32("leader_epoch")?))
        })?;
        Ok(OffsetForLeaderTopic::default()
            .with_topic(TopicName(name))
            .with_partitions(partitions))
    })?;
    let req = OffsetForLeaderEpochRequest::default()
        .with_replica_id(BrokerId(-2))
        .with_topics(topics);
    let resp = crate::guard::guarded(broker, version, req, |req| {
        super::offset_for_leader_epoch::handle(broker, &header, req)
    })
    .await;
    let mut out = BytesMut::new();
    put_topics(
        &mut out,
        &resp.topics,
        |t| t.topic.0.as_str(),
        |t| &t.partitions,
        |out, _, p| {
            out.put_i16(p.error_code);
            out.put_i32(p.partition);
            if version >= 1 {
                out.put_i32(p.leader_epoch);
            }
            out.put_i64(p.end_offset);
        },
    );
    Ok(Some(frame(header.correlation_id, out)))
}
