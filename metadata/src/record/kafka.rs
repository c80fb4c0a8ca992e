//! Kafka's serialization of remote log metadata (`RemoteLogMetadataSerde`), the value of every record strata
//! writes to `__remote_log_metadata`, so Kafka's tools decode them (`kafka-dump-log --remote-log-metadata-decoder`,
//! `kafka-console-consumer --formatter …RemoteLogMetadataSerde$RemoteLogMetadataFormatter`).
//!
//! A value is a frame (Kafka's `AbstractApiMessageSerde`) around one message of the message generator, encoded at
//! version 0, which is flexible (compact strings and arrays, a tagged-field section ending every struct):
//!
//! | field | encoding |
//! |---|---|
//! | frame version | unsigned varint, `1` |
//! | api key | unsigned varint: 0 segment, 1 segment update, 2 partition delete, 3 segment snapshot |
//! | message version | unsigned varint, `0` |
//! | message | the fields below, in order, then the message's tagged fields |
//!
//! | api key | message | fields |
//! |---|---|---|
//! | 0 | `RemoteLogSegmentMetadataRecord` | segment id, `StartOffset` i64, `EndOffset` i64, `BrokerId` i32, `MaxTimestampMs` i64, `EventTimestampMs` i64, `SegmentLeaderEpochs` [`LeaderEpoch` i32, `Offset` i64], `SegmentSizeInBytes` i32, `CustomMetadata` nullable bytes, `RemoteLogSegmentState` i8; tag 0: `TxnIndexEmpty` bool (written only when true) |
//! | 1 | `RemoteLogSegmentMetadataUpdateRecord` | segment id, `BrokerId` i32, `EventTimestampMs` i64, `CustomMetadata` nullable bytes, `RemoteLogSegmentState` i8 |
//! | 2 | `RemotePartitionDeleteMetadataRecord` | topic-id-partition, `BrokerId` i32, `EventTimestampMs` i64, `RemotePartitionDeleteState` i8 |
//! | 3 | `RemoteLogSegmentMetadataSnapshotRecord` | `SegmentId` uuid, then as api key 0 from `StartOffset` on |
//!
//! A segment id is the struct `{TopicIdPartition {Name string, Id uuid, Partition i32}, Id uuid}`; states are
//! Kafka's byte ids. Every strata field has its Kafka field, so nothing strata-specific needs a home outside the
//! schema: what strata's RSM records about a segment (the object key prefix and key layout) is `CustomMetadata`,
//! the field Kafka gives RSMs; `txn_idx_empty` is the tagged `TxnIndexEmpty`; the record key stays null.
//!
//! Reading is Kafka's: frame version 1 only, known api keys at version 0, unknown tagged fields skipped, no
//! trailing bytes.
use std::collections::BTreeMap;

use strata_storage::{TopicIdPartition, TopicPartition};
use uuid::Uuid;

use super::wire::{ReadResult, Reader, Writer};
use crate::{
    CustomMetadata, RemoteLogMetadataRecord, RemoteLogSegmentId, RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate, RemoteLogSegmentState, RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
};

/// The frame version Kafka's `AbstractApiMessageSerde` writes and reads.
const FRAME_VERSION: u32 = 1;
/// The only version of each message (`validVersions: "0"`).
const MESSAGE_VERSION: u32 = 0;

/// `RemoteLogSegmentMetadataRecord`'s api key.
pub const SEGMENT_API_KEY: u16 = 0;
/// `RemoteLogSegmentMetadataUpdateRecord`'s api key.
pub const SEGMENT_UPDATE_API_KEY: u16 = 1;
/// `RemotePartitionDeleteMetadataRecord`'s api key.
pub const PARTITION_DELETE_API_KEY: u16 = 2;
/// `RemoteLogSegmentMetadataSnapshotRecord`'s api key.
pub const SEGMENT_SNAPSHOT_API_KEY: u16 = 3;

/// The tag of `TxnIndexEmpty` in the segment and snapshot messages.
const TXN_INDEX_EMPTY_TAG: u32 = 0;

