//! Kafka 3.9's oldest versions and message formats v0/v1 (removed from Kafka 4.0 by KIP-896, still sent by older
//! tools): raw Produce v0-2 / Fetch v0-3 / ListOffsets v0 / DescribeConfigs v0 written byte by byte from Kafka's
//! protocol definitions (golden request and response layouts), magic v0/v1 message sets up-converted to v2 on
//! append, v2 batches down-converted for Fetch v0-3 (`message.downconversion.enable=false` answers
//! UNSUPPORTED_VERSION = 35, as Kafka 3.x), and real clients both ways: librdkafka forced to an old broker
//! (`api.version.request=false`, `broker.version.fallback`) produces v0/v1 messages that a current consumer reads,
//! and reads what a current producer wrote.

use crate::common;

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use common::raw::{batch, connect, read_frame, request, send_frame};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::consumer::Consumer;
use rdkafka::producer::FutureRecord;
use strata_storage::record::legacy::{write_message, write_wrapper};
use strata_storage::record::Compression;
use strata_storage::RecordBatch;
use tokio::net::TcpStream;

/// Request header v1 (every version here is non-flexible): api key, version, correlation id, client id.
fn header(api: i16, version: i16, correlation: i32) -> BytesMut {
    let mut b = BytesMut::new();
    b.put_i16(api);
    b.put_i16(version);
    b.put_i32(correlation);
    put_str(&mut b, "old-tool");
    b
}

fn put_str(b: &mut BytesMut, s: &str) {
    b.put_i16(s.len() as i16);
    b.put_slice(s.as_bytes());
}

fn get_str(b: &mut Bytes) -> String {
    let n = b.get_i16();
    if n < 0 {
        return "<null>".into();
    }
    String::from_utf8(b.split_to(n as usize).to_vec()).unwrap()
}

/// Sends a raw request and returns the response body after checking the v0 response header.
async fn call(s: &mut TcpStream, req: BytesMut, correlation: i32) -> Bytes {
    send_frame(s, &req).await;
    let mut r = read_frame(s).await.expect("answered, not closed");
    assert_eq!(r.get_i32(), correlation);
    r
}

/// A v0/v1 message set of `values` (uncompressed), timestamps `ts0 + i`.
fn message_set(magic: i8, values: &[&[u8]], ts0: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        write_message(
            &mut out,
            magic,
            i as i64,
            false,
            ts0 + i as i64,
            Some(b"key"),
            Some(v),
        );
    }
    out
}

/// Produce v0-2 body: acks, timeout, [topic, [partition, message_set]].
fn produce_body(version: i16, topic: &str, set: &[u8]) -> BytesMut {
    let mut b = header(0, version, 41);
    b.put_i16(-1); // acks
    b.put_i32(5000); // timeout_ms
    b.put_i32(1);
    put_str(&mut b, topic);
    b.put_i32(1);
    b.put_i32(0); // partition
    b.put_i32(set.len() as i32);
    b.put_slice(set);
    b
}

/// Fetch v0-3 body for partition 0 of `topic` from `offset`.
fn fetch_body(version: i16, topic: &str, offset: i64) -> BytesMut {
    let mut b = header(1, version, 42);
    b.put_i32(-1); // replica_id
    b.put_i32(0); // max_wait_ms
    b.put_i32(0); // min_bytes
    if version >= 3 {
        b.put_i32(1 << 20); // max_bytes
    }
    b.put_i32(1);
    put_str(&mut b, topic);
    b.put_i32(1);
    b.put_i32(0);
    b.put_i64(offset);
    b.put_i32(1 << 20);
    b
}

/// One message of a fetched v0/v1 set: (offset, magic, attributes, timestamp, key, value).
type Msg = (i64, i8, u8, i64, Option<Vec<u8>>, Option<Vec<u8>>);

