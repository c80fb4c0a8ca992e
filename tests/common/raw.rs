//! A minimal raw Kafka protocol client (kafka-protocol's client side) for wire-level tests.

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An ApiVersions request with the client software name and version v3+ needs (KIP-511: an empty one is
/// INVALID_REQUEST, as Kafka answers it).
pub fn api_versions_request() -> kafka_protocol::messages::ApiVersionsRequest {
    kafka_protocol::messages::ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("strata-tests"))
        .with_client_software_version(StrBytes::from_static_str("1.0"))
}

/// Connects to the broker.
pub async fn connect(addr: std::net::SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.expect("connect")
}

/// Writes one length-prefixed frame.
pub async fn send_frame(s: &mut TcpStream, body: &[u8]) {
    let mut f = BytesMut::new();
    f.put_i32(body.len() as i32);
    f.put_slice(body);
    s.write_all(&f).await.expect("write");
}

/// Reads one response frame; `None` if the broker closed the connection. Waits at most 60 s for it: a debug build
/// on a loaded 2-core machine takes ~20 s to answer a Metadata request naming 100,000 topics to auto-create.
pub async fn read_frame(s: &mut TcpStream) -> Option<Bytes> {
    let mut len = [0u8; 4];
    match tokio::time::timeout(Duration::from_secs(60), s.read_exact(&mut len))
        .await
        .expect("no hang")
    {
        Ok(_) => {}
        Err(_) => return None,
    }
    let mut buf = vec![0u8; i32::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).await.ok()?;
    Some(Bytes::from(buf))
}

/// Sends `req` as `api` v`version` and decodes the response; `None` if the connection was closed.
pub async fn request<Req: Encodable, Resp: Decodable>(
    s: &mut TcpStream,
    api: ApiKey,
    version: i16,
    req: &Req,
) -> Option<Resp> {
    send_request(s, api, version, req).await;
    let mut resp = read_frame(s).await?;
    let header = ResponseHeader::decode(&mut resp, api.response_header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 7);
    Some(Resp::decode(&mut resp, version).expect("decodable response"))
}

/// Sends `req` as `api` v`version` (correlation id 7) without reading the response.
pub async fn send_request<Req: Encodable>(s: &mut TcpStream, api: ApiKey, version: i16, req: &Req) {
    let mut body = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(7)
        .with_client_id(Some(StrBytes::from_static_str("raw-test")))
        .encode(&mut body, api.request_header_version(version))
        .unwrap();
    req.encode(&mut body, version).unwrap();
    send_frame(s, &body).await;
}

/// SaslHandshake v`version` for `mechanism` (panics if the connection closed first).
pub async fn sasl_handshake(
    s: &mut TcpStream,
    version: i16,
    mechanism: &'static str,
) -> kafka_protocol::messages::SaslHandshakeResponse {
    let req = kafka_protocol::messages::SaslHandshakeRequest::default()
        .with_mechanism(StrBytes::from_static_str(mechanism));
    request(s, ApiKey::SaslHandshake, version, &req)
        .await
        .expect("SaslHandshake answered")
}

/// SaslAuthenticate v2 with `token`; `None` if the connection was closed.
pub async fn sasl_authenticate(
    s: &mut TcpStream,
    token: &[u8],
) -> Option<kafka_protocol::messages::SaslAuthenticateResponse> {
    let req = kafka_protocol::messages::SaslAuthenticateRequest::default()
        .with_auth_bytes(Bytes::copy_from_slice(token));
    request(s, ApiKey::SaslAuthenticate, 2, &req).await
}

/// Metadata v12 of every topic; `None` if the connection was closed.
pub async fn metadata(s: &mut TcpStream) -> Option<kafka_protocol::messages::MetadataResponse> {
    let req = kafka_protocol::messages::MetadataRequest::default();
    request(s, ApiKey::Metadata, 12, &req).await
}

