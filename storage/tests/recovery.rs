//! Crash recovery: torn tails, corrupt indexes, leftovers, producer state across restarts.
mod common;

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use common::*;
use proptest::prelude::*;
use strata_storage::{Error, LogConfig, RecordBatch};

fn partition_dir(root: &Path) -> PathBuf {
    root.join("t-0")
}

fn active_log_file(root: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(partition_dir(root))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.pop().unwrap()
}

/// Everything the log returns from `from` on, batch by batch.
fn read_all(log: &strata_storage::UnifiedLog, from: i64) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut next = from;
    while next < log.log_end_offset() {
        let got = log.read(next, 1 << 20, true, None).unwrap().records;
        assert!(!got.is_empty(), "no data at {next}");
        for b in RecordBatch::iter(&got) {
            let b = b.unwrap();
            next = b.next_offset();
            out.push(b.into_bytes());
        }
    }
    out
}

#[test]
fn unclean_restart_keeps_everything_written_and_continues() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let m = open_manager(dir.path());
        let log = log(&m, small_segments());
        for i in 0..30 {
            log.append_as_leader(sized_batch(1 + i % 3, 50, 1000 + i as i64), 1)
                .unwrap();
        }
        m.flush_dirty_and_checkpoint(0).unwrap();
        log.append_as_leader(batch(2, 5000), 2).unwrap();
        read_all(&log, 0)
        // Dropped without shutdown: no clean-shutdown marker.
    };
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(read_all(&log, 0), before);
    assert_eq!(
        log.leader_epoch_entries().last(),
        Some(&(2, log.log_end_offset() - 2))
    );
    let next = log.log_end_offset();
    assert_eq!(
        log.append_as_leader(batch(1, 6000), 2)
            .unwrap()
            .first_offset,
        next
    );
}

/// After a crash the active segment's indexes (preallocated to segment.index.bytes, 10 MiB by default) are
/// rebuilt without writing the unused part: the files keep their size but stay sparse, so a broker with many
/// partitions does not need 20 MiB of disk (and page cache) per partition to start after a crash.
#[test]
fn unclean_restart_leaves_the_preallocated_indexes_sparse() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    {
        let m = open_manager(dir.path());
        let log = log(&m, LogConfig::default());
        for i in 0..20 {
            log.append_as_leader(sized_batch(2, 3000, 1000 + i as i64), 1)
                .unwrap();
        }
        // Dropped without shutdown: the indexes keep their preallocated size.
    }
    let index_files = || -> Vec<(PathBuf, u64, u64)> {
        std::fs::read_dir(partition_dir(dir.path()))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e == "index" || e == "timeindex")
            })
            .map(|p| {
                let md = std::fs::metadata(&p).unwrap();
                (p, md.len(), md.blocks() * 512)
            })
            .collect()
    };
    let before = index_files();
    assert_eq!(before.len(), 2);
    assert!(
        before.iter().all(|(_, len, _)| *len > 1 << 20),
        "{before:?}"
    );
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(log.log_end_offset(), 40);
    let after = index_files();
    for (path, len, allocated) in &after {
        assert!(*len > 1 << 20, "{} was trimmed to {len}", path.display());
        assert!(
            *allocated < 64 * 1024,
            "{} has {allocated} bytes allocated after recovery (of {len})",
            path.display()
        );
    }
    // The rebuilt index still finds data in the middle of the segment.
    let got = log.read(21, 1 << 20, true, None).unwrap().records;
    let first = RecordBatch::iter(&got).next().unwrap().unwrap();
    assert!(first.base_offset() <= 21 && first.last_offset() >= 21);
}

#[test]
fn corrupt_byte_in_active_segment_truncates_from_that_batch() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = {
        let m = open_manager(dir.path());
        let log = log(&m, LogConfig::default());
        let mut sizes = Vec::new();
        for i in 0..5 {
            let b = batch(2, i);
            sizes.push(b.len());
            log.append_as_leader(b, 0).unwrap();
        }
        sizes
    };
    // Flip a byte inside the third batch's records: its CRC no longer matches.
    let file = active_log_file(dir.path());
    let mut bytes = std::fs::read(&file).unwrap();
    let third = sizes[0] + sizes[1];
    bytes[third + 70] ^= 0x55;
    std::fs::write(&file, &bytes).unwrap();
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(log.log_end_offset(), 4);
    assert_eq!(std::fs::metadata(&file).unwrap().len() as usize, third);
    assert_eq!(
        log.append_as_leader(batch(1, 9), 0).unwrap().first_offset,
        4
    );
}

