//! Kafka 3.9's oldest versions of the group and admin APIs (removed from Kafka 4.0 by KIP-896, below the codec's
//! floor, answered by `handler::legacy`): OffsetCommit v0-1, OffsetFetch v0, CreateTopics v0-1, DeleteTopics v0,
//! OffsetForLeaderEpoch v0-1, DescribeLogDirs v0 — requests written byte by byte from Kafka's
//! `<Api>Request.json` at those versions, responses checked against the layouts of `<Api>Response.json`
//! (golden bytes where the answer is fixed). Older Sarama commits with OffsetCommit v1; Kafka 3.9 without
//! ZooKeeper answers OffsetCommit v0 / OffsetFetch v0 (ZooKeeper-stored offsets) UNSUPPORTED_VERSION.

use crate::common;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use common::raw::{batch, connect, read_frame, request, send_frame};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};
use kafka_protocol::records::RecordBatchDecoder;
use strata_broker::group::offsets::{decode_key, decode_value};
use tokio::net::TcpStream;

const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
const UNSUPPORTED_VERSION: i16 = 35;
const TOPIC_ALREADY_EXISTS: i16 = 36;
const INVALID_CONFIG: i16 = 40;

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

fn get_str(b: &mut Bytes) -> Option<String> {
    let n = b.get_i16();
    (n >= 0).then(|| String::from_utf8(b.split_to(n as usize).to_vec()).unwrap())
}

/// Sends a raw request and returns the response body after checking the v0 response header.
async fn call(s: &mut TcpStream, req: BytesMut, correlation: i32) -> Bytes {
    send_frame(s, &req).await;
    let mut r = read_frame(s).await.expect("answered, not closed");
    assert_eq!(r.get_i32(), correlation);
    r
}

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

/// Appends `n` records to partition 0 of `topic` with a current Produce.
async fn produce(s: &mut TcpStream, topic: &str, n: usize) {
    let values: Vec<Vec<u8>> = (0..n).map(|i| format!("v{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(topic))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(batch(&refs)))])]);
    let r: ProduceResponse = request(s, ApiKey::Produce, 9, &req).await.unwrap();
    assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
}

/// The golden `[name, [partition_index, error_code]]` answer of OffsetCommit v0-2.
fn commit_answer(topic: &str, parts: &[(i32, i16)]) -> Bytes {
    let mut g = BytesMut::new();
    g.put_i32(1);
    put_str(&mut g, topic);
    g.put_i32(parts.len() as i32);
    for (p, code) in parts {
        g.put_i32(*p);
        g.put_i16(*code);
    }
    g.freeze()
}

/// Every offset record of `group` stored in `__consumer_offsets`, read with a current Fetch.
async fn stored_offsets(
    s: &mut TcpStream,
    partition: i32,
    group: &str,
) -> Vec<strata_broker::group::offsets::OffsetEntry> {
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(name("__consumer_offsets"))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_partition_max_bytes(1 << 20)])]);
    let r: FetchResponse = request(s, ApiKey::Fetch, 12, &req).await.unwrap();
    let mut recs = r.responses[0].partitions[0].records.clone().unwrap();
    let batches = RecordBatchDecoder::decode_all(&mut recs).unwrap();
    batches
        .into_iter()
        .flat_map(|b| b.records)
        .filter(|r| {
            r.key
                .clone()
                .and_then(decode_key)
                .is_some_and(|(g, _, _)| g == group)
        })
        .filter_map(|r| r.value.and_then(decode_value))
        .collect()
}