fn parse_set(mut set: Bytes) -> Vec<Msg> {
    let mut out = Vec::new();
    while set.has_remaining() {
        let offset = set.get_i64();
        let size = set.get_i32() as usize;
        let mut m = set.split_to(size);
        let crc = m.get_u32();
        assert_eq!(crc, crc32fast::hash(&m), "message CRC-32");
        let magic = m.get_i8();
        let attrs = m.get_u8();
        let ts = if magic == 1 { m.get_i64() } else { -1 };
        let mut bytes = || {
            let n = m.get_i32();
            (n >= 0).then(|| m.split_to(n as usize).to_vec())
        };
        let key = bytes();
        let value = bytes();
        out.push((offset, magic, attrs, ts, key, value));
    }
    out
}

/// Fetch v0-3 response: (error_code, high_watermark, messages) of the one partition.
fn parse_fetch(version: i16, mut r: Bytes, topic: &str) -> (i16, i64, Vec<Msg>) {
    if version >= 1 {
        assert_eq!(r.get_i32(), 0, "throttle_time_ms");
    }
    assert_eq!(r.get_i32(), 1);
    assert_eq!(get_str(&mut r), topic);
    assert_eq!(r.get_i32(), 1);
    assert_eq!(r.get_i32(), 0, "partition");
    let code = r.get_i16();
    let hw = r.get_i64();
    let n = r.get_i32() as usize;
    let set = r.split_to(n);
    assert!(!r.has_remaining(), "nothing after the records");
    (
        code,
        hw,
        if code == 0 {
            parse_set(set)
        } else {
            Vec::new()
        },
    )
}

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

