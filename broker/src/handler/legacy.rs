//! Kafka 3.9's oldest versions that the codec (`kafka-protocol`, whose floors are Kafka 4.0's after KIP-896) cannot
//! decode: Produce v0-2, Fetch v0-3, ListOffsets v0 and DescribeConfigs v0. Each request body is rewritten to the
//! codec's oldest version (the older layouts are that version minus fields with a fixed meaning), answered by
//! the ordinary handler, and the response written in the old layout here. Field layouts are Kafka's
//! `ProduceRequest.json` / `FetchRequest.json` / `ListOffsetsRequest.json` / `DescribeConfigsRequest.json` and
//! their responses at those versions; all are non-flexible (response header v0: the correlation id only).

use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};

use super::records;
use crate::broker::Broker;
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
    let resp = super::produce::handle(broker, &header, req).await;
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
    out.put_i32(resp.responses.len() as i32);
    for t in &resp.responses {
        put_str(&mut out, t.name.0.as_str());
        out.put_i32(t.partition_responses.len() as i32);
        for p in &t.partition_responses {
            out.put_i32(p.index);
            out.put_i16(p.error_code);
            out.put_i64(p.base_offset);
            if version >= 2 {
                out.put_i64(p.log_append_time_ms);
            }
        }
    }
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
    let mut resp = super::fetch::handle(broker, &header, req).await;
    // Down-conversion, per partition, as the topic allows it.
    for t in &mut resp.responses {
        for p in &mut t.partitions {
            let Some(recs) = p.records.take() else {
                continue;
            };
            let converted = match broker.log(t.topic.0.as_str(), p.partition_index) {
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
    out.put_i32(resp.responses.len() as i32);
    for t in &resp.responses {
        put_str(&mut out, t.topic.0.as_str());
        out.put_i32(t.partitions.len() as i32);
        for p in &t.partitions {
            out.put_i32(p.partition_index);
            out.put_i16(p.error_code);
            out.put_i64(p.high_watermark);
            let recs = p.records.as_deref().unwrap_or_default();
            out.put_i32(recs.len() as i32);
            out.put_slice(recs);
        }
    }
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
    let resp = super::list_offsets::handle(broker, &header, req).await;
    let mut out = BytesMut::new();
    out.put_i32(resp.topics.len() as i32);
    for (t, nums) in resp.topics.iter().zip(&max_nums) {
        put_str(&mut out, t.name.0.as_str());
        out.put_i32(t.partitions.len() as i32);
        for (p, max) in t.partitions.iter().zip(nums) {
            out.put_i32(p.partition_index);
            out.put_i16(p.error_code);
            if p.error_code == 0 && p.offset >= 0 && *max > 0 {
                out.put_i32(1);
                out.put_i64(p.offset);
            } else {
                out.put_i32(0);
            }
        }
    }
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
    let resp = super::describe_configs::handle(broker, &header, req).await;
    let mut out = BytesMut::new();
    out.put_i32(resp.throttle_time_ms);
    out.put_i32(resp.results.len() as i32);
    for r in &resp.results {
        out.put_i16(r.error_code);
        put_nullable_str(&mut out, r.error_message.as_deref());
        out.put_i8(r.resource_type);
        put_str(&mut out, r.resource_name.as_str());
        out.put_i32(r.configs.len() as i32);
        for c in &r.configs {
            put_str(&mut out, c.name.as_str());
            put_nullable_str(&mut out, c.value.as_deref());
            out.put_i8(c.read_only as i8);
            out.put_i8((c.config_source == 5) as i8);
            out.put_i8(c.is_sensitive as i8);
        }
    }
    Ok(Some(frame(header.correlation_id, out)))
}
