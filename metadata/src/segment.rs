//! Remote segment metadata: `RemoteLogSegmentId`, `RemoteLogSegmentMetadata` and its update record.
use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use strata_storage::{TopicIdPartition, TopicPartition};
use uuid::Uuid;

use crate::{Error, RemoteLogSegmentState, Result};

/// The most custom-metadata bytes one segment may carry.
/// Kafka: `remote.log.metadata.custom.metadata.max.bytes`. Default: 128.
pub const CUSTOM_METADATA_MAX_BYTES: usize = 128;

/// Identifies one copy attempt of one segment: the partition plus a fresh UUID per attempt, Kafka's
/// `RemoteLogSegmentId`. Displays as `topicId:topic-partition:segmentUuid`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "SegmentIdRepr", into = "SegmentIdRepr")]
pub struct RemoteLogSegmentId {
    /// The user partition the segment belongs to.
    pub topic_id_partition: TopicIdPartition,
    /// This copy attempt's UUID.
    pub id: Uuid,
}

impl RemoteLogSegmentId {
    /// Joins a partition with a segment UUID.
    pub fn new(topic_id_partition: TopicIdPartition, id: Uuid) -> Self {
        Self {
            topic_id_partition,
            id,
        }
    }

    /// A new id with a random (v4) UUID, Kafka's `RemoteLogSegmentId.generateNew`.
    pub fn generate_new(topic_id_partition: TopicIdPartition) -> Self {
        Self::new(topic_id_partition, Uuid::new_v4())
    }
}

impl fmt::Display for RemoteLogSegmentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.topic_id_partition, self.id)
    }
}

/// `TopicIdPartition` as it appears in JSON: `{"topic_id": "…", "topic": "…", "partition": 0}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TopicIdPartitionRepr {
    pub(crate) topic_id: Uuid,
    pub(crate) topic: String,
    pub(crate) partition: i32,
}

impl From<TopicIdPartition> for TopicIdPartitionRepr {
    fn from(tp: TopicIdPartition) -> Self {
        Self {
            topic_id: tp.topic_id,
            topic: tp.topic_partition.topic,
            partition: tp.topic_partition.partition,
        }
    }
}

impl From<TopicIdPartitionRepr> for TopicIdPartition {
    fn from(r: TopicIdPartitionRepr) -> Self {
        TopicIdPartition::new(r.topic_id, TopicPartition::new(r.topic, r.partition))
    }
}

/// Serde helpers for a bare `TopicIdPartition` field (`#[serde(with = "…")]`).
pub(crate) mod topic_id_partition_serde {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(tp: &TopicIdPartition, s: S) -> Result<S::Ok, S::Error> {
        TopicIdPartitionRepr::from(tp.clone()).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<TopicIdPartition, D::Error> {
        TopicIdPartitionRepr::deserialize(d).map(Into::into)
    }
}

#[derive(Serialize, Deserialize)]
struct SegmentIdRepr {
    topic_id: Uuid,
    topic: String,
    partition: i32,
    id: Uuid,
}

impl From<RemoteLogSegmentId> for SegmentIdRepr {
    fn from(s: RemoteLogSegmentId) -> Self {
        let tp = s.topic_id_partition;
        Self {
            topic_id: tp.topic_id,
            topic: tp.topic_partition.topic,
            partition: tp.topic_partition.partition,
            id: s.id,
        }
    }
}

impl From<SegmentIdRepr> for RemoteLogSegmentId {
    fn from(r: SegmentIdRepr) -> Self {
        RemoteLogSegmentId::new(
            TopicIdPartition::new(r.topic_id, TopicPartition::new(r.topic, r.partition)),
            r.id,
        )
    }
}

/// `BTreeMap<i32, i64>` as a JSON array of `{leader_epoch, offset}` (integer map keys do not survive serde's
/// buffering of internally tagged enums, and the array reads like Kafka's record schema).
mod epochs_serde {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct EpochEntry {
        leader_epoch: i32,
        offset: i64,
    }

