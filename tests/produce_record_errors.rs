//! KIP-467 per-record errors in Produce responses, as Kafka's `LogValidator` / `ReplicaManager` answer them
//! (checked against Kafka 4.4): a batch holding records the log refuses (keyless records on a compacted topic,
//! CreateTime timestamps out of range) names each refused record in `record_errors` (its index in the batch and
//! Kafka's message, a record's key checked before its timestamp), the partition's `error_message` is Kafka's
//! ("One or more records have been rejected due to ..."), `log_start_offset` is the log's, and nothing of the
//! batch is appended. librdkafka fails the named records with INVALID_RECORD and the others with its own
//! `_INVALID_DIFFERENT_RECORD`.

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use common::raw::{connect, create_topic_with, keyed_batch, request};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::produce_response::PartitionProduceResponse;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::Compression;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::FutureRecord;
use tokio::net::TcpStream;

const INVALID_RECORD: i16 = 87;
const INVALID_TIMESTAMP: i16 = 32;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

async fn produce(
    conn: &mut TcpStream,
    version: i16,
    topic: &str,
    records: Bytes,
) -> PartitionProduceResponse {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(s(topic)))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    let resp: ProduceResponse = request(conn, ApiKey::Produce, version, &req)
        .await
        .expect("Produce answered");
    resp.responses[0].partition_responses[0].clone()
}

