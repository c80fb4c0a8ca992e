//! `RemoteLogMetadataRecord`: one write to the metadata plane, and its forms in `__remote_log_metadata`.
//!
//! Since issue 34, each record strata writes has a null key (as Kafka's `TopicBasedRemoteLogMetadataManager`)
//! and a value in Kafka's own serialization, `RemoteLogMetadataSerde` (byte tables in [`kafka`]), so
//! `kafka-dump-log --remote-log-metadata-decoder` and the console consumer's `RemoteLogMetadataFormatter` print
//! strata's records. [`RemoteLogMetadataRecord::from_bytes`] also reads the JSON values earlier versions wrote
//! (a data dir keeps working across the upgrade; the two never mix within a value: JSON starts with `{`, Kafka's
//! frame with the byte `0x01`).
//!
//! The JSON form stays as the readable rendering (the console, `strata remote ls --records`) and is what the
//! earlier versions wrote, key `"{topicId}:{partition}"`, a UTF-8 JSON object whose first two fields are
//! `version` (currently [`RECORD_FORMAT_VERSION`]) and `type`:
//!
//! | `type` | other fields |
//! |---|---|
//! | `segment` | [`RemoteLogSegmentMetadata`](crate::RemoteLogSegmentMetadata)'s fields |
//! | `segment_update` | [`RemoteLogSegmentMetadataUpdate`](crate::RemoteLogSegmentMetadataUpdate)'s fields |
//! | `partition_delete` | [`RemotePartitionDeleteMetadata`](crate::RemotePartitionDeleteMetadata)'s fields |
//!
//! A segment id is `{"topic_id", "topic", "partition", "id"}`; states are Kafka's constant names; custom
//! metadata is base64. Example (one line):
//!
//! ```json
//! {"version":1,"type":"segment_update","remote_log_segment_id":{"topic_id":"…","topic":"orders",
//!  "partition":0,"id":"…"},"event_timestamp_ms":1764694800000,"state":"COPY_SEGMENT_FINISHED","broker_id":1}
//! ```
//!
//! Readers reject a `version` above the one they know, naming it.
pub mod kafka;
mod wire;

use serde::{Deserialize, Serialize};
use strata_storage::TopicIdPartition;

use crate::{
    Error, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata,
    Result,
};

/// The JSON format version this crate renders and the highest it reads.
pub const RECORD_FORMAT_VERSION: u32 = 1;

/// One write to the metadata plane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RemoteLogMetadataRecord {
    /// `addRemoteLogSegmentMetadata`.
    Segment(RemoteLogSegmentMetadata),
    /// `updateRemoteLogSegmentMetadata`.
    SegmentUpdate(RemoteLogSegmentMetadataUpdate),
    /// `putRemotePartitionDeleteMetadata`.
    PartitionDelete(RemotePartitionDeleteMetadata),
}

#[derive(Serialize)]
struct EnvelopeRef<'a> {
    version: u32,
    #[serde(flatten)]
    record: &'a RemoteLogMetadataRecord,
}

#[derive(Deserialize)]
struct Envelope {
    version: u32,
    #[serde(flatten)]
    record: RemoteLogMetadataRecord,
}

#[derive(Deserialize)]
struct VersionOnly {
    version: u32,
}

impl RemoteLogMetadataRecord {
    /// The user partition the record is about.
    pub fn topic_id_partition(&self) -> &TopicIdPartition {
        match self {
            Self::Segment(m) => m.topic_id_partition(),
            Self::SegmentUpdate(u) => &u.remote_log_segment_id.topic_id_partition,
            Self::PartitionDelete(d) => &d.topic_id_partition,
        }
    }

    /// The key earlier versions wrote with the JSON value: `"{topicId}:{partition}"` (records are now written
    /// with a null key, as Kafka writes them).
    pub fn key(&self) -> String {
        let tp = self.topic_id_partition();
        format!("{}:{}", tp.topic_id, tp.partition())
    }

