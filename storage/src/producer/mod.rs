//! Producer state for idempotence (Kafka's `ProducerStateManager`): per producer id the epoch and the last five
//! batches' sequence ranges and offsets. A retried batch is recognised as a duplicate and answered with its
//! original offsets; a sequence gap is [`Error::OutOfOrderSequence`]; an older epoch is
//! [`Error::InvalidProducerEpoch`]; a new epoch must start at sequence 0.
//!
//! Transactions (KIP-98): a transactional data batch opens its producer's transaction at the batch's offset
//! (`current_txn_first_offset`) unless one is open; a COMMIT or ABORT marker (a control batch) closes it and
//! yields a [`CompletedTxn`]. The last stable offset is the smallest first offset of the open transactions, or
//! the high watermark when none is open (Kafka's `firstUnstableOffset`).
mod snapshot;

use std::collections::{HashMap, VecDeque};

use crate::record::{ControlRecordKey, ControlRecordType, RecordBatch};
use crate::{Error, Result};

pub(crate) use snapshot::{
    delete_snapshots_below, delete_snapshots_from, latest_snapshot_at_or_below, list_snapshots,
    write_snapshot,
};

/// Kafka's default `producer.id.expiration.ms` (1 day): producers idle this long are forgotten by the
/// retention pass.
pub(crate) const PRODUCER_ID_EXPIRATION_MS: i64 = 24 * 60 * 60 * 1000;

/// Batches remembered per producer (Kafka's `NUM_BATCHES_TO_RETAIN`).
pub(crate) const NUM_BATCHES_TO_RETAIN: usize = 5;

/// One appended batch of a producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchMetadata {
    pub(crate) first_seq: i32,
    pub(crate) last_seq: i32,
    pub(crate) first_offset: i64,
    pub(crate) last_offset: i64,
    pub(crate) timestamp: i64,
}

/// What the log knows about one producer id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProducerEntry {
    pub(crate) epoch: i16,
    pub(crate) batches: VecDeque<BatchMetadata>,
    pub(crate) coordinator_epoch: i32,
    pub(crate) current_txn_first_offset: i64,
    /// The max timestamp of its last batch or transaction marker (Kafka's `lastTimestamp`; -1 before any): what
    /// DescribeProducers reports and expiration goes by. A marker of a bumped epoch (transactions v2) clears the
    /// batches but sets this, so the producer is not forgotten at the next expiration check.
    pub(crate) last_timestamp: i64,
}

impl ProducerEntry {
    fn new(epoch: i16) -> Self {
        Self {
            epoch,
            batches: VecDeque::new(),
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
            last_timestamp: -1,
        }
    }
    fn last_seq(&self) -> i32 {
        self.batches.back().map_or(-1, |b| b.last_seq)
    }
    fn last_offset(&self) -> i64 {
        self.batches.back().map_or(-1, |b| b.last_offset)
    }
}

fn next_seq(seq: i32) -> i32 {
    if seq == i32::MAX {
        0
    } else {
        seq + 1
    }
}

/// One producer of a partition as Kafka's DescribeProducers reports it (`ProducerState`): -1 where it has
/// nothing (no batch kept: last sequence and timestamp; no marker seen: coordinator epoch; no open transaction:
/// its start offset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveProducer {
    /// The producer id.
    pub producer_id: i64,
    /// Its latest epoch.
    pub producer_epoch: i16,
    /// The last sequence of its last batch kept.
    pub last_sequence: i32,
    /// The max timestamp of its last batch kept.
    pub last_timestamp: i64,
    /// The coordinator epoch of the last transaction marker seen for it.
    pub coordinator_epoch: i32,
    /// The first offset of its open transaction.
    pub current_txn_start_offset: i64,
}

/// A transaction closed by a COMMIT or ABORT marker (Kafka's `CompletedTxn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CompletedTxn {
    pub(crate) producer_id: i64,
    /// The transaction's first data offset (the marker's own offset when the transaction held no data here).
    pub(crate) first_offset: i64,
    /// The marker's offset.
    pub(crate) last_offset: i64,
    pub(crate) is_aborted: bool,
}

/// What a control batch marks, from its first record's key; None for a batch that is not an uncompressed
/// COMMIT/ABORT marker.
pub(crate) fn marker_type(batch: &RecordBatch) -> Option<ControlRecordType> {
    if !batch.is_control() {
        return None;
    }
    let record = batch.records().ok()?.next()?.ok()?;
    let key = ControlRecordKey::parse(record.key.as_deref()).ok()?;
    key.kind.is_transaction_marker().then_some(key.kind)
}

