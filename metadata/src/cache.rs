//! `RemoteLogMetadataCache`: the in-memory state both managers serve reads from, and the one place that
//! checks and applies writes (Kafka's `RemoteLogMetadataCache` + `RemoteLogLeaderEpochState` +
//! `RemotePartitionMetadataStore`).
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use strata_storage::TopicIdPartition;
use uuid::Uuid;

use crate::record::RemoteLogMetadataRecord;
use crate::segment::TopicIdPartitionRepr;
use crate::{
    Error, RemoteLogSegmentMetadata, RemoteLogSegmentState, RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState, Result,
};

/// Per leader epoch, Kafka's `RemoteLogLeaderEpochState`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct EpochState {
    /// Epoch start offset within a segment → the `COPY_SEGMENT_FINISHED` segment serving it.
    offset_to_id: BTreeMap<i64, Uuid>,
    /// Segments of this epoch not in `offset_to_id`: COPY_STARTED, DELETE_STARTED, or replaced by a later
    /// upload at the same start offset.
    unreferenced: BTreeSet<Uuid>,
    /// Largest epoch end offset among the segments that reached COPY_SEGMENT_FINISHED.
    highest_log_offset: Option<i64>,
}

impl EpochState {
    fn is_empty(&self) -> bool {
        self.offset_to_id.is_empty() && self.unreferenced.is_empty()
    }
}

/// One user partition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct PartitionCache {
    segments: HashMap<Uuid, RemoteLogSegmentMetadata>,
    epochs: BTreeMap<i32, EpochState>,
}

impl PartitionCache {
    fn for_each_epoch(
        &mut self,
        m: &RemoteLogSegmentMetadata,
        mut f: impl FnMut(&mut EpochState, i64, i64),
    ) {
        for (&epoch, &start) in &m.segment_leader_epochs {
            let end = m.epoch_end_offset(epoch).unwrap_or(m.end_offset);
            f(self.epochs.entry(epoch).or_default(), start, end);
        }
    }

    /// Moves `m` (already stored with its new state) through the epoch bookkeeping for `from → m.state`.
    fn transition(&mut self, m: &RemoteLogSegmentMetadata, from: Option<RemoteLogSegmentState>) {
        use RemoteLogSegmentState::*;
        let id = m.remote_log_segment_id.id;
        if from == Some(m.state) {
            return;
        }
        match m.state {
            CopySegmentStarted => self.for_each_epoch(m, |e, _, _| {
                e.unreferenced.insert(id);
            }),
            CopySegmentFinished => self.for_each_epoch(m, |e, start, end| {
                if let Some(old) = e.offset_to_id.insert(start, id) {
                    if old != id {
                        e.unreferenced.insert(old);
                    }
                }
                e.unreferenced.remove(&id);
                e.highest_log_offset = Some(e.highest_log_offset.map_or(end, |h| h.max(end)));
            }),
            DeleteSegmentStarted => self.for_each_epoch(m, |e, start, _| {
                if e.offset_to_id.get(&start) == Some(&id) {
                    e.offset_to_id.remove(&start);
                }
                e.unreferenced.insert(id);
            }),
            DeleteSegmentFinished => {
                for epoch in m.segment_leader_epochs.keys() {
                    if let Some(e) = self.epochs.get_mut(epoch) {
                        e.unreferenced.remove(&id);
                        if e.is_empty() {
                            self.epochs.remove(epoch);
                        }
                    }
                }
                self.segments.remove(&id);
            }
        }
    }

    /// Re-adding a COPY_STARTED segment: moves its epoch bookkeeping from `old` to `new`. An epoch entry that
    /// `new` still references is kept even if momentarily empty (its highest offset survives).
    fn replace_started(&mut self, old: &RemoteLogSegmentMetadata, new: &RemoteLogSegmentMetadata) {
        let id = old.remote_log_segment_id.id;
        for epoch in old.segment_leader_epochs.keys() {
            if let Some(e) = self.epochs.get_mut(epoch) {
                e.unreferenced.remove(&id);
                if e.is_empty() && !new.segment_leader_epochs.contains_key(epoch) {
                    self.epochs.remove(epoch);
                }
            }
        }
        self.transition(new, None);
    }

    fn sorted(&self, ids: impl Iterator<Item = Uuid>) -> Vec<RemoteLogSegmentMetadata> {
        let mut out: Vec<_> = ids
            .filter_map(|id| self.segments.get(&id).cloned())
            .collect();
        out.sort_by(|a, b| {
            (a.start_offset, a.end_offset, a.remote_log_segment_id.id).cmp(&(
                b.start_offset,
                b.end_offset,
                b.remote_log_segment_id.id,
            ))
        });
        out.dedup_by_key(|m| m.remote_log_segment_id.id);
        out
    }

    fn lookup(&self, epoch: i32, offset: i64) -> Option<&RemoteLogSegmentMetadata> {
        let state = self.epochs.get(&epoch)?;
        let (_, id) = state.offset_to_id.range(..=offset).next_back()?;
        let m = self.segments.get(id)?;
        (m.epoch_end_offset(epoch)? >= offset).then_some(m)
    }
}

