//! Fault-injection tests of the log (they need the crate-private fsync fail point).
use crate::fsio::FAIL_FSYNC;
use crate::record::RecordBatchBuilder;
use crate::{Error, LogConfig, LogManager, LogManagerConfig, TopicPartition};

fn batch() -> bytes::Bytes {
    let mut b = RecordBatchBuilder::new();
    b.append(1, None, Some(b"v"), &[]);
    b.build()
}

#[test]
fn failed_fsync_poisons_the_log_dir_and_later_appends_fail() {
    let dir = tempfile::tempdir().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    let tp = TopicPartition::new("t", 0);
    let log = m
        .get_or_create_log(&tp, uuid::Uuid::nil(), LogConfig::default())
        .unwrap();
    log.append_as_leader(batch(), 0).unwrap();
    FAIL_FSYNC.with(|f| f.set(true));
    let err = log.flush().unwrap_err();
    FAIL_FSYNC.with(|f| f.set(false));
    assert!(matches!(err, Error::Storage { .. }), "{err}");
    assert!(m.is_log_dir_offline(dir.path()));
    // The fsync works again, but the dir stays offline: appends fail fast and nothing is written.
    let err = log.append_as_leader(batch(), 0).unwrap_err();
    assert!(
        matches!(&err, Error::Storage { reason, .. } if reason.contains("offline")),
        "{err}"
    );
    assert_eq!(log.log_end_offset(), 1);
    // A poisoned dir gets no clean-shutdown marker, so the next start recovers it.
    m.shutdown().unwrap();
    assert!(!dir.path().join(".kafka_cleanshutdown").exists());
}

#[test]
fn failed_fsync_on_roll_poisons_the_log_dir() {
    let dir = tempfile::tempdir().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    let log = m
        .get_or_create_log(
            &TopicPartition::new("t", 0),
            uuid::Uuid::nil(),
            LogConfig::default(),
        )
        .unwrap();
    log.append_as_leader(batch(), 0).unwrap();
    FAIL_FSYNC.with(|f| f.set(true));
    let err = log.roll().unwrap_err();
    FAIL_FSYNC.with(|f| f.set(false));
    assert!(matches!(err, Error::Storage { .. }), "{err}");
    assert!(matches!(
        log.append_as_leader(batch(), 0),
        Err(Error::Storage { .. })
    ));
}

#[test]
fn a_planned_read_returns_the_bytes_of_a_segment_deleted_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    let cfg = LogConfig {
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    let log = m
        .get_or_create_log(&TopicPartition::new("t", 0), uuid::Uuid::nil(), cfg)
        .unwrap();
    for _ in 0..3 {
        log.append_as_leader(batch(), 0).unwrap();
    }
    let expected = log.read(0, 1 << 20, true, None).unwrap().records;
    assert_eq!(expected.len(), 3 * batch().len());
    // Plan under the lock, as `read` does, then release it.
    let planned = log
        .read_state()
        .local
        .plan_read(
            0,
            crate::segment::ReadBounds {
                max_bytes: 1 << 20,
                min_one_message: true,
                max_offset: None,
                region_from: None,
            },
        )
        .unwrap();
    // Meanwhile every segment holding the data is deleted and its files removed.
    log.append_as_leader(batch(), 0).unwrap();
    log.roll().unwrap();
    assert_eq!(log.delete_records(4).unwrap(), 4);
    log.remove_deleted_files_now();
    assert!(!dir.path().join("t-0/00000000000000000000.log").exists());
    assert!(!dir
        .path()
        .join("t-0/00000000000000000000.log.deleted")
        .exists());
    // The read still returns exactly what was there when it was planned.
    assert_eq!(planned.read().unwrap(), expected);
}

#[test]
fn deferred_log_creation_fsyncs_nothing_until_sync_new_logs() {
    let dir = tempfile::tempdir().unwrap();
    let id = uuid::Uuid::new_v4();
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    let mut new = crate::NewLogs::default();
    // Every fsync fails: creating the logs must not need one (they are synced in one pass afterwards).
    FAIL_FSYNC.with(|f| f.set(true));
    let made: Result<Vec<_>, _> = (0..40)
        .map(|p| {
            m.get_or_create_log_deferred(
                &TopicPartition::new("many", p),
                id,
                LogConfig::default(),
                &mut new,
            )
        })
        .collect();
    FAIL_FSYNC.with(|f| f.set(false));
    made.unwrap();
    assert_eq!(new.len(), 40);
    assert!(!m.is_log_dir_offline(dir.path()));
    m.sync_new_logs(new).unwrap();
    m.shutdown().unwrap();
    drop(m);
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    let logs = m.all_logs();
    assert_eq!(logs.len(), 40);
    assert!(logs.iter().all(|l| l.topic_id() == id));
}

#[test]
fn failed_sync_of_new_logs_poisons_the_log_dir() {
    let dir = tempfile::tempdir().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    let mut new = crate::NewLogs::default();
    for p in 0..3 {
        let tp = TopicPartition::new("t", p);
        m.get_or_create_log_deferred(&tp, uuid::Uuid::new_v4(), LogConfig::default(), &mut new)
            .unwrap();
    }
    FAIL_FSYNC.with(|f| f.set(true));
    let err = m.sync_new_logs(new).unwrap_err();
    FAIL_FSYNC.with(|f| f.set(false));
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(m.is_log_dir_offline(dir.path()));
}

#[test]
fn get_or_create_log_is_durable_on_return() {
    let dir = tempfile::tempdir().unwrap();
    let m = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()])).unwrap();
    FAIL_FSYNC.with(|f| f.set(true));
    let made = m.get_or_create_log(
        &TopicPartition::new("t", 0),
        uuid::Uuid::new_v4(),
        LogConfig::default(),
    );
    FAIL_FSYNC.with(|f| f.set(false));
    assert!(made.is_err());
    assert!(m.is_log_dir_offline(dir.path()));
}