    pub(super) fn serialize<S: Serializer>(
        m: &BTreeMap<i32, i64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter().map(|(&leader_epoch, &offset)| EpochEntry {
            leader_epoch,
            offset,
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<i32, i64>, D::Error> {
        let entries = Vec::<EpochEntry>::deserialize(d)?;
        let n = entries.len();
        let map: BTreeMap<i32, i64> = entries
            .into_iter()
            .map(|e| (e.leader_epoch, e.offset))
            .collect();
        if map.len() != n {
            return Err(serde::de::Error::custom(
                "segment_leader_epochs repeats a leader epoch",
            ));
        }
        Ok(map)
    }
}

/// Opaque bytes an RSM attaches to a segment (Kafka's `CustomMetadata`), at most
/// [`CUSTOM_METADATA_MAX_BYTES`]. Serialized as a standard base64 string.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CustomMetadata(pub Vec<u8>);

impl Serialize for CustomMetadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for CustomMetadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map(CustomMetadata)
            .map_err(|e| serde::de::Error::custom(format!("custom_metadata is not base64: {e}")))
    }
}

/// What is known about one remote segment copy attempt, Kafka's `RemoteLogSegmentMetadata`.
///
/// Invariants (checked by [`validate`](Self::validate), which every manager runs before accepting a write):
/// `0 <= start_offset <= end_offset` (both inclusive); `segment_leader_epochs` non-empty, every epoch `>= 0`,
/// its start offsets strictly increasing and within `start_offset..=end_offset` (the copier clamps the first
/// epoch's start to `start_offset`, as Kafka's `epochEntriesInRange` does);
/// `segment_size_in_bytes` at most `i32::MAX` (Kafka's record field is an int32); custom metadata at most
/// [`CUSTOM_METADATA_MAX_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteLogSegmentMetadata {
    /// The segment (partition + attempt UUID).
    pub remote_log_segment_id: RemoteLogSegmentId,
    /// First offset in the segment, inclusive.
    pub start_offset: i64,
    /// Last offset in the segment, inclusive.
    pub end_offset: i64,
    /// Largest record timestamp in the segment (time retention uses it).
    pub max_timestamp_ms: i64,
    /// The broker that wrote this state.
    pub broker_id: i32,
    /// When this state was written (epoch millis).
    pub event_timestamp_ms: i64,
    /// Leader epoch → first offset of that epoch within the segment. JSON: a list of
    /// `{"leader_epoch": e, "offset": o}` in epoch order, as Kafka's `SegmentLeaderEpochs` array.
    #[serde(with = "epochs_serde")]
    pub segment_leader_epochs: BTreeMap<i32, i64>,
    /// Size of the segment's `.log` file.
    pub segment_size_in_bytes: u64,
    /// RSM-specific bytes, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_metadata: Option<CustomMetadata>,
    /// Lifecycle state; new metadata starts in `COPY_SEGMENT_STARTED`.
    pub state: RemoteLogSegmentState,
    /// True when the segment has no (or an empty) transaction index (KIP-1058).
    #[serde(default)]
    pub txn_idx_empty: bool,
}

impl RemoteLogSegmentMetadata {
    /// New metadata in `COPY_SEGMENT_STARTED`, validated; `custom_metadata` empty and `txn_idx_empty` false.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        remote_log_segment_id: RemoteLogSegmentId,
        start_offset: i64,
        end_offset: i64,
        max_timestamp_ms: i64,
        broker_id: i32,
        event_timestamp_ms: i64,
        segment_size_in_bytes: u64,
        segment_leader_epochs: BTreeMap<i32, i64>,
    ) -> Result<Self> {
        let m = Self {
            remote_log_segment_id,
            start_offset,
            end_offset,
            max_timestamp_ms,
            broker_id,
            event_timestamp_ms,
            segment_leader_epochs,
            segment_size_in_bytes,
            custom_metadata: None,
            state: RemoteLogSegmentState::CopySegmentStarted,
            txn_idx_empty: false,
        };
        m.validate()?;
        Ok(m)
    }

