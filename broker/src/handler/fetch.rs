//! Fetch (key 1): whole batches up to the high watermark (read_uncommitted) or the last stable offset
//! (read_committed, with the aborted transactions overlapping the data so the consumer skips them, as Kafka),
//! per-partition and total byte limits, long poll on `min_bytes` / `max_wait_ms` woken by appends. Records are always `Some` (empty, never null). Offsets below the
//! local log start but at or above the log start are read through the [`crate::remote::RemoteLogReader`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_protocol::messages::{FetchRequest, FetchResponse, ProducerId, RequestHeader};
use strata_storage::record::BatchHeader;
use strata_storage::{FileRegion, LogSlice, RecordBatch, UnifiedLog};

use super::blocking;
use crate::broker::Broker;
use crate::codec::parts::Ref;
use crate::error::{Error, Result};
use crate::error_code;
use crate::remote::RemoteLogReader;

struct Wanted {
    topic: String,
    /// Fetch v13+ names topics by id: an id the broker does not know (answered UNKNOWN_TOPIC_ID).
    unknown_id: Option<uuid::Uuid>,
    partition: i32,
    offset: i64,
    max_bytes: usize,
    /// The Fetch version, when older than v10 (no zstd).
    before_zstd: Option<i16>,
}

/// A partition to be read from remote storage after the local pass: (topic idx, partition idx, log, offset, budget).
type RemoteRead = (usize, usize, Arc<UnifiedLog>, i64, usize);

/// Local reads of at least this many bytes are left in their files and sent with `sendfile` (on a connection
/// without TLS); smaller ones are read into memory, where a `pread` costs less than finding the batches' end
/// from their headers and a system call of their own.
const SENDFILE_FROM: usize = 32 * 1024;

/// The record sets a response leaves in their files: each placeholder (see `crate::codec::parts`) and the file
/// region it stands for, filled by [`handle_into`] for the encoder.
pub(crate) type Regions = parking_lot::Mutex<Vec<(Bytes, FileRegion)>>;

/// What one local pass gathered: the response topics, the bytes gathered, the partitions whose offset is only
/// in remote storage, and the record sets left in their files.
type Gathered = (
    Vec<Vec<PartitionData>>,
    usize,
    Vec<RemoteRead>,
    Vec<(Bytes, FileRegion)>,
);

/// Reads every wanted partition once from local logs; with `sendfile`, large reads stay in their files.
fn read_all(
    broker: &Broker,
    wanted: &[Vec<Wanted>],
    max_bytes: usize,
    read_committed: bool,
    sendfile: bool,
) -> Gathered {
    let mut total = 0usize;
    let mut remote = Vec::new();
    let mut regions = Vec::new();
    let mut out = Vec::with_capacity(wanted.len());
    for (ti, topic) in wanted.iter().enumerate() {
        let mut parts = Vec::with_capacity(topic.len());
        for (pi, w) in topic.iter().enumerate() {
            let budget = w.max_bytes.min(max_bytes.saturating_sub(total));
            let files = sendfile.then_some(&mut regions);
            let (data, tiered) = read_one(broker, w, budget, total == 0, read_committed, files);
            if let Some(log) = tiered {
                remote.push((ti, pi, log, w.offset, budget.max(1)));
            }
            total += data.records.as_ref().map_or(0, Bytes::len);
            parts.push(data);
        }
        out.push(parts);
    }
    (out, total, remote, regions)
}

