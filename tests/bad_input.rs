//! Bad input over raw TCP: garbage, truncated, oversized frames, unknown APIs and versions, invalid batches.
//! The broker answers with a Kafka error where Kafka does, otherwise closes the connection, keeps serving
//! everyone else, and writes nothing from a rejected request.

use crate::common;

use common::raw::{batch, connect, read_frame, request, send_frame};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::io::AsyncWriteExt;

async fn api_versions_ok(addr: std::net::SocketAddr) {
    let mut s = connect(addr).await;
    let resp: ApiVersionsResponse = request(
        &mut s,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .unwrap();
    assert_eq!(resp.error_code, 0);
}

fn produce_req(topic: &str, records: Bytes) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_string(topic.into())))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])])
}

fn partition_error(resp: &ProduceResponse) -> i16 {
    resp.responses[0].partition_responses[0].error_code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_oversized_and_truncated_frames_close_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();

    // Unknown API key 9999 with garbage behind it.
    let mut s = connect(addr).await;
    send_frame(&mut s, &[0x27, 0x0f, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 1, 2, 3]).await;
    assert!(
        read_frame(&mut s).await.is_none(),
        "unknown api key must close the connection"
    );

    // A length prefix beyond socket.request.max.bytes.
    let mut s = connect(addr).await;
    s.write_all(&0x7fff_fff0i32.to_be_bytes()).await.unwrap();
    assert!(
        read_frame(&mut s).await.is_none(),
        "oversized frame must close the connection"
    );

    // A negative length.
    let mut s = connect(addr).await;
    s.write_all(&(-5i32).to_be_bytes()).await.unwrap();
    assert!(read_frame(&mut s).await.is_none());

    // A valid header followed by a body that does not decode (Metadata v12 with a huge array count).
    let mut s = connect(addr).await;
    let mut body = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::Metadata as i16)
        .with_request_api_version(12)
        .with_correlation_id(1)
        .encode(&mut body, ApiKey::Metadata.request_header_version(12))
        .unwrap();
    body.put_slice(&[0xff, 0xff, 0xff, 0x7f]);
    send_frame(&mut s, &body).await;
    assert!(
        read_frame(&mut s).await.is_none(),
        "undecodable body must close the connection"
    );

    // A Fetch v4 whose topic array claims 2^31-1 elements in a few bytes (must not allocate for them).
    let mut s = connect(addr).await;
    let mut body = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::Fetch as i16)
        .with_request_api_version(4)
        .with_correlation_id(1)
        .encode(&mut body, ApiKey::Fetch.request_header_version(4))
        .unwrap();
    body.put_i32(-1); // replica id
    body.put_i32(100); // max wait
    body.put_i32(1); // min bytes
    body.put_i32(1 << 20); // max bytes
    body.put_i8(0); // isolation
    body.put_i32(i32::MAX); // topic count
    body.put_slice(&[0, 1, b'x']);
    send_frame(&mut s, &body).await;
    assert!(
        read_frame(&mut s).await.is_none(),
        "a lying array count must close the connection"
    );

    // A truncated frame: the peer goes away mid-frame.
    let mut s = connect(addr).await;
    s.write_all(&[0, 0, 0, 100, 0, 18, 0, 0]).await.unwrap();
    drop(s);

    // A known API at a version outside the table (DeleteTopics v42, above the newest) closes the connection.
    let mut s = connect(addr).await;
    let mut body = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::DeleteTopics as i16)
        .with_request_api_version(42)
        .with_correlation_id(2)
        .encode(&mut body, 1)
        .unwrap();
    body.put_slice(&[0, 0, 0, 0, 0, 0, 0x13, 0x88]); // empty topic array, timeout
    send_frame(&mut s, &body).await;
    assert!(
        read_frame(&mut s).await.is_none(),
        "unsupported version must close the connection"
    );

    // Everyone else is still served.
    api_versions_ok(addr).await;
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_newer_than_supported_gets_a_v0_answer_with_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;
    let mut body = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::ApiVersions as i16)
        .with_request_api_version(99)
        .with_correlation_id(3)
        .with_client_id(Some(StrBytes::from_static_str("future-client")))
        .encode(&mut body, 2)
        .unwrap();
    body.put_slice(&[0, 0, 0]); // whatever a v99 body holds
    send_frame(&mut s, &body).await;
    let mut resp = read_frame(&mut s).await.expect("answered");
    assert_eq!(resp.get_i32(), 3);
    let v = ApiVersionsResponse::decode(&mut resp, 0).unwrap();
    assert_eq!(v.error_code, 35, "UNSUPPORTED_VERSION");
    let produce = v
        .api_keys
        .iter()
        .find(|k| k.api_key == 0)
        .expect("Produce listed");
    assert_eq!((produce.min_version, produce.max_version), (0, 13));
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_batches_get_kafka_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("message.max.bytes", "2000")]).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "strict", 1).await;
    let log = broker.broker().topics().log("strict", 0).unwrap();
    let mut s = connect(addr).await;

    // Bad CRC: flip a byte inside the CRC-covered region.
    let mut bad = BytesMut::from(&batch(&[b"hello", b"world"])[..]);
    let last = bad.len() - 1;
    bad[last] ^= 0xff;
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("strict", bad.freeze()),
    )
    .await
    .unwrap();
    assert_eq!(partition_error(&r), 2, "CORRUPT_MESSAGE");

    // Truncated batch.
    let good = batch(&[b"hello"]);
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("strict", good.slice(..good.len() - 3)),
    )
    .await
    .unwrap();
    assert!(
        matches!(partition_error(&r), 2 | 87),
        "CORRUPT_MESSAGE or INVALID_RECORD, got {}",
        partition_error(&r)
    );

    // Larger than message.max.bytes.
    let big = vec![7u8; 5000];
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("strict", batch(&[&big])),
    )
    .await
    .unwrap();
    assert_eq!(partition_error(&r), 10, "MESSAGE_TOO_LARGE");

    // Unknown topic, and the internal offsets topic.
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("nope", batch(&[b"x"])),
    )
    .await
    .unwrap();
    assert_eq!(partition_error(&r), 3, "UNKNOWN_TOPIC_OR_PARTITION");
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("__consumer_offsets", batch(&[b"x"])),
    )
    .await
    .unwrap();
    assert_eq!(partition_error(&r), 17, "INVALID_TOPIC_EXCEPTION");
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("__consumer_offsets", 0)
            .unwrap()
            .log_end_offset(),
        0
    );

    assert_eq!(
        log.log_end_offset(),
        0,
        "a rejected request wrote something"
    );

    // A good batch on the same connection still works.
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("strict", batch(&[b"ok"])),
    )
    .await
    .unwrap();
    assert_eq!(partition_error(&r), 0);
    assert_eq!(log.log_end_offset(), 1);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_alter_configs_rejects_unknown_keys_and_accepts_tiering_keys() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "cfg", 1).await;
    let mut s = connect(addr).await;
    let alter = |pairs: &[(&str, &str)]| {
        IncrementalAlterConfigsRequest::default().with_resources(vec![
            AlterConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name(StrBytes::from_static_str("cfg"))
                .with_configs(
                    pairs
                        .iter()
                        .map(|(k, v)| {
                            AlterableConfig::default()
                                .with_name(StrBytes::from_string(k.to_string()))
                                .with_config_operation(0)
                                .with_value(Some(StrBytes::from_string(v.to_string())))
                        })
                        .collect(),
                ),
        ])
    };
    let r: IncrementalAlterConfigsResponse = request(
        &mut s,
        ApiKey::IncrementalAlterConfigs,
        1,
        &alter(&[("retention.ms", "1000"), ("bogus.key", "1")]),
    )
    .await
    .unwrap();
    assert_eq!(r.responses[0].error_code, 40, "INVALID_CONFIG");
    assert!(
        broker
            .broker()
            .registry()
            .get("cfg")
            .unwrap()
            .configs
            .is_empty(),
        "rejected change was applied"
    );

    // This broker runs without tiered storage: tiering a topic is INVALID_CONFIG naming the broker switch,
    // as in Kafka; the other tiering keys are accepted and applied.
    let r: IncrementalAlterConfigsResponse = request(
        &mut s,
        ApiKey::IncrementalAlterConfigs,
        1,
        &alter(&[("remote.storage.enable", "true")]),
    )
    .await
    .unwrap();
    assert_eq!(r.responses[0].error_code, 40, "INVALID_CONFIG");
    let msg = r.responses[0].error_message.as_deref().unwrap_or_default();
    assert!(msg.contains("remote.log.storage.system.enable"), "{msg}");
    assert!(
        !broker
            .broker()
            .topics()
            .log("cfg", 0)
            .unwrap()
            .config()
            .remote_storage_enable
    );
    let tiering = [
        ("local.retention.ms", "60000"),
        ("local.retention.bytes", "1048576"),
        ("remote.log.copy.disable", "false"),
        ("remote.log.delete.on.disable", "true"),
    ];
    let r: IncrementalAlterConfigsResponse =
        request(&mut s, ApiKey::IncrementalAlterConfigs, 1, &alter(&tiering))
            .await
            .unwrap();
    assert_eq!(
        r.responses[0].error_code, 0,
        "{:?}",
        r.responses[0].error_message
    );
    let cfg = broker.broker().topics().log("cfg", 0).unwrap().config();
    assert!(!cfg.remote_storage_enable);
    assert!(cfg.remote_log_delete_on_disable);
    assert_eq!(cfg.local_retention_ms, 60000);
    assert_eq!(cfg.local_retention_bytes, 1_048_576);

    // Legacy AlterConfigs with an unknown key: INVALID_CONFIG too.
    let legacy = AlterConfigsRequest::default().with_resources(vec![
        alter_configs_request::AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(StrBytes::from_static_str("cfg"))
            .with_configs(vec![alter_configs_request::AlterableConfig::default()
                .with_name(StrBytes::from_static_str("nope"))
                .with_value(Some(StrBytes::from_static_str("1")))]),
    ]);
    let r: AlterConfigsResponse = request(&mut s, ApiKey::AlterConfigs, 2, &legacy)
        .await
        .unwrap();
    assert_eq!(r.responses[0].error_code, 40);
    broker.shutdown().await.unwrap();
}

