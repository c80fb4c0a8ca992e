//! Hostile record batches over raw TCP against the `strata` binary running as a child process (issue 11, item 1).
//!
//! Kafka's `LogValidator` opens every batch on append (decompressing it, streaming) and walks every record with
//! `DefaultRecord.readFrom`: structural faults are `InvalidRecordException` (INVALID_RECORD, 87), a payload that is
//! not of its codec is refused as CORRUPT_MESSAGE (2), and strata refuses records inflating past its decompression
//! bound (`MAX_DECOMPRESSED_RECORDS_BYTES`, 100 MiB per append) with MESSAGE_TOO_LARGE (10). For each hostile batch
//! the test checks the error code, that nothing was written (latest offset unchanged; a timestamp lookup, which
//! used to decompress what was stored, finds nothing), and at the end that a normal producer and consumer are
//! served, that a fetch returns only the earlier data, and that the broker's peak RSS grew far less than any of the
//! bombs would need.

use crate::common;

use std::io::Write;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use common::raw::{connect, request};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use rdkafka::consumer::Consumer;
use rdkafka::producer::FutureRecord;
use strata_storage::RecordBatch;

const TOPIC: &str = "hostile";
const CORRUPT_MESSAGE: i16 = 2;
const MESSAGE_TOO_LARGE: i16 = 10;
const INVALID_RECORD: i16 = 87;
/// Base timestamp of every hostile batch: later than all good data, so a lookup for it can only land on them.
const HOSTILE_TS: i64 = 1_800_000_000_000;

fn zigzag(out: &mut Vec<u8>, v: i64) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

/// One record's fields as raw values, so a test can write any lie.
#[derive(Clone)]
struct Rec {
    offset_delta: i64,
    key_len: i64,
    key: Vec<u8>,
    value_len: i64,
    value: Vec<u8>,
    headers: i64,
    /// Added to the true body length in the length prefix.
    length_lie: i64,
    trailing: Vec<u8>,
}

impl Rec {
    fn ok(i: i64) -> Self {
        Self {
            offset_delta: i,
            key_len: -1,
            key: vec![],
            value_len: 4,
            value: b"evil".to_vec(),
            headers: 0,
            length_lie: 0,
            trailing: vec![],
        }
    }
    fn bytes(&self) -> Vec<u8> {
        let mut body = vec![0u8]; // attributes
        zigzag(&mut body, 0); // timestamp delta
        zigzag(&mut body, self.offset_delta);
        zigzag(&mut body, self.key_len);
        body.extend_from_slice(&self.key);
        zigzag(&mut body, self.value_len);
        body.extend_from_slice(&self.value);
        zigzag(&mut body, self.headers);
        let mut out = Vec::new();
        zigzag(&mut out, body.len() as i64 + self.length_lie);
        out.extend_from_slice(&body);
        out.extend_from_slice(&self.trailing);
        out
    }
}

fn gzip(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(plain).unwrap();
    e.finish().unwrap()
}

fn lz4(plain: &[u8]) -> Vec<u8> {
    let mut e = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
    e.write_all(plain).unwrap();
    let (out, r) = e.finish();
    r.unwrap();
    out
}