/// Reads one partition from its local log (`regions`: where a read left in its file goes, when it may).
fn read_one(
    broker: &Broker,
    w: &Wanted,
    budget: usize,
    first: bool,
    read_committed: bool,
    regions: Option<&mut Vec<(Bytes, FileRegion)>>,
) -> (PartitionData, Option<Arc<UnifiedLog>>) {
    // Kafka answers a read_uncommitted fetch, and a failed read, with null aborted transactions (the codec's
    // default is an empty list); read_committed reads fill them in below.
    let base = PartitionData::default()
        .with_partition_index(w.partition)
        .with_aborted_transactions(None);
    let result: Result<(PartitionData, Option<Arc<UnifiedLog>>)> = (|| {
        if let Some(id) = w.unknown_id {
            return Err(Error::UnknownTopicId(id));
        }
        let log = broker.topics().log(&w.topic, w.partition)?;
        if let Some(version) = w.before_zstd {
            if log.config().compression == Some(strata_storage::record::Compression::Zstd) {
                return Err(Error::ZstdBeforeFetchV10 {
                    topic: w.topic.clone(),
                    version,
                });
            }
        }
        let hw = log.high_watermark();
        let lso = log.last_stable_offset();
        let log_start = log.log_start_offset();
        let base = base
            .clone()
            .with_high_watermark(hw)
            .with_last_stable_offset(lso)
            .with_log_start_offset(log_start);
        let empty = base.clone().with_records(Some(Bytes::new()));
        // Kafka's `FetchIsolation`: read_committed reads below the last stable offset; between it and the high
        // watermark there is nothing to return yet (not an error).
        let upper = if read_committed { lso } else { hw };
        if (w.offset >= upper && w.offset <= hw) || (budget == 0 && !first) {
            return Ok((empty, None));
        }
        if w.offset >= log_start
            && w.offset < log.local_log_start_offset()
            && broker.remote_log_reader().is_some()
        {
            return Ok((empty, Some(log)));
        }
        let (records, next_offset) = read_local(&log, w.offset, budget, first, upper, regions)?;
        let base = if read_committed {
            // Headers only: these bytes are this log's own, checked on append (a CRC pass here cost every
            // read_committed consumer — librdkafka's default — a pass over every byte it fetched). A read left
            // in its file knows the offset after it.
            let end = next_offset.unwrap_or_else(|| {
                RecordBatch::iter_unchecked_crc(&records)
                    .filter_map(|b| b.ok())
                    .last()
                    .map_or(w.offset, |b| b.next_offset())
            });
            // By first offset: the `.txnindex` lists them in marker order, and kafkajs consumes the list front
            // to back expecting first offsets in order (it showed aborted records otherwise).
            let mut aborted = log.collect_aborted(w.offset, end)?;
            aborted.sort_by_key(|t| (t.first_offset, t.producer_id));
            let aborted = aborted
                .into_iter()
                .map(|t| {
                    AbortedTransaction::default()
                        .with_producer_id(ProducerId(t.producer_id))
                        .with_first_offset(t.first_offset)
                })
                .collect();
            base.with_aborted_transactions(Some(aborted))
        } else {
            base
        };
        Ok((base.with_records(Some(records)), None))
    })();
    match result {
        Ok(p) => p,
        Err(e) => {
            let code = error_code::code(&e);
            let mut p = base.with_error_code(code).with_high_watermark(-1);
            // Kafka answers a partition it does not know with an empty list (not null).
            if matches!(
                e,
                Error::UnknownTopicOrPartition(_)
                    | Error::UnknownTopic(_)
                    | Error::UnknownTopicId(_)
            ) {
                p = p.with_aborted_transactions(Some(Vec::new()));
            }
            if let Error::Storage(strata_storage::Error::OffsetOutOfRange { log_end, .. }) = &e {
                p = p.with_high_watermark(*log_end);
                if let Ok(log) = broker.topics().log(&w.topic, w.partition) {
                    p = p.with_log_start_offset(log.log_start_offset());
                }
            }
            (p, None)
        }
    }
}

/// Reads whole batches from `offset` below `upper`: in memory, or (with `regions`, when large enough) left in the
/// file with a placeholder for the response and the offset after them.
fn read_local(
    log: &UnifiedLog,
    offset: i64,
    budget: usize,
    first: bool,
    upper: i64,
    regions: Option<&mut Vec<(Bytes, FileRegion)>>,
) -> Result<(Bytes, Option<i64>)> {
    let Some(regions) = regions else {
        return Ok((log.read(offset, budget, first, Some(upper))?.records, None));
    };
    match log.read_slice(offset, budget, first, Some(upper), SENDFILE_FROM)? {
        LogSlice::Bytes(b) => Ok((b, None)),
        LogSlice::File {
            region,
            next_offset,
        } => match crate::codec::parts::placeholder(regions.len(), region.len()) {
            Some(ph) => {
                regions.push((ph.clone(), region));
                Ok((ph, Some(next_offset)))
            }
            None => Ok((region.read()?, Some(next_offset))),
        },
    }
}

/// The aborted transactions overlapping remote `records` read from `offset`: those of the remote segments' indexes
/// and, for a transaction whose ABORT marker is already in a local segment, the local indexes' (Kafka's
/// `collectAbortedTransactions` walks both).
async fn aborted_in(
    reader: &dyn RemoteLogReader,
    log: &Arc<UnifiedLog>,
    offset: i64,
    records: &Bytes,
) -> Result<Vec<AbortedTransaction>> {
    let end = end_offset(records, offset);
    let mut all = reader
        .aborted(log.clone(), offset, end)
        .await
        .map_err(|source| Error::RemoteRead {
            offset,
            log_start: log.log_start_offset(),
            source,
        })?;
    all.extend(log.collect_aborted(offset, end)?);
    all.sort_by_key(|t| (t.first_offset, t.producer_id));
    all.dedup();
    Ok(all
        .into_iter()
        .map(|t| {
            AbortedTransaction::default()
                .with_producer_id(ProducerId(t.producer_id))
                .with_first_offset(t.first_offset)
        })
        .collect())
}