/// max.connections bounds the open connections; a new client is not kept waiting behind an idle one: the
/// longest-idle connection is closed to make room (tests/hardening_connections.rs covers busy connections).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_connections_bounds_concurrent_clients() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("max.connections", "1")]).await;
    let addr = broker.local_addr();
    let mut first = connect(addr).await;
    let r: ApiVersionsResponse = request(
        &mut first,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .unwrap();
    assert_eq!(r.error_code, 0);
    let mut second = connect(addr).await;
    let r: ApiVersionsResponse = request(
        &mut second,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .expect("the second client is served");
    assert_eq!(r.error_code, 0);
    assert!(
        read_frame(&mut first).await.is_none(),
        "the idle first connection was closed to stay within max.connections=1"
    );
    broker.shutdown().await.unwrap();
}

/// Sends a Produce without reading a response (acks=0 gets none).
async fn send_produce(s: &mut tokio::net::TcpStream, req: &ProduceRequest, correlation_id: i32) {
    let mut body = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::Produce as i16)
        .with_request_api_version(9)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str("raw-test")))
        .encode(&mut body, ApiKey::Produce.request_header_version(9))
        .unwrap();
    req.encode(&mut body, 9).unwrap();
    send_frame(s, &body).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_zero_produce_errors_close_the_connection_and_successes_keep_it_silent() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "a0", 1).await;

    // A good acks=0 produce: no response, the connection stays usable (the next frame read is the
    // ApiVersions answer).
    let mut s = connect(addr).await;
    send_produce(&mut s, &produce_req("a0", batch(&[b"x"])).with_acks(0), 1).await;
    let r: ApiVersionsResponse = request(
        &mut s,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .expect("connection kept after a good acks=0 produce");
    assert_eq!(r.error_code, 0);
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("a0", 0)
            .unwrap()
            .log_end_offset(),
        1
    );

    // A failing acks=0 produce (unknown topic; a corrupt batch) closes the connection, as Kafka does.
    for req in [
        produce_req("no-such-topic", batch(&[b"x"])).with_acks(0),
        produce_req("a0", Bytes::from_static(&[0u8; 70])).with_acks(0),
    ] {
        let mut s = connect(addr).await;
        send_produce(&mut s, &req, 2).await;
        assert!(
            read_frame(&mut s).await.is_none(),
            "a failed acks=0 produce must close the connection"
        );
    }
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("a0", 0)
            .unwrap()
            .log_end_offset(),
        1
    );
    api_versions_ok(addr).await;
    broker.shutdown().await.unwrap();
}

