//! Object key layout, owned here and nowhere else (as in Aiven's `ObjectKeyFactory`):
//!
//! ```text
//! {key.prefix}{topic}-{topicId}/{partition}/{startOffset:020}-{segmentId}.{suffix}
//! ```
//!
//! `topicId` and `segmentId` print as Kafka prints a `Uuid`: 22 characters of URL-safe base64 without padding.
//! Suffixes: `log` (chunked segment data), `indexes` (all indexes concatenated), `rsm-manifest` (JSON, written
//! last; a segment without one is incomplete).
use base64::Engine as _;
use object_store::path::Path;
use strata_storage::TopicIdPartition;

/// Prints a UUID the way Kafka's `Uuid.toString()` does.
pub fn kafka_uuid(id: &uuid::Uuid) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// One of the three objects stored per segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectSuffix {
    /// The chunked `.log` data.
    Log,
    /// The `.indexes` blob.
    Indexes,
    /// The `.rsm-manifest` JSON.
    Manifest,
}

impl ObjectSuffix {
    /// The file extension.
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectSuffix::Log => "log",
            ObjectSuffix::Indexes => "indexes",
            ObjectSuffix::Manifest => "rsm-manifest",
        }
    }
}

/// The keys of one remote segment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SegmentKeys {
    base: String,
}

impl SegmentKeys {
    /// The keys of the segment `segment_id` of `tp` starting at `start_offset`, under `prefix`.
    pub fn new(
        prefix: &str,
        tp: &TopicIdPartition,
        start_offset: i64,
        segment_id: &uuid::Uuid,
    ) -> Self {
        let base = format!(
            "{prefix}{}-{}/{}/{:020}-{}",
            tp.topic(),
            kafka_uuid(&tp.topic_id),
            tp.partition(),
            start_offset,
            kafka_uuid(segment_id)
        );
        Self { base }
    }

    /// The key with `suffix`.
    pub fn key(&self, suffix: ObjectSuffix) -> Path {
        Path::from(format!("{}.{}", self.base, suffix.as_str()))
    }

    /// The three keys, manifest first (the order deletes use, so an interrupted delete never leaves a manifest
    /// pointing at missing data).
    pub fn all(&self) -> [Path; 3] {
        [
            self.key(ObjectSuffix::Manifest),
            self.key(ObjectSuffix::Log),
            self.key(ObjectSuffix::Indexes),
        ]
    }
}

impl std::fmt::Display for SegmentKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_storage::TopicPartition;

    #[test]
    fn layout_matches_aiven_object_key_factory() {
        let topic_id = uuid::Uuid::from_u128(0x3162_7a14_74df_4589_8baf_ee3c_f165_dea9);
        let seg = uuid::Uuid::from_u128(0xb6a8_a629_e670_4ad3_843b_0473_4f72_f9a1);
        let tp = TopicIdPartition::new(topic_id, TopicPartition::new("topic", 7));
        let keys = SegmentKeys::new("someprefix/", &tp, 1234, &seg);
        assert_eq!(
            keys.key(ObjectSuffix::Log).as_ref(),
            format!(
                "someprefix/topic-{}/7/00000000000000001234-{}.log",
                kafka_uuid(&topic_id),
                kafka_uuid(&seg)
            )
        );
        assert_eq!(kafka_uuid(&seg).len(), 22);
        assert!(keys
            .key(ObjectSuffix::Manifest)
            .as_ref()
            .ends_with(".rsm-manifest"));
        assert!(keys
            .key(ObjectSuffix::Indexes)
            .as_ref()
            .ends_with(".indexes"));
    }

    #[test]
    fn kafka_uuid_is_url_safe_base64() {
        // Kafka's own example from its Uuid javadoc round-trips through this form.
        let id = uuid::Uuid::from_bytes([0xff; 16]);
        assert_eq!(kafka_uuid(&id), "_____________________w");
    }
}
