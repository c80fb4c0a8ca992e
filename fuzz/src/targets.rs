//! The bodies of the broker fuzz targets, plain functions over an in-process broker, so that the libFuzzer
//! binaries (`fuzz_targets/`, nightly + cargo-fuzz) and the stable smoke test in the main workspace
//! (`tests/fuzz_smoke.rs`, which includes this file) run the same code:
//!
//! - [`Harness::frames`]: the input is a connection's byte stream (4-byte length, request header, body; any number
//!   of frames, any API key and version, bad ones included), served by the broker's own frame reader and request
//!   dispatch ([`strata_broker::serve_bytes_for_fuzzing`]), as a PLAINTEXT client on 127.0.0.1 would be.
//! - [`Harness::produce`]: the input becomes a record batch (any codec, attributes, producer fields, records with
//!   headers, a valid CRC) in a Produce request of any version from 3 to 11 sent the same way; what the broker
//!   acknowledges must come back in a Fetch, in batches that parse and whose CRC holds.
//!
//! One broker per process, on a temp dir, with topics the seeds name (`fuzz-a` with 3 partitions, `fuzz-lat` with
//! LogAppendTime, `fuzz-compact` compacted). Oracles besides "no panic, no abort on allocation": every response
//! carries the correlation id of a request of the input, and the broker never closes a connection because it
//! cannot encode its own response.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, FetchRequest, FetchResponse, ProduceRequest, ProduceResponse,
    RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use strata_broker::{Broker, Server};

/// A topic the harness creates: (name, partitions, configs).
pub type TopicSpec = (&'static str, i32, &'static [(&'static str, &'static str)]);

/// The topics every broker of the harness has.
pub const TOPICS: [TopicSpec; 3] = [
    ("fuzz-a", 3, &[]),
    (
        "fuzz-lat",
        1,
        &[("message.timestamp.type", "LogAppendTime")],
    ),
    ("fuzz-compact", 1, &[("cleanup.policy", "compact")]),
];

/// Bytes appended before the harness's broker is replaced by a fresh one (bounds the temp dir).
const MAX_APPENDED: usize = 256 << 20;

/// One in-process broker and the runtime it runs on.
pub struct Harness {
    rt: tokio::runtime::Runtime,
    server: Option<Server>,
    dir: Option<tempfile::TempDir>,
    per_request: Duration,
    appended: usize,
    /// Inputs served so far.
    pub execs: u64,
}

impl Harness {
    /// Starts a broker on `rt` (a fuzz target's runtime pauses time, the smoke test's does not); each request is
    /// bounded by `per_request` of that runtime's clock.
    pub fn new(rt: tokio::runtime::Runtime, per_request: Duration) -> Harness {
        let mut h = Harness {
            rt,
            server: None,
            dir: None,
            per_request,
            appended: 0,
            execs: 0,
        };
        h.restart();
        h
    }