/// A topic whose name equals an existing one's once '.' and '_' are treated alike is refused with
/// INVALID_TOPIC_EXCEPTION naming the existing topic (Kafka's rule), by CreateTopics and by auto-create through
/// Metadata; the existing topic and its data are untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_names_colliding_on_dot_and_underscore_are_refused() {
    use kafka_protocol::messages::create_topics_request::CreatableTopic;
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;
    let create = |name: &str, validate_only: bool| {
        CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_validate_only(validate_only)
            .with_topics(vec![CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(name.into())))
                .with_num_partitions(1)
                .with_replication_factor(1)])
    };
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create("a.b", false))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 0);
    let r: ProduceResponse = request(
        &mut s,
        ApiKey::Produce,
        9,
        &produce_req("a.b", batch(&[b"kept"])),
    )
    .await
    .unwrap();
    assert_eq!(partition_error(&r), 0);

    for validate_only in [true, false] {
        let r: CreateTopicsResponse = request(
            &mut s,
            ApiKey::CreateTopics,
            7,
            &create("a_b", validate_only),
        )
        .await
        .unwrap();
        assert_eq!(r.topics[0].error_code, 17, "INVALID_TOPIC_EXCEPTION");
        let msg = r.topics[0].error_message.as_deref().unwrap_or_default();
        assert!(msg.contains("a.b"), "{msg}");
    }
    // Auto-create through Metadata is refused the same way.
    let md = MetadataRequest::default()
        .with_topics(Some(vec![MetadataRequestTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str("a_b"))))]))
        .with_allow_auto_topic_creation(true);
    let r: MetadataResponse = request(&mut s, ApiKey::Metadata, 9, &md).await.unwrap();
    assert_ne!(r.topics[0].error_code, 0, "a_b was auto-created");
    assert!(broker.broker().registry().get("a_b").is_none());
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("a.b", 0)
            .unwrap()
            .log_end_offset(),
        1
    );
}