#[test]
fn corrupt_index_of_a_cleanly_closed_segment_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let m = open_manager(dir.path());
        let log = log(&m, small_segments());
        for i in 0..20 {
            log.append_as_leader(sized_batch(2, 60, i), 0).unwrap();
        }
        m.shutdown().unwrap();
        read_all(&log, 0)
    };
    let index = partition_dir(dir.path()).join("00000000000000000000.index");
    assert!(std::fs::metadata(&index).unwrap().len() > 0);
    std::fs::write(&index, [0xffu8; 13]).unwrap(); // not a whole number of entries
    let time_index = partition_dir(dir.path()).join("00000000000000000000.timeindex");
    std::fs::write(&time_index, [0u8; 24]).unwrap(); // entries out of order
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(read_all(&log, 0), before);
    assert_eq!(std::fs::metadata(&index).unwrap().len() % 8, 0);
    for (i, b) in before.iter().enumerate() {
        let off = RecordBatch::new(b.clone()).unwrap().base_offset();
        let got = log.read(off + 1, 1, true, None).unwrap().records;
        assert_eq!(&got, b, "batch {i}");
    }
}

#[test]
fn leftover_deleted_swap_and_tmp_files_are_removed_on_start() {
    let dir = tempfile::tempdir().unwrap();
    {
        let m = open_manager(dir.path());
        log(&m, LogConfig::default())
            .append_as_leader(batch(1, 0), 0)
            .unwrap();
        m.shutdown().unwrap();
    }
    let p = partition_dir(dir.path());
    for name in [
        "00000000000000000099.log.deleted",
        "00000000000000000000.index.swap",
        "leader-epoch-checkpoint.tmp",
        "00000000000000000007.index",
    ] {
        std::fs::write(p.join(name), b"junk").unwrap();
    }
    std::fs::create_dir(
        dir.path()
            .join("t-1.0123456789abcdef0123456789abcdef-delete"),
    )
    .unwrap();
    let m = open_manager(dir.path());
    assert_eq!(m.get_log(&tp()).unwrap().log_end_offset(), 1);
    for name in [
        "00000000000000000099.log.deleted",
        "00000000000000000000.index.swap",
        "leader-epoch-checkpoint.tmp",
        "00000000000000000007.index",
    ] {
        assert!(!p.join(name).exists(), "{name} still exists");
    }
    assert!(!dir
        .path()
        .join("t-1.0123456789abcdef0123456789abcdef-delete")
        .exists());
}

fn producer_dedupe_survives_restart(clean: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = LogConfig::default();
    cfg.segment_bytes = 400;
    let originals = {
        let m = open_manager(dir.path());
        let log = log(&m, cfg.clone());
        let mut originals = Vec::new();
        for seq in (0..40).step_by(4) {
            originals.push(
                log.append_as_leader(producer_batch(77, 2, seq, 4), 0)
                    .unwrap(),
            );
        }
        assert!(log.number_of_segments() > 2);
        if clean {
            m.shutdown().unwrap();
        }
        originals
    };
    let m = open_manager(dir.path());
    let log = m
        .get_or_create_log(&tp(), uuid::Uuid::from_u128(7), cfg)
        .unwrap();
    let leo = log.log_end_offset();
    // Retrying the last batch returns its original offsets and appends nothing.
    let dup = log
        .append_as_leader(producer_batch(77, 2, 36, 4), 0)
        .unwrap();
    assert_eq!(
        (dup.first_offset, dup.last_offset),
        (originals[9].first_offset, originals[9].last_offset)
    );
    assert_eq!(log.log_end_offset(), leo);
    let gap = log
        .append_as_leader(producer_batch(77, 2, 44, 1), 0)
        .unwrap_err();
    assert!(
        matches!(
            gap,
            Error::OutOfOrderSequence {
                expected: 40,
                received: 44,
                ..
            }
        ),
        "{gap}"
    );
    let fenced = log
        .append_as_leader(producer_batch(77, 1, 40, 1), 0)
        .unwrap_err();
    assert!(
        matches!(
            fenced,
            Error::InvalidProducerEpoch {
                current_epoch: 2,
                ..
            }
        ),
        "{fenced}"
    );
    assert_eq!(
        log.append_as_leader(producer_batch(77, 2, 40, 1), 0)
            .unwrap()
            .first_offset,
        leo
    );
    assert_eq!(log.max_producer_id(), 77);
}

