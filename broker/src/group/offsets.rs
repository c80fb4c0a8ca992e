//! Committed offsets, kept in the internal `__consumer_offsets` log in Kafka's record format so they survive
//! restarts (and any Kafka tool can read them):
//!
//! | part | layout |
//! |---|---|
//! | key (version 1) | `version i16 = 1`, `group string`, `topic string`, `partition i32` |
//! | value (version 3) | `version i16 = 3`, `offset i64`, `leader_epoch i32`, `metadata string`, `commit_timestamp i64` |
//! | tombstone | key as above, null value (offset deleted with its group or its topic) |
//!
//! `string` is an i16 length then UTF-8 bytes. The partition of a group is `(java hashCode(group) & 0x7fffffff) % n`.
//!
//! The topic is `cleanup.policy=compact`, as in Kafka, so time and size retention never remove the latest commit
//! of a key (a quiet group keeps its position however old its last commit), and the log cleaner compacts it as any
//! compacted topic (`strata_storage::cleaner`): the latest record per key stays, tombstones go
//! `delete.retention.ms` after the cleaner first passed them, records of aborted transactions go, open
//! transactions stay. Replay therefore reads the latest record of each key, whatever the cleaner removed, and the
//! rules here keep the replayed state the state before a clean (as Kafka's `GroupMetadata`):
//!
//! * a transactional commit becomes the committed offset at its COMMIT marker only if the record is later in the
//!   log than the committed one's (Kafka's `CommitRecordMetadataAndOffset.olderThan`): the cleaner keeps the later;
//! * a tombstone also drops the pending transactional commits of its key (Kafka's `removeOffsets`): the cleaner
//!   drops the earlier record.
//!
//! Logs written by the rewrite-based compaction of earlier versions (live offsets appended again, log start moved)
//! replay as any log.

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use strata_storage::time::now_ms;
use strata_storage::{RecordBatch, UnifiedLog};
use tokio::sync::Notify;

use crate::error::{Error, GroupError, Result};
use crate::topics::{TopicManager, CONSUMER_OFFSETS};

pub use super::offset_entry::{OffsetEntry, Tp};

/// What the offset store writes through, handed to it at start-up: the `__consumer_offsets` logs (reached through
/// the topic component, which recreates a partition the registry lists but the disk lost), their partition count,
/// and the notifier that wakes fetches waiting for new records.
#[derive(Debug, Clone)]
pub struct OffsetsLog {
    topics: Arc<TopicManager>,
    partitions: i32,
    appended: Arc<Notify>,
}

impl OffsetsLog {
    /// The `__consumer_offsets` logs of `topics` (created by [`TopicManager::open`]); `appended` is notified after
    /// each write.
    pub fn new(topics: Arc<TopicManager>, appended: Arc<Notify>) -> Self {
        let partitions = topics
            .registry()
            .get(CONSUMER_OFFSETS)
            .map_or(0, |m| m.partitions);
        OffsetsLog {
            topics,
            partitions,
            appended,
        }
    }

    fn log(&self, partition: i32) -> Result<Arc<UnifiedLog>> {
        self.topics.log(CONSUMER_OFFSETS, partition)
    }
}

/// A committed offset and the `__consumer_offsets` offset of the record holding it.
#[derive(Debug, Clone)]
struct Stored {
    entry: OffsetEntry,
    at: i64,
}

/// In-memory view of committed offsets, written through to `__consumer_offsets`.
#[derive(Debug, Default)]
pub struct OffsetStore {
    /// `None` only in tests of the coordinator alone: every write is then refused.
    log: Option<OffsetsLog>,
    cache: Mutex<HashMap<String, BTreeMap<Tp, Stored>>>,
    /// The latest group metadata record value of each classic group (see [`super::record`]), kept so a restart
    /// knows the group.
    group_metadata: Mutex<HashMap<String, Bytes>>,
    /// The live KIP-848 consumer group records of each group ([`super::consumer_record`]), by key.
    consumer_records: Mutex<HashMap<String, BTreeMap<Bytes, Bytes>>>,
    /// Held across an append and its cache update, so the log orders the writes of a key as the cache does.
    writes: Mutex<()>,
    /// Offsets committed in open transactions ([`super::txn_offsets`]).
    pending: super::txn_offsets::PendingTxnOffsets,
    /// Unit tests of the coordinator alone: writes without a log succeed (numbered from 0) instead of being
    /// refused.
    #[cfg(test)]
    memory_only: Option<std::sync::atomic::AtomicI64>,
}