/// The whole metadata cache. `Serialize` is the snapshot format's payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RemoteLogMetadataCache {
    partitions: HashMap<TopicIdPartition, PartitionCache>,
    deletes: HashMap<TopicIdPartition, RemotePartitionDeleteMetadata>,
}

impl RemoteLogMetadataCache {
    /// Checks a write against the current state without changing anything.
    pub(crate) fn check(&self, record: &RemoteLogMetadataRecord) -> Result<()> {
        self.check_sequence(std::slice::from_ref(record))
    }

    /// Applies a record that [`check`](Self::check) accepted.
    pub(crate) fn apply(&mut self, record: RemoteLogMetadataRecord) {
        match record {
            RemoteLogMetadataRecord::Segment(m) => {
                let p = self
                    .partitions
                    .entry(m.topic_id_partition().clone())
                    .or_default();
                match p.segments.insert(m.remote_log_segment_id.id, m.clone()) {
                    Some(old) => p.replace_started(&old, &m),
                    None => p.transition(&m, None),
                }
            }
            RemoteLogMetadataRecord::SegmentUpdate(u) => {
                let tp = &u.remote_log_segment_id.topic_id_partition;
                let Some(p) = self.partitions.get_mut(tp) else {
                    return;
                };
                let Some(existing) = p.segments.get_mut(&u.remote_log_segment_id.id) else {
                    return;
                };
                let from = existing.state;
                *existing = existing.create_with_updates(&u);
                let updated = existing.clone();
                p.transition(&updated, Some(from));
                if p.segments.is_empty() && p.epochs.is_empty() {
                    self.partitions.remove(tp);
                }
            }
            RemoteLogMetadataRecord::PartitionDelete(d) => {
                if d.state == RemotePartitionDeleteState::DeletePartitionFinished {
                    self.partitions.remove(&d.topic_id_partition);
                    self.deletes.remove(&d.topic_id_partition);
                } else {
                    self.deletes.insert(d.topic_id_partition.clone(), d);
                }
            }
        }
    }

    /// Checks `records` as if applied one after another, without changing anything; the error names the
    /// first rejected record. Cost: proportional to `records`, not to the cache.
    pub(crate) fn check_sequence(&self, records: &[RemoteLogMetadataRecord]) -> Result<()> {
        let mut overlay = self.overlay();
        for r in records {
            overlay.check_and_apply(r)?;
        }
        Ok(())
    }

