//! A tiered partition's log start offset (an offset only in remote storage) survives a restart; non-tiered
//! configs, retention and DeleteRecords keep working when the log start is below the first local segment.
mod common;

use std::sync::Arc;

use common::*;
use strata_storage::{Error, LogConfig, LogManager, LogManagerConfig, UnifiedLog};

/// Bytes of one test batch; segments hold two.
fn batch_len() -> u64 {
    sized_batch(1, 200, 0).len() as u64
}

fn tiered() -> LogConfig {
    let mut c = LogConfig::default();
    c.remote_storage_enable = true;
    c.retention_ms = -1;
    c.local_retention_bytes = 2 * batch_len() as i64;
    c.segment_bytes = 2 * batch_len();
    c
}

fn non_tiered() -> LogConfig {
    let mut c = tiered();
    c.remote_storage_enable = false;
    c.local_retention_bytes = -2;
    c
}

/// 10 full segments [0,2) .. [18,20) + an empty active one; segments up to offset 7 are "remote" and retention
/// removed them locally: log start 0, local log start 8.
fn tiered_log_with_remote_prefix(m: &LogManager) -> Arc<UnifiedLog> {
    let log = log(m, tiered());
    for i in 0..20 {
        log.append_as_leader(sized_batch(1, 200, 1000 * i), 0)
            .unwrap();
    }
    log.roll().unwrap();
    log.update_highest_offset_in_remote_storage(7);
    m.run_retention(0).unwrap();
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 8)
    );
    log
}

fn open_with_provider(dir: &std::path::Path, cfg: Option<LogConfig>) -> LogManager {
    let mut c = LogManagerConfig::new(vec![dir.to_path_buf()]);
    c.topic_config = Some(Arc::new(move |tp| {
        assert_eq!(tp, &common::tp());
        cfg.clone()
    }));
    LogManager::open(c).unwrap()
}

#[test]
fn tiered_log_start_survives_a_restart_with_a_non_tiered_default_config() {
    for clean in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let m = open_manager(dir.path());
        let log = tiered_log_with_remote_prefix(&m);
        if clean {
            m.shutdown().unwrap();
        } else {
            m.flush_dirty_and_checkpoint(0).unwrap();
        }
        drop((log, m));

        // The broker's default config is not tiered; the topic's config is applied only later.
        let m = open_manager(dir.path());
        let log = m.get_log(&tp()).unwrap();
        assert_eq!(log.log_start_offset(), 0, "clean={clean}");
        assert_eq!(log.local_log_start_offset(), 8, "clean={clean}");
        // Below the local start: out of range locally (the broker reads it remotely), naming the local start.
        assert!(matches!(
            log.read(0, 1000, true, None),
            Err(Error::OffsetOutOfRange { log_start: 8, .. })
        ));
        assert_eq!(
            log.read(8, 1, true, None).unwrap().records.len() as u64,
            batch_len()
        );
        // Applying the tiered topic config keeps the remote offsets.
        let log = m
            .get_or_create_log(&tp(), uuid::Uuid::from_u128(7), tiered())
            .unwrap();
        assert_eq!(
            (log.log_start_offset(), log.local_log_start_offset()),
            (0, 8)
        );
        // A retention pass on the tiered log does not touch the log start.
        m.run_retention(0).unwrap();
        assert_eq!(log.log_start_offset(), 0);
        m.shutdown().unwrap();
    }
}

#[test]
fn a_non_tiered_config_raises_the_log_start_to_the_first_local_segment() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    drop(tiered_log_with_remote_prefix(&m));
    m.shutdown().unwrap();
    drop(m);

    // get_or_create_log with a non-tiered config.
    let m = open_manager(dir.path());
    let log = m
        .get_or_create_log(&tp(), uuid::Uuid::from_u128(7), non_tiered())
        .unwrap();
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (8, 8)
    );
    m.shutdown().unwrap();
    drop((log, m));
    let m = open_manager(dir.path());
    assert_eq!(m.get_log(&tp()).unwrap().log_start_offset(), 8);
    m.shutdown().unwrap();
    drop(m);

    // update_config, and a retention pass, do the same.
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = tiered_log_with_remote_prefix(&m);
    log.update_config(non_tiered()).unwrap();
    assert_eq!(log.log_start_offset(), 8);
    m.shutdown().unwrap();
    drop((log, m));
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(log.log_start_offset(), 8);
    drop(log);
    m.shutdown().unwrap();
    drop(m);

    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    drop(tiered_log_with_remote_prefix(&m));
    m.shutdown().unwrap();
    drop(m);
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(log.log_start_offset(), 0);
    // The loaded (default) config is not tiered: retention drops the unreachable prefix.
    m.run_retention(0).unwrap();
    assert_eq!(log.log_start_offset(), 8);
}

#[test]
fn topic_config_provider_decides_the_log_start_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    drop(tiered_log_with_remote_prefix(&m));
    m.shutdown().unwrap();
    drop(m);

    let m = open_with_provider(dir.path(), Some(tiered()));
    let log = m.get_log(&tp()).unwrap();
    assert!(
        log.config().remote_storage_enable,
        "loaded with the topic's config"
    );
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 8)
    );
    m.shutdown().unwrap();
    drop((log, m));

    // Unknown to the provider: the default config, log start kept.
    let m = open_with_provider(dir.path(), None);
    assert_eq!(m.get_log(&tp()).unwrap().log_start_offset(), 0);
    m.shutdown().unwrap();
    drop(m);

    // Known and not tiered: raised at open.
    let m = open_with_provider(dir.path(), Some(non_tiered()));
    let log = m.get_log(&tp()).unwrap();
    assert!(!log.config().remote_storage_enable);
    assert_eq!(log.log_start_offset(), 8);

    // Debug output of the manager config still works with a provider.
    let mut c = LogManagerConfig::new(vec![dir.path().to_path_buf()]);
    c.topic_config = Some(Arc::new(|_| None));
    let printed = format!("{:?}", c.clone());
    assert!(printed.contains("topic_config"), "{printed}");
}

#[test]
fn delete_records_and_offsets_with_log_start_below_local_start() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    drop(tiered_log_with_remote_prefix(&m));
    m.shutdown().unwrap();
    drop(m);
    let m = open_with_provider(dir.path(), Some(tiered()));
    let log = m.get_log(&tp()).unwrap();
    // DeleteRecords inside the remote-only range moves the log start, local segments stay.
    assert_eq!(log.delete_records(3).unwrap(), 3);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (3, 8)
    );
    assert_eq!(log.number_of_segments(), 7);
    // Never lowered again.
    log.maybe_increment_log_start_offset(1).unwrap();
    assert_eq!(log.log_start_offset(), 3);
    // Timestamp lookups and max timestamp only see local data.
    assert_eq!(log.fetch_offset_by_timestamp(0).unwrap(), Some((8, 8000)));
    assert_eq!(log.max_timestamp_and_offset(), Some((19_000, 19)));
    // Appends report the (remote) log start.
    let info = log.append_as_leader(batch(1, 30_000), 0).unwrap();
    assert_eq!((info.first_offset, info.log_start_offset), (20, 3));
    m.shutdown().unwrap();
    drop((log, m));
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (3, 8)
    );
}
