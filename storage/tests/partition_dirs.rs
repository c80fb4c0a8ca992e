//! Partition directory lifecycle for every legal topic name (Kafka allows 249 characters: `topic-partition`
//! fits 255 bytes, and the delete-rename cuts the topic as Kafka's `LocalLog.logDeleteDirName` does), and a
//! partition dir no loaded log owns is never adopted by a new topic of the same name (Kafka refuses a log whose
//! `partition.metadata` topic id does not match, and sets it aside as stray).
mod common;

use common::*;
use strata_storage::{LogConfig, TopicPartition};
use uuid::Uuid;

fn dir_names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_partition_of_a_249_character_topic_is_deleted_without_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let tp = TopicPartition::new("x".repeat(249), 3);
    let log = m
        .get_or_create_log(&tp, Uuid::from_u128(1), LogConfig::default())
        .unwrap();
    log.append_as_leader(batch(3, 1000), 0).unwrap();
    m.delete_log(&tp)
        .expect("delete of a 249-character topic's partition");
    assert!(m.get_log(&tp).is_none());
    assert_eq!(dir_names(dir.path()), Vec::<String>::new());
}

#[test]
fn a_leftover_partition_dir_is_set_aside_not_adopted_by_a_new_topic() {
    let old_dir = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("reborn", 0);
    {
        let m = open_manager(old_dir.path());
        let log = m
            .get_or_create_log(&tp, Uuid::from_u128(1), LogConfig::default())
            .unwrap();
        log.append_as_leader(batch(5, 1000), 0).unwrap();
        m.shutdown().unwrap();
    }
    let m = open_manager(dir.path());
    // The old topic's partition dir appears on disk without a loaded log (a delete that failed half-way).
    // Copied in-process: a forked `cp` would inherit the lock files other tests of this binary hold open and keep
    // them locked until it execs (their next open then fails as "another broker is using this log dir").
    copy_dir(
        &old_dir.path().join("reborn-0"),
        &dir.path().join("reborn-0"),
    );
    let log = m
        .get_or_create_log(&tp, Uuid::from_u128(2), LogConfig::default())
        .unwrap();
    assert_eq!(
        log.log_end_offset(),
        0,
        "the new topic adopted the old topic's records"
    );
    assert_eq!(log.topic_id(), Uuid::from_u128(2));
    let names = dir_names(dir.path());
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("reborn-0.") && n.ends_with("-stray")),
        "{names:?}"
    );
    m.shutdown().unwrap();

    // After a restart the stray dir is still not loaded; the new topic's log is.
    let m = open_manager(dir.path());
    let logs = m.all_logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (logs[0].topic_id(), logs[0].log_end_offset()),
        (Uuid::from_u128(2), 0)
    );
}

#[test]
fn a_stray_log_is_kept_aside_and_not_loaded_again() {
    let dir = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("y".repeat(249), 0);
    {
        let m = open_manager(dir.path());
        let log = m
            .get_or_create_log(&tp, Uuid::from_u128(1), LogConfig::default())
            .unwrap();
        log.append_as_leader(batch(2, 1000), 0).unwrap();
        m.set_aside_stray_log(&tp).unwrap();
        assert!(m.get_log(&tp).is_none());
        m.shutdown().unwrap();
    }
    let names = dir_names(dir.path());
    assert!(
        matches!(names.as_slice(), [n] if n.ends_with("-stray") && n.len() <= 255),
        "{names:?}"
    );
    let m = open_manager(dir.path());
    assert!(m.all_logs().is_empty());
}

/// Kafka's `LogManager.asyncDelete`: deleting partitions only renames their dirs `<topic>-<p>.<uuid>-delete` (the
/// logs are gone at once, a partition of the same name can be created right away); the files are removed later
/// ([`LogManager::remove_deleted_dirs`], a background task of the broker), or at the next start.
#[test]
fn deleted_partitions_are_renamed_at_once_and_removed_later() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let tps: Vec<TopicPartition> = (0..20).map(|p| TopicPartition::new("gone", p)).collect();
    for tp in &tps {
        let log = m
            .get_or_create_log(tp, Uuid::from_u128(1), LogConfig::default())
            .unwrap();
        log.append_as_leader(batch(2, 1000), 0).unwrap();
    }
    let deleted = m.delete_logs(&tps).unwrap();
    assert_eq!(deleted.len(), 20);
    assert!(tps.iter().all(|tp| m.get_log(tp).is_none()));
    let names = dir_names(dir.path());
    assert_eq!(names.len(), 20, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("gone-") && n.ends_with("-delete")),
        "{names:?}"
    );
    // The same name again, before the old files are removed: a new, empty log.
    let again = m
        .get_or_create_log(&tps[3], Uuid::from_u128(2), LogConfig::default())
        .unwrap();
    assert_eq!(again.log_end_offset(), 0);
    assert!(m.has_deleted_dirs());
    assert_eq!(m.remove_deleted_dirs(), 20);
    assert!(!m.has_deleted_dirs());
    assert_eq!(dir_names(dir.path()), vec!["gone-3".to_string()]);

    // Renamed but not removed when the broker stops: removed at the next start.
    m.delete_logs(&tps[3..4]).unwrap();
    m.shutdown().unwrap();
    assert_eq!(dir_names(dir.path()).len(), 1);
    let m = open_manager(dir.path());
    assert!(m.all_logs().is_empty());
    assert_eq!(dir_names(dir.path()), Vec::<String>::new());
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