/// The outcome of checking a batch against producer state.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SequenceCheck {
    /// Append it.
    Append,
    /// A retry of an appended batch: answer with these offsets.
    Duplicate(BatchMetadata),
}

/// All producers of one partition.
#[derive(Debug, Default)]
pub(crate) struct ProducerStateManager {
    producers: HashMap<i64, ProducerEntry>,
    max_producer_id: i64,
    /// (first offset, producer id) of every open transaction, ordered: the first is the first unstable offset
    /// (Kafka's `ongoingTxns`), so the LSO costs no scan of every producer on each fetch.
    ongoing: std::collections::BTreeSet<(i64, i64)>,
}

impl ProducerStateManager {
    pub(crate) fn new() -> Self {
        Self {
            producers: HashMap::new(),
            max_producer_id: -1,
            ongoing: std::collections::BTreeSet::new(),
        }
    }

    /// Keeps [`Self::ongoing`] in line with a producer's open transaction moving from `old` to `new` (first
    /// offsets, -1 for none).
    fn track_ongoing(&mut self, pid: i64, old: i64, new: i64) {
        if old == new {
            return;
        }
        if old >= 0 {
            self.ongoing.remove(&(old, pid));
        }
        if new >= 0 {
            self.ongoing.insert((new, pid));
        }
    }