/// A v2 batch with a valid CRC around `payload` (already compressed as `codec` says).
fn raw_batch(codec: i16, count: i32, last_offset_delta: i32, payload: &[u8]) -> Bytes {
    let mut b = Vec::with_capacity(61 + payload.len());
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((49 + payload.len()) as i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&codec.to_be_bytes());
    b.extend_from_slice(&last_offset_delta.to_be_bytes());
    b.extend_from_slice(&HOSTILE_TS.to_be_bytes());
    b.extend_from_slice(&HOSTILE_TS.to_be_bytes());
    b.extend_from_slice(&(-1i64).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(payload);
    let crc = RecordBatch::new_unchecked_crc(Bytes::from(b.clone()))
        .expect("well-formed header")
        .compute_crc();
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(b)
}

/// A zstd frame of `records` records, each with a value of `value_mib` MiB of zeros, written by hand as RLE blocks
/// (4 bytes per 128 KiB): about 80 bytes of frame per 2 MiB of records.
fn zstd_bomb(records: i64, value_mib: usize) -> Vec<u8> {
    const BLOCK: usize = 128 << 10;
    let block_header = |f: &mut Vec<u8>, last: bool, ty: u32, size: usize| {
        let v = last as u32 | (ty << 1) | ((size as u32) << 3);
        f.extend_from_slice(&v.to_le_bytes()[..3]);
    };
    // Magic, frame header descriptor (no content size, no checksum), window descriptor 2^17 = 128 KiB.
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
    let value_len = value_mib << 20;
    for i in 0..records {
        let mut body_head = vec![0u8];
        zigzag(&mut body_head, 0);
        zigzag(&mut body_head, i);
        zigzag(&mut body_head, -1);
        zigzag(&mut body_head, value_len as i64);
        let body_len = body_head.len() + value_len + 1;
        let mut prefix = Vec::new();
        zigzag(&mut prefix, body_len as i64);
        prefix.extend_from_slice(&body_head);
        block_header(&mut f, false, 0, prefix.len());
        f.extend_from_slice(&prefix);
        for _ in 0..value_len / BLOCK {
            block_header(&mut f, false, 1, BLOCK);
            f.push(0);
        }
        block_header(&mut f, i == records - 1, 0, 1);
        f.push(0); // header count 0
    }
    f
}

/// The hostile batches: (what, batch, Kafka error code).
fn hostile_batches() -> Vec<(&'static str, Bytes, i16)> {
    let one = Rec::ok(0).bytes();
    let mut many_headers = Rec::ok(0);
    many_headers.headers = i32::MAX as i64;
    let mut negative_key = Rec::ok(0);
    negative_key.key_len = -5;
    let mut value_past = Rec::ok(0);
    value_past.value_len = 1000;
    let mut zero_len = Vec::new();
    zigzag(&mut zero_len, 0);
    let mut disagree = Rec::ok(0);
    disagree.length_lie = 3;
    disagree.trailing = vec![0, 0, 0];
    let two: Vec<u8> = [Rec::ok(0).bytes(), Rec::ok(1).bytes()].concat();
    let bomb_records = 780;
    let bomb = zstd_bomb(bomb_records, 2);
    assert!(bomb.len() <= 64 << 10, "the bomb is {} bytes", bomb.len());
    vec![
        (
            "gzip batch declaring 2^31-1 records, holding one",
            raw_batch(1, i32::MAX, i32::MAX - 1, &gzip(&one)),
            INVALID_RECORD,
        ),
        (
            "gzip record declaring 2^31-1 headers",
            raw_batch(1, 1, 0, &gzip(&many_headers.bytes())),
            INVALID_RECORD,
        ),
        (
            "64 KiB zstd batch inflating to 1.5 GiB",
            raw_batch(4, bomb_records as i32, bomb_records as i32 - 1, &bomb),
            MESSAGE_TOO_LARGE,
        ),
        (
            "negative key length",
            raw_batch(0, 1, 0, &negative_key.bytes()),
            INVALID_RECORD,
        ),
        (
            "record length 0",
            raw_batch(1, 1, 0, &gzip(&zero_len)),
            INVALID_RECORD,
        ),
        (
            "value running past the record",
            raw_batch(0, 1, 0, &value_past.bytes()),
            INVALID_RECORD,
        ),
        (
            "'gzip' payload that is not gzip",
            raw_batch(1, 1, 0, &one),
            CORRUPT_MESSAGE,
        ),
        (
            "'zstd' payload that is not zstd",
            raw_batch(4, 1, 0, &one),
            CORRUPT_MESSAGE,
        ),
        (
            "record length disagreeing with its fields (lz4)",
            raw_batch(3, 1, 0, &lz4(&disagree.bytes())),
            INVALID_RECORD,
        ),
        (
            "records count 3 holding 2 (snappy)",
            raw_batch(
                2,
                3,
                2,
                &snap::raw::Encoder::new().compress_vec(&two).unwrap(),
            ),
            INVALID_RECORD,
        ),
    ]
}

fn produce_req(records: Bytes) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])])
}