/// One uncompressed v2 batch holding `values` with timestamps `ts0, ts0+1, ...`.
///
/// kafka-protocol's encoder starts a new batch wherever `offset - sequence` changes, so the records carry
/// sequences `-1, 0, 1, ...`: one batch whose base sequence is -1, as a producer without idempotence writes it
/// (Kafka refuses a Produce v3+ partition with more than one batch: INVALID_RECORD).
pub fn batch_at(values: &[&[u8]], ts0: i64) -> Bytes {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: ts0 + i as i64,
            key: None,
            value: Some(Bytes::copy_from_slice(v)),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &opts).unwrap();
    buf.freeze()
}

/// One v2 batch, `codec` compressed: record `i` has value `v{i}`, timestamp `timestamps[i]` and key `k{i}` when
/// `keys[i]` (one batch: sequences `-1, 0, 1, ...` as in [`batch_at`]).
pub fn keyed_batch(keys: &[bool], timestamps: &[i64], codec: Compression) -> Bytes {
    let records: Vec<Record> = keys
        .iter()
        .zip(timestamps)
        .enumerate()
        .map(|(i, (k, ts))| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: *ts,
            key: k.then(|| Bytes::from(format!("k{i}"))),
            value: Some(Bytes::from(format!("v{i}"))),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: codec,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &opts).expect("encode");
    buf.freeze()
}

/// A CreateTopics request for `topic` (one partition, replication factor 1) with `configs`.
pub fn create_topic_request(
    topic: &str,
    configs: &[(&str, &str)],
) -> kafka_protocol::messages::CreateTopicsRequest {
    use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
    use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
    let str = |v: &str| StrBytes::from_string(v.to_string());
    CreateTopicsRequest::default()
        .with_timeout_ms(5000)
        .with_topics(vec![CreatableTopic::default()
            .with_name(TopicName(str(topic)))
            .with_num_partitions(1)
            .with_replication_factor(1)
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        CreatableTopicConfig::default()
                            .with_name(str(k))
                            .with_value(Some(str(v)))
                    })
                    .collect(),
            )])
}

/// Creates `topic` (one partition) with `configs` through CreateTopics v7, asserting it was created.
pub async fn create_topic_with(s: &mut TcpStream, topic: &str, configs: &[(&str, &str)]) {
    use kafka_protocol::messages::CreateTopicsResponse;
    let req = create_topic_request(topic, configs);
    let resp: CreateTopicsResponse = request(s, ApiKey::CreateTopics, 7, &req)
        .await
        .expect("CreateTopics answered");
    assert_eq!(
        resp.topics[0].error_code, 0,
        "create {topic}: {:?}",
        resp.topics[0]
    );
}

/// Creates `names` with `partitions` each (replication factor 1) in one CreateTopics request, asserting every one
/// was created.
pub async fn create_topics(s: &mut TcpStream, names: &[&str], partitions: i32) {
    use kafka_protocol::messages::create_topics_request::CreatableTopic;
    use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, TopicName};
    let req = CreateTopicsRequest::default()
        .with_timeout_ms(5000)
        .with_topics(
            names
                .iter()
                .map(|n| {
                    CreatableTopic::default()
                        .with_name(TopicName(StrBytes::from_string(n.to_string())))
                        .with_num_partitions(partitions)
                        .with_replication_factor(1)
                })
                .collect(),
        );
    let created: CreateTopicsResponse = request(s, ApiKey::CreateTopics, 5, &req)
        .await
        .expect("CreateTopics answered");
    assert!(
        created.topics.iter().all(|t| t.error_code == 0),
        "{created:?}"
    );
}

/// `batch_at` with a fixed base timestamp.
pub fn batch(values: &[&[u8]]) -> Bytes {
    batch_at(values, 1_700_000_000_000)
}

/// An idempotent batch: producer id/epoch and base sequence `seq`.
pub fn idempotent_batch(values: &[&[u8]], pid: i64, epoch: i16, seq: i32) -> Bytes {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: pid,
            producer_epoch: epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: seq + i as i32,
            timestamp: 1_700_000_000_000,
            key: None,
            value: Some(Bytes::copy_from_slice(v)),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &opts).unwrap();
    buf.freeze()
}
