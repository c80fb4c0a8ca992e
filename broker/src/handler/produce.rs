//! Produce (key 0): validated batches appended as the client's bytes; per-partition errors. All partitions of
//! one request are appended in one blocking section.
//!
//! Transactional batches are appended only to a partition in the producer's open transaction (Kafka's
//! `transaction.partition.verification.enable`, KIP-890): else TRANSACTION_ABORTABLE (INVALID_TXN_STATE before
//! Produce v11; a stale epoch INVALID_PRODUCER_EPOCH), nothing written. Produce v12+ is transaction version 2
//! (KIP-890 part 2): a transactional batch adds its partition to the producer's transaction first. Control
//! batches are the coordinator's: a client's is INVALID_RECORD.
//!
//! As Kafka's `ProduceRequest.validateRecords`, a v3+ partition carries exactly one complete magic-v2 batch
//! (else INVALID_RECORD), and acks other than 0, 1, -1 is INVALID_REQUIRED_ACKS for every partition that gets
//! that far.

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::produce_response::{
    BatchIndexAndErrorMessage, PartitionProduceResponse, TopicProduceResponse,
};
use kafka_protocol::messages::{
    ProduceRequest, ProduceResponse, RequestHeader, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use strata_storage::{Error as StorageError, RecordBatch};
use tracing::debug;

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

/// The header and request with their own copies of the strings decoded from the frame (client id, transactional
/// id, topic names: a few bytes each), so that once the frame itself is dropped a partition's records may be the
/// only view of their bytes: the log then assigns offsets in them in place instead of copying them (a
/// one-partition request; with more, all but the last partition appended share the frame and are copied).
pub(crate) fn detach(
    mut h: RequestHeader,
    mut req: ProduceRequest,
) -> (RequestHeader, ProduceRequest) {
    let own = |s: &StrBytes| StrBytes::from_string(s.to_string());
    h.client_id = h.client_id.as_ref().map(own);
    h.unknown_tagged_fields.clear();
    req.transactional_id = req.transactional_id.map(|id| TransactionalId(own(&id.0)));
    req.unknown_tagged_fields.clear();
    for t in &mut req.topic_data {
        t.name = TopicName(own(&t.name.0));
        t.unknown_tagged_fields.clear();
        for p in &mut t.partition_data {
            p.unknown_tagged_fields.clear();
        }
    }
    (h, req)
}

fn failed(topic: &str, partition: i32, e: &Error) -> PartitionProduceResponse {
    // Produce answers a fenced transactional producer INVALID_PRODUCER_EPOCH, as Kafka's verification does.
    failed_with(
        topic,
        partition,
        e,
        error_code::versioned_txn_code(e, false),
    )
}

fn failed_with(topic: &str, partition: i32, e: &Error, code: i16) -> PartitionProduceResponse {
    let msg = error_code::message(e);
    debug!(topic, partition, code, %msg, "produce rejected");
    PartitionProduceResponse::default()
        .with_index(partition)
        .with_error_code(code)
        .with_base_offset(-1)
        .with_error_message(Some(sb(msg)))
}

/// The first Produce version that carries only magic v2, one batch per partition.
const ONE_V2_BATCH_FROM: i16 = 3;

/// A refused append, answered as Kafka's `ReplicaManager.appendToLocalLog` answers it: records refused one by one
/// (KIP-467) are named in `record_errors`, and only then is Kafka's message sent as `error_message` (strata's own
/// message otherwise); the log's refusals carry the partition's log start offset, as Kafka's `processFailedRecord`.
fn failed_append(
    topic: &str,
    partition: i32,
    e: &Error,
    code: i16,
    log_start_offset: impl FnOnce() -> i64,
) -> PartitionProduceResponse {
    let mut resp = failed_with(topic, partition, e, code);
    let storage = match e {
        Error::Storage(s) => Some(s),
        _ => None,
    };
    // Kafka's listed exceptions (too large, corrupt, unknown partition, storage) answer -1; the log's refusals
    // of the records or of their producer answer its log start offset.
    if matches!(
        storage,
        Some(
            StorageError::RecordValidation { .. }
                | StorageError::InvalidRecord { .. }
                | StorageError::OutOfOrderSequence { .. }
                | StorageError::InvalidProducerEpoch { .. }
        )
    ) {
        resp.log_start_offset = log_start_offset();
    }
    if let Some(StorageError::RecordValidation { record_errors, .. }) = storage {
        resp.record_errors = record_errors
            .iter()
            .map(|r| {
                BatchIndexAndErrorMessage::default()
                    .with_batch_index(r.batch_index)
                    .with_batch_index_error_message(Some(sb(r.message.clone())))
            })
            .collect();
    }
    resp
}

/// Checks one partition's target and payload before anything is written.
fn precheck(
    broker: &Broker,
    topic: &str,
    records: Option<Bytes>,
    version: i16,
    acks: i16,
) -> Result<Bytes> {
    let meta = broker
        .registry()
        .get(topic)
        .ok_or_else(|| Error::UnknownTopic(topic.to_string()))?;
    if meta.internal {
        return Err(Error::InternalTopic(topic.to_string()));
    }
    let records = records
        .filter(|r| !r.is_empty())
        .ok_or(Error::ProduceWithoutRecords)?;
    if version >= ONE_V2_BATCH_FROM {
        one_v2_batch(&records).map_err(|reason| Error::InvalidProduceRecords {
            topic: topic.to_string(),
            reason,
        })?;
    }
    if !(-1..=1).contains(&acks) {
        return Err(Error::InvalidRequiredAcks(acks));
    }
    Ok(records)
}

/// Whether `records` hold exactly one complete batch of magic 2, counted as Kafka's batch iterator does (the
/// 12-byte offset + length prefix, then `length` bytes; an incomplete tail is no batch). The batch's own checks
/// (CRC, header) are the log's.
fn one_v2_batch(records: &[u8]) -> std::result::Result<(), String> {
    const LOG_OVERHEAD: usize = 12;
    const MAGIC_AT: usize = 16;
    let mut at = 0usize;
    let mut batches = 0usize;
    let mut first_magic = None;
    while let Some(len) = records.get(at + 8..at + LOG_OVERHEAD) {
        let len = i32::from_be_bytes(len.try_into().expect("4 bytes"));
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| (at + LOG_OVERHEAD).checked_add(l))
            .filter(|end| *end <= records.len());
        let Some(end) = end else { break };
        first_magic = first_magic.or_else(|| records.get(at + MAGIC_AT).copied());
        batches += 1;
        at = end;
    }
    match (batches, first_magic) {
        (0, _) => Err(format!(
            "no complete record batch in {} bytes (a batch is shorter than its length field)",
            records.len()
        )),
        (_, Some(m)) if m != 2 => Err(format!(
            "Produce v3+ carries only magic v2 record batches, got magic {m}"
        )),
        (1, _) => Ok(()),
        (n, _) => Err(format!(
            "Produce v3+ carries exactly one record batch per partition, got {n}"
        )),
    }
}