/// One segment's state in Kafka's snapshot form (`RemoteLogSegmentMetadataSnapshot`): a segment's metadata
/// without its partition, which the snapshot holding it names once. Kafka's topic never carries it; the codec
/// reads and writes it so every message of `RemoteLogMetadataSerde` is understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadataSnapshot {
    /// The segment's UUID (the copy attempt).
    pub segment_id: Uuid,
    /// First offset, inclusive.
    pub start_offset: i64,
    /// Last offset, inclusive.
    pub end_offset: i64,
    /// The broker that wrote this state.
    pub broker_id: i32,
    /// Largest record timestamp.
    pub max_timestamp_ms: i64,
    /// When this state was written.
    pub event_timestamp_ms: i64,
    /// Leader epoch → its first offset in the segment.
    pub segment_leader_epochs: BTreeMap<i32, i64>,
    /// Size of the segment's `.log`, at most `i32::MAX` (Kafka's field is an int32).
    pub segment_size_in_bytes: u64,
    /// RSM-specific bytes.
    pub custom_metadata: Option<CustomMetadata>,
    /// Lifecycle state.
    pub state: RemoteLogSegmentState,
    /// True when the segment has no transaction index entries.
    pub txn_idx_empty: bool,
}

impl RemoteLogSegmentMetadataSnapshot {
    /// The snapshot form of `m`, Kafka's `RemoteLogSegmentMetadataSnapshot.create`.
    pub fn create(m: &RemoteLogSegmentMetadata) -> Self {
        Self {
            segment_id: m.remote_log_segment_id.id,
            start_offset: m.start_offset,
            end_offset: m.end_offset,
            broker_id: m.broker_id,
            max_timestamp_ms: m.max_timestamp_ms,
            event_timestamp_ms: m.event_timestamp_ms,
            segment_leader_epochs: m.segment_leader_epochs.clone(),
            segment_size_in_bytes: m.segment_size_in_bytes,
            custom_metadata: m.custom_metadata.clone(),
            state: m.state,
            txn_idx_empty: m.txn_idx_empty,
        }
    }
}

impl RemoteLogSegmentMetadataSnapshot {
    /// The value in Kafka's serialization (api key 3).
    pub fn to_bytes(&self) -> crate::Result<Vec<u8>> {
        encode_snapshot(self).map_err(|reason| crate::Error::Corrupt {
            what: format!(
                "snapshot of remote log segment {} being written",
                self.segment_id
            ),
            reason,
        })
    }
}

/// What a value of Kafka's serde holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KafkaRemoteLogMetadata {
    /// Api keys 0..=2: a write to the metadata plane.
    Record(RemoteLogMetadataRecord),
    /// Api key 3: a segment in snapshot form.
    Snapshot(RemoteLogSegmentMetadataSnapshot),
}

impl KafkaRemoteLogMetadata {
    /// Decodes a value of Kafka's serde (`RemoteLogMetadataSerde.deserialize`); `what` names it in the error.
    pub fn from_bytes(value: &[u8], what: impl Fn() -> String) -> crate::Result<Self> {
        decode(value).map_err(|reason| crate::Error::Corrupt {
            what: what(),
            reason,
        })
    }
}

/// The segment fields shared by api keys 0 and 3, from `StartOffset` on.
struct SegmentBody<'a> {
    start_offset: i64,
    end_offset: i64,
    broker_id: i32,
    max_timestamp_ms: i64,
    event_timestamp_ms: i64,
    segment_leader_epochs: &'a BTreeMap<i32, i64>,
    segment_size_in_bytes: i32,
    custom_metadata: Option<&'a CustomMetadata>,
    state: RemoteLogSegmentState,
    txn_idx_empty: bool,
}

/// The size Kafka's int32 field holds; the error names the size.
pub(crate) fn size_as_i32(size: u64) -> Result<i32, String> {
    i32::try_from(size).map_err(|_| {
        format!(
            "segment size {size} bytes is above {} (Kafka's record holds it as an int32)",
            i32::MAX
        )
    })
}

fn frame(api_key: u16) -> Writer {
    let mut w = Writer::default();
    w.uvarint(FRAME_VERSION);
    w.uvarint(u32::from(api_key));
    w.uvarint(MESSAGE_VERSION);
    w
}