    /// The value in Kafka's serialization (`RemoteLogMetadataSerde.serialize`). Fails only for a segment above
    /// `i32::MAX` bytes, which [`RemoteLogSegmentMetadata::validate`] refuses first.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        kafka::encode_record(self).map_err(|reason| Error::Corrupt {
            what: format!(
                "remote log metadata of {} being written",
                self.topic_id_partition()
            ),
            reason,
        })
    }

    /// Reads a value of `__remote_log_metadata`: Kafka's serialization, or the JSON an earlier version wrote;
    /// `what` names the record in the error (e.g. its offset).
    pub fn from_bytes(value: &[u8], what: impl Fn() -> String) -> Result<Self> {
        if ValueFormat::of(value) == ValueFormat::Json {
            return Self::from_json(value, what);
        }
        match kafka::decode(value) {
            Ok(kafka::KafkaRemoteLogMetadata::Record(r)) => Ok(r),
            Ok(kafka::KafkaRemoteLogMetadata::Snapshot(_)) => Err(Error::Corrupt {
                what: what(),
                reason: "a RemoteLogSegmentMetadataSnapshotRecord (api key 3) belongs in a snapshot, not in the \
                         metadata topic"
                    .to_owned(),
            }),
            Err(reason) => Err(Error::Corrupt {
                what: what(),
                reason,
            }),
        }
    }

    /// The readable JSON rendering, `version` and `type` first (the format earlier versions stored).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&EnvelopeRef {
            version: RECORD_FORMAT_VERSION,
            record: self,
        })
        .expect("metadata records serialize to JSON") // all fields are plain data: serde_json can not fail
    }

    /// Parses a JSON value; `what` names the record in the error (e.g. its offset).
    pub fn from_json(value: &[u8], what: impl Fn() -> String) -> Result<Self> {
        // One parse on the hot path (replay); the version is examined again only to explain a failure.
        match serde_json::from_slice::<Envelope>(value) {
            Ok(env) if (1..=RECORD_FORMAT_VERSION).contains(&env.version) => Ok(env.record),
            Ok(env) => Err(unsupported(env.version, what)),
            Err(e) => match serde_json::from_slice::<VersionOnly>(value) {
                Ok(v) if !(1..=RECORD_FORMAT_VERSION).contains(&v.version) => {
                    Err(unsupported(v.version, what))
                }
                Ok(_) => Err(Error::Corrupt {
                    what: what(),
                    reason: format!("invalid json: {e}"),
                }),
                Err(e) => Err(Error::Corrupt {
                    what: what(),
                    reason: format!("no readable version field: {e}"),
                }),
            },
        }
    }
}

/// Which serialization a value of `__remote_log_metadata` is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueFormat {
    /// Kafka's `RemoteLogMetadataSerde` (what this version writes).
    Kafka,
    /// The JSON object of earlier versions.
    Json,
}

impl ValueFormat {
    /// Tells the formats apart by the first byte: `{` is JSON; Kafka's frame starts with its version, 1.
    pub fn of(value: &[u8]) -> Self {
        if value.first() == Some(&b'{') {
            Self::Json
        } else {
            Self::Kafka
        }
    }

    /// `"kafka"` or `"json"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kafka => "kafka",
            Self::Json => "json",
        }
    }
}

fn unsupported(version: u32, what: impl Fn() -> String) -> Error {
    Error::Corrupt {
        what: what(),
        reason: format!(
            "unsupported record version {version} (this broker reads 1..={RECORD_FORMAT_VERSION})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use strata_storage::TopicPartition;
    use uuid::Uuid;

    use super::*;
    use crate::{RemoteLogSegmentId, RemoteLogSegmentState, RemotePartitionDeleteState};

    fn tip() -> TopicIdPartition {
        TopicIdPartition::new(Uuid::from_u128(0xabc), TopicPartition::new("orders", 4))
    }

    #[test]
    fn json_starts_with_version_and_type_and_round_trips() {
        let id = RemoteLogSegmentId::new(tip(), Uuid::from_u128(1));
        let records = [
            RemoteLogMetadataRecord::Segment(
                RemoteLogSegmentMetadata::new(
                    id.clone(),
                    0,
                    99,
                    7,
                    1,
                    8,
                    4096,
                    BTreeMap::from([(0, 0)]),
                )
                .unwrap(),
            ),
            RemoteLogMetadataRecord::SegmentUpdate(RemoteLogSegmentMetadataUpdate::new(
                id,
                9,
                RemoteLogSegmentState::CopySegmentFinished,
                1,
            )),
            RemoteLogMetadataRecord::PartitionDelete(RemotePartitionDeleteMetadata::new(
                tip(),
                RemotePartitionDeleteState::DeletePartitionMarked,
                10,
                1,
            )),
        ];
        for (r, ty) in records
            .iter()
            .zip(["segment", "segment_update", "partition_delete"])
        {
            let json = String::from_utf8(r.to_json()).unwrap();
            assert!(
                json.starts_with(&format!("{{\"version\":1,\"type\":\"{ty}\",")),
                "{json}"
            );
            assert_eq!(
                &RemoteLogMetadataRecord::from_json(json.as_bytes(), || "test".into()).unwrap(),
                r
            );
            assert_eq!(r.key(), "00000000-0000-0000-0000-000000000abc:4");
        }
    }

    #[test]
    fn from_json_names_unsupported_versions_and_garbage() {
        let err = RemoteLogMetadataRecord::from_json(br#"{"version":9,"type":"segment"}"#, || {
            "rec 3".into()
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("unsupported record version 9"),
            "{err}"
        );
        assert!(err.to_string().contains("rec 3"), "{err}");
        let err = RemoteLogMetadataRecord::from_json(b"not json", || "rec 4".into()).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        let err = RemoteLogMetadataRecord::from_json(br#"{"version":1,"type":"bogus"}"#, || {
            "rec 5".into()
        })
        .unwrap_err();
        assert!(err.to_string().contains("invalid json"), "{err}");
    }
}
