//! Retention by time and size, local vs total limits on tiered partitions, DeleteRecords, delete delay.
mod common;

use common::*;
use strata_storage::{Error, LogConfig};

const DAY: i64 = 24 * 3600 * 1000;

/// A log with 10 segments of 2 batches each (timestamps 1000*i), plus an empty active segment.
fn ten_segments(
    m: &strata_storage::LogManager,
    mut cfg: LogConfig,
) -> std::sync::Arc<strata_storage::UnifiedLog> {
    cfg.segment_bytes = 2 * sized_batch(1, 200, 0).len() as u64;
    let log = log(m, cfg);
    for i in 0..20 {
        log.append_as_leader(sized_batch(1, 200, 1000 * i), 0)
            .unwrap();
    }
    log.roll().unwrap();
    assert_eq!(log.number_of_segments(), 11);
    log
}

#[test]
fn time_retention_deletes_expired_segments_and_advances_log_start() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.retention_ms = DAY;
    cfg.local_retention_ms = -2;
    let log = ten_segments(&m, cfg);
    // At now = 1 day + 5500 ms, segments whose max timestamp < 5500 (timestamps 0..=5000) are expired.
    m.run_retention(DAY + 5500).unwrap();
    assert_eq!(log.log_start_offset(), 6);
    assert_eq!(log.local_log_start_offset(), 6);
    assert!(matches!(
        log.read(5, 100, true, None),
        Err(Error::OffsetOutOfRange { log_start: 6, .. })
    ));
    assert_eq!(
        log.read(6, 1, true, None).unwrap().records.len(),
        sized_batch(1, 200, 0).len()
    );
    // Files are renamed .deleted and removed after file.delete.delay.ms.
    let p = dir.path().join("t-0");
    assert!(p.join("00000000000000000000.log.deleted").exists());
    m.run_retention(DAY + 5500 + 60_001).unwrap();
    assert!(!p.join("00000000000000000000.log.deleted").exists());
    assert!(!p.join("00000000000000000000.log").exists());
}

#[test]
fn size_retention_keeps_the_newest_segments_within_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let seg = 2 * sized_batch(1, 200, 0).len() as i64;
    let mut cfg = LogConfig::default();
    cfg.retention_bytes = 3 * seg + 10;
    let log = ten_segments(&m, cfg);
    m.run_retention(0).unwrap();
    // Kafka's rule: delete the oldest segment while the rest still reaches the limit, so at most one segment
    // more than the limit remains: 4 full segments + the empty active one.
    assert_eq!(log.number_of_segments(), 5);
    assert_eq!(log.log_start_offset(), 12);
    assert!(log.size_in_bytes() as i64 <= 4 * seg);
}

#[test]
fn any_negative_retention_bytes_is_unlimited_locally_and_in_total() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    // Kafka accepts any long for retention.bytes; below zero there is no size limit. local.retention.bytes=-2
    // ("as retention.bytes") then means unlimited too, not a limit of -2 bytes.
    let mut cfg = LogConfig::default();
    cfg.retention_bytes = -2;
    cfg.validate().unwrap();
    let log = ten_segments(&m, cfg.clone());
    m.run_retention(0).unwrap();
    assert_eq!(log.number_of_segments(), 11);
    cfg.remote_storage_enable = true;
    cfg.local_retention_bytes = -2;
    cfg.validate().unwrap();
    log.update_config(cfg).unwrap();
    log.update_highest_offset_in_remote_storage(19);
    m.run_retention(0).unwrap();
    assert_eq!(log.number_of_segments(), 11);
    assert_eq!(log.local_log_start_offset(), 0);
}

