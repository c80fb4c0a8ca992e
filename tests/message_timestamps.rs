//! Kafka's CreateTime timestamp bounds (KIP-937, `LogValidator.validateTimestamp`): on a topic with
//! `message.timestamp.type=CreateTime`, a produce whose batch holds a record timestamped more than
//! `message.timestamp.before.max.ms` before the broker's clock, or more than `message.timestamp.after.max.ms`
//! after it, is refused for that partition with INVALID_TIMESTAMP (32) and a message naming the timestamp; nothing
//! of it is appended. Every record counts, not only the batch header's timestamps. LogAppendTime topics are not
//! checked. The broker defaults are `log.message.timestamp.{before,after}.max.ms`; the deprecated
//! `message.timestamp.difference.max.ms` (Kafka 3.x) applies where those are left at their defaults.

use crate::common;

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use common::raw::{connect, create_topic_with, keyed_batch, request};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::Compression;
use tokio::net::TcpStream;

const HOUR: i64 = 3_600_000;
const INVALID_TIMESTAMP: i16 = 32;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

/// One keyless v2 batch with one record per timestamp, `codec` compressed.
fn batch_with(timestamps: &[i64], codec: Compression) -> Bytes {
    keyed_batch(&vec![false; timestamps.len()], timestamps, codec)
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// Produces `records` to partition 0 of `topic` (v11): (error code, error message then each record error as
/// ` | [index] message`, base offset). A refused batch answers Kafka's partition message (KIP-467) and names its
/// records.
async fn produce(conn: &mut TcpStream, topic: &str, records: Bytes) -> (i16, String, i64) {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(s(topic)))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    let resp: ProduceResponse = request(conn, ApiKey::Produce, 11, &req)
        .await
        .expect("Produce answered");
    let p = &resp.responses[0].partition_responses[0];
    let msg = p
        .error_message
        .as_ref()
        .map(|m| m.to_string())
        .unwrap_or_default();
    if p.error_code == INVALID_TIMESTAMP {
        assert_eq!(
            msg, "One or more records have been rejected due to invalid timestamp",
            "Kafka's message"
        );
        assert!(!p.record_errors.is_empty(), "records named: {p:?}");
    }
    let named: String = p
        .record_errors
        .iter()
        .map(|e| {
            format!(
                " | [{}] {}",
                e.batch_index,
                e.batch_index_error_message.as_deref().unwrap_or("")
            )
        })
        .collect();
    (p.error_code, msg + &named, p.base_offset)
}

/// A record an hour and more before the clock (`before.max.ms` = 1 h) or after it (`after.max.ms`, 1 h by
/// Kafka 4.0's default) is INVALID_TIMESTAMP naming it, also when it is not the batch's first or largest
/// timestamp and the batch is compressed; nothing is appended, so the next good batch gets offset 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_outside_the_before_or_after_bound_is_invalid_timestamp_and_nothing_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker(dir.path()).await;
    let mut conn = connect(h.local_addr()).await;
    create_topic_with(
        &mut conn,
        "ts",
        &[("message.timestamp.before.max.ms", "3600000")],
    )
    .await;
    let now = now_ms();
    let cases = [
        (
            "too old",
            vec![now - 2 * HOUR],
            Compression::None,
            now - 2 * HOUR,
        ),
        (
            "too new",
            vec![now + 2 * HOUR],
            Compression::None,
            now + 2 * HOUR,
        ),
        // The header's base timestamp is fine; a later record is too old (a smaller timestamp than the base).
        (
            "later record too old",
            vec![now, now - 3 * HOUR, now],
            Compression::None,
            now - 3 * HOUR,
        ),
        (
            "compressed, too new",
            vec![now, now + 3 * HOUR],
            Compression::Gzip,
            now + 3 * HOUR,
        ),
    ];
    for (what, timestamps, codec, bad) in cases {
        let (code, msg, _) = produce(&mut conn, "ts", batch_with(&timestamps, codec)).await;
        assert_eq!(code, INVALID_TIMESTAMP, "{what}: {msg}");
        assert!(
            msg.contains(&format!("Timestamp {bad} of message with offset"))
                && msg.contains("out of range"),
            "{what}: {msg}"
        );
    }
    // Within both bounds (a minute either way): appended at offset 0, so nothing was before.
    let (code, msg, base) = produce(
        &mut conn,
        "ts",
        batch_with(&[now - 60_000, now + 60_000], Compression::None),
    )
    .await;
    assert_eq!((code, base), (0, 0), "{msg}");
    assert_eq!(
        h.broker().topics().log("ts", 0).unwrap().log_end_offset(),
        2
    );
    h.shutdown().await.unwrap();
}

