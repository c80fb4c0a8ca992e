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
/// Per-dir list of the log dirs (`directory.id` and path) the broker last started with (strata's own).
pub const KNOWN_LOG_DIRS: &str = "strata-log-dirs";
/// Suffix of a partition directory being deleted.
pub const DELETE_DIR_SUFFIX: &str = "-delete";
/// Suffix of a partition directory set aside as stray (left on disk by a topic that no longer exists, or holding
/// another topic id than the registry's): kept, never loaded or served, never adopted by a new topic.
pub const STRAY_DIR_SUFFIX: &str = "-stray";
/// The longest file name common file systems allow (ext4, xfs, btrfs, zfs, apfs: 255 bytes).
pub const MAX_FILE_NAME_BYTES: usize = 255;

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

/// The name a partition directory is renamed to before it is removed: `topic-partition.uuid-delete`, with the
/// topic cut so the name fits [`MAX_FILE_NAME_BYTES`] (Kafka's `LocalLog.logDeleteDirName`: a legal topic name
/// has up to 249 characters, which leaves no room for the 32-character unique id and the suffix).
pub fn delete_dir_name(tp: &TopicPartition) -> String {
    dir_name_with_suffix(tp, DELETE_DIR_SUFFIX)
}

/// The name a stray partition directory is renamed to: `topic-partition.uuid-stray`, cut like
/// [`delete_dir_name`] (Kafka's `logStrayDirName`).
pub fn stray_dir_name(tp: &TopicPartition) -> String {
    dir_name_with_suffix(tp, STRAY_DIR_SUFFIX)
}

fn dir_name_with_suffix(tp: &TopicPartition, suffix: &str) -> String {
    let tail = format!(
        "-{}.{}{suffix}",
        tp.partition,
        uuid::Uuid::new_v4().simple()
    );
    let topic = tp.topic.as_str();
    let mut keep = topic
        .len()
        .min(MAX_FILE_NAME_BYTES.saturating_sub(tail.len()));
    // Legal topic names are ASCII; stay on a character boundary for any other.
    while !topic.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}{tail}", &topic[..keep])
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

    #[test]
    fn delete_and_stray_names_of_the_longest_legal_topic_fit_255_bytes() {
        // Kafka's limit: 249 characters (so `topic-partition` fits 255 bytes).
        let tp = TopicPartition::new("t".repeat(249), 2_147_483_647);
        for name in [delete_dir_name(&tp), stray_dir_name(&tp)] {
            assert!(name.len() <= MAX_FILE_NAME_BYTES, "{} bytes", name.len());
            assert!(name.starts_with("ttt"));
            assert!(name.contains("-2147483647."));
            assert_eq!(
                parse_partition_dir(&name),
                None,
                "never loaded as a partition"
            );
        }
        assert!(delete_dir_name(&tp).ends_with(DELETE_DIR_SUFFIX));
        assert!(stray_dir_name(&tp).ends_with(STRAY_DIR_SUFFIX));
        // Short names are kept whole, unique per call.
        let short = TopicPartition::new("orders", 3);
        let a = delete_dir_name(&short);
        assert!(a.starts_with("orders-3.") && a.ends_with("-delete"), "{a}");
        assert_ne!(a, delete_dir_name(&short));
    }
}