#[test]
fn tiered_segments_leave_disk_only_once_in_remote_storage() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let seg = 2 * sized_batch(1, 200, 0).len() as i64;
    let mut cfg = LogConfig::default();
    cfg.remote_storage_enable = true;
    cfg.retention_bytes = -1;
    cfg.local_retention_bytes = seg;
    let log = ten_segments(&m, cfg);
    // Nothing is remote yet: nothing may be deleted although the local limit is exceeded.
    m.run_retention(0).unwrap();
    assert_eq!(log.number_of_segments(), 11);
    assert_eq!(log.highest_offset_in_remote_storage(), -1);
    // Segments up to offset 7 are remote: segments [0,2) [2,4) [4,6) [6,8) may go; [8,10) is not remote.
    log.update_highest_offset_in_remote_storage(8);
    m.run_retention(0).unwrap();
    assert_eq!(log.local_log_start_offset(), 8);
    assert_eq!(
        log.log_start_offset(),
        0,
        "the log start stays: the data is still readable remotely"
    );
    // The checkpoint written by the pass keeps the lower log start across an unclean restart.
    let text = std::fs::read_to_string(dir.path().join("log-start-offset-checkpoint")).unwrap();
    assert_eq!(text, "0\n1\nt 0 0\n");
    // Delete records removes segments entirely below the new log start even if not uploaded (Kafka's
    // `logStartOffset >= next.baseOffset`); segments above it still wait for remote storage.
    assert_eq!(log.delete_records(12).unwrap(), 12);
    assert_eq!(log.local_log_start_offset(), 12);
    assert_eq!(
        log.number_of_segments(),
        5,
        "[12,14) .. [18,20) + the active one"
    );
    m.run_retention(0).unwrap();
    assert_eq!(log.number_of_segments(), 5, "[12,14) is not remote yet");
}

#[test]
fn delete_records_moves_log_start_and_rejects_offsets_past_the_high_watermark() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = ten_segments(&m, LogConfig::default());
    assert_eq!(log.delete_records(5).unwrap(), 5);
    assert_eq!(log.log_start_offset(), 5);
    assert_eq!(
        log.number_of_segments(),
        9,
        "segments entirely below 5 are deleted"
    );
    assert!(matches!(
        log.read(4, 100, true, None),
        Err(Error::OffsetOutOfRange { .. })
    ));
    let got = log.read(5, 10_000, false, None).unwrap().records;
    let first = strata_storage::RecordBatch::iter(&got)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(first.base_offset(), 5);
    assert!(matches!(
        log.delete_records(21),
        Err(Error::OffsetOutOfRange { offset: 21, .. })
    ));
    assert_eq!(
        log.delete_records(3).unwrap(),
        5,
        "never lowers the log start"
    );
    assert_eq!(
        log.delete_records(-1).unwrap(),
        20,
        "-1 means the high watermark"
    );
    assert!(log.read(20, 100, true, None).unwrap().records.is_empty());
    log.maybe_increment_log_start_offset(20).unwrap();
    assert!(log.maybe_increment_log_start_offset(21).is_err());
    // The log start offset is checkpointed and survives a restart.
    m.shutdown().unwrap();
    drop(log);
    let m = open_manager(dir.path());
    assert_eq!(m.get_log(&tp()).unwrap().log_start_offset(), 20);
}

#[test]
fn active_segment_past_retention_is_rolled_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.retention_ms = 1000;
    let log = log(&m, cfg);
    log.append_as_leader(batch(3, 10), 0).unwrap();
    m.run_retention(100_000).unwrap();
    assert_eq!(log.log_start_offset(), 3);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.number_of_segments(), 1);
    assert_eq!(
        log.append_as_leader(batch(1, 100_000), 0)
            .unwrap()
            .first_offset,
        3
    );
}

#[test]
fn unlimited_retention_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.retention_ms = -1;
    let log = ten_segments(&m, cfg);
    m.run_retention(i64::MAX / 2).unwrap();
    assert_eq!(log.number_of_segments(), 11);
}

