//! Transaction version 2 (KIP-890 part 2): Produce v12 adding its partition itself, EndTxn v5 answering the
//! bumped epoch, TxnOffsetCommit v5 adding the group's partition, and the codes of writes the verification
//! refuses. No step follows an EndTxn whose answer depends on Kafka having written its markers (Kafka answers
//! EndTxn before writing them; strata after).

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use crate::differential::case::{step, Case, Ctx};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn txn(c: &Ctx) -> TransactionalId {
    TransactionalId(s(&c.topic("tx")))
}

fn pid(c: &Ctx) -> ProducerId {
    ProducerId(c.num("producer_id", -1))
}

fn epoch(c: &Ctx, delta: i16) -> i16 {
    c.num("producer_epoch", -1) as i16 + delta
}

fn init(c: &Ctx) -> InitProducerIdRequest {
    InitProducerIdRequest::default()
        .with_transactional_id(Some(txn(c)))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1)
}

/// A transactional Produce of one record to `t`-0 at the producer's epoch + `delta`, sequence `seq`.
fn produce(c: &Ctx, delta: i16, seq: i32) -> ProduceRequest {
    let record = Record {
        transactional: true,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: -1,
        producer_id: pid(c).0,
        producer_epoch: epoch(c, delta),
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: seq,
        timestamp: 1_700_000_000_000,
        key: None,
        value: Some(Bytes::from_static(b"v")),
        headers: IndexMap::new(),
    };
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, [record].iter(), &opts).expect("batch encodes");
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(10_000)
        .with_transactional_id(Some(txn(c)))
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(c.name("t"))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(buf.freeze()))])])
}

fn end(c: &Ctx, commit: bool, delta: i16) -> EndTxnRequest {
    EndTxnRequest::default()
        .with_transactional_id(txn(c))
        .with_producer_id(pid(c))
        .with_producer_epoch(epoch(c, delta))
        .with_committed(commit)
}

fn offset_commit(c: &Ctx) -> TxnOffsetCommitRequest {
    TxnOffsetCommitRequest::default()
        .with_transactional_id(txn(c))
        .with_group_id(GroupId(s(&c.topic("g"))))
        .with_producer_id(pid(c))
        .with_producer_epoch(epoch(c, 0))
        .with_generation_id(-1)
        .with_topics(vec![TxnOffsetCommitRequestTopic::default()
            .with_name(c.name("t"))
            .with_partitions(vec![TxnOffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(1)
                .with_committed_leader_epoch(-1)])])
}

/// The transaction-version-2 sequences.
pub fn cases() -> Vec<Case> {
    vec![
        // Produce v12 adds the partition; EndTxn v5 answers epoch + 1. (What the old epoch may do next depends on
        // whether Kafka has written its markers yet: a write can still join the transaction until then; strata
        // writes them before answering. tests/transactions_tv2.rs checks strata's side.)
        Case::new("txn-v2/produce-commit")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 5, init))
            .then(step(ApiKey::Produce, 12, |c| produce(c, 0, 0)))
            .then(step(ApiKey::EndTxn, 5, |c| end(c, true, 0))),
        // Writes to a partition not in the transaction: Produce v11 knows TRANSACTION_ABORTABLE, v10 does not.
        Case::new("txn-v2/produce-not-added")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 5, init))
            .then(step(ApiKey::Produce, 11, |c| produce(c, 0, 0)))
            .then(step(ApiKey::Produce, 10, |c| produce(c, 0, 0))),
        // TxnOffsetCommit v4 without AddOffsetsToTxn is refused; v5 adds the group's partition itself.
        Case::new("txn-v2/offset-commit")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 5, init))
            .then(step(ApiKey::TxnOffsetCommit, 4, offset_commit))
            .then(step(ApiKey::TxnOffsetCommit, 5, offset_commit))
            .then(step(ApiKey::EndTxn, 5, |c| end(c, true, 0))),
    ]
}