fn write_topic_id_partition(w: &mut Writer, tp: &TopicIdPartition) {
    w.string(&tp.topic_partition.topic);
    w.uuid(&tp.topic_id);
    w.i32(tp.topic_partition.partition);
    w.no_tagged_fields();
}

fn write_segment_id(w: &mut Writer, id: &RemoteLogSegmentId) {
    write_topic_id_partition(w, &id.topic_id_partition);
    w.uuid(&id.id);
    w.no_tagged_fields();
}

fn write_segment_body(w: &mut Writer, b: &SegmentBody<'_>) {
    w.i64(b.start_offset);
    w.i64(b.end_offset);
    w.i32(b.broker_id);
    w.i64(b.max_timestamp_ms);
    w.i64(b.event_timestamp_ms);
    w.array_len(b.segment_leader_epochs.len());
    for (&epoch, &offset) in b.segment_leader_epochs {
        w.i32(epoch);
        w.i64(offset);
        w.no_tagged_fields();
    }
    w.i32(b.segment_size_in_bytes);
    w.nullable_bytes(b.custom_metadata.map(|c| c.0.as_slice()));
    w.i8(b.state.id());
    if b.txn_idx_empty {
        w.uvarint(1); // one tagged field
        w.uvarint(TXN_INDEX_EMPTY_TAG);
        w.uvarint(1); // its size: one bool
        w.i8(1);
    } else {
        w.no_tagged_fields(); // false is the default, which Kafka leaves out
    }
}

/// Kafka's bytes for `record`. Fails only for a segment above `i32::MAX` bytes, which `validate` refuses.
pub(crate) fn encode_record(record: &RemoteLogMetadataRecord) -> Result<Vec<u8>, String> {
    let w = match record {
        RemoteLogMetadataRecord::Segment(m) => {
            let mut w = frame(SEGMENT_API_KEY);
            write_segment_id(&mut w, &m.remote_log_segment_id);
            write_segment_body(
                &mut w,
                &SegmentBody {
                    start_offset: m.start_offset,
                    end_offset: m.end_offset,
                    broker_id: m.broker_id,
                    max_timestamp_ms: m.max_timestamp_ms,
                    event_timestamp_ms: m.event_timestamp_ms,
                    segment_leader_epochs: &m.segment_leader_epochs,
                    segment_size_in_bytes: size_as_i32(m.segment_size_in_bytes)?,
                    custom_metadata: m.custom_metadata.as_ref(),
                    state: m.state,
                    txn_idx_empty: m.txn_idx_empty,
                },
            );
            w
        }
        RemoteLogMetadataRecord::SegmentUpdate(u) => {
            let mut w = frame(SEGMENT_UPDATE_API_KEY);
            write_segment_id(&mut w, &u.remote_log_segment_id);
            w.i32(u.broker_id);
            w.i64(u.event_timestamp_ms);
            w.nullable_bytes(u.custom_metadata.as_ref().map(|c| c.0.as_slice()));
            w.i8(u.state.id());
            w.no_tagged_fields();
            w
        }
        RemoteLogMetadataRecord::PartitionDelete(d) => {
            let mut w = frame(PARTITION_DELETE_API_KEY);
            write_topic_id_partition(&mut w, &d.topic_id_partition);
            w.i32(d.broker_id);
            w.i64(d.event_timestamp_ms);
            w.i8(d.state.id());
            w.no_tagged_fields();
            w
        }
    };
    Ok(w.buf)
}

/// Kafka's bytes for a segment snapshot.
fn encode_snapshot(s: &RemoteLogSegmentMetadataSnapshot) -> Result<Vec<u8>, String> {
    let mut w = frame(SEGMENT_SNAPSHOT_API_KEY);
    w.uuid(&s.segment_id);
    write_segment_body(
        &mut w,
        &SegmentBody {
            start_offset: s.start_offset,
            end_offset: s.end_offset,
            broker_id: s.broker_id,
            max_timestamp_ms: s.max_timestamp_ms,
            event_timestamp_ms: s.event_timestamp_ms,
            segment_leader_epochs: &s.segment_leader_epochs,
            segment_size_in_bytes: size_as_i32(s.segment_size_in_bytes)?,
            custom_metadata: s.custom_metadata.as_ref(),
            state: s.state,
            txn_idx_empty: s.txn_idx_empty,
        },
    );
    Ok(w.buf)
}