/// A client that pipelines many large fetches and does not read: the broker stops reading its requests once a
/// few MiB of responses wait (instead of holding 32 whole responses per connection), keeps serving others, and
/// when the client reads again every response arrives, in request order — including responses larger than the
/// per-connection queue bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_fetches_of_a_client_that_stops_reading_are_answered_in_order_later() {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "wide", 1).await;
    let mut s = connect(addr).await;
    let value = vec![7u8; 900 * 1024];
    for _ in 0..7 {
        let r: ProduceResponse = request(
            &mut s,
            ApiKey::Produce,
            9,
            &produce_req("wide", batch(&[&value])),
        )
        .await
        .unwrap();
        assert_eq!(partition_error(&r), 0);
    }

    // 40 fetches, each answered with all 7 batches (~6.2 MiB, more than the queue bound), sent without reading.
    let fetch = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_max_bytes(16 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(StrBytes::from_static_str("wide")))
            .with_partitions(vec![FetchPartition::default()
                .with_fetch_offset(0)
                .with_partition_max_bytes(16 << 20)])]);
    let mut slow = connect(addr).await;
    for id in 0..40 {
        let mut body = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(ApiKey::Fetch as i16)
            .with_request_api_version(11)
            .with_correlation_id(1000 + id)
            .with_client_id(Some(StrBytes::from_static_str("slow")))
            .encode(&mut body, ApiKey::Fetch.request_header_version(11))
            .unwrap();
        fetch.encode(&mut body, 11).unwrap();
        send_frame(&mut slow, &body).await;
    }
    // Others are served meanwhile.
    api_versions_ok(addr).await;
    for id in 0..40 {
        let mut frame = read_frame(&mut slow).await.expect("response");
        let header =
            ResponseHeader::decode(&mut frame, ApiKey::Fetch.response_header_version(11)).unwrap();
        assert_eq!(header.correlation_id, 1000 + id, "responses out of order");
        let r = FetchResponse::decode(&mut frame, 11).unwrap();
        let p = &r.responses[0].partitions[0];
        assert_eq!(p.error_code, 0);
        assert!(
            p.records.as_ref().is_some_and(|b| b.len() > 6 * 900 * 1024),
            "short response {id}"
        );
    }
    broker.shutdown().await.unwrap();
}