/// ListOffsets v7 (the first to take MAX_TIMESTAMP, -3) for `timestamp` (-1 = latest): (error, offset,
/// timestamp).
async fn list_offsets(s: &mut tokio::net::TcpStream, timestamp: i64) -> (i16, i64, i64) {
    let req = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(timestamp)])]);
    let r: ListOffsetsResponse = request(s, ApiKey::ListOffsets, 7, &req)
        .await
        .expect("ListOffsets answered");
    let p = &r.topics[0].partitions[0];
    (p.error_code, p.offset, p.timestamp)
}

/// Five gzip records `good-0..4` with timestamps `ts0 + 10 * i`, as a client would send them.
fn good_gzip_batch(ts0: i64) -> Bytes {
    gzip_batch(ts0, 5)
}

/// One gzip batch of `n` records `good-0..` with timestamps `ts0 + 10 * i`.
fn gzip_batch(ts0: i64, n: i64) -> Bytes {
    let records: Vec<Record> = (0..n)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i,
            // -1, 0, 1, ...: one batch (kafka-protocol's encoder splits where offset - sequence changes).
            sequence: i as i32 - 1,
            timestamp: ts0 + 10 * i,
            key: None,
            value: Some(Bytes::from(format!("good-{i}"))),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::Gzip,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &opts).unwrap();
    buf.freeze()
}

/// `VmHWM` (peak RSS) of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

#[test]
fn hostile_batches_are_refused_with_kafka_errors_write_nothing_and_keep_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::ChildBroker::spawn(dir.path(), 0);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(common::create_topic(&broker.bootstrap, TOPIC, 1));
    let addr: std::net::SocketAddr = broker.bootstrap.parse().unwrap();
    let ts0 = 1_700_000_000_000;
    let hostile = hostile_batches();

    let peak_before = rt.block_on(async {
        let mut s = connect(addr).await;
        let r: ProduceResponse = request(
            &mut s,
            ApiKey::Produce,
            9,
            &produce_req(good_gzip_batch(ts0)),
        )
        .await
        .unwrap();
        assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
        // The exact record inside the compressed batch, as Kafka answers.
        assert_eq!(list_offsets(&mut s, ts0 + 20).await, (0, 2, ts0 + 20));
        assert_eq!(list_offsets(&mut s, -1).await.1, 5);
        peak_rss_kib(broker.pid())
    });

    rt.block_on(async {
        for (what, batch, code) in hostile {
            let mut s = connect(addr).await;
            let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &produce_req(batch))
                .await
                .unwrap_or_else(|| panic!("{what}: the broker closed the connection"));
            let p = &r.responses[0].partition_responses[0];
            assert_eq!(
                p.error_code, code,
                "{what}: error code ({:?})",
                p.error_message
            );
            assert!(
                p.error_message.is_some() || code == CORRUPT_MESSAGE,
                "{what}: no error message"
            );
            assert_eq!(
                list_offsets(&mut s, -1).await,
                (0, 5, -1),
                "{what}: something was written"
            );
            // Used to decompress the stored batch (aborting on a 350 GB allocation, or inflating the bomb).
            assert_eq!(
                list_offsets(&mut s, HOSTILE_TS).await,
                (0, -1, -1),
                "{what}: the timestamp lookup found a record"
            );
        }
    });

    // A normal producer (compressed) and consumer are still served; the log holds the good data only.
    let producer = common::producer(&broker.bootstrap, &[("compression.type", "lz4")]);
    rt.block_on(async {
        for i in 0..10 {
            let v = format!("after-{i}");
            producer
                .send(
                    FutureRecord::<(), _>::to(TOPIC).payload(&v).partition(0),
                    Duration::from_secs(10),
                )
                .await
                .expect("delivered after the hostile batches");
        }
    });
    let c = common::consumer(&broker.bootstrap, "hostile-check", &[]);
    common::assign_from_beginning(&c, TOPIC, 1);
    let got = common::consume_n(&c, 15, Duration::from_secs(30));
    let values: Vec<String> = got
        .iter()
        .map(|(_, _, _, v)| String::from_utf8(v.clone().unwrap_or_default()).unwrap())
        .collect();
    let want: Vec<String> = (0..5)
        .map(|i| format!("good-{i}"))
        .chain((0..10).map(|i| format!("after-{i}")))
        .collect();
    assert_eq!(values, want);
    let offsets: Vec<i64> = got.iter().map(|(_, o, _, _)| *o).collect();
    assert_eq!(offsets, (0..15).collect::<Vec<_>>());
    let (_, high) = c
        .fetch_watermarks(TOPIC, 0, Duration::from_secs(10))
        .unwrap();
    assert_eq!(high, 15, "only the good records were stored");

    // The bomb alone would need 1.5 GiB inflated (the 2^31-1 record count: hundreds of GiB of pre-allocation).
    let peak_after = peak_rss_kib(broker.pid());
    let grown_mib = peak_after.saturating_sub(peak_before) / 1024;
    eprintln!(
        "broker peak RSS: {} MiB before the hostile batches, {} MiB after",
        peak_before / 1024,
        peak_after / 1024
    );
    assert!(
        grown_mib < 128,
        "peak RSS grew by {grown_mib} MiB while refusing the hostile batches"
    );
    drop(c);
    assert!(broker.terminate());
}