    /// An empty overlay over this cache, to check a sequence of writes.
    pub(crate) fn overlay(&self) -> Overlay<'_> {
        Overlay {
            cache: self,
            segments: HashMap::new(),
            deletes: HashMap::new(),
            wiped: Vec::new(),
        }
    }

    /// Checks, then applies.
    pub(crate) fn check_and_apply(&mut self, record: RemoteLogMetadataRecord) -> Result<()> {
        self.check(&record)?;
        self.apply(record);
        Ok(())
    }

    fn segment(&self, id: &crate::RemoteLogSegmentId) -> Option<&RemoteLogSegmentMetadata> {
        self.partitions
            .get(&id.topic_id_partition)?
            .segments
            .get(&id.id)
    }

    pub(crate) fn remote_log_segment_metadata(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Option<RemoteLogSegmentMetadata> {
        self.partitions.get(tp)?.lookup(epoch, offset).cloned()
    }

    pub(crate) fn highest_offset_for_epoch(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
    ) -> Option<i64> {
        self.partitions
            .get(tp)?
            .epochs
            .get(&epoch)?
            .highest_log_offset
    }

    pub(crate) fn list(&self, tp: &TopicIdPartition) -> Vec<RemoteLogSegmentMetadata> {
        self.partitions
            .get(tp)
            .map_or_else(Vec::new, |p| p.sorted(p.segments.keys().copied()))
    }

    pub(crate) fn list_for_epoch(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
    ) -> Vec<RemoteLogSegmentMetadata> {
        let Some(p) = self.partitions.get(tp) else {
            return Vec::new();
        };
        let Some(e) = p.epochs.get(&epoch) else {
            return Vec::new();
        };
        p.sorted(
            e.offset_to_id
                .values()
                .chain(e.unreferenced.iter())
                .copied(),
        )
    }

    pub(crate) fn next_segment_with_txn_index(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Option<RemoteLogSegmentMetadata> {
        let p = self.partitions.get(tp)?;
        let mut next = p.lookup(epoch, offset);
        while let Some(m) = next {
            if !m.txn_idx_empty {
                return Some(m.clone());
            }
            next = m.end_offset.checked_add(1).and_then(|o| p.lookup(epoch, o));
        }
        None
    }

    pub(crate) fn partition_delete(
        &self,
        tp: &TopicIdPartition,
    ) -> Option<RemotePartitionDeleteMetadata> {
        self.deletes.get(tp).cloned()
    }

    /// Segments held, over every partition (for metrics and snapshot scheduling).
    pub(crate) fn segment_count(&self) -> usize {
        self.partitions.values().map(|p| p.segments.len()).sum()
    }

    /// Every partition the cache holds segments or a pending delete for.
    pub(crate) fn partitions(&self) -> Vec<TopicIdPartition> {
        let mut v: Vec<_> = self
            .partitions
            .keys()
            .chain(self.deletes.keys())
            .cloned()
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The serializable form (the snapshot payload).
    pub(crate) fn to_image(&self) -> CacheImage {
        let mut partitions: Vec<_> = self
            .partitions
            .iter()
            .map(|(tp, p)| PartitionImage {
                tp: tp.clone().into(),
                cache: p.clone(),
            })
            .collect();
        partitions.sort_by(|a, b| {
            (&a.tp.topic_id, a.tp.partition).cmp(&(&b.tp.topic_id, b.tp.partition))
        });
        let mut deletes: Vec<_> = self.deletes.values().cloned().collect();
        deletes.sort_by(|a, b| a.topic_id_partition.cmp(&b.topic_id_partition));
        CacheImage {
            partitions,
            deletes,
        }
    }

    /// Rebuilds a cache from its serializable form.
    pub(crate) fn from_image(image: CacheImage) -> Self {
        Self {
            partitions: image
                .partitions
                .into_iter()
                .map(|p| (p.tp.into(), p.cache))
                .collect(),
            deletes: image
                .deletes
                .into_iter()
                .map(|d| (d.topic_id_partition.clone(), d))
                .collect(),
        }
    }
}

/// The cache as a serializable value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CacheImage {
    partitions: Vec<PartitionImage>,
    deletes: Vec<RemotePartitionDeleteMetadata>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct PartitionImage {
    tp: TopicIdPartitionRepr,
    cache: PartitionCache,
}

/// Segment and partition-delete states changed by a not-yet-applied sequence of records, over the cache.
#[derive(Clone)]
pub(crate) struct Overlay<'a> {
    cache: &'a RemoteLogMetadataCache,
    segments: HashMap<crate::RemoteLogSegmentId, Option<RemoteLogSegmentState>>,
    deletes: HashMap<TopicIdPartition, Option<RemotePartitionDeleteState>>,
    /// Partitions whose DELETE_PARTITION_FINISHED is in the sequence: their cached segments are gone.
    wiped: Vec<TopicIdPartition>,
}

impl Overlay<'_> {
    fn segment_state(&self, id: &crate::RemoteLogSegmentId) -> Option<RemoteLogSegmentState> {
        if let Some(s) = self.segments.get(id) {
            return *s;
        }
        if self.wiped.contains(&id.topic_id_partition) {
            return None;
        }
        self.cache.segment(id).map(|m| m.state)
    }

    /// Checks `record` against the overlay; when accepted, records its effect. A rejected record changes
    /// nothing.
    pub(crate) fn check_and_apply(&mut self, record: &RemoteLogMetadataRecord) -> Result<()> {
        match record {
            RemoteLogMetadataRecord::Segment(m) => {
                // Same checks as `check`, against the overlay's state.
                m.validate()?;
                let id = &m.remote_log_segment_id;
                let existing = self.segment_state(id);
                if m.state != RemoteLogSegmentState::CopySegmentStarted {
                    return Err(Error::InvalidMetadata {
                        id: id.clone(),
                        reason: format!(
                            "new segment metadata must be COPY_SEGMENT_STARTED, not {}",
                            m.state
                        ),
                    });
                }
                if !RemoteLogSegmentState::is_valid_transition(existing, m.state) {
                    return Err(Error::InvalidStateTransition {
                        id: id.clone(),
                        from: existing,
                        to: m.state,
                    });
                }
                self.segments.insert(id.clone(), Some(m.state));
            }
            RemoteLogMetadataRecord::SegmentUpdate(u) => {
                u.validate()?;
                let id = &u.remote_log_segment_id;
                let existing = self
                    .segment_state(id)
                    .ok_or_else(|| Error::UnknownSegment { id: id.clone() })?;
                if !RemoteLogSegmentState::is_valid_transition(Some(existing), u.state) {
                    return Err(Error::InvalidStateTransition {
                        id: id.clone(),
                        from: Some(existing),
                        to: u.state,
                    });
                }
                let next =
                    (u.state != RemoteLogSegmentState::DeleteSegmentFinished).then_some(u.state);
                self.segments.insert(id.clone(), next);
            }
            RemoteLogMetadataRecord::PartitionDelete(d) => {
                let tp = &d.topic_id_partition;
                let existing = match self.deletes.get(tp) {
                    Some(s) => *s,
                    None => self.cache.deletes.get(tp).map(|e| e.state),
                };
                if !RemotePartitionDeleteState::is_valid_transition(existing, d.state) {
                    return Err(Error::InvalidPartitionDeleteTransition {
                        tp: tp.clone(),
                        from: existing,
                        to: d.state,
                    });
                }
                if d.state == RemotePartitionDeleteState::DeletePartitionFinished {
                    self.deletes.insert(tp.clone(), None);
                    self.segments.retain(|id, _| &id.topic_id_partition != tp);
                    self.wiped.push(tp.clone());
                } else {
                    self.deletes.insert(tp.clone(), Some(d.state));
                }
            }
        }
        Ok(())
    }
}