/// The producer of the transactional batches in `records`, if any (they all carry the same one: a client
/// request holds one producer's batches); a control batch is refused. Malformed batches, and batches whose CRC
/// does not hold, are left to the log's validation: what is read here stops at the first of them, as the log's
/// own walk does.
///
/// The headers are read without summing the CRC (the log sums it once when it validates the batches); only a
/// batch that decides something (control, or the first transactional one) has its CRC, and those of the batches
/// before it, checked here.
fn transactional_producer(
    topic: &str,
    partition: i32,
    records: &Bytes,
) -> Result<Option<(i64, i16)>> {
    let mut producer = None;
    // Batches [0, crc_checked) hold their CRC.
    let mut crc_checked = 0;
    for (i, batch) in RecordBatch::iter_unchecked_crc(records).enumerate() {
        let Ok(batch) = batch else {
            break;
        };
        if !(batch.is_control() || batch.is_transactional() && producer.is_none()) {
            continue;
        }
        if !crcs_hold(records, crc_checked, i) {
            break;
        }
        crc_checked = i + 1;
        if batch.is_control() {
            return Err(Error::ControlBatchFromClient {
                topic: topic.to_string(),
                partition,
            });
        }
        producer = Some((batch.producer_id(), batch.producer_epoch()));
    }
    Ok(producer)
}