    pub(crate) fn from_entries(entries: impl IntoIterator<Item = (i64, ProducerEntry)>) -> Self {
        let mut m = Self::new();
        for (pid, e) in entries {
            m.max_producer_id = m.max_producer_id.max(pid);
            m.track_ongoing(pid, -1, e.current_txn_first_offset);
            m.producers.insert(pid, e);
        }
        m
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (&i64, &ProducerEntry)> {
        self.producers.iter()
    }

    pub(crate) fn max_producer_id(&self) -> i64 {
        self.max_producer_id
    }

    /// The producer's entry as `pending` (this request's earlier batches) or the committed state has it.
    fn current<'a>(
        &'a self,
        pending: &'a HashMap<i64, ProducerEntry>,
        pid: i64,
    ) -> Option<&'a ProducerEntry> {
        pending.get(&pid).or_else(|| self.producers.get(&pid))
    }

    /// Checks a client batch (Kafka's `checkProducerEpoch` + `checkSequence` + duplicate lookup), taking this
    /// request's `pending` updates into account.
    pub(crate) fn check(
        &self,
        pending: &HashMap<i64, ProducerEntry>,
        batch: &RecordBatch,
    ) -> Result<SequenceCheck> {
        let pid = batch.producer_id();
        if pid < 0 {
            return Ok(SequenceCheck::Append);
        }
        let (epoch, base_seq) = (batch.producer_epoch(), batch.base_sequence());
        let Some(entry) = self.current(pending, pid) else {
            // Unknown producer (new, or its state expired with retention): accept any sequence, as Kafka does.
            return Ok(SequenceCheck::Append);
        };
        if epoch < entry.epoch {
            return Err(Error::InvalidProducerEpoch {
                producer_id: pid,
                epoch,
                current_epoch: entry.epoch,
            });
        }
        if batch.is_control() || base_seq < 0 {
            return Ok(SequenceCheck::Append);
        }
        if epoch > entry.epoch {
            if base_seq != 0 {
                return Err(Error::OutOfOrderSequence {
                    producer_id: pid,
                    epoch,
                    expected: 0,
                    received: base_seq,
                });
            }
            return Ok(SequenceCheck::Append);
        }
        let last_seq = batch.last_sequence();
        if let Some(dup) = entry
            .batches
            .iter()
            .find(|b| b.first_seq == base_seq && b.last_seq == last_seq)
        {
            return Ok(SequenceCheck::Duplicate(*dup));
        }
        let last = entry.last_seq();
        if last >= 0 && base_seq != next_seq(last) {
            return Err(Error::OutOfOrderSequence {
                producer_id: pid,
                epoch,
                expected: next_seq(last),
                received: base_seq,
            });
        }
        Ok(SequenceCheck::Append)
    }

    /// Records an appended (offset-assigned) batch into `pending`; a marker yields the transaction it closes.
    /// `base_offset` is the offset the log assigns to the batch.
    pub(crate) fn update_pending(
        &self,
        pending: &mut HashMap<i64, ProducerEntry>,
        batch: &RecordBatch,
        base_offset: i64,
    ) -> Option<CompletedTxn> {
        let pid = batch.producer_id();
        if pid < 0 {
            return None;
        }
        let entry = pending.entry(pid).or_insert_with(|| {
            self.producers
                .get(&pid)
                .cloned()
                .unwrap_or_else(|| ProducerEntry::new(batch.producer_epoch()))
        });
        apply(pid, entry, batch, base_offset)
    }

    /// Commits a request's pending updates.
    pub(crate) fn commit(&mut self, pending: HashMap<i64, ProducerEntry>) {
        for (pid, e) in pending {
            self.max_producer_id = self.max_producer_id.max(pid);
            let old = self
                .producers
                .get(&pid)
                .map_or(-1, |o| o.current_txn_first_offset);
            self.track_ongoing(pid, old, e.current_txn_first_offset);
            self.producers.insert(pid, e);
        }
    }

    /// Replays a batch read back from the log (recovery, load); a marker yields the transaction it closes.
    pub(crate) fn replay(&mut self, batch: &RecordBatch) -> Option<CompletedTxn> {
        let pid = batch.producer_id();
        if pid < 0 {
            return None;
        }
        self.max_producer_id = self.max_producer_id.max(pid);
        let entry = self
            .producers
            .entry(pid)
            .or_insert_with(|| ProducerEntry::new(batch.producer_epoch()));
        let old = entry.current_txn_first_offset;
        let completed = apply(pid, entry, batch, batch.base_offset());
        let new = entry.current_txn_first_offset;
        self.track_ongoing(pid, old, new);
        completed
    }

    /// The first offset of the oldest open transaction (Kafka's `firstUnstableOffset`), if any.
    pub(crate) fn first_unstable_offset(&self) -> Option<i64> {
        debug_assert_eq!(
            self.ongoing.first().map(|(o, _)| *o),
            self.producers
                .values()
                .map(|e| e.current_txn_first_offset)
                .filter(|&o| o >= 0)
                .min()
        );
        self.ongoing.first().map(|(o, _)| *o)
    }

    /// The last stable offset given the high watermark `hw`.
    pub(crate) fn last_stable_offset(&self, hw: i64) -> i64 {
        self.first_unstable_offset().map_or(hw, |o| o.min(hw))
    }

    /// Open transactions: (producer id, epoch, first offset), by first offset.
    pub(crate) fn ongoing_transactions(&self) -> Vec<(i64, i16, i64)> {
        let mut out: Vec<_> = self
            .producers
            .iter()
            .filter(|(_, e)| e.current_txn_first_offset >= 0)
            .map(|(pid, e)| (*pid, e.epoch, e.current_txn_first_offset))
            .collect();
        out.sort_by_key(|t| t.2);
        out
    }

    /// Every producer this partition remembers (Kafka's `activeProducers`), by producer id.
    pub(crate) fn active_producers(&self) -> Vec<ActiveProducer> {
        let mut out: Vec<_> = self
            .producers
            .iter()
            .map(|(pid, e)| ActiveProducer {
                producer_id: *pid,
                producer_epoch: e.epoch,
                last_sequence: e.last_seq(),
                last_timestamp: e.last_timestamp,
                coordinator_epoch: e.coordinator_epoch,
                current_txn_start_offset: e.current_txn_first_offset,
            })
            .collect();
        out.sort_by_key(|p| p.producer_id);
        out
    }

    /// Forgets producers whose last batch's max timestamp is `expiration_ms` or more before `now_ms` (Kafka's
    /// `removeExpiredProducers`); returns how many went.
    pub(crate) fn remove_expired(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        let before = self.producers.len();
        // A producer with an open transaction is kept (Kafka's `isProducerExpired`).
        self.producers.retain(|_, e| {
            e.current_txn_first_offset >= 0
                || now_ms.saturating_sub(e.last_timestamp) < expiration_ms
        });
        before - self.producers.len()
    }

    /// Forgets producers whose last batch is below `log_start` (Kafka's `truncateHead`).
    pub(crate) fn truncate_head(&mut self, log_start: i64) {
        self.producers.retain(|_, e| {
            e.last_offset() >= log_start || e.batches.is_empty() || e.current_txn_first_offset >= 0
        });
    }
}