/// OffsetCommit v1 (older Sarama): `group_id, generation_id, member_id, [name, [partition_index,
/// committed_offset, commit_timestamp, committed_metadata]]`, stored in `__consumer_offsets` with the commit
/// timestamp it gives (Kafka's `OffsetAndMetadata.fromRequest`; -1 = the broker's time) and read back with a
/// current OffsetFetch; an unknown partition is UNKNOWN_TOPIC_OR_PARTITION. OffsetCommit v0 and OffsetFetch v0
/// (ZooKeeper offsets) are UNSUPPORTED_VERSION on every partition, as Kafka 3.9 in KRaft mode answers them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_v1_is_stored_with_its_timestamp_and_v0_is_unsupported_as_kafka_3_9() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let addr = server.local_addr();
    common::create_topic(&addr.to_string(), "lag", 2).await;
    let mut s = connect(addr).await;

    let mut b = header(8, 1, 51);
    put_str(&mut b, "sarama-old");
    b.put_i32(-1); // generation_id: a simple (group-less) commit
    put_str(&mut b, "");
    b.put_i32(1);
    put_str(&mut b, "lag");
    b.put_i32(3);
    for (p, offset, ts) in [(0, 5i64, 1_234_567i64), (1, 9, -1), (7, 1, -1)] {
        b.put_i32(p);
        b.put_i64(offset);
        b.put_i64(ts);
        put_str(&mut b, "meta");
    }
    let before = strata_storage::time::now_ms();
    let r = call(&mut s, b, 51).await;
    assert_eq!(
        r,
        commit_answer("lag", &[(0, 0), (1, 0), (7, UNKNOWN_TOPIC_OR_PARTITION)])
    );

    let fetch = OffsetFetchRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("sarama-old")))
        .with_topics(Some(vec![
            offset_fetch_request::OffsetFetchRequestTopic::default()
                .with_name(name("lag"))
                .with_partition_indexes(vec![0, 1]),
        ]));
    let r: OffsetFetchResponse = request(&mut s, ApiKey::OffsetFetch, 1, &fetch)
        .await
        .unwrap();
    let got: Vec<(i32, i64, String)> = r.topics[0]
        .partitions
        .iter()
        .map(|p| {
            (
                p.partition_index,
                p.committed_offset,
                p.metadata.as_deref().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(got, vec![(0, 5, "meta".into()), (1, 9, "meta".into())]);

    let partition = server.broker().offsets_partition("sarama-old");
    let stored = stored_offsets(&mut s, partition, "sarama-old").await;
    let mut by_offset: Vec<(i64, i64)> = stored
        .iter()
        .map(|e| (e.offset, e.commit_timestamp))
        .collect();
    by_offset.sort();
    assert_eq!(by_offset.len(), 2, "{by_offset:?}");
    assert_eq!(
        by_offset[0],
        (5, 1_234_567),
        "v1's commit timestamp is kept"
    );
    assert!(
        by_offset[1].1 >= before,
        "-1 is the broker's time: {by_offset:?}"
    );

    // OffsetCommit v0: group_id, [name, [partition_index, committed_offset, committed_metadata]].
    let mut b = header(8, 0, 52);
    put_str(&mut b, "sarama-old");
    b.put_i32(1);
    put_str(&mut b, "lag");
    b.put_i32(1);
    b.put_i32(0);
    b.put_i64(77);
    b.put_i16(-1); // null metadata
    let r = call(&mut s, b, 52).await;
    assert_eq!(r, commit_answer("lag", &[(0, UNSUPPORTED_VERSION)]));

    // OffsetFetch v0: group_id, [name, [partition_indexes]].
    let mut b = header(9, 0, 53);
    put_str(&mut b, "sarama-old");
    b.put_i32(1);
    put_str(&mut b, "lag");
    b.put_i32(1);
    b.put_i32(0);
    let r = call(&mut s, b, 53).await;
    let mut g = BytesMut::new();
    g.put_i32(1);
    put_str(&mut g, "lag");
    g.put_i32(1);
    g.put_i32(0);
    g.put_i64(-1);
    put_str(&mut g, "");
    g.put_i16(UNSUPPORTED_VERSION);
    assert_eq!(r, g.freeze());
    // Nothing of v0 was stored: the v1 offset stands.
    let r: OffsetFetchResponse = request(&mut s, ApiKey::OffsetFetch, 1, &fetch)
        .await
        .unwrap();
    assert_eq!(r.topics[0].partitions[0].committed_offset, 5);
    server.shutdown().await.unwrap();
}

/// CreateTopics v0 body: `[name, num_partitions, replication_factor, [assignments], [configs]], timeout_ms`, then
/// `validate_only` from v1.
fn create_body(version: i16, topic: &str, partitions: i32, configs: &[(&str, &str)]) -> BytesMut {
    let mut b = header(19, version, 61);
    b.put_i32(1);
    put_str(&mut b, topic);
    b.put_i32(partitions);
    b.put_i16(1);
    b.put_i32(0); // no manual assignment
    b.put_i32(configs.len() as i32);
    for (k, v) in configs {
        put_str(&mut b, k);
        put_str(&mut b, v);
    }
    b.put_i32(5000);
    if version >= 1 {
        b.put_i8(0);
    }
    b
}

/// CreateTopics v0 answers `[name, error_code]`, v1 adds `error_message` (neither has a throttle time); DeleteTopics
/// v0 takes `[topic_names], timeout_ms` and answers `[name, error_code]`. The topics are really created (with
/// their configs) and deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_v0_v1_and_delete_topics_v0_answer_in_their_old_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;

    let r = call(
        &mut s,
        create_body(0, "old0", 3, &[("retention.ms", "1000")]),
        61,
    )
    .await;
    let mut g = BytesMut::new();
    g.put_i32(1);
    put_str(&mut g, "old0");
    g.put_i16(0);
    assert_eq!(r, g.freeze());
    let meta = server.broker().registry().get("old0").expect("created");
    assert_eq!(meta.partitions, 3);
    assert_eq!(
        meta.configs.get("retention.ms").map(String::as_str),
        Some("1000")
    );

    let r = call(&mut s, create_body(0, "old0", 1, &[]), 61).await;
    let mut g = BytesMut::new();
    g.put_i32(1);
    put_str(&mut g, "old0");
    g.put_i16(TOPIC_ALREADY_EXISTS);
    assert_eq!(r, g.freeze());

    let mut r = call(
        &mut s,
        create_body(1, "bad1", 1, &[("retention.ms", "soon")]),
        61,
    )
    .await;
    assert_eq!(r.get_i32(), 1);
    assert_eq!(get_str(&mut r).as_deref(), Some("bad1"));
    assert_eq!(r.get_i16(), INVALID_CONFIG);
    let message = get_str(&mut r).expect("v1 has an error message");
    assert!(message.contains("retention.ms"), "{message}");
    assert!(!r.has_remaining(), "nothing after v1's fields");
    assert!(server.broker().registry().get("bad1").is_none());

    let mut b = header(20, 0, 62);
    b.put_i32(2);
    put_str(&mut b, "old0");
    put_str(&mut b, "never");
    b.put_i32(5000);
    let r = call(&mut s, b, 62).await;
    let mut g = BytesMut::new();
    g.put_i32(2);
    put_str(&mut g, "old0");
    g.put_i16(0);
    put_str(&mut g, "never");
    g.put_i16(UNKNOWN_TOPIC_OR_PARTITION);
    assert_eq!(r, g.freeze());
    assert!(server.broker().registry().get("old0").is_none(), "deleted");
    server.shutdown().await.unwrap();
}

/// OffsetForLeaderEpoch v0-1: `[topic, [partition, leader_epoch]]`; v0 answers `[topic, [error_code, partition,
/// end_offset]]`, v1 adds the `leader_epoch` before the end offset. DescribeLogDirs v0 is v1's layout both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_for_leader_epoch_v0_v1_and_describe_log_dirs_v0_answer_in_their_old_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let addr = server.local_addr();
    common::create_topic(&addr.to_string(), "epochs", 1).await;
    let mut s = connect(addr).await;
    produce(&mut s, "epochs", 4).await;

    for version in [0i16, 1] {
        let mut b = header(23, version, 71);
        b.put_i32(1);
        put_str(&mut b, "epochs");
        b.put_i32(2);
        for p in [0, 5] {
            b.put_i32(p);
            b.put_i32(0); // leader_epoch asked for
        }
        let r = call(&mut s, b, 71).await;
        let mut g = BytesMut::new();
        g.put_i32(1);
        put_str(&mut g, "epochs");
        g.put_i32(2);
        for (p, code, epoch, end) in [
            (0, 0i16, 0i32, 4i64),
            (5, UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
        ] {
            g.put_i16(code);
            g.put_i32(p);
            if version >= 1 {
                g.put_i32(epoch);
            }
            g.put_i64(end);
        }
        assert_eq!(r, g.freeze(), "v{version}");
    }

    // DescribeLogDirs v0: topics (nullable: all), answered as v1.
    let mut b = header(35, 0, 72);
    b.put_i32(-1);
    let mut r = call(&mut s, b, 72).await;
    let resp = DescribeLogDirsResponse::decode(&mut r, 1).expect("v1's layout");
    assert!(!r.has_remaining());
    let topic = resp.results[0]
        .topics
        .iter()
        .find(|t| t.name.0.as_str() == "epochs")
        .expect("the topic's dir is described");
    assert!(topic.partitions[0].partition_size > 0);
    server.shutdown().await.unwrap();
}

/// Cut and random bodies at each new old version are refused (connection closed) without a panic, and the broker
/// keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_and_random_old_group_and_admin_bodies_never_hurt_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let addr = server.local_addr();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for (api, versions) in [
        (8i16, 0..=1i16),
        (9, 0..=0),
        (19, 0..=1),
        (20, 0..=0),
        (23, 0..=1),
        (35, 0..=0),
    ] {
        for v in versions {
            for len in [0usize, 1, 5, 11, 17, 40] {
                let mut b = header(api, v, 9);
                for _ in 0..len {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    b.put_u8(rng as u8);
                }
                let mut s = connect(addr).await;
                send_frame(&mut s, &b).await;
                let _ = read_frame(&mut s).await;
            }
        }
    }
    let mut s = connect(addr).await;
    let r: ApiVersionsResponse = request(
        &mut s,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .expect("still serving");
    assert_eq!(r.error_code, 0);
    server.shutdown().await.unwrap();
}
