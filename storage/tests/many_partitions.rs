//! Many partitions: logs load and close on `num.recovery.threads.per.data.dir` threads per dir, and closing an
//! idle log writes nothing (Kafka's `takeSnapshot` only snapshots what is new).
mod common;

use common::*;
use strata_storage::{LogConfig, LogManager, LogManagerConfig, TopicPartition};

fn open(dirs: &[&std::path::Path], threads: usize) -> LogManager {
    let mut c = LogManagerConfig::new(dirs.iter().map(|d| d.to_path_buf()).collect());
    c.recovery_threads_per_data_dir = threads;
    LogManager::open(c).unwrap()
}

fn snapshots(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snapshot"))
        .collect();
    v.sort();
    v
}

/// 60 partitions over two dirs, every third with records from an idempotent producer: after a clean shutdown
/// and an open on 4 threads per dir every log is back with its end offset and its producer state, and a crash
/// (no shutdown) recovers them all the same way.
#[test]
fn logs_close_and_load_in_parallel_with_their_data() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let tps: Vec<TopicPartition> = (0..60).map(|p| TopicPartition::new("many", p)).collect();
    let m = open(&[a.path(), b.path()], 4);
    for (i, tp) in tps.iter().enumerate() {
        let log = m
            .get_or_create_log(tp, uuid::Uuid::from_u128(7), LogConfig::default())
            .unwrap();
        if i % 3 == 0 {
            log.append_as_leader(producer_batch(1000 + i as i64, 0, 0, 5), 0)
                .unwrap();
        }
    }
    let per_dir = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("many-")
            })
            .count()
    };
    assert_eq!(per_dir(a.path()) + per_dir(b.path()), 60);
    assert!(
        per_dir(a.path()) >= 29 && per_dir(b.path()) >= 29,
        "spread over both dirs"
    );
    m.shutdown().unwrap();
    drop(m);

    for round in 0..2 {
        let m = open(&[a.path(), b.path()], 4);
        for (i, tp) in tps.iter().enumerate() {
            let log = m
                .get_log(tp)
                .unwrap_or_else(|| panic!("{tp} not loaded (round {round})"));
            let want = if i % 3 == 0 { 5 } else { 0 };
            assert_eq!(log.log_end_offset(), want, "{tp} round {round}");
            if i % 3 == 0 {
                // The producer is known: its next sequence is accepted, a repeat of the first is a duplicate.
                let again = log
                    .append_as_leader(producer_batch(1000 + i as i64, 0, 0, 5), 0)
                    .unwrap();
                assert_eq!(
                    log.log_end_offset(),
                    5,
                    "{tp}: duplicate not appended ({again:?})"
                );
            }
        }
        if round == 0 {
            drop(m); // a crash: no shutdown, the next open recovers
        } else {
            m.shutdown().unwrap();
        }
    }
}

/// Closing a log that never received a record, or whose newest snapshot is at its end, writes no producer
/// snapshot; a log with records appended since writes one at its end.
#[test]
fn closing_an_idle_log_writes_no_snapshot() {
    let d = tempfile::tempdir().unwrap();
    let m = open(&[d.path()], 2);
    let empty = m
        .get_or_create_log(
            &TopicPartition::new("idle", 0),
            uuid::Uuid::from_u128(1),
            LogConfig::default(),
        )
        .unwrap();
    let busy = m
        .get_or_create_log(
            &TopicPartition::new("idle", 1),
            uuid::Uuid::from_u128(1),
            LogConfig::default(),
        )
        .unwrap();
    busy.append_as_leader(batch(3, 1_000), 0).unwrap();
    let (empty_dir, busy_dir) = (empty.dir().to_path_buf(), busy.dir().to_path_buf());
    m.shutdown().unwrap();
    drop((m, empty, busy));
    assert_eq!(snapshots(&empty_dir), Vec::<String>::new());
    assert_eq!(
        snapshots(&busy_dir),
        vec!["00000000000000000003.snapshot".to_string()]
    );
    let before = std::fs::metadata(busy_dir.join("00000000000000000003.snapshot"))
        .unwrap()
        .modified()
        .unwrap();

    // Open and close again with nothing appended: the snapshot at the end is not rewritten.
    let m = open(&[d.path()], 2);
    m.shutdown().unwrap();
    drop(m);
    assert_eq!(snapshots(&empty_dir), Vec::<String>::new());
    assert_eq!(
        snapshots(&busy_dir),
        vec!["00000000000000000003.snapshot".to_string()]
    );
    let after = std::fs::metadata(busy_dir.join("00000000000000000003.snapshot"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "the snapshot at the log end was rewritten");
}
