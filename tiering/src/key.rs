//! Object key layout, owned here and nowhere else (as in Aiven's `ObjectKeyFactory`):
//!
//! ```text
//! {key.prefix}{topic}-{topicId}/{partition}/{startOffset:020}-{segmentId}.{suffix}
//! ```
//!
//! `topicId` and `segmentId` print as Kafka prints a `Uuid`: 22 characters of URL-safe base64 without padding.
//! Suffixes: `log` (chunked segment data), `indexes` (all indexes concatenated), `rsm-manifest` (JSON, written
//! last; a segment without one is incomplete).
//!
//! Every path component must fit a file name (255 bytes) for the filesystem backend. A legal topic name has up
//! to 249 characters, so the topic folder `{topic}-{topicId}` (plus the last part of `key.prefix` when the prefix
//! does not end with `/`) could reach 272+: [`KeyLayout::V2`] cuts the topic part to fit, as Kafka's
//! `LocalLog.logDeleteDirName` cuts a dir name; the topic id keeps the folder unique. Topics of up to 232
//! characters (under a prefix ending with `/`) get the same keys in both layouts.
//!
//! Keys are derived, not stored, so the layout a segment was written with is recorded in its custom metadata
//! ([`crate::SegmentCustomMetadata::key_layout`]); segments without it were written before V2 existed and are read
//! and deleted with [`KeyLayout::V1`] (the topic whole: what older versions wrote, e.g. to S3, which takes long
//! components). A segment whose copy never finished has no custom metadata: its cleanup deletes under both.
use base64::Engine as _;
use object_store::path::Path;
use strata_storage::TopicIdPartition;

/// The longest path component common file systems take (ext4, xfs, btrfs, zfs, apfs).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// Prints a UUID the way Kafka's `Uuid.toString()` does.
pub fn kafka_uuid(id: &uuid::Uuid) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// How keys are derived; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyLayout {
    /// The topic whole in the topic folder (segments copied before [`KeyLayout::V2`]).
    V1,
    /// The topic part cut so the topic folder fits [`MAX_COMPONENT_BYTES`]. What copies write now.
    V2,
}

impl KeyLayout {
    /// The layout new copies use.
    pub const CURRENT: KeyLayout = KeyLayout::V2;

    /// The number recorded in custom metadata.
    pub fn number(self) -> u8 {
        match self {
            KeyLayout::V1 => 1,
            KeyLayout::V2 => 2,
        }
    }

    /// The layout a recorded number names (`None`: not written by this crate's versions).
    pub fn from_number(n: u8) -> Option<Self> {
        match n {
            1 => Some(KeyLayout::V1),
            2 => Some(KeyLayout::V2),
            _ => None,
        }
    }

    /// The topic folder of `tp` under `prefix`, without a trailing `/`: `{prefix}{topic}-{topicId}`.
    pub fn topic_folder(self, prefix: &str, tp: &TopicIdPartition) -> String {
        let topic = tp.topic();
        let id = kafka_uuid(&tp.topic_id);
        let keep = match self {
            KeyLayout::V1 => topic.len(),
            KeyLayout::V2 => {
                // The prefix's last part shares the component when the prefix does not end with '/'.
                let tail = prefix.rsplit('/').next().unwrap_or("");
                let room = MAX_COMPONENT_BYTES.saturating_sub(tail.len() + 1 + id.len());
                let mut keep = topic.len().min(room);
                while !topic.is_char_boundary(keep) {
                    keep -= 1;
                }
                keep
            }
        };
        format!("{prefix}{}-{id}", &topic[..keep])
    }

    /// The partition folder: `{topic folder}/{partition}`.
    pub fn partition_folder(self, prefix: &str, tp: &TopicIdPartition) -> String {
        format!("{}/{}", self.topic_folder(prefix, tp), tp.partition())
    }
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
    /// The keys of the segment `segment_id` of `tp` starting at `start_offset`, under `prefix`, in the
    /// [current](KeyLayout::CURRENT) layout.
    pub fn new(
        prefix: &str,
        tp: &TopicIdPartition,
        start_offset: i64,
        segment_id: &uuid::Uuid,
    ) -> Self {
        Self::with_layout(KeyLayout::CURRENT, prefix, tp, start_offset, segment_id)
    }

    /// The same in a given layout (segments written by older versions).
    pub fn with_layout(
        layout: KeyLayout,
        prefix: &str,
        tp: &TopicIdPartition,
        start_offset: i64,
        segment_id: &uuid::Uuid,
    ) -> Self {
        let base = format!(
            "{}/{:020}-{}",
            layout.partition_folder(prefix, tp),
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

    #[test]
    fn every_component_of_the_longest_legal_topic_fits_a_file_name() {
        let topic_id = uuid::Uuid::from_u128(0x3162_7a14_74df_4589_8baf_ee3c_f165_dea9);
        let seg = uuid::Uuid::from_u128(0xb6a8_a629_e670_4ad3_843b_0473_4f72_f9a1);
        for prefix in ["", "someprefix/", "a/b/cluster-", &"p".repeat(40)] {
            let tp = TopicIdPartition::new(
                topic_id,
                TopicPartition::new("t".repeat(249), 2_147_483_647),
            );
            let keys = SegmentKeys::new(prefix, &tp, i64::MAX, &seg);
            for key in keys.all() {
                for part in key.as_ref().split('/') {
                    assert!(
                        part.len() <= MAX_COMPONENT_BYTES,
                        "{} bytes in {key}",
                        part.len()
                    );
                }
                assert!(
                    key.as_ref().contains(&kafka_uuid(&topic_id)),
                    "the topic id keeps it unique"
                );
            }
            // Old keys of the same segment are still derivable (objects copied before V2).
            let old = SegmentKeys::with_layout(KeyLayout::V1, prefix, &tp, i64::MAX, &seg);
            assert!(old.to_string().contains(&"t".repeat(249)));
        }
    }

    #[test]
    fn names_that_fit_keep_the_keys_they_always_had() {
        let tp = TopicIdPartition::new(
            uuid::Uuid::from_u128(5),
            TopicPartition::new("n".repeat(232), 0),
        );
        let seg = uuid::Uuid::from_u128(9);
        assert_eq!(
            SegmentKeys::with_layout(KeyLayout::V1, "p/", &tp, 0, &seg),
            SegmentKeys::with_layout(KeyLayout::V2, "p/", &tp, 0, &seg)
        );
        let longer = TopicIdPartition::new(
            uuid::Uuid::from_u128(5),
            TopicPartition::new("n".repeat(233), 0),
        );
        assert_ne!(
            SegmentKeys::with_layout(KeyLayout::V1, "p/", &longer, 0, &seg),
            SegmentKeys::with_layout(KeyLayout::V2, "p/", &longer, 0, &seg)
        );
    }
}