fn read_topic_id_partition(r: &mut Reader<'_>) -> ReadResult<TopicIdPartition> {
    let topic = r.string("topic name")?;
    let topic_id = r.uuid("topic id")?;
    let partition = r.i32("partition")?;
    skip_tagged_fields(r, "topic-id-partition tagged fields")?;
    Ok(TopicIdPartition::new(
        topic_id,
        TopicPartition::new(topic, partition),
    ))
}

fn read_segment_id(r: &mut Reader<'_>) -> ReadResult<RemoteLogSegmentId> {
    let tp = read_topic_id_partition(r)?;
    let id = r.uuid("segment id")?;
    skip_tagged_fields(r, "segment id tagged fields")?;
    Ok(RemoteLogSegmentId::new(tp, id))
}

fn skip_tagged_fields(r: &mut Reader<'_>, what: &str) -> ReadResult<()> {
    r.tagged_fields(what, |_, _| Ok(false))
}

fn segment_state(id: i8) -> ReadResult<RemoteLogSegmentState> {
    RemoteLogSegmentState::from_id(id)
        .ok_or_else(|| format!("unknown remote log segment state id {id}"))
}

fn custom(bytes: Option<Vec<u8>>) -> Option<CustomMetadata> {
    bytes.map(CustomMetadata)
}

/// The fields of [`SegmentBody`], owned.
struct OwnedSegmentBody {
    start_offset: i64,
    end_offset: i64,
    broker_id: i32,
    max_timestamp_ms: i64,
    event_timestamp_ms: i64,
    segment_leader_epochs: BTreeMap<i32, i64>,
    segment_size_in_bytes: u64,
    custom_metadata: Option<CustomMetadata>,
    state: RemoteLogSegmentState,
    txn_idx_empty: bool,
}

fn read_segment_body(r: &mut Reader<'_>) -> ReadResult<OwnedSegmentBody> {
    let start_offset = r.i64("start offset")?;
    let end_offset = r.i64("end offset")?;
    let broker_id = r.i32("broker id")?;
    let max_timestamp_ms = r.i64("max timestamp")?;
    let event_timestamp_ms = r.i64("event timestamp")?;
    let n = r.array_len("segment leader epochs")?;
    let mut segment_leader_epochs = BTreeMap::new();
    for _ in 0..n {
        let epoch = r.i32("leader epoch")?;
        let offset = r.i64("leader epoch start offset")?;
        skip_tagged_fields(r, "leader epoch entry tagged fields")?;
        if segment_leader_epochs.insert(epoch, offset).is_some() {
            return Err(format!("segment leader epochs repeat epoch {epoch}"));
        }
    }
    let size = r.i32("segment size")?;
    let segment_size_in_bytes =
        u64::try_from(size).map_err(|_| format!("segment size {size} is negative"))?;
    let custom_metadata = custom(r.nullable_bytes("custom metadata")?);
    let state = segment_state(r.i8("segment state")?)?;
    let mut txn_idx_empty = false;
    r.tagged_fields("segment tagged fields", |tag, value| {
        if tag != TXN_INDEX_EMPTY_TAG {
            return Ok(false);
        }
        match value {
            [b] => {
                txn_idx_empty = *b != 0;
                Ok(true)
            }
            _ => Err(format!("TxnIndexEmpty is {} bytes, not 1", value.len())),
        }
    })?;
    Ok(OwnedSegmentBody {
        start_offset,
        end_offset,
        broker_id,
        max_timestamp_ms,
        event_timestamp_ms,
        segment_leader_epochs,
        segment_size_in_bytes,
        custom_metadata,
        state,
        txn_idx_empty,
    })
}

