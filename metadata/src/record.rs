//! `RemoteLogMetadataRecord`: one write to the metadata plane, and its JSON form in `__remote_log_metadata`.
//!
//! Each record of the internal topic has the key `"{topicId}:{partition}"` (the user partition, topic id as a
//! hyphenated UUID) and a UTF-8 JSON object value whose first two fields are `version` (currently
//! [`RECORD_FORMAT_VERSION`]) and `type`:
//!
//! | `type` | other fields |
//! |---|---|
//! | `segment` | [`RemoteLogSegmentMetadata`](crate::RemoteLogSegmentMetadata)'s fields |
//! | `segment_update` | [`RemoteLogSegmentMetadataUpdate`](crate::RemoteLogSegmentMetadataUpdate)'s fields |
//! | `partition_delete` | [`RemotePartitionDeleteMetadata`](crate::RemotePartitionDeleteMetadata)'s fields |
//!
//! A segment id is `{"topic_id", "topic", "partition", "id"}`; states are Kafka's constant names; custom
//! metadata is base64. Example (one line in the topic):
//!
//! ```json
//! {"version":1,"type":"segment_update","remote_log_segment_id":{"topic_id":"…","topic":"orders",
//!  "partition":0,"id":"…"},"event_timestamp_ms":1764694800000,"state":"COPY_SEGMENT_FINISHED","broker_id":1}
//! ```
//!
//! Readers reject a `version` above the one they know, naming it.
use serde::{Deserialize, Serialize};
use strata_storage::TopicIdPartition;

use crate::{
    Error, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata,
    Result,
};

/// The JSON value format version this crate writes and the highest it reads.
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

    /// The record key: `"{topicId}:{partition}"`.
    pub fn key(&self) -> String {
        let tp = self.topic_id_partition();
        format!("{}:{}", tp.topic_id, tp.partition())
    }

    /// The JSON value, `version` and `type` first.
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