#[test]
fn producer_dedupe_survives_clean_restart() {
    producer_dedupe_survives_restart(true);
}

#[test]
fn producer_dedupe_survives_unclean_restart() {
    producer_dedupe_survives_restart(false);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Truncating the active segment at any byte, then recovering, keeps exactly the complete batches, and
    /// appends continue at the offset after the last one.
    #[test]
    fn prop_truncated_segment_recovers_exactly_the_complete_batches(
        counts in proptest::collection::vec(1usize..5, 1..12),
        cut_fraction in 0.0f64..1.0,
        checkpoint_first in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let stored = {
            let m = open_manager(dir.path());
            let log = log(&m, LogConfig::default());
            for (i, n) in counts.iter().enumerate() {
                log.append_as_leader(batch(*n, i as i64 * 10), 0).unwrap();
            }
            if checkpoint_first {
                m.flush_dirty_and_checkpoint(0).unwrap();
            }
            read_all(&log, 0)
        };
        let file = active_log_file(dir.path());
        let total: usize = stored.iter().map(Bytes::len).sum();
        let cut = ((total as f64) * cut_fraction) as usize;
        OpenOptions::new().write(true).open(&file).unwrap().set_len(cut as u64).unwrap();

        let mut kept = Vec::new();
        let mut size = 0;
        for b in &stored {
            if size + b.len() > cut { break; }
            size += b.len();
            kept.push(b.clone());
        }
        let next = kept.last().map_or(0, |b| RecordBatch::new(b.clone()).unwrap().next_offset());
        let m = open_manager(dir.path());
        let log = m.get_log(&tp()).unwrap();
        prop_assert_eq!(log.log_end_offset(), next);
        prop_assert_eq!(read_all(&log, 0), kept);
        prop_assert_eq!(std::fs::metadata(&file).unwrap().len() as usize, size);
        prop_assert_eq!(log.append_as_leader(batch(1, 0), 0).unwrap().first_offset, next);
    }

    /// Random batches appended (rolling across small segments) read back at random offsets equal the appended
    /// bytes, from the batch containing the offset.
    #[test]
    fn prop_random_appends_read_back_at_random_offsets(
        batches in proptest::collection::vec((1usize..6, 0usize..120), 1..40),
        probes in proptest::collection::vec(any::<prop::sample::Index>(), 1..20),
        restart in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = small_segments();
        cfg.segment_bytes = 2048;
        let mut m = open_manager(dir.path());
        let mut l = log(&m, cfg);
        let mut appended = Vec::new();
        for (i, (n, size)) in batches.iter().enumerate() {
            let b = sized_batch(*n, *size, i as i64);
            let info = l.append_as_leader(b.clone(), 0).unwrap();
            let mut expected = b.to_vec();
            expected[0..8].copy_from_slice(&info.first_offset.to_be_bytes());
            expected[12..16].copy_from_slice(&0i32.to_be_bytes());
            appended.push((info.first_offset, info.last_offset, Bytes::from(expected)));
        }
        if restart {
            m.shutdown().unwrap();
            drop(l);
            m = open_manager(dir.path());
            l = m.get_log(&tp()).unwrap();
        }
        let leo = l.log_end_offset();
        for p in probes {
            let offset = p.index(leo as usize) as i64;
            let got = l.read(offset, 1, true, None).unwrap().records;
            let (_, _, want) = appended.iter().find(|(f, last, _)| *f <= offset && offset <= *last).unwrap();
            prop_assert_eq!(&got, want);
        }
    }
}

#[test]
fn unreadable_checkpoints_fall_back_to_full_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let m = open_manager(dir.path());
        let log = log(&m, small_segments());
        for i in 0..10 {
            log.append_as_leader(sized_batch(2, 80, i), 4).unwrap();
        }
        m.flush_dirty_and_checkpoint(0).unwrap();
        read_all(&log, 0)
    };
    std::fs::write(
        dir.path().join("recovery-point-offset-checkpoint"),
        "0\n5\ngarbage",
    )
    .unwrap();
    std::fs::write(dir.path().join("t-0/leader-epoch-checkpoint"), "7\n").unwrap();
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(read_all(&log, 0), before);
    assert_eq!(log.leader_epoch_entries(), Vec::<(i32, i64)>::new());
    log.append_as_leader(batch(1, 0), 5).unwrap();
    assert_eq!(log.leader_epoch_entries(), vec![(5, 20)]);
}

