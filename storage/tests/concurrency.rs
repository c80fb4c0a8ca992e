//! Reads `pread` outside the log's lock: concurrent appends, reads, retention and DeleteRecords stay correct.
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use strata_storage::{Error, LogConfig, RecordBatch, RecordBatchBuilder, UnifiedLog};

/// A batch of `n` records whose values name the offsets they will get (`first..first+n`).
fn numbered(first: i64, n: i64) -> bytes::Bytes {
    let mut b = RecordBatchBuilder::new();
    for o in first..first + n {
        b.append(o, None, Some(format!("offset-{o}").as_bytes()), &[]);
    }
    b.build()
}

/// Checks a read at `offset`: whole valid batches (CRC), the first holding `offset`, contiguous, every value
/// naming its offset, none at or past `hw`. Returns the number of records seen.
fn check_read(records: &bytes::Bytes, offset: i64, hw: i64) -> usize {
    let mut expected_base: Option<i64> = None;
    let mut seen = 0;
    for batch in RecordBatch::iter(records) {
        let batch = batch.expect("a whole, valid batch");
        match expected_base {
            None => assert!(
                batch.base_offset() <= offset && offset <= batch.last_offset(),
                "first batch {}..={} does not hold {offset}",
                batch.base_offset(),
                batch.last_offset()
            ),
            Some(b) => assert_eq!(batch.base_offset(), b, "batches are contiguous"),
        }
        assert!(
            batch.base_offset() < hw,
            "batch past the high watermark {hw}"
        );
        expected_base = Some(batch.last_offset() + 1);
        for r in batch.records().unwrap() {
            let r = r.unwrap();
            assert_eq!(
                r.value.as_deref(),
                Some(format!("offset-{}", r.offset).as_bytes())
            );
            seen += 1;
        }
    }
    seen
}

fn reader(log: Arc<UnifiedLog>, done: Arc<AtomicBool>, seed: u64) -> usize {
    let mut x = seed;
    let mut records = 0;
    let mut reads = 0;
    // Bounded: the appender finishes, then one last pass.
    while !done.load(Ordering::SeqCst) || reads < 200 {
        reads += 1;
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (start, hw) = (log.local_log_start_offset(), log.high_watermark());
        let offset = start + (x >> 33) as i64 % (hw - start + 1);
        let max_bytes = 1 + (x >> 20) as usize % 4000;
        match log.read(offset, max_bytes, x.is_multiple_of(2), Some(hw)) {
            Ok(fetched) => records += check_read(&fetched.records, offset, hw),
            Err(Error::OffsetOutOfRange { .. }) => assert!(
                offset < log.local_log_start_offset(),
                "{offset} out of range but the local log starts at {}",
                log.local_log_start_offset()
            ),
            Err(e) => panic!("read {offset}: {e}"),
        }
        if reads > 1_000_000 {
            panic!("reader did not finish");
        }
    }
    records
}

#[test]
fn concurrent_appends_reads_and_retention_stay_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(open_manager(dir.path()));
    let mut cfg = LogConfig::default();
    cfg.segment_bytes = 2048;
    cfg.index_interval_bytes = 256;
    cfg.retention_bytes = 16 * 1024;
    cfg.file_delete_delay_ms = 0;
    let log = log(&m, cfg);
    log.append_as_leader(numbered(0, 1), 0).unwrap();
    let done = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..3)
        .map(|i| {
            let (log, done) = (log.clone(), done.clone());
            std::thread::spawn(move || reader(log, done, 17 + i))
        })
        .collect();
    let retention = {
        let (m, log, done) = (m.clone(), log.clone(), done.clone());
        std::thread::spawn(move || {
            let mut passes = 0;
            while !done.load(Ordering::SeqCst) && passes < 100_000 {
                passes += 1;
                m.run_retention(0).unwrap();
                if passes % 7 == 0 {
                    // DeleteRecords a little below the end: segments go while readers may be inside them.
                    log.delete_records((log.high_watermark() - 40).max(0))
                        .unwrap();
                }
                log.remove_deleted_files_now();
            }
            passes
        })
    };
    let mut next = 1;
    for i in 0..1500 {
        let n = 1 + i % 3;
        let info = log.append_as_leader(numbered(next, n), 0).unwrap();
        assert_eq!(info.first_offset, next);
        next += n;
    }
    done.store(true, Ordering::SeqCst);
    let passes = retention.join().unwrap();
    let seen: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(
        passes > 0 && seen > 0,
        "passes {passes}, records read {seen}"
    );
    assert!(log.log_start_offset() > 0, "retention ran");
    assert_eq!(log.log_end_offset(), next);
    // What is left reads back whole (a read stops at a segment's end).
    let mut offset = log.log_start_offset();
    for _ in 0..10_000 {
        if offset == next {
            break;
        }
        let got = log.read(offset, 1 << 20, true, None).unwrap().records;
        assert!(check_read(&got, offset, next) > 0);
        let last = RecordBatch::iter(&got).last().unwrap().unwrap();
        offset = last.last_offset() + 1;
    }
    assert_eq!(offset, next);
}