/// Whether the batches of `records` at positions `from..=through` all hold their CRC.
fn crcs_hold(records: &Bytes, from: usize, through: usize) -> bool {
    RecordBatch::iter_unchecked_crc(records)
        .take(through + 1)
        .skip(from)
        .all(|b| b.is_ok_and(|b| b.ensure_valid_crc().is_ok()))
}

fn append(
    broker: &Broker,
    topic: &str,
    partition: i32,
    records: Bytes,
    acks: i16,
    transactional_id: Option<&str>,
    version: i16,
) -> PartitionProduceResponse {
    let log = match broker.topics().log(topic, partition) {
        Ok(log) => log,
        Err(e) => return failed(topic, partition, &e),
    };
    // One broker is the whole in-sync replica set: acks=all needs min.insync.replicas <= 1 (Kafka refuses the
    // append with NOT_ENOUGH_REPLICAS, writing nothing).
    let min_isr = if acks == -1 {
        log.config().min_insync_replicas
    } else {
        1
    };
    if min_isr > 1 {
        let e = Error::NotEnoughReplicas {
            topic: topic.to_string(),
            partition,
            min_isr,
        };
        return failed(topic, partition, &e);
    }
    // Old message formats up-converted, the topic's codec applied (see records.rs).
    let records = match super::records::for_append(&log.config(), records, version) {
        Ok(r) => r,
        Err(e) => return failed(topic, partition, &e),
    };
    let txn = match transactional_producer(topic, partition, &records) {
        Ok(t) => t,
        Err(e) => return failed(topic, partition, &e),
    };
    let write = || log.append_as_leader(records, 0).map_err(Error::from);
    // Produce v12+ is transaction version 2 (KIP-890 part 2): the partition joins the transaction here, the
    // producer sends no AddPartitionsToTxn.
    let implicit_add = version >= 12;
    let result: Result<_> = match (txn, transactional_id) {
        (Some(_), None) => Err(crate::error::TxnError::MissingTransactionalId.into()),
        (Some(producer), Some(id))
            if implicit_add || broker.config().transaction.partition_verification =>
        {
            let tp = (topic.to_string(), partition);
            broker
                .txn()
                .write_in_transaction(id, producer, &tp, implicit_add, write)
        }
        _ => write(),
    };
    match result {
        Ok(info) => PartitionProduceResponse::default()
            .with_index(partition)
            .with_base_offset(info.first_offset)
            .with_log_append_time_ms(info.log_append_time_ms)
            .with_log_start_offset(info.log_start_offset),
        // Produce v11+ knows TRANSACTION_ABORTABLE (KIP-890).
        Err(e) => failed_append(
            topic,
            partition,
            &e,
            error_code::verified_write_code(&e, false, version >= 11),
            || log.log_start_offset(),
        ),
    }
}