#[derive(Clone, Debug)]
enum ProducerOp {
    Append(usize),
    /// Retry the k-th most recent batch (0 = the last one).
    Retry(usize),
    Restart {
        clean: bool,
    },
}

fn producer_op() -> impl Strategy<Value = ProducerOp> {
    prop_oneof![
        4 => (1usize..4).prop_map(ProducerOp::Append),
        3 => (0usize..7).prop_map(ProducerOp::Retry),
        1 => any::<bool>().prop_map(|clean| ProducerOp::Restart { clean }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Idempotent producer state against a model, across clean and unclean restarts: a retry of a batch the log
    /// must remember (one of the last five since the last restart, or the last one before a restart, as Kafka's
    /// snapshots keep) returns the original offsets and appends nothing; a retry of an older batch is an
    /// out-of-order sequence. After an unclean restart the log replays the log from its newest snapshot (or from
    /// the start) and may remember up to five batches: those retries may be either, but never append.
    #[test]
    fn prop_producer_dedupe_matches_model_across_restarts(ops in proptest::collection::vec(producer_op(), 1..30)) {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = LogConfig::default();
        cfg.segment_bytes = 300;
        let mut m = open_manager(dir.path());
        let mut l = log(&m, cfg.clone());
        // (base sequence, count, first offset, last offset) of every appended batch, and how many of the most
        // recent ones the log must remember.
        let mut appended: Vec<(i32, usize, i64, i64)> = Vec::new();
        let (mut at_least, mut at_most) = (0usize, 0usize);
        let mut next_seq = 0i32;
        for op in ops {
            match op {
                ProducerOp::Append(n) => {
                    let leo = l.log_end_offset();
                    let info = l.append_as_leader(producer_batch(5, 0, next_seq, n), 0).unwrap();
                    prop_assert_eq!((info.first_offset, info.last_offset), (leo, leo + n as i64 - 1));
                    appended.push((next_seq, n, info.first_offset, info.last_offset));
                    next_seq += n as i32;
                    at_least = (at_least + 1).min(5);
                    at_most = (at_most + 1).min(5);
                }
                ProducerOp::Retry(k) => {
                    if k >= appended.len() { continue; }
                    let (seq, n, first, last) = appended[appended.len() - 1 - k];
                    let leo = l.log_end_offset();
                    let r = l.append_as_leader(producer_batch(5, 0, seq, n), 0);
                    let is_out_of_order = matches!(r, Err(Error::OutOfOrderSequence { .. }));
                    let is_duplicate = matches!(&r, Ok(i) if (i.first_offset, i.last_offset) == (first, last));
                    if k < at_least {
                        prop_assert!(is_duplicate, "retry of batch {} back: {:?}", k, r);
                    } else if k >= at_most {
                        prop_assert!(is_out_of_order, "retry of batch {} back: {:?}", k, r);
                    } else {
                        prop_assert!(is_duplicate || is_out_of_order, "retry of batch {} back: {:?}", k, r);
                    }
                    prop_assert_eq!(l.log_end_offset(), leo);
                }
                ProducerOp::Restart { clean } => {
                    if clean {
                        m.shutdown().unwrap();
                    }
                    drop(l);
                    drop(m);
                    m = open_manager(dir.path());
                    l = m.get_or_create_log(&tp(), uuid::Uuid::from_u128(7), cfg.clone()).unwrap();
                    // Kafka's snapshot keeps each producer's last batch; a clean restart loads the snapshot at the
                    // log end, an unclean one replays the log from the last snapshot (at the last roll).
                    at_least = at_least.min(1);
                    at_most = if clean { at_least } else { 5 };
                }
            }
        }
    }
}

#[test]
fn damaged_flushed_segment_is_truncated_and_later_segments_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let m = open_manager(dir.path());
        let log = log(&m, small_segments());
        for i in 0..12 {
            log.append_as_leader(sized_batch(2, 100, i), 0).unwrap();
        }
        m.shutdown().unwrap();
        read_all(&log, 0)
    };
    let first = partition_dir(dir.path()).join("00000000000000000000.log");
    let len = std::fs::metadata(&first).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&first)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let m = open_manager(dir.path());
    let log = m.get_log(&tp()).unwrap();
    let after = read_all(&log, 0);
    // Only the torn batch, the last one of the first segment, is gone.
    let in_first = (len as usize) / before[0].len();
    assert_eq!(after.len(), before.len() - 1);
    assert_eq!(
        &after[..],
        &[&before[..in_first - 1], &before[in_first..]].concat()[..]
    );
    assert_eq!(log.log_end_offset(), 24);
}