#[test]
fn copy_disabled_tiered_log_uses_total_retention_without_the_remote_gate() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let seg = 2 * sized_batch(1, 200, 0).len() as i64;
    let mut cfg = LogConfig::default();
    cfg.remote_storage_enable = true;
    cfg.retention_bytes = 3 * seg + 10;
    cfg.local_retention_bytes = seg;
    let log = ten_segments(&m, cfg.clone());
    // Copy on: nothing is remote, nothing leaves the disk.
    m.run_retention(0).unwrap();
    assert_eq!(log.number_of_segments(), 11);
    // Copy off (KIP-950): retention.bytes, and no wait for remote storage. Kafka then wants local.retention.bytes
    // -2 (or equal to retention.bytes); a smaller one is refused.
    cfg.remote_log_copy_disable = true;
    assert!(
        log.update_config(cfg.clone()).is_err(),
        "local.retention.bytes below retention.bytes with copy off"
    );
    cfg.local_retention_bytes = -2;
    log.update_config(cfg).unwrap();
    m.run_retention(0).unwrap();
    assert_eq!(
        log.number_of_segments(),
        5,
        "4 full segments within retention.bytes + the active one"
    );
    assert_eq!(log.local_log_start_offset(), 12);
    assert_eq!(
        log.log_start_offset(),
        12,
        "as in Kafka, with copying off a retention deletion moves the log start: nothing older is kept"
    );
    assert_eq!(log.highest_offset_in_remote_storage(), -1);
}

#[test]
fn copy_disabled_time_retention_deletes_expired_segments() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.remote_storage_enable = true;
    cfg.remote_log_copy_disable = true;
    cfg.retention_ms = DAY;
    cfg.local_retention_ms = -2;
    let log = ten_segments(&m, cfg);
    m.run_retention(DAY + 5500).unwrap();
    assert_eq!(
        log.local_log_start_offset(),
        6,
        "retention.ms deletes local segments without waiting for remote storage"
    );
    assert_eq!(log.log_start_offset(), 6, "EARLIEST follows the deletion");
}

#[test]
fn compact_policy_never_deletes_by_time_or_size_but_delete_records_works() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.cleanup_policy = "compact".parse().unwrap();
    cfg.retention_ms = 1;
    cfg.retention_bytes = 1;
    // The keyless records are written before the switch to compact: a compacted log refuses records without a
    // key (Kafka's LogValidator).
    let log = ten_segments(&m, LogConfig::default());
    log.update_config(cfg.clone()).unwrap();
    m.run_retention(DAY).unwrap();
    assert_eq!(log.number_of_segments(), 11);
    assert_eq!(log.log_start_offset(), 0);
    assert_eq!(log.delete_records(4).unwrap(), 4);
    assert_eq!(log.number_of_segments(), 9);
    // compact,delete keeps time/size retention.
    cfg.cleanup_policy = "delete, compact".parse().unwrap();
    log.update_config(cfg).unwrap();
    m.run_retention(DAY).unwrap();
    assert_eq!(log.number_of_segments(), 1);
    assert_eq!(log.log_start_offset(), 20);
}

/// `producer.id.expiration.ms` (Kafka's `removeExpiredProducers`): at a retention pass, a producer whose last
/// batch is that old is forgotten; one idle for less is kept.
#[test]
fn retention_pass_forgets_producers_idle_past_producer_id_expiration_ms() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = strata_storage::LogManagerConfig::new(vec![dir.path().to_path_buf()]);
    cfg.producer_id_expiration_ms = 5000;
    let m = strata_storage::LogManager::open(cfg).unwrap();
    let log = log(&m, LogConfig::default());
    log.append_as_leader(producer_batch(7, 0, 0, 1), 0).unwrap(); // timestamp 1000
    m.run_retention(5999).unwrap();
    let ids: Vec<i64> = log
        .active_producers()
        .iter()
        .map(|p| p.producer_id)
        .collect();
    assert_eq!(ids, vec![7], "idle 4999 ms");
    m.run_retention(6000).unwrap();
    assert!(log.active_producers().is_empty(), "idle 5000 ms");
    assert_eq!(log.log_end_offset(), 1, "the records stay");
}