/// Kafka's `completePendingTxnOffsetCommit`: a transaction's commits replace the committed offsets stored earlier
/// in the log, not later ones.
fn apply_committed(
    cache: &mut HashMap<String, BTreeMap<Tp, Stored>>,
    taken: Vec<super::txn_offsets::PendingCommit>,
) {
    for (group, tp, entry, at) in taken {
        let g = cache.entry(group).or_default();
        if g.get(&tp).is_none_or(|s| s.at < at) {
            g.insert(tp, Stored { entry, at });
        }
    }
}

/// Java's `String.hashCode` (over UTF-16 code units), as Kafka uses to place a group.
fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The `__consumer_offsets` partition of `group`.
pub fn partition_for(group: &str, partitions: i32) -> i32 {
    (java_hash(group) & 0x7fff_ffff) % partitions.max(1)
}

/// Writes an i16-length string; a string longer than i16::MAX bytes is an error, never a wrapped length.
fn put_str(b: &mut BytesMut, what: &str, s: &str) -> Result<()> {
    let n = i16::try_from(s.len()).map_err(|_| Error::Protocol {
        api: "OffsetCommit".into(),
        message: format!(
            "{what} is {} bytes; __consumer_offsets stores at most {}",
            s.len(),
            i16::MAX
        ),
    })?;
    b.put_i16(n);
    b.put_slice(s.as_bytes());
    Ok(())
}

fn get_str(b: &mut Bytes) -> Option<String> {
    if b.remaining() < 2 {
        return None;
    }
    let n = b.get_i16();
    if n < 0 {
        return Some(String::new());
    }
    let n = n as usize;
    if b.remaining() < n {
        return None;
    }
    String::from_utf8(b.split_to(n).to_vec()).ok()
}

/// Encodes an offset-commit key; an error if the group id or topic is longer than i16::MAX bytes.
pub fn encode_key(group: &str, topic: &str, partition: i32) -> Result<Bytes> {
    let mut b = BytesMut::new();
    b.put_i16(1);
    put_str(&mut b, "group id", group)?;
    put_str(&mut b, "topic", topic)?;
    b.put_i32(partition);
    Ok(b.freeze())
}

/// Encodes an offset-commit value (version 3); an error if the metadata is longer than i16::MAX bytes.
pub fn encode_value(e: &OffsetEntry) -> Result<Bytes> {
    let mut b = BytesMut::new();
    b.put_i16(3);
    b.put_i64(e.offset);
    b.put_i32(e.leader_epoch);
    put_str(&mut b, "offset metadata", &e.metadata)?;
    b.put_i64(e.commit_timestamp);
    Ok(b.freeze())
}

/// Decodes an offset-commit key; `None` for other key versions (group metadata) or garbage.
pub fn decode_key(mut k: Bytes) -> Option<(String, String, i32)> {
    if k.remaining() < 2 {
        return None;
    }
    let v = k.get_i16();
    if v != 0 && v != 1 {
        return None;
    }
    let g = get_str(&mut k)?;
    let t = get_str(&mut k)?;
    if k.remaining() < 4 {
        return None;
    }
    Some((g, t, k.get_i32()))
}

/// Decodes an offset-commit value of versions 0..=4.
pub fn decode_value(mut v: Bytes) -> Option<OffsetEntry> {
    if v.remaining() < 10 {
        return None;
    }
    let version = v.get_i16();
    let offset = v.get_i64();
    let leader_epoch = if version >= 3 && v.remaining() >= 4 {
        v.get_i32()
    } else {
        -1
    };
    // Version 4 (Kafka 4.x) is flexible: a compact metadata string, tagged fields (the topic id) last, not read.
    let metadata = if version >= 4 {
        super::consumer_record::get_cstr(&mut v)?.unwrap_or_default()
    } else {
        get_str(&mut v)?
    };
    let commit_timestamp = if v.remaining() >= 8 { v.get_i64() } else { -1 };
    Some(OffsetEntry {
        offset,
        leader_epoch,
        metadata,
        commit_timestamp,
    })
}

