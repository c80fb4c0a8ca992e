//! Records: Produce (good, unknown topic/partition, corrupt and oversized batches), Fetch (in and out of range,
//! unknown ids), ListOffsets, DeleteRecords, OffsetForLeaderEpoch.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::delete_records_request::{
    DeleteRecordsPartition, DeleteRecordsTopic,
};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;

use crate::differential::case::{batch as batch_at, step, Case, Ctx};

const TS: i64 = 1_700_000_000_000;

fn batch(n: usize) -> Bytes {
    let values: Vec<Vec<u8>> = (0..n).map(|i| format!("p{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
    batch_at(&refs, TS)
}

/// One batch of `keys.len()` records, record `i` keyed when `keys[i]`, timestamps `ts0, ts0+1, ...`.
fn keyed(keys: &[bool], ts0: i64, compression: kafka_protocol::records::Compression) -> Bytes {
    use kafka_protocol::records::{Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType};
    let records: Vec<Record> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: ts0 + i as i64,
            key: k.then(|| Bytes::from(format!("k{i}"))),
            value: Some(Bytes::from(format!("v{i}"))),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &opts).expect("batch encodes");
    buf.freeze()
}

/// A batch with one byte of its records flipped (the CRC no longer matches).
fn corrupt() -> Bytes {
    let mut b = BytesMut::from(&batch(2)[..]);
    let last = b.len() - 1;
    b[last] ^= 0xff;
    b.freeze()
}

/// A batch whose length field claims more than it holds.
fn truncated() -> Bytes {
    let b = batch(2);
    b.slice(..b.len() - 5)
}

/// Two batches one after the other (Kafka takes one per partition from Produce v3).
fn two_batches() -> Bytes {
    let mut b = BytesMut::from(&batch(1)[..]);
    b.extend_from_slice(&batch(2));
    b.freeze()
}

fn produce(ctx: &Ctx, suffix: &str, partition: i32, records: Bytes, by_id: bool) -> ProduceRequest {
    let mut t =
        TopicProduceData::default().with_partition_data(vec![PartitionProduceData::default()
            .with_index(partition)
            .with_records(Some(records))]);
    if by_id {
        t = t.with_topic_id(ctx.id(suffix));
    } else {
        t = t.with_name(ctx.name(suffix));
    }
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(10_000)
        .with_topic_data(vec![t])
}

fn fetch(ctx: &Ctx, suffix: &str, partition: i32, offset: i64, by_id: bool) -> FetchRequest {
    let mut t = FetchTopic::default().with_partitions(vec![FetchPartition::default()
        .with_partition(partition)
        .with_fetch_offset(offset)
        .with_partition_max_bytes(1 << 20)]);
    if by_id {
        t = t.with_topic_id(ctx.id(suffix));
    } else {
        t = t.with_topic(ctx.name(suffix));
    }
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(1 << 20)
        .with_isolation_level(0)
        .with_session_epoch(-1)
        .with_topics(vec![t])
}

fn list_offsets(ctx: &Ctx, suffix: &str, partition: i32, timestamp: i64) -> ListOffsetsRequest {
    ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(ctx.name(suffix))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(partition)
                .with_timestamp(timestamp)
                .with_current_leader_epoch(-1)])])
}

pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for v in [3i16, 7, 9, 11] {
        out.push(
            Case::new(format!("produce/ok@v{v}"))
                .topic("t", 1, &[])
                .then(step(ApiKey::Produce, v, |c| {
                    produce(c, "t", 0, batch(3), false)
                })),
        );
        out.push(Case::new(format!("produce/unknown-topic@v{v}")).then(step(
            ApiKey::Produce,
            v,
            |c| produce(c, "nope", 0, batch(1), false),
        )));
        out.push(
            Case::new(format!("produce/unknown-partition@v{v}"))
                .topic("t", 1, &[])
                .then(step(ApiKey::Produce, v, |c| {
                    produce(c, "t", 5, batch(1), false)
                })),
        );
        out.push(
            Case::new(format!("produce/corrupt-crc@v{v}"))
                .topic("t", 1, &[])
                .then(step(ApiKey::Produce, v, |c| {
                    produce(c, "t", 0, corrupt(), false)
                })),
        );
        out.push(
            Case::new(format!("produce/truncated@v{v}"))
                .topic("t", 1, &[])
                .then(step(ApiKey::Produce, v, |c| {
                    produce(c, "t", 0, truncated(), false)
                })),
        );
        out.push(
            Case::new(format!("produce/two-batches@v{v}"))
                .topic("t", 1, &[])
                .then(step(ApiKey::Produce, v, |c| {
                    produce(c, "t", 0, two_batches(), false)
                })),
        );
    }
    out.push(Case::new("produce/by-id@v13").topic("t", 1, &[]).then(step(
        ApiKey::Produce,
        13,
        |c| produce(c, "t", 0, batch(2), true),
    )));
    out.push(
        Case::new("produce/unknown-id@v13").then(step(ApiKey::Produce, 13, |c| {
            produce(c, "nope", 0, batch(2), true)
        })),
    );
    out.push(
        Case::new("produce/too-large")
            .topic("t", 1, &[("max.message.bytes", "100")])
            .then(step(ApiKey::Produce, 9, |c| {
                produce(c, "t", 0, batch(20), false)
            })),
    );
    out.push(
        Case::new("produce/range-max-message-bytes-zero")
            .topic("t", 1, &[("max.message.bytes", "0")])
            .then(step(ApiKey::Produce, 9, |c| {
                produce(c, "t", 0, batch(1), false)
            })),
    );
    out.push(
        Case::new("produce/empty-records")
            .topic("t", 1, &[])
            .then(step(ApiKey::Produce, 9, |c| {
                produce(c, "t", 0, Bytes::new(), false)
            })),
    );
    // KIP-467: records refused one by one are named in record_errors (v8+) with Kafka's messages.
    use kafka_protocol::records::Compression;
    let mixed = [true, false, true, false, false, true];
    for (name, v, codec) in [
        ("produce/compacted-keyless@v7", 7, Compression::None),
        ("produce/compacted-keyless@v8", 8, Compression::None),
        ("produce/compacted-keyless@v11", 11, Compression::None),
        ("produce/compacted-keyless-gzip@v11", 11, Compression::Gzip),
    ] {
        out.push(
            Case::new(name)
                .topic("t", 1, &[("cleanup.policy", "compact")])
                .then(step(ApiKey::Produce, v, move |c| {
                    produce(c, "t", 0, keyed(&mixed, TS, codec), false)
                })),
        );
    }
    out.push(
        Case::new("produce/bad-timestamps@v11")
            .topic("t", 1, &[("message.timestamp.before.max.ms", "3600000")])
            .then(step(ApiKey::Produce, 11, |c| {
                produce(c, "t", 0, keyed(&[true; 3], TS, Compression::None), false)
            })),
    );
    out.push(
        Case::new("produce/keyless-and-bad-timestamps@v11")
            .topic(
                "t",
                1,
                &[
                    ("cleanup.policy", "compact"),
                    ("message.timestamp.before.max.ms", "3600000"),
                ],
            )
            .then(step(ApiKey::Produce, 11, |c| {
                produce(
                    c,
                    "t",
                    0,
                    keyed(&[false, true, false], TS, Compression::None),
                    false,
                )
            })),
    );
    out.push(Case::new("produce/bad-acks").topic("t", 1, &[]).then(step(
        ApiKey::Produce,
        9,
        |c| produce(c, "t", 0, batch(1), false).with_acks(2),
    )));
    for v in [4i16, 11, 12, 13, 16] {
        let by_id = v >= 13;
        out.push(
            Case::new(format!("fetch/from-0@v{v}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::Fetch, v, move |c| fetch(c, "t", 0, 0, by_id))),
        );
        out.push(
            Case::new(format!("fetch/middle@v{v}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::Fetch, v, move |c| fetch(c, "t", 0, 2, by_id))),
        );
        out.push(
            Case::new(format!("fetch/at-end@v{v}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::Fetch, v, move |c| fetch(c, "t", 0, 3, by_id))),
        );
        out.push(
            Case::new(format!("fetch/past-end@v{v}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::Fetch, v, move |c| fetch(c, "t", 0, 50, by_id))),
        );
        out.push(
            Case::new(format!("fetch/negative@v{v}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::Fetch, v, move |c| fetch(c, "t", 0, -5, by_id))),
        );
        out.push(
            Case::new(format!("fetch/unknown-partition@v{v}"))
                .topic("t", 1, &[])
                .then(step(ApiKey::Fetch, v, move |c| fetch(c, "t", 3, 0, by_id))),
        );
        out.push(Case::new(format!("fetch/unknown-topic@v{v}")).then(step(
            ApiKey::Fetch,
            v,
            move |c| fetch(c, "nope", 0, 0, by_id),
        )));
    }
    for (name, ts) in [
        ("earliest", -2i64),
        ("latest", -1),
        ("max-timestamp", -3),
        ("at-timestamp", TS + 1),
        ("after-all", TS + 100),
        ("bad-spec", -9),
    ] {
        for v in [1i16, 7, 10] {
            out.push(
                Case::new(format!("list-offsets/{name}@v{v}"))
                    .topic("t", 1, &[])
                    .records("t", 0, 3)
                    .then(step(ApiKey::ListOffsets, v, move |c| {
                        list_offsets(c, "t", 0, ts)
                    })),
            );
        }
    }
    out.push(
        Case::new("list-offsets/unknown-topic").then(step(ApiKey::ListOffsets, 7, |c| {
            list_offsets(c, "nope", 0, -1)
        })),
    );
    out.push(
        Case::new("list-offsets/unknown-partition")
            .topic("t", 1, &[])
            .then(step(ApiKey::ListOffsets, 7, |c| {
                list_offsets(c, "t", 4, -1)
            })),
    );
    for (name, offset) in [
        ("middle", 2i64),
        ("high-watermark", -1),
        ("past-end", 10),
        ("negative", -7),
    ] {
        out.push(
            Case::new(format!("delete-records/{name}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::DeleteRecords, 2, move |c| {
                    DeleteRecordsRequest::default()
                        .with_timeout_ms(10_000)
                        .with_topics(vec![DeleteRecordsTopic::default()
                            .with_name(c.name("t"))
                            .with_partitions(vec![DeleteRecordsPartition::default()
                                .with_partition_index(0)
                                .with_offset(offset)])])
                }))
                .then(step(ApiKey::ListOffsets, 7, |c| {
                    list_offsets(c, "t", 0, -2)
                })),
        );
    }
    for (name, epoch) in [
        ("current", 0i32),
        ("future", 5),
        ("unknown-leader-epoch", -1),
    ] {
        out.push(
            Case::new(format!("offset-for-leader-epoch/{name}"))
                .topic("t", 1, &[])
                .records("t", 0, 3)
                .then(step(ApiKey::OffsetForLeaderEpoch, 4, move |c| {
                    OffsetForLeaderEpochRequest::default()
                        .with_replica_id(BrokerId(-1))
                        .with_topics(vec![OffsetForLeaderTopic::default()
                            .with_topic(c.name("t"))
                            .with_partitions(vec![OffsetForLeaderPartition::default()
                                .with_partition(0)
                                .with_leader_epoch(epoch)
                                .with_current_leader_epoch(-1)])])
                })),
        );
    }
    out
}