    fn restart(&mut self) {
        if let Some(server) = self.server.take() {
            self.rt
                .block_on(server.shutdown())
                .expect("broker shuts down");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let mut props = std::collections::BTreeMap::new();
        for (k, v) in [
            ("listeners", "PLAINTEXT://127.0.0.1:0"),
            ("remote.log.storage.system.enable", "false"),
            ("group.initial.rebalance.delay.ms", "0"),
            ("log.segment.bytes", "1048576"),
            ("http.listener", ""),
            // The cleaner's thread is a blocking task for the broker's lifetime, and a paused tokio clock does
            // not jump while a blocking task runs: with it, the first wait of any input (a Fetch's max_wait_ms)
            // never ended. Compaction is not what these targets exercise; compacted topics still check keys.
            ("log.cleaner.enable", "false"),
        ] {
            props.insert(k.to_string(), v.to_string());
        }
        props.insert("log.dirs".into(), dir.path().display().to_string());
        let server = self
            .rt
            .block_on(Server::start_from_properties(&props))
            .expect("broker starts");
        let broker = server.broker().clone();
        let create = frame(ApiKey::CreateTopics, 7, 1, &create_topics());
        let replay = self.rt.block_on(strata_broker::serve_bytes_for_fuzzing(
            &broker,
            &create,
            Duration::from_secs(30),
        ));
        assert_eq!(replay.responses.len(), 1, "topics created: {replay:?}");
        self.server = Some(server);
        self.dir = Some(dir);
        self.appended = 0;
    }

    fn broker(&self) -> Arc<Broker> {
        self.server.as_ref().expect("running").broker().clone()
    }

    fn serve(&self, broker: &Arc<Broker>, input: &[u8]) -> strata_broker::Replay {
        self.rt.block_on(strata_broker::serve_bytes_for_fuzzing(
            broker,
            input,
            self.per_request,
        ))
    }

    /// Target `broker_frames`: `data` is a connection's byte stream.
    pub fn frames(&mut self, data: &[u8]) {
        self.execs += 1;
        self.appended += data.len();
        if self.appended > MAX_APPENDED {
            self.restart();
        }
        let replay = self.serve(&self.broker(), data);
        check_replay(data, &replay);
    }

    /// Target `produce_batches`: `data` describes a record batch (see [`ProduceInput`]).
    pub fn produce(&mut self, data: &[u8]) {
        self.execs += 1;
        let Some(input) = ProduceInput::parse(data) else {
            return;
        };
        self.appended += input.batch.len();
        if self.appended > MAX_APPENDED {
            self.restart();
        }
        let broker = self.broker();
        let req = input.request();
        let replay = self.serve(&broker, &req);
        check_replay(&req, &replay);
        let Some(resp) = replay.responses.first() else {
            assert!(
                input.acks == 0 || replay.timed_out,
                "no produce response: {replay:?}"
            );
            return;
        };
        let mut body = resp.slice(4..);
        ResponseHeader::decode(
            &mut body,
            ApiKey::Produce.response_header_version(input.version),
        )
        .expect("produce response header");
        let resp = ProduceResponse::decode(&mut body, input.version).expect("produce response");
        let p = &resp.responses[0].partition_responses[0];
        if p.error_code != 0 {
            return;
        }
        // Acknowledged: it reads back, in batches that parse, whose CRCs hold, starting at the base offset.
        let fetch = frame(
            ApiKey::Fetch,
            12,
            2,
            &fetch_request(input.topic, p.base_offset),
        );
        let replay = self.serve(&broker, &fetch);
        if replay.timed_out {
            // Only on the smoke test's real clock, on a loaded machine (the fetch does not wait: max.wait.ms 0).
            return;
        }
        assert_eq!(replay.responses.len(), 1, "fetch answered: {replay:?}");
        let mut body = replay.responses[0].slice(4..);
        ResponseHeader::decode(&mut body, ApiKey::Fetch.response_header_version(12))
            .expect("fetch response header");
        let resp = FetchResponse::decode(&mut body, 12).expect("fetch response");
        let part = &resp.responses[0].partitions[0];
        assert_eq!(
            part.error_code, 0,
            "fetch of an acknowledged offset: {part:?}"
        );
        let records = part.records.clone().unwrap_or_default();
        let mut first = None;
        for b in strata_storage::RecordBatch::iter(&records) {
            let b = b.expect("stored batches parse");
            b.ensure_valid_crc().expect("stored batch CRC");
            first.get_or_insert(b.base_offset());
            if let Ok(rs) = b.records() {
                for r in rs.take(1 << 16) {
                    let _ = r;
                }
            }
        }
        let first = first.expect("an acknowledged batch reads back");
        assert!(
            first <= p.base_offset,
            "fetch at {} began at {first}",
            p.base_offset
        );
    }
}

impl Drop for Harness {
    /// Stops the broker (its cleaner threads would keep the runtime's blocking pool from shutting down).
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            let _ = self.rt.block_on(server.shutdown());
        }
    }
}

/// Responses are framed, in order, and answer requests of the input; the broker closes no connection because it
/// cannot encode its answer.
fn check_replay(input: &[u8], replay: &strata_broker::Replay) {
    if let Some(reason) = &replay.closed {
        assert!(
            !reason.contains("cannot encode"),
            "the broker could not encode its response: {reason}"
        );
    }
    let ids = correlation_ids(input);
    for resp in &replay.responses {
        assert!(resp.len() >= 8, "response shorter than a header");
        let len = i32::from_be_bytes(resp[..4].try_into().unwrap());
        assert_eq!(len as usize, resp.len() - 4, "response length prefix");
        let id = i32::from_be_bytes(resp[4..8].try_into().unwrap());
        assert!(
            ids.contains(&id),
            "response to correlation id {id} never sent"
        );
    }
}

/// The correlation ids of the frames in `input` that have a request header.
fn correlation_ids(mut input: &[u8]) -> Vec<i32> {
    let mut ids = Vec::new();
    while input.len() >= 4 {
        let n = i32::from_be_bytes(input[..4].try_into().unwrap());
        input = &input[4..];
        if n < 0 || n as usize > input.len() {
            break;
        }
        if n >= 8 {
            ids.push(i32::from_be_bytes(input[4..8].try_into().unwrap()));
        }
        input = &input[n as usize..];
    }
    ids
}

