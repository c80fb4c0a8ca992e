//! A log dir left out of `log.dirs` at restart: start-up refuses, naming the dir, instead of serving its
//! partitions empty from another dir (which then also leaves two diverged copies once the dir is back). Kafka
//! (KIP-858) keeps the replicas of a missing dir offline; a single node has nothing to serve them from.
mod common;

use common::*;
use strata_storage::{LogConfig, LogManager, LogManagerConfig, TopicPartition};
use uuid::Uuid;

fn open(dirs: &[&std::path::Path]) -> strata_storage::Result<LogManager> {
    LogManager::open(LogManagerConfig::new(
        dirs.iter().map(|d| d.to_path_buf()).collect(),
    ))
}

#[test]
fn a_log_dir_missing_from_log_dirs_stops_start_up_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let (d1, d2, d3) = (
        root.path().join("d1"),
        root.path().join("d2"),
        root.path().join("d3"),
    );
    let mut held = Vec::new();
    {
        let m = open(&[&d1, &d2, &d3]).unwrap();
        for p in 0..6 {
            let tp = TopicPartition::new("mdx", p);
            let log = m
                .get_or_create_log(&tp, Uuid::from_u128(9), LogConfig::default())
                .unwrap();
            log.append_as_leader(batch(10, 100), 0).unwrap();
            held.push((tp, log.log_end_offset()));
        }
        m.shutdown().unwrap();
    }
    assert!(
        std::fs::read_dir(&d2)
            .unwrap()
            .flatten()
            .any(|e| e.path().is_dir()),
        "some partitions live in d2"
    );

    let err = open(&[&d1, &d3])
        .expect_err("start-up without d2 is refused")
        .to_string();
    assert!(err.contains(&d2.display().to_string()), "{err}");
    assert!(err.contains("log.dirs"), "{err}");

    // Listed again (in another order), every partition is where it was, with its records.
    let m = open(&[&d3, &d2, &d1]).unwrap();
    for (tp, end) in &held {
        let log = m.get_log(tp).expect("partition loaded");
        assert_eq!(log.log_end_offset(), *end, "{tp:?}");
    }
    m.shutdown().unwrap();

    // Lost for good: deleting the list in each dir (as the error says) starts without it.
    for d in [&d1, &d2, &d3] {
        std::fs::remove_file(d.join(strata_storage::names::KNOWN_LOG_DIRS)).unwrap();
    }
    let m = open(&[&d1, &d3]).unwrap();
    assert!(
        held.iter().any(|(tp, _)| m.get_log(tp).is_none()),
        "d2's partitions are not loaded"
    );
    m.shutdown().unwrap();
    // A dir added is simply taken in.
    let d4 = root.path().join("d4");
    open(&[&d1, &d3, &d4]).unwrap().shutdown().unwrap();
    open(&[&d1, &d3, &d4]).unwrap().shutdown().unwrap();
}