/// (batch index, message) of each record error.
fn named(p: &PartitionProduceResponse) -> Vec<(i32, String)> {
    p.record_errors
        .iter()
        .map(|e| {
            (
                e.batch_index,
                e.batch_index_error_message
                    .as_deref()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyless_records_on_a_compacted_topic_are_each_named_with_kafkas_messages() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker(dir.path()).await;
    let mut conn = connect(h.local_addr()).await;
    create_topic_with(&mut conn, "cmp", &[("cleanup.policy", "compact")]).await;
    let now = now_ms();
    // 100 records, every tenth without a key (indexes 5, 15, ..., 95).
    let keys: Vec<bool> = (0..100).map(|i| i % 10 != 5).collect();
    let keyless = |i: i32| {
        (
            i,
            "Compacted topic cannot accept message without key in topic partition cmp-0"
                .to_string(),
        )
    };
    let expected: Vec<(i32, String)> = (0..10).map(|i| keyless(i * 10 + 5)).collect();
    for codec in [Compression::None, Compression::Gzip, Compression::Zstd] {
        for version in [8, 11] {
            let p = produce(
                &mut conn,
                version,
                "cmp",
                keyed_batch(&keys, &[now; 100], codec),
            )
            .await;
            assert_eq!(p.error_code, INVALID_RECORD, "{codec:?} v{version}: {p:?}");
            assert_eq!(named(&p), expected, "{codec:?} v{version}");
            let shown: Vec<String> = expected[..3]
                .iter()
                .map(|(i, m)| format!("RecordError(batchIndex={i}, message='{m}')"))
                .collect();
            assert_eq!(
                p.error_message.as_deref(),
                Some(
                    format!(
                        "One or more records have been rejected due to 10 record errors in total, and only \
                         showing the first three errors at most: [{}]",
                        shown.join(", ")
                    )
                    .as_str()
                ),
                "{codec:?} v{version}"
            );
            assert_eq!((p.base_offset, p.log_start_offset), (-1, 0));
        }
    }
    // Before v8 the response has no record_errors: the code alone.
    let p = produce(
        &mut conn,
        7,
        "cmp",
        keyed_batch(&keys, &[now; 100], Compression::None),
    )
    .await;
    assert_eq!((p.error_code, p.record_errors.len()), (INVALID_RECORD, 0));
    // Nothing was appended: a keyed batch lands at offset 0.
    let p = produce(
        &mut conn,
        11,
        "cmp",
        keyed_batch(&[true; 3], &[now; 3], Compression::None),
    )
    .await;
    assert_eq!((p.error_code, p.base_offset), (0, 0), "{p:?}");
    assert!(p.record_errors.is_empty() && p.error_message.is_none());
    h.shutdown().await.unwrap();
}

/// Kafka checks each record's key, then its timestamp: a timestamp refused anywhere makes the partition
/// INVALID_TIMESTAMP with Kafka's short message, and every refused record is named (a keyless record with a bad
/// timestamp once, for its key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_out_of_range_are_named_per_record_with_keys_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker(dir.path()).await;
    let mut conn = connect(h.local_addr()).await;
    let hour = 3_600_000;
    create_topic_with(
        &mut conn,
        "ts",
        &[
            ("message.timestamp.before.max.ms", "3600000"),
            ("message.timestamp.after.max.ms", "3600000"),
        ],
    )
    .await;
    create_topic_with(
        &mut conn,
        "both",
        &[
            ("cleanup.policy", "compact"),
            ("message.timestamp.before.max.ms", "3600000"),
        ],
    )
    .await;
    let now = now_ms();
    let p = produce(
        &mut conn,
        11,
        "ts",
        keyed_batch(
            &[true; 5],
            &[now, 1000, now, now + 24 * hour, -1],
            Compression::None,
        ),
    )
    .await;
    assert_eq!(p.error_code, INVALID_TIMESTAMP, "{p:?}");
    assert_eq!(
        p.error_message.as_deref(),
        Some("One or more records have been rejected due to invalid timestamp")
    );
    let got = named(&p);
    assert_eq!(
        got.iter().map(|e| e.0).collect::<Vec<_>>(),
        [1, 3],
        "{got:?}"
    );
    assert!(
        got[0].1.starts_with("Timestamp 1000 of message with offset 1 is out of range. The timestamp should be within [")
            && got[1].1.starts_with(&format!("Timestamp {} of message with offset 3 is out of range", now + 24 * hour)),
        "{got:?}"
    );
    assert_eq!(p.log_start_offset, 0);

    let p = produce(
        &mut conn,
        11,
        "both",
        keyed_batch(
            &[false, true, true, false],
            &[now, 1000, now, 1000],
            Compression::Lz4,
        ),
    )
    .await;
    assert_eq!(p.error_code, INVALID_TIMESTAMP, "{p:?}");
    let got = named(&p);
    let key_msg = "Compacted topic cannot accept message without key in topic partition both-0";
    assert_eq!(
        got.iter().map(|e| e.0).collect::<Vec<_>>(),
        [0, 1, 3],
        "{got:?}"
    );
    assert_eq!((got[0].1.as_str(), got[2].1.as_str()), (key_msg, key_msg));
    assert!(
        got[1]
            .1
            .starts_with("Timestamp 1000 of message with offset 1"),
        "{got:?}"
    );
    for t in ["ts", "both"] {
        assert_eq!(
            h.broker().topics().log(t, 0).unwrap().log_end_offset(),
            0,
            "{t}"
        );
    }
    h.shutdown().await.unwrap();
}

/// librdkafka (KIP-467 aware) fails the records the broker named with INVALID_RECORD and the rest of their batch
/// with its own "part of a batch which had one more more invalid records" error (`_INVALID_DIFFERENT_RECORD`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn librdkafka_fails_the_named_records_as_invalid_and_the_others_as_their_batchmates() {
    let dir = tempfile::tempdir().unwrap();
    let h = common::start_broker(dir.path()).await;
    let mut conn = connect(h.local_addr()).await;
    create_topic_with(&mut conn, "cmp", &[("cleanup.policy", "compact")]).await;
    let boot = common::bootstrap(&h);
    // One batch of 100: linger long enough for all of them, no retries.
    let producer = common::producer(
        &boot,
        &[
            ("linger.ms", "500"),
            ("batch.num.messages", "100"),
            ("enable.idempotence", "false"),
        ],
    );
    let mut pending = Vec::new();
    for i in 0..100 {
        let value = format!("v{i}");
        let key = format!("k{i}");
        let mut rec = FutureRecord::to("cmp").partition(0).payload(&value);
        if i % 10 != 5 {
            rec = rec.key(&key);
        }
        pending.push(
            producer
                .send_result(rec)
                .map_err(|(e, _)| e)
                .expect("queued"),
        );
    }
    let mut invalid = Vec::new();
    let mut batchmates = 0;
    for (i, f) in pending.into_iter().enumerate() {
        let r = tokio::time::timeout(Duration::from_secs(30), f)
            .await
            .expect("delivered in time")
            .expect("not cancelled");
        match r {
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::InvalidRecord), _)) => {
                invalid.push(i)
            }
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::InvalidDifferentRecord), _)) => {
                batchmates += 1
            }
            other => panic!("record {i}: {other:?}"),
        }
    }
    assert_eq!(invalid, (0..10).map(|i| i * 10 + 5).collect::<Vec<_>>());
    assert_eq!(batchmates, 90);
    assert_eq!(
        h.broker().topics().log("cmp", 0).unwrap().log_end_offset(),
        0
    );
    h.shutdown().await.unwrap();
}