/// The retention task and the checkpoint task both write the dir's checkpoint files; run side by side (as the
/// broker does with short intervals) they must not trip over each other's temporary file and take the dir offline.
#[test]
fn retention_and_checkpoint_tasks_write_checkpoints_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(open_manager(dir.path()));
    let mut cfg = LogConfig::default();
    cfg.segment_bytes = 1024;
    cfg.retention_bytes = 2048;
    cfg.file_delete_delay_ms = 0;
    let log = log(&m, cfg);
    let done = Arc::new(AtomicBool::new(false));
    let checkpointer = {
        let (m, done) = (m.clone(), done.clone());
        std::thread::spawn(move || {
            let mut passes = 0u32;
            while !done.load(Ordering::SeqCst) && passes < 1_000_000 {
                passes += 1;
                m.flush_dirty_and_checkpoint(0)?;
            }
            Ok::<_, Error>(passes)
        })
    };
    let mut next = 0;
    let mut retention_err = None;
    for _ in 0..400 {
        let n = 5;
        let info = log.append_as_leader(numbered(next, n), 0).unwrap();
        assert_eq!(info.first_offset, next);
        next += n;
        // Every append fills a 1 KiB segment's worth, so most passes delete and checkpoint.
        if let Err(e) = m.run_retention(0) {
            retention_err = Some(e);
            break;
        }
    }
    done.store(true, Ordering::SeqCst);
    let passes = checkpointer.join().unwrap();
    assert!(retention_err.is_none(), "retention: {retention_err:?}");
    let passes = passes.expect("checkpoint task");
    assert!(passes > 0);
    assert!(
        !m.is_log_dir_offline(dir.path()),
        "the log dir went offline"
    );
    assert!(log.log_start_offset() > 0, "retention ran");
    // The dir still takes appends.
    log.append_as_leader(numbered(next, 1), 0).unwrap();
}

/// With far more logs than `log.max.open.files` allows handles, appends, reads, flushes and retention on many
/// threads keep every log consistent while sweeps close the files of logs other threads are about to use (they
/// reopen them), and the handles open stay near the cap.
#[test]
fn many_logs_under_a_small_open_files_cap_stay_consistent_under_concurrent_use() {
    const LOGS: usize = 64;
    const CAP: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    let mut mc = strata_storage::LogManagerConfig::new(vec![dir.path().to_path_buf()]);
    mc.max_open_files = Some(CAP);
    let m = Arc::new(strata_storage::LogManager::open(mc).unwrap());
    let mut cfg = LogConfig::default();
    cfg.segment_bytes = 2048;
    cfg.index_interval_bytes = 256;
    cfg.segment_index_bytes = 4096;
    cfg.retention_bytes = 8 * 1024;
    cfg.file_delete_delay_ms = 0;
    let logs: Arc<Vec<Arc<UnifiedLog>>> = Arc::new(
        (0..LOGS)
            .map(|i| {
                let tp = strata_storage::TopicPartition::new("capped", i as i32);
                m.get_or_create_log(&tp, uuid::Uuid::nil(), cfg.clone())
                    .unwrap()
            })
            .collect(),
    );
    let done = Arc::new(AtomicBool::new(false));
    let background = {
        let (m, done) = (m.clone(), done.clone());
        std::thread::spawn(move || {
            let mut passes = 0;
            while !done.load(Ordering::SeqCst) && passes < 100_000 {
                passes += 1;
                m.run_retention(0).unwrap();
                m.flush_dirty_and_checkpoint(0).unwrap();
            }
        })
    };
    let workers: Vec<_> = (0..4u64)
        .map(|t| {
            let logs = logs.clone();
            std::thread::spawn(move || {
                let mut x = 99 + t;
                let mut next = vec![0i64; LOGS];
                for i in 0..1500usize {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Each worker appends to its own quarter of the logs and reads from all of them.
                    let own = (t as usize + 4 * ((x >> 33) as usize % (LOGS / 4))) % LOGS;
                    let n = 1 + (i % 3) as i64;
                    let info = logs[own]
                        .append_as_leader(numbered(next[own], n), 0)
                        .unwrap();
                    assert_eq!(info.first_offset, next[own]);
                    next[own] += n;
                    let any = &logs[(x >> 40) as usize % LOGS];
                    let (start, hw) = (any.local_log_start_offset(), any.high_watermark());
                    let offset = start + (x >> 20) as i64 % (hw - start + 1);
                    match any.read(offset, 1 + (x >> 12) as usize % 3000, true, Some(hw)) {
                        Ok(f) => {
                            check_read(&f.records, offset, hw);
                        }
                        Err(Error::OffsetOutOfRange { .. }) => {}
                        Err(e) => panic!("read {offset}: {e}"),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    background.join().unwrap();
    let (open, cap) = m.open_file_handles();
    assert!(open <= cap + 8, "{open} handles open, cap {cap}");
    for log in logs.iter() {
        let mut offset = log.local_log_start_offset();
        while offset < log.log_end_offset() {
            let got = log.read(offset, 1 << 20, true, None).unwrap().records;
            assert!(check_read(&got, offset, log.log_end_offset()) > 0);
            offset = RecordBatch::iter(&got)
                .last()
                .unwrap()
                .unwrap()
                .last_offset()
                + 1;
        }
    }
}