/// Decodes one value of Kafka's serde; the error is the reason (the caller names the record).
pub(crate) fn decode(value: &[u8]) -> ReadResult<KafkaRemoteLogMetadata> {
    let mut r = Reader::new(value);
    let frame_version = r.uvarint("frame version")?;
    if frame_version != FRAME_VERSION {
        return Err(format!(
            "unknown frame version {frame_version} (only {FRAME_VERSION} is supported)"
        ));
    }
    let api_key = r.uvarint("api key")?;
    let version = r.uvarint("message version")?;
    if version != MESSAGE_VERSION {
        return Err(format!(
            "api key {api_key} at version {version}: only version {MESSAGE_VERSION} exists"
        ));
    }
    let decoded = match u16::try_from(api_key) {
        Ok(SEGMENT_API_KEY) => {
            let id = read_segment_id(&mut r)?;
            let b = read_segment_body(&mut r)?;
            KafkaRemoteLogMetadata::Record(RemoteLogMetadataRecord::Segment(
                RemoteLogSegmentMetadata {
                    remote_log_segment_id: id,
                    start_offset: b.start_offset,
                    end_offset: b.end_offset,
                    max_timestamp_ms: b.max_timestamp_ms,
                    broker_id: b.broker_id,
                    event_timestamp_ms: b.event_timestamp_ms,
                    segment_leader_epochs: b.segment_leader_epochs,
                    segment_size_in_bytes: b.segment_size_in_bytes,
                    custom_metadata: b.custom_metadata,
                    state: b.state,
                    txn_idx_empty: b.txn_idx_empty,
                },
            ))
        }
        Ok(SEGMENT_UPDATE_API_KEY) => {
            let remote_log_segment_id = read_segment_id(&mut r)?;
            let broker_id = r.i32("broker id")?;
            let event_timestamp_ms = r.i64("event timestamp")?;
            let custom_metadata = custom(r.nullable_bytes("custom metadata")?);
            let state = segment_state(r.i8("segment state")?)?;
            skip_tagged_fields(&mut r, "segment update tagged fields")?;
            KafkaRemoteLogMetadata::Record(RemoteLogMetadataRecord::SegmentUpdate(
                RemoteLogSegmentMetadataUpdate {
                    remote_log_segment_id,
                    event_timestamp_ms,
                    custom_metadata,
                    state,
                    broker_id,
                },
            ))
        }
        Ok(PARTITION_DELETE_API_KEY) => {
            let topic_id_partition = read_topic_id_partition(&mut r)?;
            let broker_id = r.i32("broker id")?;
            let event_timestamp_ms = r.i64("event timestamp")?;
            let id = r.i8("partition delete state")?;
            let state = RemotePartitionDeleteState::from_id(id)
                .ok_or_else(|| format!("unknown remote partition delete state id {id}"))?;
            skip_tagged_fields(&mut r, "partition delete tagged fields")?;
            KafkaRemoteLogMetadata::Record(RemoteLogMetadataRecord::PartitionDelete(
                RemotePartitionDeleteMetadata {
                    topic_id_partition,
                    state,
                    event_timestamp_ms,
                    broker_id,
                },
            ))
        }
        Ok(SEGMENT_SNAPSHOT_API_KEY) => {
            let segment_id = r.uuid("segment id")?;
            let b = read_segment_body(&mut r)?;
            KafkaRemoteLogMetadata::Snapshot(RemoteLogSegmentMetadataSnapshot {
                segment_id,
                start_offset: b.start_offset,
                end_offset: b.end_offset,
                broker_id: b.broker_id,
                max_timestamp_ms: b.max_timestamp_ms,
                event_timestamp_ms: b.event_timestamp_ms,
                segment_leader_epochs: b.segment_leader_epochs,
                segment_size_in_bytes: b.segment_size_in_bytes,
                custom_metadata: b.custom_metadata,
                state: b.state,
                txn_idx_empty: b.txn_idx_empty,
            })
        }
        _ => {
            return Err(format!(
                "unknown api key {api_key} (Kafka's remote log metadata has 0..=3)"
            ))
        }
    };
    if !r.is_empty() {
        return Err(format!(
            "{} byte(s) of garbage after api key {api_key}",
            r.buf.len()
        ));
    }
    Ok(decoded)
}