fn apply(
    pid: i64,
    entry: &mut ProducerEntry,
    batch: &RecordBatch,
    base_offset: i64,
) -> Option<CompletedTxn> {
    let epoch = batch.producer_epoch();
    if epoch > entry.epoch {
        entry.epoch = epoch;
        entry.batches.clear();
    }
    if batch.is_control() {
        let kind = marker_type(batch)?;
        entry.last_timestamp = batch.max_timestamp();
        if let Some(coordinator_epoch) = marker_coordinator_epoch(batch) {
            entry.coordinator_epoch = coordinator_epoch;
        }
        let first = entry.current_txn_first_offset;
        entry.current_txn_first_offset = -1;
        return Some(CompletedTxn {
            producer_id: pid,
            first_offset: if first >= 0 { first } else { base_offset },
            last_offset: base_offset,
            is_aborted: kind == ControlRecordType::Abort,
        });
    }
    if batch.is_transactional() && entry.current_txn_first_offset < 0 {
        entry.current_txn_first_offset = base_offset;
    }
    entry.last_timestamp = batch.max_timestamp();
    if batch.base_sequence() < 0 {
        return None;
    }
    entry.batches.push_back(BatchMetadata {
        first_seq: batch.base_sequence(),
        last_seq: batch.last_sequence(),
        first_offset: base_offset,
        last_offset: base_offset + batch.last_offset_delta() as i64,
        timestamp: batch.max_timestamp(),
    });
    while entry.batches.len() > NUM_BATCHES_TO_RETAIN {
        entry.batches.pop_front();
    }
    None
}

/// The coordinator epoch of a marker's value (Kafka's `EndTransactionMarker`: version i16, coordinatorEpoch i32).
fn marker_coordinator_epoch(batch: &RecordBatch) -> Option<i32> {
    let record = batch.records().ok()?.next()?.ok()?;
    let v = record.value?;
    (v.len() >= 6).then(|| i32::from_be_bytes(v[2..6].try_into().expect("4")))
}

