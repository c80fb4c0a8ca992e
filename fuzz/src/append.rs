//! Fuzzes the produce path with compressed batches end to end: a full Produce request (v9) is built around a
//! batch made from the input, decoded as the server decodes requests, and its records appended through
//! `UnifiedLog::append_as_leader` (the leader's validation: CRC, record walk, bounded decompression) into a log in
//! a temp dir; then timestamp lookups (ListOffsets by timestamp) and a read (Fetch) run over what was stored.
//!
//! Oracles, besides "never panics, never aborts on allocation": whatever the append accepted must read back
//! byte-for-byte and answer timestamp lookups without error (stored data was validated).
//!
//! Input layout (seeds in `fuzz/corpus/produce_compressed/`):
//!
//! | byte | meaning |
//! |-----:|---------|
//! | 0 | bits 0-2: codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd; 5-7: the rest is a raw record set, sent as is) |
//! |   | bit 3: the rest is the batch's payload already compressed (else: plain records the harness compresses) |
//! |   | bit 4: LogAppendTime topic; bit 5: xerial framing for harness-compressed snappy |
//! | 1 | records count (255 = 2^31-1); lastOffsetDelta = count - 1 |
//! | 2 | timestamp to look up, as an offset from the batch's base timestamp |
//! | 3.. | payload |
//!

use std::sync::{Arc, Mutex, OnceLock};

use crate::targets::compress;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ApiKey, ProduceRequest, RequestHeader, TopicName};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatch, TimestampType, TopicPartition, UnifiedLog,
};

const BASE_TS: i64 = 1_700_000_000_000;
const VERSION: i16 = 9;

struct Logs {
    _dir: tempfile::TempDir,
    _manager: LogManager,
    create_time: Arc<UnifiedLog>,
    log_append_time: Arc<UnifiedLog>,
}

fn logs() -> &'static Mutex<Logs> {
    static LOGS: OnceLock<Mutex<Logs>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let manager = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()]))
            .expect("log manager");
        let open = |name: &str, ts: TimestampType| {
            let mut cfg = LogConfig::default();
            cfg.file_delete_delay_ms = 0;
            cfg.message_timestamp_type = ts;
            manager
                .get_or_create_log(&TopicPartition::new(name, 0), uuid::Uuid::nil(), cfg)
                .expect("log")
        };
        let create_time = open("fuzz-ct", TimestampType::CreateTime);
        let log_append_time = open("fuzz-lat", TimestampType::LogAppendTime);
        Mutex::new(Logs {
            _dir: dir,
            _manager: manager,
            create_time,
            log_append_time,
        })
    })
}

/// A v2 batch around `payload` with a valid CRC.
fn batch(codec: u8, count: i32, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(61 + payload.len());
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((49 + payload.len()) as i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&(codec as i16).to_be_bytes());
    b.extend_from_slice(&(count - 1).to_be_bytes());
    b.extend_from_slice(&BASE_TS.to_be_bytes());
    b.extend_from_slice(&(BASE_TS + 255).to_be_bytes());
    b.extend_from_slice(&(-1i64).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(payload);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// The records of a Produce request frame as the server decodes them.
fn through_request(records: Bytes) -> Option<Bytes> {
    let req = ProduceRequest::default()
        .with_acks(1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_static_str("fuzz")))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    let mut frame = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::Produce as i16)
        .with_request_api_version(VERSION)
        .with_correlation_id(1)
        .encode(&mut frame, ApiKey::Produce.request_header_version(VERSION))
        .ok()?;
    req.encode(&mut frame, VERSION).ok()?;
    let frame = frame.freeze();
    assert!(
        strata_broker::decode_request_for_fuzzing(frame.clone()),
        "a valid produce frame"
    );
    let mut body = frame;
    RequestHeader::decode(&mut body, ApiKey::Produce.request_header_version(VERSION)).ok()?;
    let req = ProduceRequest::decode(&mut body, VERSION).ok()?;
    req.topic_data
        .into_iter()
        .next()?
        .partition_data
        .into_iter()
        .next()?
        .records
}

/// Target `produce_compressed` (see the module docs).
pub fn produce_compressed(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let (mode, count, probe) = (data[0], data[1], data[2] as i64);
    let payload = &data[3..];
    let codec = mode & 7;
    let records = if codec > 4 {
        payload.to_vec()
    } else {
        let count = if count == 255 {
            i32::MAX
        } else {
            count.max(1) as i32
        };
        let body = if mode & 8 != 0 {
            payload.to_vec()
        } else {
            compress(codec, mode & 32 != 0, payload)
        };
        batch(codec, count, &body)
    };
    let Some(records) = through_request(Bytes::from(records)) else {
        return;
    };

    let logs = logs().lock().unwrap();
    let log = if mode & 16 != 0 {
        &logs.log_append_time
    } else {
        &logs.create_time
    };
    if log.size_in_bytes() > 64 << 20 {
        log.delete_records(-1).expect("truncate");
        log.remove_deleted_files_now();
    }
    let sent = records.clone();
    let Ok(info) = log.append_as_leader(records, 0) else {
        return;
    };
    // What was accepted reads back whole (Fetch), and every timestamp lookup over it answers (ListOffsets).
    let read = log
        .read(info.first_offset, sent.len() + 1024, true, None)
        .expect("read back what was appended");
    assert_eq!(
        read.records.len(),
        sent.len(),
        "accepted bytes read back in full"
    );
    for b in RecordBatch::iter(&read.records) {
        let b = b.expect("stored batches parse");
        for ts in [BASE_TS, BASE_TS + probe, b.max_timestamp(), i64::MIN] {
            b.find_timestamp(ts, info.first_offset)
                .expect("timestamp lookup inside a stored batch");
        }
        if let Ok(records) = b.records() {
            for r in records.take(4096) {
                let _ = r;
            }
        }
    }
    for ts in [BASE_TS + probe, -1] {
        log.fetch_offset_by_timestamp(ts)
            .expect("ListOffsets by timestamp over stored data");
    }
}
