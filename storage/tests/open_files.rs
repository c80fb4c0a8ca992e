//! Open file handles stay bounded by `log.max.open.files` however many partitions the logs hold: segment files
//! and indexes open on first use, idle ones close past the cap and reopen transparently (issue 11 item 3: with
//! three descriptors and two memory maps per partition, tens of thousands of partitions ran the broker out of
//! file descriptors and it could not start again). Kafka keeps every segment's `.log` open and maps indexes
//! lazily (`LazyIndex`); strata also closes idle descriptors so the count is bounded by a config, not by the
//! number of partitions.
//!
//! One test per binary: it counts the whole process's `/proc/self/fd` entries and `/proc/self/maps` lines.
mod common;

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use common::*;
use strata_storage::{
    LogConfig, LogManager, LogManagerConfig, RecordBatch, TopicPartition, UnifiedLog,
};

const PARTITIONS: usize = 400;
const CAP: usize = 100;
/// Descriptors and maps the process opens besides the cap: the dirs' `.lock`, a directory fsync, the test's own
/// files, threads.
const SLACK: usize = 24;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn maps() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count()
}

fn manager(dir: &Path) -> LogManager {
    let mut c = LogManagerConfig::new(vec![dir.to_path_buf()]);
    c.max_open_files = Some(CAP);
    let mut log = LogConfig::default();
    // Several segments per partition, so old segments are read too.
    log.segment_bytes = 2048;
    log.index_interval_bytes = 256;
    log.segment_index_bytes = 4096;
    c.default_log_config = log;
    LogManager::open(c).unwrap()
}

fn tp(i: usize) -> TopicPartition {
    TopicPartition::new("many", i as i32)
}

fn values(log: &UnifiedLog) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let got = log.read(next, 1 << 20, true, None).unwrap().records;
        assert!(
            !got.is_empty(),
            "{}: nothing at {next}",
            log.topic_partition()
        );
        for b in RecordBatch::iter(&got) {
            let b = b.unwrap();
            for r in b.records().unwrap() {
                out.push(r.unwrap().value.unwrap());
            }
            next = b.last_offset() + 1;
        }
    }
    out
}

struct Bound {
    fds: usize,
    maps: usize,
}

impl Bound {
    fn now() -> Self {
        Self {
            fds: open_fds(),
            maps: maps(),
        }
    }
    #[track_caller]
    fn check(&self, m: &LogManager, when: &str) {
        let (open, cap) = m.open_file_handles();
        assert!(open <= cap + 4, "{when}: {open} handles open, cap {cap}");
        let (fds, maps) = (open_fds(), maps());
        assert!(
            fds <= self.fds + CAP + SLACK,
            "{when}: {fds} descriptors open (baseline {}, cap {CAP})",
            self.fds
        );
        assert!(
            maps <= self.maps + CAP + SLACK,
            "{when}: {maps} memory maps (baseline {}, cap {CAP})",
            self.maps
        );
    }
}

fn logs(m: &LogManager) -> Vec<Arc<UnifiedLog>> {
    (0..PARTITIONS)
        .map(|i| m.get_log(&tp(i)).unwrap())
        .collect()
}

#[test]
fn open_files_stay_under_the_cap_with_more_partitions_than_the_cap_across_restarts_and_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let base = Bound::now();
    let m = manager(dir.path());
    for i in 0..PARTITIONS {
        m.get_or_create_log(
            &tp(i),
            uuid::Uuid::from_u128(9),
            m.config().default_log_config.clone(),
        )
        .unwrap();
    }
    base.check(&m, "after creating the partitions");
    let all = logs(&m);
    // Round-robin appends (each partition rolls a few segments), then reads of everything.
    for round in 0..6 {
        for log in &all {
            log.append_as_leader(sized_batch(4, 200, 1000 + round), 0)
                .unwrap();
        }
        base.check(&m, &format!("after append round {round}"));
    }
    assert!(
        all[0].number_of_segments() > 2,
        "{}",
        all[0].number_of_segments()
    );
    let expected: Vec<Vec<Bytes>> = all.iter().map(|l| values(l)).collect();
    assert_eq!(expected[PARTITIONS - 1].len(), 24);
    base.check(&m, "after reading every partition");
    // Timestamp lookups read old segments' time indexes.
    for log in &all {
        assert_eq!(
            log.fetch_offset_by_timestamp(1007).unwrap().map(|(o, _)| o),
            Some(19)
        );
    }
    base.check(&m, "after timestamp lookups");
    m.shutdown().unwrap();
    drop((all, m));

    // Clean restart: everything reads back; the handles stay bounded while loading.
    let m = manager(dir.path());
    base.check(&m, "after a clean restart");
    let all = logs(&m);
    for (log, want) in all.iter().zip(&expected) {
        assert_eq!(&values(log), want, "{}", log.topic_partition());
        log.append_as_leader(batch(1, 9000), 1).unwrap();
    }
    base.check(&m, "after reading back and appending");
    // Unclean: dropped without shutdown (no clean-shutdown marker), so every active segment is recovered.
    drop((all, m));
    let m = manager(dir.path());
    base.check(&m, "after recovery");
    for (i, log) in logs(&m).iter().enumerate() {
        let got = values(log);
        assert_eq!(&got[..24], &expected[i][..], "{}", log.topic_partition());
        assert_eq!(got.len(), 25, "{}", log.topic_partition());
    }
    base.check(&m, "after reading back the recovered logs");
    m.shutdown().unwrap();
}