/// `min.insync.replicas` (topic, broker default 1): a single broker is one in-sync replica, so an acks=all
/// produce to a topic asking for 2 gets NOT_ENOUGH_REPLICAS and writes nothing, acks=1 still appends, lowering it
/// lets acks=all through; 0 is INVALID_CONFIG.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_insync_replicas_above_one_refuses_acks_all() {
    use rdkafka::admin::{
        AdminOptions, AlterConfig, NewTopic, ResourceSpecifier, TopicReplication,
    };
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let admin = common::admin(&addr.to_string());
    let topic = NewTopic::new("isr", 1, TopicReplication::Fixed(1)).set("min.insync.replicas", "2");
    let res = admin
        .create_topics(&[topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    // Invalid: min.insync.replicas=0, and a codec Kafka does not know.
    for (key, value) in [("min.insync.replicas", "0"), ("compression.type", "brotli")] {
        let bad = NewTopic::new("isr0", 1, TopicReplication::Fixed(1)).set(key, value);
        let res = admin
            .create_topics(&[bad], &AdminOptions::new())
            .await
            .unwrap();
        assert!(
            matches!(
                res.as_slice(),
                [Err((_, rdkafka::types::RDKafkaErrorCode::InvalidConfig))]
            ),
            "{key}={value}: {res:?}"
        );
    }
    let fine =
        NewTopic::new("isr-p", 1, TopicReplication::Fixed(1)).set("compression.type", "producer");
    let res = admin
        .create_topics(&[fine], &AdminOptions::new())
        .await
        .unwrap();
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");

    let mut s = connect(addr).await;
    let all = produce_req("isr", batch(&[b"a"])).with_acks(-1);
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &all).await.unwrap();
    assert_eq!(partition_error(&r), 19, "NOT_ENOUGH_REPLICAS");
    let one = produce_req("isr", batch(&[b"b"]));
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &one).await.unwrap();
    assert_eq!(partition_error(&r), 0);
    assert_eq!(
        r.responses[0].partition_responses[0].base_offset, 0,
        "the refused batch wrote nothing"
    );

    let alter = AlterConfig::new(ResourceSpecifier::Topic("isr")).set("min.insync.replicas", "1");
    let res = admin
        .alter_configs(&[alter], &AdminOptions::new())
        .await
        .unwrap();
    assert!(matches!(res.as_slice(), [Ok(_)]), "{res:?}");
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &all).await.unwrap();
    assert_eq!(partition_error(&r), 0);
    assert_eq!(r.responses[0].partition_responses[0].base_offset, 1);
    drop(s);
    broker.shutdown().await.unwrap();
}