/// One uncompressed control batch holding a COMMIT or ABORT marker (Kafka's `EndTransactionMarker`): transactional
/// and control attributes, the producer's id and epoch, no sequence; key = version 0 + type, value = version 0 +
/// coordinator epoch.
pub(crate) fn build_marker(
    kind: ControlRecordType,
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
    timestamp_ms: i64,
) -> bytes::Bytes {
    let mut value = [0u8; 6];
    value[2..6].copy_from_slice(&coordinator_epoch.to_be_bytes());
    let mut b = crate::record::RecordBatchBuilder::new()
        .producer(producer_id, producer_epoch, -1)
        .transactional(true)
        .control(true);
    b.append(
        timestamp_ms,
        Some(&ControlRecordKey::encode(kind)),
        Some(&value),
        &[],
    );
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordBatchBuilder;

    fn batch(pid: i64, epoch: i16, seq: i32, n: usize, base_offset: i64) -> RecordBatch {
        let mut b = RecordBatchBuilder::new()
            .producer(pid, epoch, seq)
            .base_offset(base_offset);
        for i in 0..n {
            b.append(i as i64, None, Some(b"v"), &[]);
        }
        RecordBatch::new(b.build()).unwrap()
    }

    fn append(m: &mut ProducerStateManager, b: &RecordBatch) -> Result<SequenceCheck> {
        let mut pending = HashMap::new();
        let r = m.check(&pending, b)?;
        if r == SequenceCheck::Append {
            m.update_pending(&mut pending, b, b.base_offset());
            m.commit(pending);
        }
        Ok(r)
    }

    #[test]
    fn duplicates_gaps_and_fencing_follow_kafka() {
        let mut m = ProducerStateManager::new();
        assert_eq!(
            append(&mut m, &batch(1, 0, 0, 3, 0)).unwrap(),
            SequenceCheck::Append
        );
        assert_eq!(
            append(&mut m, &batch(1, 0, 3, 2, 3)).unwrap(),
            SequenceCheck::Append
        );
        let dup = append(&mut m, &batch(1, 0, 0, 3, 99)).unwrap();
        assert!(matches!(
            dup,
            SequenceCheck::Duplicate(BatchMetadata {
                first_offset: 0,
                last_offset: 2,
                ..
            })
        ));
        let gap = append(&mut m, &batch(1, 0, 7, 1, 5)).unwrap_err();
        assert!(
            matches!(
                gap,
                Error::OutOfOrderSequence {
                    expected: 5,
                    received: 7,
                    ..
                }
            ),
            "{gap}"
        );
        let new_epoch_bad = append(&mut m, &batch(1, 1, 5, 1, 5)).unwrap_err();
        assert!(matches!(
            new_epoch_bad,
            Error::OutOfOrderSequence { expected: 0, .. }
        ));
        assert_eq!(
            append(&mut m, &batch(1, 1, 0, 1, 5)).unwrap(),
            SequenceCheck::Append
        );
        let fenced = append(&mut m, &batch(1, 0, 5, 1, 6)).unwrap_err();
        assert!(matches!(
            fenced,
            Error::InvalidProducerEpoch {
                epoch: 0,
                current_epoch: 1,
                ..
            }
        ));
        assert_eq!(m.max_producer_id(), 1);
    }

    #[test]
    fn only_the_last_five_batches_are_remembered() {
        let mut m = ProducerStateManager::new();
        for i in 0..6 {
            append(&mut m, &batch(9, 0, i, 1, i as i64)).unwrap();
        }
        // Batch 0 was forgotten: its retry is now a sequence error, batch 1's retry a duplicate.
        assert!(matches!(
            append(&mut m, &batch(9, 0, 0, 1, 50)),
            Err(Error::OutOfOrderSequence { .. })
        ));
        assert!(matches!(
            append(&mut m, &batch(9, 0, 1, 1, 50)),
            Ok(SequenceCheck::Duplicate(_))
        ));
    }

    /// A transactions-v2 COMMIT marker of a bumped epoch clears the producer's batches; the producer keeps the
    /// marker's timestamp (Kafka's `lastTimestamp`), so it is reported with it, does not expire at the next check
    /// and stays in the snapshot with its new epoch.
    #[test]
    fn a_bumped_epoch_marker_keeps_the_producer_and_its_timestamp() {
        let now = 5 * PRODUCER_ID_EXPIRATION_MS;
        let mut m = ProducerStateManager::new();
        let mut b = RecordBatchBuilder::new()
            .producer(3, 0, 0)
            .transactional(true)
            .base_offset(0);
        b.append(now - 10, None, Some(b"x"), &[]);
        append(&mut m, &RecordBatch::new(b.build()).unwrap()).unwrap();
        let marker =
            RecordBatch::new(build_marker(ControlRecordType::Commit, 3, 1, 0, now)).unwrap();
        let mut pending = HashMap::new();
        assert!(m.update_pending(&mut pending, &marker, 1).is_some());
        m.commit(pending);
        let want = ActiveProducer {
            producer_id: 3,
            producer_epoch: 1,
            last_sequence: -1,
            last_timestamp: now,
            coordinator_epoch: 0,
            current_txn_start_offset: -1,
        };
        assert_eq!(m.active_producers(), vec![want]);
        assert_eq!(m.remove_expired(now + 1, PRODUCER_ID_EXPIRATION_MS), 0);
        let back =
            snapshot::decode(std::path::Path::new("x.snapshot"), &snapshot::encode(&m)).unwrap();
        assert_eq!(back.active_producers(), vec![want]);
        assert_eq!(
            m.remove_expired(now + PRODUCER_ID_EXPIRATION_MS, PRODUCER_ID_EXPIRATION_MS),
            1
        );
    }

    #[test]
    fn idle_producers_expire() {
        let mut m = ProducerStateManager::new();
        append(&mut m, &batch(1, 0, 0, 1, 0)).unwrap(); // timestamp 0
        append(&mut m, &batch(2, 0, 0, 1, 1)).unwrap();
        assert_eq!(
            m.remove_expired(PRODUCER_ID_EXPIRATION_MS - 1, PRODUCER_ID_EXPIRATION_MS),
            0
        );
        assert_eq!(
            m.remove_expired(PRODUCER_ID_EXPIRATION_MS, PRODUCER_ID_EXPIRATION_MS),
            2
        );
        // A forgotten producer may continue at any sequence, as a new one.
        assert_eq!(
            append(&mut m, &batch(1, 0, 7, 1, 2)).unwrap(),
            SequenceCheck::Append
        );
        assert_eq!(
            m.max_producer_id(),
            2,
            "the largest id seen is kept for InitProducerId"
        );
    }

    #[test]
    fn sequence_wraps_after_i32_max() {
        let mut m = ProducerStateManager::new();
        append(&mut m, &batch(2, 0, i32::MAX - 1, 2, 0)).unwrap();
        assert_eq!(
            append(&mut m, &batch(2, 0, 0, 1, 2)).unwrap(),
            SequenceCheck::Append
        );
    }
}