/// A LogAppendTime topic stamps batches with the broker's clock: the producer's timestamps are not checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_append_time_topics_take_any_producer_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker(dir.path()).await;
    let mut conn = connect(h.local_addr()).await;
    create_topic_with(
        &mut conn,
        "lat",
        &[
            ("message.timestamp.type", "LogAppendTime"),
            ("message.timestamp.before.max.ms", "1000"),
            ("message.timestamp.after.max.ms", "1000"),
        ],
    )
    .await;
    let now = now_ms();
    let (code, msg, base) = produce(
        &mut conn,
        "lat",
        batch_with(&[now - 100 * HOUR, now + 100 * HOUR], Compression::None),
    )
    .await;
    assert_eq!((code, base), (0, 0), "{msg}");
    h.shutdown().await.unwrap();
}

/// `batch` marked LogAppendTime by its producer (attributes bit 3) with header `maxTimestamp` `max`, CRC-32C
/// valid again.
fn marked_log_append_time(batch: Bytes, max: i64) -> Bytes {
    let mut b = batch.to_vec();
    b[22] |= 0x08;
    b[35..43].copy_from_slice(&max.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(b)
}

/// Kafka's `LogValidator.validateTimestamp`: a producer may not set LogAppendTime. A batch so marked is
/// INVALID_TIMESTAMP on a LogAppendTime topic, and on a CreateTime topic when its records (which all read as the
/// header's max timestamp) carry none (-1); nothing of it is appended. On a CreateTime topic with a real
/// timestamp Kafka only range-checks it, so it is appended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_producer_marked_log_append_time_batch_is_invalid_timestamp_and_nothing_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker(dir.path()).await;
    let mut conn = connect(h.local_addr()).await;
    create_topic_with(&mut conn, "ct", &[]).await;
    create_topic_with(
        &mut conn,
        "lat",
        &[("message.timestamp.type", "LogAppendTime")],
    )
    .await;
    let now = now_ms();
    let plain = || batch_with(&[now], Compression::None);
    for (topic, max) in [("ct", -1), ("lat", now), ("lat", -1)] {
        let (code, msg, _) = produce(&mut conn, topic, marked_log_append_time(plain(), max)).await;
        assert_eq!(code, INVALID_TIMESTAMP, "{topic} max {max}: {msg}");
        assert!(
            msg.contains("Producer should not set timestamp type to LogAppendTime"),
            "{topic} max {max}: {msg}"
        );
        assert_eq!(
            h.broker().topics().log(topic, 0).unwrap().log_end_offset(),
            0,
            "{topic} max {max}"
        );
    }
    let (code, msg, base) = produce(&mut conn, "ct", marked_log_append_time(plain(), now)).await;
    assert_eq!((code, base), (0, 0), "{msg}");
    let (code, msg, base) = produce(&mut conn, "lat", plain()).await;
    assert_eq!((code, base), (0, 0), "{msg}");
    h.shutdown().await.unwrap();
}

/// Broker defaults: `log.message.timestamp.before.max.ms` bounds a topic without its own value; the deprecated
/// `log.message.timestamp.difference.max.ms` bounds the future where `after.max.ms` is left at its default,
/// and a topic's own `message.timestamp.after.max.ms` wins over it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_defaults_and_the_deprecated_difference_key_bound_topics_without_their_own_value() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker_with(
        dir.path(),
        &[
            ("log.message.timestamp.before.max.ms", "600000"),
            ("log.message.timestamp.difference.max.ms", "60000"),
        ],
    )
    .await;
    let mut conn = connect(h.local_addr()).await;
    create_topic_with(&mut conn, "plain", &[]).await;
    create_topic_with(
        &mut conn,
        "own",
        &[("message.timestamp.after.max.ms", "7200000")],
    )
    .await;
    let now = now_ms();
    let old = batch_with(&[now - 20 * 60_000], Compression::None);
    let (code, msg, _) = produce(&mut conn, "plain", old).await;
    assert_eq!(code, INVALID_TIMESTAMP, "before.max.ms 10 min: {msg}");
    // 5 minutes back is within before.max.ms (which wins over difference.max.ms).
    let (code, msg, _) = produce(
        &mut conn,
        "plain",
        batch_with(&[now - 5 * 60_000], Compression::None),
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    let ahead = batch_with(&[now + 30 * 60_000], Compression::None);
    let (code, msg, _) = produce(&mut conn, "plain", ahead.clone()).await;
    assert_eq!(code, INVALID_TIMESTAMP, "difference.max.ms 1 min: {msg}");
    let (code, msg, _) = produce(&mut conn, "own", ahead).await;
    assert_eq!(code, 0, "the topic's own after.max.ms of 2 h: {msg}");
    h.shutdown().await.unwrap();
}