/// The stored v2 batches of partition 0, read with a current Fetch (v12).
async fn stored_batches(s: &mut TcpStream, topic: &str) -> Vec<RecordBatch> {
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name(topic))
            .with_partitions(vec![
                FetchPartition::default().with_partition_max_bytes(1 << 20)
            ])]);
    let r: FetchResponse = request(s, ApiKey::Fetch, 12, &req).await.unwrap();
    let recs = r.responses[0].partitions[0].records.clone().unwrap();
    RecordBatch::iter(&recs).map(|b| b.unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_v0_to_v2_up_converts_and_fetch_v0_to_v3_down_converts() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "old", 1).await;
    let mut s = connect(addr).await;

    // Produce v0 with magic 0: response [name, [partition, error_code, base_offset]] — golden bytes.
    let r = call(
        &mut s,
        produce_body(0, "old", &message_set(0, &[b"a", b"b"], 0)),
        41,
    )
    .await;
    let mut golden = BytesMut::new();
    golden.put_i32(1);
    put_str(&mut golden, "old");
    golden.put_i32(1);
    golden.put_i32(0);
    golden.put_i16(0);
    golden.put_i64(0);
    assert_eq!(r, golden.freeze());

    // Produce v1 (magic 0) adds throttle_time_ms; v2 (magic 1, gzip wrapper) adds log_append_time_ms.
    let r = call(
        &mut s,
        produce_body(1, "old", &message_set(0, &[b"c"], 0)),
        41,
    )
    .await;
    let mut golden = BytesMut::new();
    golden.put_i32(1);
    put_str(&mut golden, "old");
    golden.put_i32(1);
    golden.put_i32(0);
    golden.put_i16(0);
    golden.put_i64(2);
    golden.put_i32(0); // throttle_time_ms
    assert_eq!(r, golden.freeze());
    let mut wrapped = Vec::new();
    write_wrapper(
        &mut wrapped,
        1,
        Compression::Gzip,
        1,
        1_700_000_000_101,
        &message_set(1, &[b"d", b"e"], 1_700_000_000_100),
    )
    .unwrap();
    let mut r = call(&mut s, produce_body(2, "old", &wrapped), 41).await;
    r.advance(4 + 2 + 3 + 4 + 4);
    assert_eq!(
        (r.get_i16(), r.get_i64(), r.get_i64(), r.get_i32()),
        (0, 3, -1, 0)
    );

    // Stored as v2: offsets 0..5, v0 messages without timestamps, the gzip wrapper's batch kept in gzip
    // (compression.type=producer keeps the old producer's codec, as Kafka).
    let batches = stored_batches(&mut s, "old").await;
    assert_eq!(
        batches
            .iter()
            .map(|b| (b.base_offset(), b.last_offset()))
            .collect::<Vec<_>>(),
        vec![(0, 1), (2, 2), (3, 4)]
    );
    assert_eq!(
        batches.iter().map(|b| b.compression()).collect::<Vec<_>>(),
        vec![Compression::None, Compression::None, Compression::Gzip]
    );
    assert_eq!(batches[0].max_timestamp(), -1);
    assert_eq!(batches[2].max_timestamp(), 1_700_000_000_101);

    // A v2 batch from a current producer, then every old Fetch version down-converts all of it.
    let produce = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name("old"))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(batch(&[b"f"])))])]);
    let pr: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &produce).await.unwrap();
    assert_eq!(pr.responses[0].partition_responses[0].base_offset, 5);
    for version in 0..=3 {
        let (code, hw, msgs) = parse_fetch(
            version,
            call(&mut s, fetch_body(version, "old", 0), 42).await,
            "old",
        );
        assert_eq!((code, hw), (0, 6), "v{version}");
        let magic = if version < 2 { 0 } else { 1 };
        let got: Vec<(i64, i8, i64, Option<Vec<u8>>)> =
            msgs.iter().map(|m| (m.0, m.1, m.3, m.5.clone())).collect();
        let ts = |t: i64| if magic == 0 { -1 } else { t };
        assert_eq!(
            got,
            vec![
                (0, magic, -1, Some(b"a".to_vec())),
                (1, magic, -1, Some(b"b".to_vec())),
                (2, magic, -1, Some(b"c".to_vec())),
                (3, magic, ts(1_700_000_000_100), Some(b"d".to_vec())),
                (4, magic, ts(1_700_000_000_101), Some(b"e".to_vec())),
                (5, magic, ts(1_700_000_000_000), Some(b"f".to_vec())),
            ],
            "v{version}"
        );
        // From the middle of a batch: Kafka returns whole batches, so offsets below the fetch offset may come too.
        let (_, _, from4) = parse_fetch(
            version,
            call(&mut s, fetch_body(version, "old", 4), 42).await,
            "old",
        );
        assert!(from4.iter().any(|m| m.0 == 4) && from4.iter().all(|m| m.0 >= 3));
    }

    // Produce v3+ carries only magic 2: a v1 set there is INVALID_RECORD (87), as Kafka refuses it.
    let bad = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name("old"))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(Bytes::from(message_set(1, &[b"x"], 1))))])]);
    let pr: ProduceResponse = request(&mut s, ApiKey::Produce, 3, &bad).await.unwrap();
    assert_eq!(pr.responses[0].partition_responses[0].error_code, 87);
    // A v0 message with a bad CRC is CORRUPT_MESSAGE (2) and writes nothing.
    let mut corrupt = message_set(0, &[b"x"], 0);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    let mut r = call(&mut s, produce_body(0, "old", &corrupt), 41).await;
    r.advance(4 + 2 + 3 + 4 + 4);
    assert_eq!(r.get_i16(), 2);
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("old", 0)
            .unwrap()
            .log_end_offset(),
        6
    );
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downconversion_disabled_answers_unsupported_version_and_log_append_time_stamps_old_messages(
) {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let admin = common::admin(&addr.to_string());
    let topics = [
        rdkafka::admin::NewTopic::new("nodown", 1, rdkafka::admin::TopicReplication::Fixed(1))
            .set("message.downconversion.enable", "false")
            .set("message.format.version", "0.10.2"),
        rdkafka::admin::NewTopic::new("stamped", 1, rdkafka::admin::TopicReplication::Fixed(1))
            .set("message.timestamp.type", "LogAppendTime"),
    ];
    let res = admin
        .create_topics(&topics, &rdkafka::admin::AdminOptions::new())
        .await
        .unwrap();
    assert!(res.iter().all(|r| r.is_ok()), "{res:?}");
    let mut s = connect(addr).await;
    for topic in ["nodown", "stamped"] {
        let r = call(
            &mut s,
            produce_body(2, topic, &message_set(1, &[b"a"], 5)),
            41,
        )
        .await;
        assert_eq!(
            &r[r.len() - 4 - 8 - 8 - 2..r.len() - 4 - 8 - 8],
            &[0, 0],
            "{topic}"
        );
    }
    let (code, _, _) = parse_fetch(
        3,
        call(&mut s, fetch_body(3, "nodown", 0), 42).await,
        "nodown",
    );
    assert_eq!(code, 35, "UNSUPPORTED_VERSION");
    assert_eq!(
        stored_batches(&mut s, "nodown").await.len(),
        1,
        "a current fetch still reads it"
    );

    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 60_000;
    let (code, _, msgs) = parse_fetch(
        2,
        call(&mut s, fetch_body(2, "stamped", 0), 42).await,
        "stamped",
    );
    assert_eq!(code, 0);
    assert_eq!(msgs[0].2 & 0x08, 0x08, "LogAppendTime attribute");
    assert!(
        msgs[0].3 > before,
        "the broker's append time, not the producer's 5"
    );
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_v0_and_describe_configs_v0_answer_in_their_old_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "burrow", 1).await;
    let mut s = connect(addr).await;
    call(
        &mut s,
        produce_body(0, "burrow", &message_set(0, &[b"a", b"b", b"c"], 0)),
        41,
    )
    .await;

    // ListOffsets v0 (Burrow): replica_id, [topic, [partition, timestamp, max_num_offsets]].
    for (ts, max, want) in [(-1i64, 1i32, vec![3i64]), (-2, 1, vec![0]), (-1, 0, vec![])] {
        let mut b = header(2, 0, 43);
        b.put_i32(-1);
        b.put_i32(1);
        put_str(&mut b, "burrow");
        b.put_i32(1);
        b.put_i32(0);
        b.put_i64(ts);
        b.put_i32(max);
        let r = call(&mut s, b, 43).await;
        let mut golden = BytesMut::new();
        golden.put_i32(1);
        put_str(&mut golden, "burrow");
        golden.put_i32(1);
        golden.put_i32(0);
        golden.put_i16(0);
        golden.put_i32(want.len() as i32);
        for o in want {
            golden.put_i64(o);
        }
        assert_eq!(r, golden.freeze(), "timestamp {ts}, max {max}");
    }

    // DescribeConfigs v0 (older Sarama): [type, name, config_names]; answers is_default instead of a source.
    let admin = common::admin(&addr.to_string());
    let cfg = rdkafka::admin::AlterConfig::new(rdkafka::admin::ResourceSpecifier::Topic("burrow"))
        .set("retention.ms", "1000");
    admin
        .alter_configs(&[cfg], &rdkafka::admin::AdminOptions::new())
        .await
        .unwrap();
    let mut b = header(32, 0, 44);
    b.put_i32(1);
    b.put_i8(2); // TOPIC
    put_str(&mut b, "burrow");
    b.put_i32(2);
    put_str(&mut b, "retention.ms");
    put_str(&mut b, "segment.bytes");
    let mut r = call(&mut s, b, 44).await;
    assert_eq!(r.get_i32(), 0, "throttle");
    assert_eq!(r.get_i32(), 1);
    assert_eq!(
        (r.get_i16(), get_str(&mut r), r.get_i8(), get_str(&mut r)),
        (0, String::new(), 2, "burrow".into())
    );
    assert_eq!(r.get_i32(), 2);
    let mut entries = Vec::new();
    for _ in 0..2 {
        entries.push((
            get_str(&mut r),
            get_str(&mut r),
            r.get_i8(),
            r.get_i8(),
            r.get_i8(),
        ));
    }
    assert!(!r.has_remaining());
    assert_eq!(
        entries,
        vec![
            ("retention.ms".into(), "1000".into(), 0, 0, 0),
            ("segment.bytes".into(), "1073741824".into(), 0, 1, 0)
        ]
    );
    broker.shutdown().await.unwrap();
}