    /// The partition the segment belongs to.
    pub fn topic_id_partition(&self) -> &TopicIdPartition {
        &self.remote_log_segment_id.topic_id_partition
    }

    /// Checks the invariants listed on the type.
    pub fn validate(&self) -> Result<()> {
        let bad = |reason: String| {
            Err(Error::InvalidMetadata {
                id: self.remote_log_segment_id.clone(),
                reason,
            })
        };
        if self.start_offset < 0 {
            return bad(format!("start offset {} is negative", self.start_offset));
        }
        if self.end_offset < self.start_offset {
            return bad(format!(
                "end offset {} is below start offset {}",
                self.end_offset, self.start_offset
            ));
        }
        if self.segment_leader_epochs.is_empty() {
            return bad("segment leader epochs are empty".to_owned());
        }
        let mut prev: Option<i64> = None;
        for (&epoch, &offset) in &self.segment_leader_epochs {
            if epoch < 0 {
                return bad(format!("leader epoch {epoch} is negative"));
            }
            if offset < self.start_offset
                || offset > self.end_offset
                || prev.is_some_and(|p| offset <= p)
            {
                return bad(format!(
                    "leader epoch {epoch} starts at offset {offset}, outside the segment or not after the previous epoch"
                ));
            }
            prev = Some(offset);
        }
        if let Err(reason) = crate::record::kafka::size_as_i32(self.segment_size_in_bytes) {
            return bad(reason);
        }
        if let Some(c) = &self.custom_metadata {
            check_custom_metadata(&self.remote_log_segment_id, c)?;
        }
        Ok(())
    }

    /// The last offset of `epoch` within this segment: the next epoch's start minus one, or the segment end.
    /// `None` when the segment holds no offsets of `epoch`.
    pub fn epoch_end_offset(&self, epoch: i32) -> Option<i64> {
        self.segment_leader_epochs.get(&epoch)?;
        Some(match self.segment_leader_epochs.range(epoch + 1..).next() {
            Some((_, &next_start)) => next_start - 1,
            None => self.end_offset,
        })
    }

    /// A copy with the update's broker id, event timestamp, custom metadata and state, Kafka's
    /// `createWithUpdates`. The caller checks the transition.
    pub fn create_with_updates(&self, update: &RemoteLogSegmentMetadataUpdate) -> Self {
        Self {
            broker_id: update.broker_id,
            event_timestamp_ms: update.event_timestamp_ms,
            custom_metadata: update.custom_metadata.clone(),
            state: update.state,
            ..self.clone()
        }
    }
}

pub(crate) fn check_custom_metadata(id: &RemoteLogSegmentId, c: &CustomMetadata) -> Result<()> {
    if c.0.len() > CUSTOM_METADATA_MAX_BYTES {
        return Err(Error::InvalidMetadata {
            id: id.clone(),
            reason: format!(
                "custom metadata is {} bytes, above the limit of {CUSTOM_METADATA_MAX_BYTES}",
                c.0.len()
            ),
        });
    }
    Ok(())
}

/// A state change of an existing segment, Kafka's `RemoteLogSegmentMetadataUpdate`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteLogSegmentMetadataUpdate {
    /// The segment being updated.
    pub remote_log_segment_id: RemoteLogSegmentId,
    /// When the update was made (epoch millis).
    pub event_timestamp_ms: i64,
    /// Replaces the segment's custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_metadata: Option<CustomMetadata>,
    /// The new state; never `COPY_SEGMENT_STARTED`.
    pub state: RemoteLogSegmentState,
    /// The broker making the update.
    pub broker_id: i32,
}

impl RemoteLogSegmentMetadataUpdate {
    /// An update without custom metadata.
    pub fn new(
        remote_log_segment_id: RemoteLogSegmentId,
        event_timestamp_ms: i64,
        state: RemoteLogSegmentState,
        broker_id: i32,
    ) -> Self {
        Self {
            remote_log_segment_id,
            event_timestamp_ms,
            custom_metadata: None,
            state,
            broker_id,
        }
    }