/// Answers Produce (acks 0/1/-1: on one node, -1 is satisfied once the append returns, unless the topic's
/// `min.insync.replicas` asks for more than one replica).
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: ProduceRequest,
) -> ProduceResponse {
    // (topic index, partition, Ok(records) to append | Err(response))
    let mut work: Vec<(usize, String, i32, Result<Bytes, PartitionProduceResponse>)> = Vec::new();
    let mut names = Vec::with_capacity(req.topic_data.len());
    let (acks, version) = (req.acks, h.request_api_version);
    for (ti, t) in req.topic_data.into_iter().enumerate() {
        // Produce v13+ (KIP-516) names topics by id; the nil id names none (UNKNOWN_TOPIC_ID, as Kafka).
        let (topic, unknown_id) = if h.request_api_version >= 13 && t.topic_id.is_nil() {
            (String::new(), Some(Error::UnknownTopicId(t.topic_id)))
        } else {
            super::metadata::topic_by_name_or_id(broker, &t.name, t.topic_id)
        };
        for p in t.partition_data {
            let item = match &unknown_id {
                Some(e) => Err(failed(&topic, p.index, e)),
                None => precheck(broker, &topic, p.records, version, acks)
                    .map_err(|e| failed(&topic, p.index, &e)),
            };
            work.push((ti, topic.clone(), p.index, item));
        }
        names.push((t.name, t.topic_id));
    }
    let b = broker.clone();
    let transactional_id = req.transactional_id.map(|id| id.0.to_string());
    let done = blocking(move || {
        Ok(work
            .into_iter()
            .map(|(ti, topic, p, item)| {
                let resp = match item {
                    Ok(records) => {
                        let size = crate::metrics::BrokerMetrics::measure(&records);
                        let resp = append(
                            &b,
                            &topic,
                            p,
                            records,
                            acks,
                            transactional_id.as_deref(),
                            version,
                        );
                        b.metrics().produced(&topic, size, resp)
                    }
                    Err(resp) => resp,
                };
                (ti, resp)
            })
            .collect::<Vec<_>>())
    })
    .await;
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // The blocking pool failed: nothing is known to be written; report it for every partition.
            return ProduceResponse::default().with_responses(
                names
                    .into_iter()
                    .map(|(n, id)| {
                        TopicProduceResponse::default()
                            .with_name(n)
                            .with_topic_id(id)
                            .with_partition_responses(vec![failed("", 0, &e)])
                    })
                    .collect(),
            );
        }
    };
    if done.iter().any(|(_, r)| r.error_code == error_code::NONE) {
        broker.notify_appended();
    }
    let mut per_topic: Vec<Vec<PartitionProduceResponse>> =
        names.iter().map(|_| Vec::new()).collect();
    for (ti, resp) in done {
        per_topic[ti].push(resp);
    }
    let responses = names
        .into_iter()
        .zip(per_topic)
        .map(|((n, id), parts)| {
            TopicProduceResponse::default()
                .with_name(n)
                .with_topic_id(id)
                .with_partition_responses(parts)
        })
        .collect();
    ProduceResponse::default().with_responses(responses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_storage::RecordBatchBuilder;

    fn batch(transactional: bool, control: bool) -> Vec<u8> {
        let mut b = RecordBatchBuilder::new()
            .producer(7, 3, 0)
            .transactional(transactional)
            .control(control);
        b.append(1, Some(b"k"), Some(b"v"), &[]);
        b.build().to_vec()
    }

    fn crc_broken(mut b: Vec<u8>) -> Vec<u8> {
        *b.last_mut().expect("bytes") ^= 1;
        b
    }

    #[test]
    fn the_producer_is_read_only_from_batches_whose_crc_holds() {
        let (plain, txn, ctrl) = (batch(false, false), batch(true, false), batch(true, true));
        let read = |parts: &[&[u8]]| transactional_producer("t", 0, &Bytes::from(parts.concat()));
        assert_eq!(read(&[&plain]).expect("plain"), None);
        assert_eq!(read(&[&plain, &txn]).expect("txn"), Some((7, 3)));
        assert!(matches!(
            read(&[&plain, &ctrl]),
            Err(Error::ControlBatchFromClient { .. })
        ));
        // A batch whose CRC fails, and what follows it, are left to the log's validation.
        assert_eq!(read(&[&crc_broken(txn.clone())]).expect("bad txn"), None);
        assert_eq!(read(&[&crc_broken(ctrl.clone())]).expect("bad ctrl"), None);
        assert_eq!(
            read(&[&crc_broken(plain.clone()), &txn]).expect("bad first"),
            None
        );
        assert_eq!(read(&[&crc_broken(plain), &ctrl]).expect("bad first"), None);
        assert_eq!(
            read(&[&txn, &crc_broken(ctrl)]).expect("txn first"),
            Some((7, 3))
        );
    }
}