/// The offset after the last whole batch of `records` (`offset` when there is none), from the batch headers: a
/// remote read returns whole batches, and a CRC pass over every byte fetched only to find the end cost about 6 %
/// of the broker's CPU in a remote catch-up (Kafka checks no CRC when serving a fetch either).
fn end_offset(records: &[u8], offset: i64) -> i64 {
    let mut end = offset;
    let mut at = 0usize;
    while let Ok(Some(h)) = BatchHeader::parse(&records[at..]) {
        if at + h.size > records.len() {
            break;
        }
        end = h.last_offset + 1;
        at += h.size;
    }
    end
}

/// Reads the tiered partitions concurrently and puts their records (or errors) into `parts`.
async fn read_remote(
    broker: &Broker,
    parts: &mut [Vec<PartitionData>],
    remote: Vec<RemoteRead>,
    read_committed: bool,
) -> usize {
    let Some(reader) = broker.remote_log_reader() else {
        return 0;
    };
    let reads = remote.into_iter().map(|(ti, pi, log, offset, budget)| {
        let f = reader.read(log.clone(), offset, budget);
        async move {
            let r = match f.await {
                Ok(records) if read_committed => {
                    aborted_in(reader.as_ref(), &log, offset, &records)
                        .await
                        .map(|a| (records, Some(a)))
                }
                // Remote retention may have moved the log start past the offset since the range check: the
                // code is decided against the log start now (OFFSET_OUT_OF_RANGE then, with the new start).
                r => r
                    .map(|records| (records, None))
                    .map_err(|source| Error::RemoteRead {
                        offset,
                        log_start: log.log_start_offset(),
                        source,
                    }),
            };
            (ti, pi, log, r)
        }
    });
    let mut total = 0;
    for (ti, pi, log, result) in futures::future::join_all(reads).await {
        let p = &mut parts[ti][pi];
        match result {
            Ok((records, aborted)) => {
                total += records.len();
                p.records = Some(records);
                if let Some(aborted) = aborted {
                    p.aborted_transactions = Some(aborted);
                }
            }
            Err(e) => {
                p.error_code = error_code::code(&e);
                if e.is_offset_out_of_range() {
                    p.log_start_offset = log.log_start_offset();
                }
                tracing::debug!(tp = %log.topic_partition(), code = p.error_code, error = %e,
                    "remote read failed");
            }
        }
    }
    total
}

/// The record sets of a response, for encoding it without copying them, and the file regions its placeholders
/// stand for (`crate::codec::parts`).
pub(crate) fn record_sets(resp: &FetchResponse, regions: &Regions) -> Vec<Ref> {
    let mut refs: Vec<Ref> = resp
        .responses
        .iter()
        .flat_map(|t| t.partitions.iter())
        .filter_map(|p| p.records.clone())
        .filter(|b| !crate::codec::parts::is_placeholder(b))
        .map(|b| (b, None))
        .collect();
    refs.extend(
        std::mem::take(&mut *regions.lock())
            .into_iter()
            .map(|(ph, region)| (ph, Some(region))),
    );
    refs
}

/// Answers Fetch with every record set in memory.
pub async fn handle(broker: &Arc<Broker>, h: &RequestHeader, req: FetchRequest) -> FetchResponse {
    handle_into(broker, h, req, None).await
}

/// Answers Fetch; with `regions`, on a connection that takes them, large local reads stay in their files: the
/// response holds placeholders for them, and `regions` what they stand for (the encoder must swap them in).
pub(crate) async fn handle_into(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: FetchRequest,
    regions: Option<&Regions>,
) -> FetchResponse {
    // Fetch sessions (KIP-227): strata keeps none. A full fetch (epoch 0 asks for a session, -1 for none) is
    // answered sessionless (session id 0), which tells the client to send full fetches from then on; an
    // incremental fetch (epoch > 0) names a session that does not exist, as Kafka answers for an evicted one.
    if req.session_epoch > 0 {
        let e = Error::FetchSessionIdNotFound {
            session_id: req.session_id,
            epoch: req.session_epoch,
        };
        return FetchResponse::default().with_error_code(error_code::code(&e));
    }
    let names: Vec<_> = req
        .topics
        .iter()
        .map(|t| (t.topic.clone(), t.topic_id))
        .collect();
    let wanted = Arc::new(wanted(broker, h.request_api_version, &req));
    let sendfile = regions.is_some() && crate::broker::request::sendfile();
    let (partitions, files) =
        match read_until_ready(broker, &wanted, Limits::of(&req), sendfile).await {
            Ok(read) => read,
            Err(e) => return FetchResponse::default().with_error_code(error_code::code(&e)),
        };
    if let Some(regions) = regions {
        *regions.lock() = files;
    }
    respond(broker, names, &wanted, partitions)
}