fn record(key: Bytes, value: Option<Bytes>, ts: i64) -> Record {
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: -1,
        timestamp: ts,
        key: Some(key),
        value,
        headers: IndexMap::new(),
    }
}

fn encode_batch(records: &[Record]) -> Result<Bytes> {
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    for (i, r) in records.iter().enumerate() {
        let mut r = r.clone();
        r.offset = i as i64;
        RecordBatchEncoder::encode(&mut buf, std::iter::once(&r), &opts).map_err(|e| {
            Error::Protocol {
                api: "OffsetCommit".into(),
                message: e.to_string(),
            }
        })?;
    }
    Ok(buf.freeze())
}

impl OffsetStore {
    /// A store writing through to `log`.
    pub fn new(log: OffsetsLog) -> Self {
        OffsetStore {
            log: Some(log),
            ..Default::default()
        }
    }

    /// A store without a log whose writes succeed (unit tests of the coordinator alone).
    #[cfg(test)]
    pub(crate) fn in_memory() -> Self {
        OffsetStore {
            memory_only: Some(Default::default()),
            ..Default::default()
        }
    }

    fn out(&self) -> Result<&OffsetsLog> {
        self.log
            .as_ref()
            .ok_or_else(|| Error::UnknownTopicOrPartition(CONSUMER_OFFSETS.into()))
    }