    /// Rejects `COPY_SEGMENT_STARTED` (only an add may start a segment) and oversized custom metadata.
    pub fn validate(&self) -> Result<()> {
        if self.state == RemoteLogSegmentState::CopySegmentStarted {
            return Err(Error::InvalidMetadata {
                id: self.remote_log_segment_id.clone(),
                reason:
                    "an update can not set COPY_SEGMENT_STARTED; add the segment metadata instead"
                        .to_owned(),
            });
        }
        if let Some(c) = &self.custom_metadata {
            check_custom_metadata(&self.remote_log_segment_id, c)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tip() -> TopicIdPartition {
        TopicIdPartition::new(Uuid::from_u128(7), TopicPartition::new("orders", 2))
    }

    #[test]
    fn new_starts_in_copy_started_and_validates() {
        let id = RemoteLogSegmentId::generate_new(tip());
        let m = RemoteLogSegmentMetadata::new(
            id.clone(),
            10,
            19,
            5,
            1,
            6,
            100,
            BTreeMap::from([(0, 10), (2, 15)]),
        )
        .unwrap();
        assert_eq!(m.state, RemoteLogSegmentState::CopySegmentStarted);
        assert_eq!(m.epoch_end_offset(0), Some(14));
        assert_eq!(m.epoch_end_offset(2), Some(19));
        assert_eq!(m.epoch_end_offset(1), None);

        let err =
            RemoteLogSegmentMetadata::new(id.clone(), 10, 9, 0, 1, 0, 0, BTreeMap::from([(0, 10)]))
                .unwrap_err();
        assert!(
            err.to_string()
                .contains("end offset 9 is below start offset 10"),
            "{err}"
        );
        let err = RemoteLogSegmentMetadata::new(id.clone(), 10, 19, 0, 1, 0, 0, BTreeMap::new())
            .unwrap_err();
        assert!(err.to_string().contains("leader epochs are empty"), "{err}");
        let err = RemoteLogSegmentMetadata::new(
            id,
            10,
            19,
            0,
            1,
            0,
            0,
            BTreeMap::from([(0, 10), (1, 25)]),
        )
        .unwrap_err();
        assert!(matches!(err, Error::InvalidMetadata { .. }), "{err}");
    }

    #[test]
    fn json_round_trips_and_custom_metadata_is_base64() {
        let id = RemoteLogSegmentId::new(tip(), Uuid::from_u128(9));
        let mut m = RemoteLogSegmentMetadata::new(id, 0, 9, 5, 1, 6, 100, BTreeMap::from([(0, 0)]))
            .unwrap();
        m.custom_metadata = Some(CustomMetadata(vec![1, 2, 3]));
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.contains("\"custom_metadata\":\"AQID\""), "{json}");
        assert!(json.contains("\"topic\":\"orders\""), "{json}");
        let back: RemoteLogSegmentMetadata = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn update_rejects_copy_started_and_oversized_custom_metadata() {
        let id = RemoteLogSegmentId::generate_new(tip());
        let u = RemoteLogSegmentMetadataUpdate::new(
            id.clone(),
            1,
            RemoteLogSegmentState::CopySegmentStarted,
            0,
        );
        assert!(matches!(u.validate(), Err(Error::InvalidMetadata { .. })));
        let mut u = RemoteLogSegmentMetadataUpdate::new(
            id,
            1,
            RemoteLogSegmentState::CopySegmentFinished,
            0,
        );
        u.custom_metadata = Some(CustomMetadata(vec![0; CUSTOM_METADATA_MAX_BYTES + 1]));
        assert!(matches!(u.validate(), Err(Error::InvalidMetadata { .. })));
        u.custom_metadata = Some(CustomMetadata(vec![0; CUSTOM_METADATA_MAX_BYTES]));
        assert!(u.validate().is_ok());
    }
}