/// A gzip batch of one record stamped `ts0` with its header `maxTimestamp` replaced by `max` and the CRC-32C
/// made valid again.
fn lying_max_timestamp(ts0: i64, max: i64) -> Bytes {
    let mut b = gzip_batch(ts0, 1).to_vec();
    b[35..43].copy_from_slice(&max.to_be_bytes());
    let crc = RecordBatch::new_unchecked_crc(Bytes::from(b.clone()))
        .unwrap()
        .compute_crc();
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(b)
}

/// A header `maxTimestamp` claiming 100 years ahead of its records is not stored as sent: as Kafka's
/// `LogValidator` does for CreateTime batches (`setMaxTimestamp`), the broker writes the records' own max (CRC
/// rewritten), so ListOffsets(MAX_TIMESTAMP) and a fetched batch show the real max, and the broker keeps serving.
#[test]
fn lying_max_timestamp_header_is_replaced_by_the_records_max() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::ChildBroker::spawn(dir.path(), 0);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(common::create_topic(&broker.bootstrap, TOPIC, 1));
    let addr: std::net::SocketAddr = broker.bootstrap.parse().unwrap();
    let ts0 = 1_700_000_000_000;
    let century = 100 * 365 * 24 * 3600 * 1000;
    rt.block_on(async {
        let mut s = connect(addr).await;
        for (i, claim) in [ts0 + century, 1].into_iter().enumerate() {
            let r: ProduceResponse = request(
                &mut s,
                ApiKey::Produce,
                9,
                &produce_req(lying_max_timestamp(ts0, claim)),
            )
            .await
            .unwrap();
            assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
            // One record stamped ts0 per batch: the max is the first batch's record.
            assert_eq!(
                list_offsets(&mut s, -3).await,
                (0, 0, ts0),
                "after batch {i} claiming {claim}"
            );
        }
        assert_eq!(list_offsets(&mut s, -1).await, (0, 2, -1));
    });
    // The stored batch carries the records' max and a valid CRC.
    let c = common::consumer(&broker.bootstrap, "lying-max-check", &[]);
    common::assign_from_beginning(&c, TOPIC, 1);
    let got = common::consume_n(&c, 2, Duration::from_secs(30));
    assert_eq!(got.len(), 2, "a client reads both batches (CRC valid)");
    let log = dir
        .path()
        .join(format!("{TOPIC}-0/00000000000000000000.log"));
    let stored = Bytes::from(std::fs::read(&log).expect("segment file"));
    let batches: Vec<RecordBatch> = RecordBatch::iter(&stored).map(|b| b.unwrap()).collect();
    assert_eq!(batches.len(), 2);
    for b in &batches {
        b.ensure_valid_crc().unwrap();
        assert_eq!(b.max_timestamp(), ts0);
    }
    drop(c);
    assert!(broker.terminate());
}
