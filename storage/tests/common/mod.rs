//! Helpers shared by the storage integration tests.
#![allow(dead_code)]
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatchBuilder, TopicPartition, UnifiedLog,
};

/// One uncompressed batch of `n` records with values `value-{i}` and timestamps `ts + i`.
pub fn batch(n: usize, ts: i64) -> Bytes {
    let mut b = RecordBatchBuilder::new();
    for i in 0..n {
        b.append(
            ts + i as i64,
            Some(format!("k{i}").as_bytes()),
            Some(format!("value-{i}").as_bytes()),
            &[],
        );
    }
    b.build()
}

/// An idempotent producer's batch.
pub fn producer_batch(pid: i64, epoch: i16, seq: i32, n: usize) -> Bytes {
    let mut b = RecordBatchBuilder::new().producer(pid, epoch, seq);
    for i in 0..n {
        b.append(1000 + i as i64, None, Some(b"v"), &[]);
    }
    b.build()
}

/// A batch of `n` records whose values total about `value_bytes` bytes each.
pub fn sized_batch(n: usize, value_bytes: usize, ts: i64) -> Bytes {
    let value = vec![b'x'; value_bytes];
    let mut b = RecordBatchBuilder::new();
    for i in 0..n {
        b.append(ts + i as i64, None, Some(&value), &[]);
    }
    b.build()
}

pub fn open_manager(dir: &Path) -> LogManager {
    LogManager::open(LogManagerConfig::new(vec![dir.to_path_buf()])).unwrap()
}

pub fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

pub fn log(m: &LogManager, config: LogConfig) -> Arc<UnifiedLog> {
    m.get_or_create_log(&tp(), uuid::Uuid::from_u128(7), config)
        .unwrap()
}

/// Small segments so tests roll often.
pub fn small_segments() -> LogConfig {
    let mut c = LogConfig::default();
    c.segment_bytes = 1024;
    c.index_interval_bytes = 100;
    c
}

/// One batch as a Java or librdkafka client encodes it (kafka-protocol's encoder, no producer id, record `i` at
/// offset delta `i`), compressed with `codec`: one record per `(timestamp, key, value)`.
pub fn client_batch(
    codec: kafka_protocol::records::Compression,
    records: impl IntoIterator<Item = (i64, Option<Bytes>, Option<Bytes>)>,
) -> Bytes {
    use kafka_protocol::records::{Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType};
    let records: Vec<Record> = records
        .into_iter()
        .enumerate()
        .map(|(i, (timestamp, key, value))| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            // offset - sequence constant keeps the records in one batch; the base sequence is -1 (no producer).
            sequence: i as i32 - 1,
            timestamp,
            key,
            value,
            headers: Default::default(),
        })
        .collect();
    let mut buf = bytes::BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: codec,
        },
    )
    .expect("encode");
    buf.freeze()
}