/// librdkafka speaking to "a 0.9 / 0.10 broker": Produce v1 with magic 0 / v2 with magic 1, Fetch v1 / v2,
/// ListOffsets v0.
fn old_client(bootstrap: &str, fallback: &str) -> rdkafka::ClientConfig {
    let mut c = common::client_config(bootstrap);
    c.set("api.version.request", "false")
        .set("broker.version.fallback", fallback);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_clients_and_new_clients_read_each_others_records() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let bootstrap = addr.to_string();
    common::create_topic(&bootstrap, "mixed", 1).await;

    for (fallback, codec) in [("0.9.0", "none"), ("0.10.0", "gzip"), ("0.10.0", "snappy")] {
        let p: rdkafka::producer::FutureProducer = old_client(&bootstrap, fallback)
            .set("acks", "all")
            .set("compression.codec", codec)
            .set("message.timeout.ms", "20000")
            .create()
            .unwrap();
        for i in 0..3 {
            let v = format!("old-{fallback}-{codec}-{i}");
            p.send(
                FutureRecord::to("mixed").key("k").payload(&v),
                Duration::from_secs(20),
            )
            .await
            .expect("old produce");
        }
    }
    let new = common::producer(&bootstrap, &[("compression.type", "lz4")]);
    for i in 0..3 {
        let v = format!("new-{i}");
        new.send(
            FutureRecord::to("mixed").key("k").payload(&v),
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    }
    let want: Vec<String> = [
        "old-0.9.0-none",
        "old-0.10.0-gzip",
        "old-0.10.0-snappy",
        "new",
    ]
    .iter()
    .flat_map(|p| {
        (0..3).map(move |i| {
            if *p == "new" {
                format!("new-{i}")
            } else {
                format!("{p}-{i}")
            }
        })
    })
    .collect();

    // A current consumer reads everything, offsets 0..12 in order.
    let c = common::consumer(&bootstrap, "g-new", &[]);
    common::assign_from_beginning(&c, "mixed", 1);
    let got = common::consume_n(&c, 12, Duration::from_secs(30));
    assert_eq!(
        got.iter().map(|m| m.1).collect::<Vec<_>>(),
        (0..12).collect::<Vec<_>>()
    );
    assert_eq!(
        got.iter()
            .map(|m| String::from_utf8(m.3.clone().unwrap()).unwrap())
            .collect::<Vec<_>>(),
        want
    );

    // Old consumers (Fetch v1 with magic 0, Fetch v2 with magic 1) read the same, the new producer's lz4 batch
    // down-converted.
    for fallback in ["0.9.0", "0.10.0"] {
        let c: rdkafka::consumer::BaseConsumer = old_client(&bootstrap, fallback)
            .set("group.id", format!("g-{fallback}"))
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        common::assign_from_beginning(&c, "mixed", 1);
        let got = common::consume_n(&c, 12, Duration::from_secs(30));
        assert_eq!(
            got.iter().map(|m| m.1).collect::<Vec<_>>(),
            (0..12).collect::<Vec<_>>(),
            "{fallback}"
        );
        let values: Vec<String> = got
            .iter()
            .map(|m| String::from_utf8(m.3.clone().unwrap()).unwrap())
            .collect();
        assert_eq!(values, want, "{fallback}");
        c.unassign().unwrap();
    }
    broker.shutdown().await.unwrap();
}

/// Cut-short and random bodies at every old version close (or answer) only that connection; the broker keeps
/// serving and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_and_random_old_version_bodies_never_hurt_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "old", 1).await;
    let full = produce_body(0, "old", &message_set(0, &[b"a"], 0));
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for (api, versions) in [(0i16, 0..=2i16), (1, 0..=3), (2, 0..=0), (32, 0..=0)] {
        for v in versions {
            for len in [0usize, 1, 5, 11, 17, 40] {
                let mut b = header(api, v, 9);
                if api == 0 && len == 40 {
                    // A real produce body cut inside its message set.
                    b = produce_body(v, "old", &message_set(0, &[b"a"], 0));
                    b.truncate(full.len() - 3);
                } else {
                    for _ in 0..len {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        b.put_u8(rng as u8);
                    }
                }
                let mut s = connect(addr).await;
                send_frame(&mut s, &b).await;
                let _ = read_frame(&mut s).await;
            }
        }
    }
    let mut s = connect(addr).await;
    let (code, hw, _) = parse_fetch(0, call(&mut s, fetch_body(0, "old", 0), 42).await, "old");
    assert_eq!((code, hw), (0, 0), "still serving, nothing written");
    broker.shutdown().await.unwrap();
}