/// A request frame (with its 4-byte length).
pub fn frame<T: Encodable>(api: ApiKey, version: i16, correlation_id: i32, req: &T) -> Vec<u8> {
    let mut out = BytesMut::new();
    out.put_i32(0);
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str("fuzz")))
        .encode(&mut out, api.request_header_version(version))
        .expect("header");
    req.encode(&mut out, version).expect("request");
    let len = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&len.to_be_bytes());
    out.to_vec()
}

fn create_topics() -> CreateTopicsRequest {
    CreateTopicsRequest::default()
        .with_timeout_ms(5000)
        .with_topics(
            TOPICS
                .iter()
                .map(|(name, partitions, configs)| {
                    CreatableTopic::default()
                        .with_name(TopicName(StrBytes::from_static_str(name)))
                        .with_num_partitions(*partitions)
                        .with_replication_factor(1)
                        .with_configs(
                            configs
                                .iter()
                                .map(|(k, v)| {
                                    CreatableTopicConfig::default()
                                        .with_name(StrBytes::from_static_str(k))
                                        .with_value(Some(StrBytes::from_static_str(v)))
                                })
                                .collect(),
                        )
                })
                .collect(),
        )
}

fn fetch_request(topic: &'static str, offset: i64) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(kafka_protocol::messages::BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(1)
        .with_max_bytes(16 << 20)
        .with_isolation_level(0)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(StrBytes::from_static_str(topic)))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(16 << 20)])])
}

/// The input of the `produce_batches` target, byte by byte:
///
/// | byte | meaning |
/// |-----:|---------|
/// | 0 | bits 0-2: codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd, 5-7 an unknown codec id, sent as is) |
/// |   | bit 3: the payload is the batch's records section as is (else: records the harness encodes) |
/// |   | bits 4-5: topic (0/3 `fuzz-a`, 1 `fuzz-lat`, 2 `fuzz-compact`); bit 6: xerial snappy framing |
/// |   | bit 7: the batch's producer fields come from bytes 4-9 (else: no producer id) |
/// | 1 | records count declared (255 = 2^31-1, else as encoded) |
/// | 2 | attributes' high bits: bit 0 timestamp type, bit 1 transactional, bit 2 control, bit 3 delete horizon |
/// | 3 | bits 0-3: Produce version 3 + n % 9; bits 4-5: acks (0, 1, -1, 2) |
/// | 4-9 | producer id (low byte, 0 = -1), epoch (2 bytes), base sequence (3 bytes) when byte 0 bit 7 |
/// | rest | payload: either raw, or records: `[key len][key][value len][value][headers n][(k len)(k)(v len)(v)]*` |
///
/// Lengths are one byte each (255 = null for keys and values).
pub struct ProduceInput {
    /// The batch (with a valid CRC).
    pub batch: Vec<u8>,
    /// The topic it goes to.
    pub topic: &'static str,
    /// The Produce version.
    pub version: i16,
    /// acks.
    pub acks: i16,
    transactional: bool,
}

const BASE_TS: i64 = 1_700_000_000_000;

impl ProduceInput {
    /// `None` when `data` is too short to describe a batch.
    pub fn parse(data: &[u8]) -> Option<ProduceInput> {
        if data.len() < 10 {
            return None;
        }
        let (mode, count, attrs, req) = (data[0], data[1], data[2], data[3]);
        let codec = mode & 7;
        let payload = &data[10..];
        let (records, encoded) = if mode & 8 != 0 {
            (payload.to_vec(), None)
        } else {
            let (plain, n) = encode_records(payload);
            (compress(codec, mode & 64 != 0, &plain), Some(n))
        };
        let count = match (count, encoded) {
            (255, _) => i32::MAX,
            (_, Some(n)) => n,
            (c, None) => c as i32,
        };
        let producer = if mode & 128 != 0 {
            let pid = if data[4] == 0 { -1 } else { data[4] as i64 };
            let epoch = i16::from_be_bytes([data[5], data[6]]);
            let seq = i32::from_be_bytes([0, data[7], data[8], data[9]]);
            (pid, epoch, seq)
        } else {
            (-1, -1, -1)
        };
        let attributes = codec as i16 | ((attrs as i16 & 0xf) << 3);
        let batch = batch(attributes, count, producer, &records);
        let topic = match (mode >> 4) & 3 {
            1 => "fuzz-lat",
            2 => "fuzz-compact",
            _ => "fuzz-a",
        };
        Some(ProduceInput {
            batch,
            topic,
            version: 3 + (req & 15) as i16 % 9,
            acks: [0, 1, -1, 2][((req >> 4) & 3) as usize],
            transactional: attrs & 2 != 0,
        })
    }

