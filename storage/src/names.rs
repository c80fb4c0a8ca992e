//! Kafka's on-disk names, owned here: `{base_offset:020}.log|.index|.timeindex|.txnindex|.snapshot`, transient
//! suffixes, per-partition and per-dir files.
use std::path::{Path, PathBuf};

use crate::TopicPartition;

/// `.log` suffix.
pub const LOG_SUFFIX: &str = ".log";
/// `.index` suffix.
pub const INDEX_SUFFIX: &str = ".index";
/// `.timeindex` suffix.
pub const TIME_INDEX_SUFFIX: &str = ".timeindex";
/// `.txnindex` suffix.
pub const TXN_INDEX_SUFFIX: &str = ".txnindex";
/// `.snapshot` suffix (producer state).
pub const SNAPSHOT_SUFFIX: &str = ".snapshot";
/// Suffix of a file scheduled for deletion.
pub const DELETED_SUFFIX: &str = ".deleted";
/// Suffix of a file being swapped in (compaction; leftovers are removed on start).
pub const SWAP_SUFFIX: &str = ".swap";
/// Suffix of a cleaner output (leftovers are removed on start).
pub const CLEANED_SUFFIX: &str = ".cleaned";
/// Per-partition leader epoch file.
pub const LEADER_EPOCH_CHECKPOINT: &str = "leader-epoch-checkpoint";
/// Per-partition topic id file.
pub const PARTITION_METADATA: &str = "partition.metadata";
/// Per-dir recovery points.
pub const RECOVERY_POINT_CHECKPOINT: &str = "recovery-point-offset-checkpoint";
/// Per-dir log start offsets.
pub const LOG_START_OFFSET_CHECKPOINT: &str = "log-start-offset-checkpoint";
/// Per-dir clean shutdown marker.
pub const CLEAN_SHUTDOWN_MARKER: &str = ".kafka_cleanshutdown";
/// Per-dir lock file, held (`flock`) by the `LogManager` that owns the dir.
pub const LOCK_FILE: &str = ".lock";
/// Per-dir broker identity (Kafka's `meta.properties`).
pub const META_PROPERTIES: &str = "meta.properties";
/// Suffix of a partition directory being deleted.
pub const DELETE_DIR_SUFFIX: &str = "-delete";

/// `{offset:020}`.
pub fn filename_prefix(offset: i64) -> String {
    format!("{offset:020}")
}

/// `dir/{offset:020}{suffix}`.
pub fn offset_file(dir: &Path, offset: i64, suffix: &str) -> PathBuf {
    dir.join(format!("{offset:020}{suffix}"))
}

/// Parses `{offset:020}{suffix}` back into the offset.
pub fn parse_offset_file(name: &str, suffix: &str) -> Option<i64> {
    let stem = name.strip_suffix(suffix)?;
    (stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()))
        .then(|| stem.parse().ok())
        .flatten()
}

/// The partition directory name `topic-partition`.
pub fn partition_dir_name(tp: &TopicPartition) -> String {
    tp.to_string()
}

/// Parses a partition directory name `topic-partition`.
pub fn parse_partition_dir(name: &str) -> Option<TopicPartition> {
    let (topic, partition) = name.rsplit_once('-')?;
    if topic.is_empty() || partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(TopicPartition::new(topic, partition.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kafka() {
        assert_eq!(
            offset_file(Path::new("d"), 42, LOG_SUFFIX),
            Path::new("d/00000000000000000042.log")
        );
        assert_eq!(
            parse_offset_file("00000000000000000042.index", INDEX_SUFFIX),
            Some(42)
        );
        assert_eq!(parse_offset_file("42.index", INDEX_SUFFIX), None);
        assert_eq!(
            parse_partition_dir("my-topic-7"),
            Some(TopicPartition::new("my-topic", 7))
        );
        assert_eq!(
            parse_partition_dir("my-topic-7.abc-delete").map(|t| t.partition),
            None
        );
    }
}