    /// Writes the commits to `__consumer_offsets` and then to the cache if `allowed` (run with the write lock
    /// held) accepts them; else nothing is written and its refusal is returned. Blocking.
    pub fn commit(
        &self,
        group: &str,
        entries: Vec<(Tp, OffsetEntry)>,
        allowed: impl FnOnce() -> std::result::Result<(), GroupError>,
    ) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let ts = now_ms();
        let records = entries
            .iter()
            .map(|((t, p), e)| {
                Ok(record(
                    encode_key(group, t, *p)?,
                    Some(encode_value(e)?),
                    ts,
                ))
            })
            .collect::<Result<Vec<Record>>>()?;
        let _writes = self.writes.lock();
        allowed()?;
        let (_, first) = self.append(group, &records)?;
        let mut cache = self.cache.lock();
        let g = cache.entry(group.to_string()).or_default();
        for (i, (tp, entry)) in entries.into_iter().enumerate() {
            let at = first + i as i64;
            g.insert(tp, Stored { entry, at });
        }
        Ok(())
    }

    /// TxnOffsetCommit: writes the commits to `__consumer_offsets` in a transactional batch of `producer_id` /
    /// `epoch`; they become visible when the transaction's COMMIT marker reaches that partition
    /// ([`OffsetStore::complete_transaction`]). Returns the partition written. Blocking.
    pub fn commit_transactional(
        &self,
        group: &str,
        producer_id: i64,
        epoch: i16,
        entries: Vec<(Tp, OffsetEntry)>,
    ) -> Result<i32> {
        let out = self.out()?;
        let partition = partition_for(group, out.partitions);
        if entries.is_empty() {
            return Ok(partition);
        }
        let ts = now_ms();
        let records = entries
            .iter()
            .map(|((t, p), e)| {
                let mut r = record(encode_key(group, t, *p)?, Some(encode_value(e)?), ts);
                r.transactional = true;
                r.producer_id = producer_id;
                r.producer_epoch = epoch;
                Ok(r)
            })
            .collect::<Result<Vec<Record>>>()?;
        let _writes = self.writes.lock();
        let mut buf = BytesMut::new();
        let opts = RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        };
        let mut numbered = records;
        for (i, r) in numbered.iter_mut().enumerate() {
            r.offset = i as i64;
        }
        RecordBatchEncoder::encode(&mut buf, numbered.iter(), &opts).map_err(|e| {
            Error::Protocol {
                api: "TxnOffsetCommit".into(),
                message: e.to_string(),
            }
        })?;
        let first = out
            .log(partition)?
            .append_as_leader(buf.freeze(), 0)?
            .first_offset;
        strata_storage::crash_point("group.txn_offsets.after_append");
        let commits = entries
            .into_iter()
            .enumerate()
            .map(|(i, (tp, e))| (group.to_string(), tp, e, first + i as i64))
            .collect();
        self.pending.add(partition, producer_id, commits);
        Ok(partition)
    }

    /// A marker of `producer_id` was written to `partition`: on COMMIT its pending offsets become the committed
    /// ones (unless a later commit of the partition was stored meanwhile, as in Kafka), on ABORT they are dropped.
    pub fn complete_transaction(&self, partition: i32, producer_id: i64, commit: bool) {
        let _writes = self.writes.lock();
        let taken = self.pending.take(partition, producer_id);
        if commit {
            let mut cache = self.cache.lock();
            apply_committed(&mut cache, taken);
        }
    }

    /// Whether `group` has offsets of `tp` waiting for a transaction to end (OffsetFetch `require_stable`).
    pub fn has_pending(&self, group: &str, tp: &Tp) -> bool {
        self.pending.has_pending(group, tp)
    }

    /// Deletes every offset of `group` (tombstones). Blocking.
    pub fn delete_group(&self, group: &str) -> Result<()> {
        // The keys are read under the write lock: a commit between reading and tombstoning them would survive
        // in the log (and come back at the next replay) while the cache forgot it.
        let _writes = self.writes.lock();
        let keys: Vec<Tp> = {
            let cache = self.cache.lock();
            cache
                .get(group)
                .map(|g| g.keys().cloned().collect())
                .unwrap_or_default()
        };
        self.tombstone(group, &keys)?;
        self.cache.lock().remove(group);
        Ok(())
    }

    /// Deletes the committed offsets of `partitions` of `group` (tombstones; partitions without one are
    /// skipped), as OffsetDelete does. Blocking.
    pub fn delete_partitions(&self, group: &str, partitions: &[Tp]) -> Result<()> {
        let _writes = self.writes.lock();
        let present: Vec<Tp> = {
            let cache = self.cache.lock();
            let Some(g) = cache.get(group) else {
                return Ok(());
            };
            partitions
                .iter()
                .filter(|tp| g.contains_key(*tp))
                .cloned()
                .collect()
        };
        self.tombstone(group, &present)
    }

    /// Deletes every group's committed offsets of `topic` (tombstones), as Kafka does when a topic is deleted, so
    /// consumers of a later topic with the same name do not resume at stale positions. Blocking.
    pub fn delete_topic(&self, topic: &str) -> Result<()> {
        // Under the write lock throughout, as in `delete_group`.
        let _writes = self.writes.lock();
        let by_group: Vec<(String, Vec<Tp>)> = {
            let cache = self.cache.lock();
            cache
                .iter()
                .map(|(g, tps)| {
                    let keys = tps.keys().filter(|(t, _)| t == topic).cloned().collect();
                    (g.clone(), keys)
                })
                .filter(|(_, keys): &(String, Vec<Tp>)| !keys.is_empty())
                .collect()
        };
        for (group, keys) in by_group {
            self.tombstone(&group, &keys)?;
        }
        Ok(())
    }

    /// Kafka's `GroupMetadata.removeExpiredOffsets` for one group: tombstones every committed offset of `group`
    /// whose base time is at least `retention_ms` before `now_ms` — `empty_since` (when the group became empty)
    /// if given, else the offset's own commit timestamp — skipping offsets pending in a transaction. Returns how
    /// many expired. Blocking.
    pub fn expire(
        &self,
        group: &str,
        now_ms: i64,
        retention_ms: i64,
        empty_since: Option<i64>,
    ) -> Result<usize> {
        let _writes = self.writes.lock();
        let expired: Vec<Tp> = {
            let cache = self.cache.lock();
            let Some(g) = cache.get(group) else {
                return Ok(0);
            };
            g.iter()
                .filter(|(_, s)| {
                    let base = empty_since.unwrap_or(s.entry.commit_timestamp);
                    now_ms.saturating_sub(base) >= retention_ms
                })
                .map(|(tp, _)| tp.clone())
                .collect()
        };
        // Pending transactional commits are looked up without the cache lock held.
        let expired: Vec<Tp> = expired
            .into_iter()
            .filter(|tp| !self.pending.has_pending(group, tp))
            .collect();
        self.tombstone(group, &expired)?;
        Ok(expired.len())
    }

    /// Appends tombstones for `keys` of `group` and drops them from the cache, and the pending transactional
    /// commits of those keys with them (Kafka's `removeOffsets`). Called with `writes` held.
    fn tombstone(&self, group: &str, keys: &[Tp]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let ts = now_ms();
        let records = keys
            .iter()
            .map(|(t, p)| Ok(record(encode_key(group, t, *p)?, None, ts)))
            .collect::<Result<Vec<Record>>>()?;
        let (partition, _) = self.append(group, &records)?;
        let mut cache = self.cache.lock();
        if let Some(g) = cache.get_mut(group) {
            for tp in keys {
                g.remove(tp);
            }
        }
        self.pending.drop_keys(partition, group, keys);
        Ok(())
    }

    /// Appends `records` of `group` to its `__consumer_offsets` partition; returns the partition and the offset of
    /// the first record (the others follow it).
    fn append(&self, group: &str, records: &[Record]) -> Result<(i32, i64)> {
        #[cfg(test)]
        if let (None, Some(next)) = (&self.log, &self.memory_only) {
            let first = next.fetch_add(records.len() as i64, std::sync::atomic::Ordering::Relaxed);
            return Ok((0, first));
        }
        let out = self.out()?;
        let partition = partition_for(group, out.partitions);
        let log = out.log(partition)?;
        // One batch per record keeps each batch small; they are appended together.
        let batch = encode_batch(records)?;
        strata_storage::crash_point("group.offsets.before_append");
        let first = log.append_as_leader(batch, 0)?.first_offset;
        strata_storage::crash_point("group.offsets.after_append");
        out.appended.notify_waiters();
        Ok((partition, first))
    }

    /// Stores a classic group's metadata record (`None`: a tombstone, the group is deleted). Blocking.
    pub fn store_group(&self, group: &str, value: Option<Bytes>) -> Result<()> {
        let _writes = self.writes.lock();
        {
            let meta = self.group_metadata.lock();
            if meta.get(group) == value.as_ref() || (value.is_none() && !meta.contains_key(group)) {
                return Ok(());
            }
        }
        let rec = record(super::record::encode_key(group), value.clone(), now_ms());
        self.append(group, std::slice::from_ref(&rec))?;
        let mut meta = self.group_metadata.lock();
        match value {
            Some(v) => meta.insert(group.to_string(), v),
            None => meta.remove(group),
        };
        Ok(())
    }

    fn consumer_records(
        &self,
    ) -> parking_lot::MutexGuard<'_, HashMap<String, BTreeMap<Bytes, Bytes>>> {
        self.consumer_records.lock()
    }

    /// Makes `wanted` the live KIP-848 records of consumer group `group` (key → value): writes the keys whose
    /// value changed and tombstones for the keys no longer wanted, in one append (nothing when nothing changed).
    /// Blocking.
    pub fn store_consumer_records(
        &self,
        group: &str,
        wanted: BTreeMap<Bytes, Bytes>,
    ) -> Result<()> {
        let _writes = self.writes.lock();
        let ts = now_ms();
        let records: Vec<Record> = {
            let stored = self.consumer_records();
            let had = stored.get(group);
            let changed = wanted
                .iter()
                .filter(|(k, v)| had.and_then(|h| h.get(*k)) != Some(*v))
                .map(|(k, v)| record(k.clone(), Some(v.clone()), ts));
            let gone = had
                .into_iter()
                .flat_map(|h| h.keys())
                .filter(|k| !wanted.contains_key(*k))
                .map(|k| record(k.clone(), None, ts));
            changed.chain(gone).collect()
        };
        if records.is_empty() {
            return Ok(());
        }
        self.append(group, &records)?;
        {
            let mut stored = self.consumer_records();
            if wanted.is_empty() {
                stored.remove(group);
            } else {
                stored.insert(group.to_string(), wanted);
            }
        }
        Ok(())
    }

    /// The KIP-848 consumer group records replayed by [`load`](Self::load) (and stored since), by group.
    pub fn stored_consumer_records(&self) -> Vec<(String, BTreeMap<Bytes, Bytes>)> {
        self.consumer_records()
            .iter()
            .map(|(g, r)| (g.clone(), r.clone()))
            .collect()
    }

    /// The topics component (topic ids of the consumer group records); `None` without a log (unit tests).
    pub fn topics(&self) -> Option<&Arc<TopicManager>> {
        self.log.as_ref().map(|l| &l.topics)
    }

    /// The group metadata records replayed by [`load`](Self::load) (and stored since).
    pub fn stored_groups(&self) -> Vec<(String, Bytes)> {
        let meta = self.group_metadata.lock();
        meta.iter().map(|(g, v)| (g.clone(), v.clone())).collect()
    }

    /// The committed offset of one partition.
    pub fn get(&self, group: &str, topic: &str, partition: i32) -> Option<OffsetEntry> {
        let cache = self.cache.lock();
        cache
            .get(group)?
            .get(&(topic.to_string(), partition))
            .map(|s| s.entry.clone())
    }

    /// Every committed offset of `group`.
    pub fn all(&self, group: &str) -> BTreeMap<Tp, OffsetEntry> {
        let cache = self.cache.lock();
        cache
            .get(group)
            .map(|g| {
                g.iter()
                    .map(|(tp, s)| (tp.clone(), s.entry.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether `group` has committed offsets.
    pub fn has_offsets(&self, group: &str) -> bool {
        let cache = self.cache.lock();
        cache.get(group).is_some_and(|g| !g.is_empty())
    }

    /// Groups that have committed offsets.
    pub fn groups(&self) -> Vec<String> {
        let cache = self.cache.lock();
        cache
            .iter()
            .filter(|(_, g)| !g.is_empty())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Replays every `__consumer_offsets` partition into the cache. Blocking.
    pub fn load(&self) -> Result<()> {
        let out = self.out()?;
        let _writes = self.writes.lock();
        let mut cache = self.cache.lock();
        for p in 0..out.partitions {
            let log = out.log(p)?;
            let end = log.high_watermark();
            let mut offset = log.log_start_offset();
            while offset < end {
                let data = log.read(offset, 1 << 20, true, Some(end))?;
                let replay_error = |message: String| Error::Protocol {
                    api: "__consumer_offsets replay".into(),
                    message,
                };
                // Batches, not records, move the position on: the cleaner leaves offset gaps and may leave a
                // producer's last batch empty.
                let before = offset;
                for b in RecordBatch::iter(&data.records) {
                    offset = offset.max(b.map_err(|e| replay_error(e.to_string()))?.next_offset());
                }
                let mut buf = data.records.clone();
                let sets = RecordBatchDecoder::decode_all(&mut buf)
                    .map_err(|e| replay_error(e.to_string()))?;
                for r in sets.into_iter().flat_map(|s| s.records) {
                    self.replay(p, r, &mut cache);
                }
                if offset == before {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Applies one replayed record of partition `p` (see the module docs for the rules).
    fn replay(&self, p: i32, r: Record, cache: &mut HashMap<String, BTreeMap<Tp, Stored>>) {
        if r.control {
            // A transaction's marker: its pending offsets apply (COMMIT) or go (ABORT).
            if let Some(commit) = super::txn_offsets::marker_commits(r.key.as_deref()) {
                let taken = self.pending.take(p, r.producer_id);
                if commit {
                    apply_committed(cache, taken);
                }
            }
            return;
        }
        if let Some(g) = r.key.clone().and_then(super::record::decode_key) {
            let mut meta = self.group_metadata.lock();
            match r.value {
                Some(v) => meta.insert(g, v),
                None => meta.remove(&g),
            };
            return;
        }
        if let Some(g) = r.key.as_ref().and_then(super::consumer_record::key_group) {
            let key = r.key.clone().expect("decoded above");
            let mut consumer = self.consumer_records();
            match r.value {
                Some(v) => {
                    consumer.entry(g).or_default().insert(key, v);
                }
                None => {
                    if let Some(recs) = consumer.get_mut(&g) {
                        recs.remove(&key);
                        if recs.is_empty() {
                            consumer.remove(&g);
                        }
                    }
                }
            }
            return;
        }
        let Some((g, t, part)) = r.key.and_then(decode_key) else {
            return;
        };
        let tp = (t, part);
        if r.transactional {
            if let Some(e) = r.value.and_then(decode_value) {
                self.pending
                    .add(p, r.producer_id, vec![(g, tp, e, r.offset)]);
            }
            return;
        }
        match r.value.and_then(decode_value) {
            Some(entry) => {
                let at = r.offset;
                cache.entry(g).or_default().insert(tp, Stored { entry, at });
            }
            None => {
                if let Some(gm) = cache.get_mut(&g) {
                    gm.remove(&tp);
                }
                self.pending.drop_keys(p, &g, std::slice::from_ref(&tp));
            }
        }
    }
}

#[cfg(test)]
mod tests;