    /// The Produce request frame.
    pub fn request(&self) -> Vec<u8> {
        let req = ProduceRequest::default()
            .with_acks(self.acks)
            .with_timeout_ms(1000)
            .with_transactional_id(
                self.transactional
                    .then(|| StrBytes::from_static_str("fuzz-txn").into()),
            )
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str(self.topic)))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(Bytes::from(self.batch.clone())))])]);
        frame(ApiKey::Produce, self.version, 1, &req)
    }
}

fn put_varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Takes a length-prefixed field from `p` (255 = null).
fn field<'a>(p: &mut &'a [u8]) -> Option<Option<&'a [u8]>> {
    let (&n, rest) = p.split_first()?;
    if n == 255 {
        *p = rest;
        return Some(None);
    }
    let n = (n as usize).min(rest.len());
    let (f, rest) = rest.split_at(n);
    *p = rest;
    Some(Some(f))
}

/// Records (v2 format) from `p`, and how many.
fn encode_records(mut p: &[u8]) -> (Vec<u8>, i32) {
    let mut out = Vec::new();
    let mut n = 0i32;
    while !p.is_empty() && n < 1000 {
        let key = field(&mut p).unwrap_or(None);
        let value = field(&mut p).unwrap_or(None);
        let headers = p.split_first().map(|(h, rest)| {
            p = rest;
            (*h % 5) as usize
        });
        let mut body = Vec::new();
        body.push(0); // record attributes
        put_varint(&mut body, n as i64 * 3); // timestamp delta
        put_varint(&mut body, n as i64); // offset delta
        for f in [key, value] {
            match f {
                Some(b) => {
                    put_varint(&mut body, b.len() as i64);
                    body.extend_from_slice(b);
                }
                None => put_varint(&mut body, -1),
            }
        }
        let headers = headers.unwrap_or(0);
        put_varint(&mut body, headers as i64);
        for _ in 0..headers {
            let k = field(&mut p).flatten().unwrap_or_default();
            put_varint(&mut body, k.len() as i64);
            body.extend_from_slice(k);
            match field(&mut p).flatten() {
                Some(v) => {
                    put_varint(&mut body, v.len() as i64);
                    body.extend_from_slice(v);
                }
                None => put_varint(&mut body, -1),
            }
        }
        put_varint(&mut out, body.len() as i64);
        out.extend_from_slice(&body);
        n += 1;
    }
    (out, n.max(1))
}

/// `plain` compressed with `codec` as producers do (unknown codecs: as is).
pub fn compress(codec: u8, xerial: bool, plain: &[u8]) -> Vec<u8> {
    match codec {
        1 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        2 if xerial => {
            let mut out = vec![
                0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
            ];
            for chunk in plain.chunks(32 << 10) {
                let block = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
                out.extend_from_slice(&(block.len() as i32).to_be_bytes());
                out.extend_from_slice(&block);
            }
            out
        }
        2 => snap::raw::Encoder::new().compress_vec(plain).unwrap(),
        3 => {
            let mut e = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
            e.write_all(plain).unwrap();
            let (out, r) = e.finish();
            r.unwrap();
            out
        }
        4 => zstd::encode_all(plain, 1).unwrap(),
        _ => plain.to_vec(),
    }
}

/// A v2 batch around `records` with a valid CRC.
fn batch(
    attributes: i16,
    count: i32,
    (pid, epoch, seq): (i64, i16, i32),
    records: &[u8],
) -> Vec<u8> {
    let last_delta = if count == i32::MAX { 0 } else { count - 1 };
    let mut b = Vec::with_capacity(61 + records.len());
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((49 + records.len()) as i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&attributes.to_be_bytes());
    b.extend_from_slice(&last_delta.to_be_bytes());
    b.extend_from_slice(&BASE_TS.to_be_bytes());
    b.extend_from_slice(&(BASE_TS + 3 * last_delta as i64).to_be_bytes());
    b.extend_from_slice(&pid.to_be_bytes());
    b.extend_from_slice(&epoch.to_be_bytes());
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// Target `decode_request`: `data` as a request frame (without its length) decoded as the server decodes it,
/// without running a handler, and as a produce request's record set (batch views, CRC, record walk).
pub fn decode_request(data: &[u8]) {
    let bytes = Bytes::copy_from_slice(data);
    let _ = strata_broker::decode_request_for_fuzzing(bytes.clone());
    for batch in strata_storage::RecordBatch::iter(&bytes).take(1024) {
        let Ok(batch) = batch else { break };
        let _ = batch.ensure_valid_crc();
        let _ = (
            batch.last_offset(),
            batch.max_timestamp(),
            batch.last_sequence(),
        );
        if let Ok(records) = batch.records() {
            let _ = records.take(4096).count();
        }
    }
}