/// The partitions a request asks for, per topic in request order, each with its topic's resolved name.
fn wanted(broker: &Broker, version: i16, req: &FetchRequest) -> Vec<Vec<Wanted>> {
    // Fetch v13+ (KIP-516) names topics by id; the response carries the id back.
    let by_id = version >= 13;
    req.topics
        .iter()
        .map(|t| {
            let resolved = if by_id {
                broker.registry().name_of(t.topic_id)
            } else {
                Some(t.topic.0.to_string())
            };
            t.partitions
                .iter()
                .map(|p| Wanted {
                    topic: resolved.clone().unwrap_or_default(),
                    unknown_id: resolved.is_none().then_some(t.topic_id),
                    partition: p.partition,
                    offset: p.fetch_offset,
                    max_bytes: p.partition_max_bytes.max(0) as usize,
                    before_zstd: (version < 10).then_some(version),
                })
                .collect()
        })
        .collect()
}

/// A request's byte limits, isolation level and long-poll deadline.
#[derive(Clone, Copy)]
struct Limits {
    max_bytes: usize,
    min_bytes: usize,
    read_committed: bool,
    deadline: Instant,
}

impl Limits {
    fn of(req: &FetchRequest) -> Self {
        Limits {
            max_bytes: if req.max_bytes <= 0 {
                usize::MAX
            } else {
                req.max_bytes as usize
            },
            min_bytes: req.min_bytes.max(0) as usize,
            // IsolationLevel: 0 READ_UNCOMMITTED, 1 READ_COMMITTED (Fetch v4+; older versions read uncommitted).
            read_committed: req.isolation_level == 1,
            deadline: Instant::now() + Duration::from_millis(req.max_wait_ms.max(0) as u64),
        }
    }
}

/// Reads the wanted partitions (local logs, then remote storage) until `min_bytes` arrived, a partition failed,
/// the deadline passed or the broker shuts down; woken by appends in between. Returns them with the record sets
/// left in their files (with `sendfile`).
async fn read_until_ready(
    broker: &Arc<Broker>,
    wanted: &Arc<Vec<Vec<Wanted>>>,
    limits: Limits,
    sendfile: bool,
) -> Result<(Vec<Vec<PartitionData>>, Vec<(Bytes, FileRegion)>)> {
    let Limits {
        max_bytes,
        min_bytes,
        read_committed,
        deadline,
    } = limits;
    let cancel = broker.cancel_token();
    loop {
        // Register interest before reading so an append between the read and the wait is not missed.
        let notified = broker.appended().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let b = broker.clone();
        let w = wanted.clone();
        let (mut parts, mut total, remote, files) =
            blocking(move || Ok(read_all(&b, &w, max_bytes, read_committed, sendfile))).await?;
        if !remote.is_empty() {
            total += read_remote(broker, &mut parts, remote, read_committed).await;
        }
        let has_error = parts.iter().flatten().any(|p| p.error_code != 0);
        if min_bytes == 0
            || total >= min_bytes
            || has_error
            || Instant::now() >= deadline
            || cancel.is_cancelled()
        {
            return Ok((parts, files));
        }
        tokio::select! {
            _ = &mut notified => {}
            _ = tokio::time::sleep_until(deadline.into()) => {}
            _ = cancel.cancelled() => {}
        }
    }
}

/// The response: each requested topic (by name or id, as asked) with its partitions; metrics by topic name.
fn respond(
    broker: &Broker,
    names: Vec<(kafka_protocol::messages::TopicName, uuid::Uuid)>,
    wanted: &[Vec<Wanted>],
    partitions: Vec<Vec<PartitionData>>,
) -> FetchResponse {
    // Metrics by topic name, also for a fetch by topic id (v13+, whose request names carry no name).
    let topic_names: Vec<_> = names
        .iter()
        .zip(wanted.iter())
        .map(|((name, _), w)| match w.first() {
            Some(w) if !w.topic.is_empty() => {
                kafka_protocol::messages::TopicName(super::sb(w.topic.clone()))
            }
            _ => name.clone(),
        })
        .collect();
    broker.metrics().fetched(&topic_names, &partitions);
    let responses = names
        .into_iter()
        .zip(partitions)
        .map(|((topic, topic_id), partitions)| {
            FetchableTopicResponse::default()
                .with_topic(topic)
                .with_topic_id(topic_id)
                .with_partitions(partitions)
        })
        .collect();
    FetchResponse::default().with_responses(responses)
}
