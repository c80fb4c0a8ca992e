//! The custom metadata [`crate::ObjectStoreRsm`] returns from a copy (Kafka's `CustomMetadata`, stored by the
//! RemoteLogManager with the segment, at most 128 bytes). Like Aiven's `REMOTE_SIZE` and `OBJECT_PREFIX`
//! fields, it lets reads and deletes find a segment after `key.prefix` changes, and tells the stored size.
//!
//! | bytes | field |
//! |---|---|
//! | 1 | format version, 1 |
//! | repeated | `tag (u8) ‖ length (u8) ‖ value` |
//!
//! Tags: 0 = remote size (8 bytes, u64 big-endian: `.log` + `.indexes` + manifest as stored); 2 = object key
//! layout (1 byte, [`KeyLayout::number`]; written before the prefix so it always fits; absent in segments copied
//! before it existed, which use [`KeyLayout::V1`]); 1 = object key prefix (UTF-8, omitted when it would not fit).
//! Unknown tags are skipped.
use strata_metadata::{CustomMetadata, CUSTOM_METADATA_MAX_BYTES};

use crate::key::KeyLayout;

const VERSION: u8 = 1;
const TAG_REMOTE_SIZE: u8 = 0;
const TAG_OBJECT_PREFIX: u8 = 1;
const TAG_KEY_LAYOUT: u8 = 2;

/// What the RSM records about a copied segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentCustomMetadata {
    /// Bytes stored for the segment (all three objects).
    pub remote_size: u64,
    /// The `key.prefix` the objects were written under.
    pub object_prefix: Option<String>,
    /// The key layout the objects were written with (`None`: copied before layouts were recorded, i.e.
    /// [`KeyLayout::V1`]; or a layout number this version does not know).
    pub key_layout: Option<KeyLayout>,
}

impl SegmentCustomMetadata {
    /// Encodes within Kafka's 128-byte limit, dropping the prefix if it does not fit.
    pub fn encode(&self) -> CustomMetadata {
        let mut out = vec![VERSION, TAG_REMOTE_SIZE, 8];
        out.extend_from_slice(&self.remote_size.to_be_bytes());
        if let Some(layout) = self.key_layout {
            out.extend_from_slice(&[TAG_KEY_LAYOUT, 1, layout.number()]);
        }
        if let Some(p) = &self.object_prefix {
            if out.len() + 2 + p.len() <= CUSTOM_METADATA_MAX_BYTES {
                out.extend_from_slice(&[TAG_OBJECT_PREFIX, p.len() as u8]);
                out.extend_from_slice(p.as_bytes());
            } else {
                tracing::warn!(
                    prefix_len = p.len(),
                    "key.prefix too long for segment custom metadata; reads will use the configured prefix"
                );
            }
        }
        CustomMetadata(out)
    }

    /// Decodes; `None` for anything this crate did not write.
    pub fn decode(c: &CustomMetadata) -> Option<Self> {
        let b = c.0.as_slice();
        if b.first() != Some(&VERSION) {
            return None;
        }
        let mut rest = &b[1..];
        let mut out = SegmentCustomMetadata {
            remote_size: 0,
            object_prefix: None,
            key_layout: None,
        };
        while !rest.is_empty() {
            let (&tag, &len) = (rest.first()?, rest.get(1)?);
            let value = rest.get(2..2 + len as usize)?;
            match tag {
                TAG_REMOTE_SIZE => out.remote_size = u64::from_be_bytes(value.try_into().ok()?),
                TAG_OBJECT_PREFIX => {
                    out.object_prefix = Some(String::from_utf8(value.to_vec()).ok()?)
                }
                TAG_KEY_LAYOUT => {
                    out.key_layout = value.first().copied().and_then(KeyLayout::from_number)
                }
                _ => {}
            }
            rest = &rest[2 + len as usize..];
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_within_the_kafka_limit() {
        let m = SegmentCustomMetadata {
            remote_size: 123_456_789,
            object_prefix: Some("cluster-a/".into()),
            key_layout: Some(KeyLayout::V2),
        };
        let c = m.encode();
        assert!(c.0.len() <= CUSTOM_METADATA_MAX_BYTES);
        assert_eq!(SegmentCustomMetadata::decode(&c), Some(m));
    }

    #[test]
    fn too_long_prefix_is_dropped_not_overflowed() {
        let m = SegmentCustomMetadata {
            remote_size: 1,
            object_prefix: Some("p".repeat(200)),
            key_layout: Some(KeyLayout::V2),
        };
        let c = m.encode();
        assert!(c.0.len() <= CUSTOM_METADATA_MAX_BYTES);
        let d = SegmentCustomMetadata::decode(&c).unwrap();
        assert_eq!(d.object_prefix, None);
        assert_eq!(d.key_layout, Some(KeyLayout::V2), "the layout always fits");
    }

    #[test]
    fn metadata_written_before_layouts_decodes_without_one() {
        // What the previous version wrote: remote size and prefix only.
        let mut old = vec![1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 9, 1, 2];
        old.extend_from_slice(b"p/");
        let d = SegmentCustomMetadata::decode(&CustomMetadata(old)).unwrap();
        assert_eq!(
            (d.remote_size, d.object_prefix.as_deref(), d.key_layout),
            (9, Some("p/"), None)
        );
    }

    #[test]
    fn foreign_or_truncated_bytes_decode_to_none() {
        assert_eq!(SegmentCustomMetadata::decode(&CustomMetadata(vec![])), None);
        assert_eq!(
            SegmentCustomMetadata::decode(&CustomMetadata(vec![9, 0, 8])),
            None
        );
        assert_eq!(
            SegmentCustomMetadata::decode(&CustomMetadata(vec![1, 0, 8, 1, 2])),
            None
        );
        // Unknown tags are skipped.
        let c = CustomMetadata(vec![1, 7, 1, 0xff, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(SegmentCustomMetadata::decode(&c).unwrap().remote_size, 5);
    }
}
