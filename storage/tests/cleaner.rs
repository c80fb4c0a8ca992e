//! The log cleaner (Kafka's log compaction) on real files: what survives a cleaning, `min.compaction.lag.ms`,
//! the active segment, keyless records, several passes over a log larger than one offset map, codecs, and a crash
//! at every step of the `.cleaned` → `.swap` protocol.
//! Tombstones and `delete.retention.ms` (the per-batch delete horizon): `cleaner_horizon.rs`.
mod common;
use common::client_batch;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::records::{Compression as C, RecordBatchDecoder};
use strata_storage::cleaner::{CrashPoint, CLEANER_OFFSET_CHECKPOINT};
use strata_storage::record::Compression;
use strata_storage::{
    CleanerConfig, CleanupPolicy, Error, LogCleaner, LogConfig, LogManager, LogManagerConfig,
    RecordBatch, RecordBatchBuilder, TopicPartition, UnifiedLog,
};

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn compact_config(segment_bytes: u64) -> LogConfig {
    let mut c = LogConfig::default();
    c.cleanup_policy = CleanupPolicy::Compact;
    c.segment_bytes = segment_bytes;
    c.min_cleanable_dirty_ratio = 0.01;
    c
}

fn open(dir: &Path) -> Arc<LogManager> {
    Arc::new(LogManager::open(LogManagerConfig::new(vec![dir.to_path_buf()])).unwrap())
}

fn tp() -> TopicPartition {
    TopicPartition::new("compacted", 0)
}

/// One uncompressed batch of `(key, value)` records at timestamp `ts`.
fn batch(records: &[(String, Option<String>)], ts: i64) -> Bytes {
    let mut b = RecordBatchBuilder::new();
    for (k, v) in records {
        b.append(ts, Some(k.as_bytes()), v.as_deref().map(str::as_bytes), &[]);
    }
    b.build()
}

/// Writes `rounds` overwrites of keys `k0..k{keys}` (value `v{round}-{key}`), `per_batch` records per batch.
fn overwrite(log: &UnifiedLog, keys: usize, rounds: usize, per_batch: usize, ts: i64) {
    for round in 0..rounds {
        let all: Vec<(String, Option<String>)> = (0..keys)
            .map(|k| (format!("k{k}"), Some(format!("v{round}-{k}"))))
            .collect();
        for chunk in all.chunks(per_batch) {
            log.append_as_leader(batch(chunk, ts), 0).unwrap();
        }
    }
}

/// Every record in the log: offset → (key, value); asserts offsets strictly increase.
fn read_all(log: &UnifiedLog) -> BTreeMap<i64, (String, Option<String>)> {
    let mut out = BTreeMap::new();
    let mut offset = log.log_start_offset();
    let mut last = -1;
    while offset < log.log_end_offset() {
        let fetched = log.read(offset, 1 << 20, true, None).unwrap().records;
        assert!(!fetched.is_empty(), "nothing read at {offset}");
        for b in RecordBatch::iter(&fetched) {
            offset = offset.max(b.unwrap().next_offset());
        }
        let mut buf = fetched.clone();
        for set in RecordBatchDecoder::decode_all(&mut buf).unwrap() {
            for r in set.records {
                assert!(r.offset > last, "offset {} after {last}", r.offset);
                last = r.offset;
                let key = String::from_utf8(r.key.unwrap().to_vec()).unwrap();
                let value = r.value.map(|v| String::from_utf8(v.to_vec()).unwrap());
                out.insert(r.offset, (key, value));
            }
        }
    }
    out
}

/// key → (offset, value) of the latest record per key.
fn latest(
    all: &BTreeMap<i64, (String, Option<String>)>,
) -> BTreeMap<String, (i64, Option<String>)> {
    let mut m = BTreeMap::new();
    for (o, (k, v)) in all {
        m.insert(k.clone(), (*o, v.clone()));
    }
    m
}

fn cleaner(manager: &Arc<LogManager>) -> LogCleaner {
    let mut c = CleanerConfig::default();
    c.dedupe_buffer_size = 1 << 20;
    LogCleaner::new(c, manager.clone()).unwrap()
}

fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect()
}

/// Kafka's guarantee: after cleaning, the latest record of every key is still there at its original offset, and
/// every older one is gone (below the active segment). The checkpoint file is Kafka's format.
#[test]
fn latest_value_per_key_survives_many_overwrites_with_offsets_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(4096))
        .unwrap();
    overwrite(&log, 50, 20, 10, now());
    log.roll().unwrap();
    let before = latest(&read_all(&log));
    let end = log.log_end_offset();
    let cleaner = cleaner(&manager);
    let stats = cleaner.clean_once().unwrap().expect("the log is dirty");
    assert_eq!(stats.end_offset, end);
    assert_eq!(stats.records_removed, 50 * 19);
    assert!(stats.bytes_written < stats.bytes_read);
    let all = read_all(&log);
    assert_eq!(all.len(), 50, "one record per key");
    assert_eq!(latest(&all), before, "same offsets and values");
    assert_eq!(log.log_end_offset(), end);
    assert!(
        cleaner.clean_once().unwrap().is_none(),
        "nothing dirty left"
    );
    let cp = std::fs::read_to_string(dir.path().join(CLEANER_OFFSET_CHECKPOINT)).unwrap();
    assert_eq!(cp, format!("0\n1\ncompacted 0 {end}\n"));
    cleaner
        .forget_log(dir.path(), &TopicPartition::new("other", 0))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(CLEANER_OFFSET_CHECKPOINT)).unwrap(),
        cp,
        "forgetting an unknown log changes nothing"
    );
    let m = cleaner.metrics();
    assert!(
        m.cleaner_recopy_percent > 0.0 && m.cleaner_recopy_percent < 100.0,
        "{m:?}"
    );
    assert_eq!(m.cleanings_total, 1);
    // A timestamp lookup walks the rewritten batches (their offset deltas now have gaps).
    let (offset, _) = log.fetch_offset_by_timestamp(0).unwrap().expect("found");
    assert_eq!(offset, *all.keys().next().unwrap());
    // The cleaned segments load after a restart.
    let topic_id = log.topic_id();
    drop((cleaner, log));
    manager.shutdown().unwrap();
    drop(manager);
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), topic_id, compact_config(4096))
        .unwrap();
    assert_eq!(read_all(&log), all);
}

/// `max.compaction.lag.ms`: a log whose oldest dirty batch is older is cleaned whatever its dirty ratio (Kafka's
/// `needCompactionNow`); younger, the ratio decides.
#[test]
fn max_compaction_lag_ms_makes_a_log_due_below_its_dirty_ratio() {
    for (age_ms, due) in [(2 * 3_600_000, true), (0, false)] {
        let dir = tempfile::tempdir().unwrap();
        let manager = open(dir.path());
        let mut config = compact_config(4096);
        config.min_cleanable_dirty_ratio = 0.99;
        config.max_compaction_lag_ms = 3_600_000;
        let log = manager
            .get_or_create_log(&tp(), uuid::Uuid::new_v4(), config)
            .unwrap();
        // A first cleaning (a never-cleaned log has dirty ratio 1), then a little dirty data of the given age.
        overwrite(&log, 20, 5, 10, now());
        log.roll().unwrap();
        let cleaner = cleaner(&manager);
        cleaner.clean_once().unwrap().expect("ratio 1");
        overwrite(&log, 2, 1, 2, now() - age_ms);
        log.roll().unwrap();
        assert_eq!(
            cleaner.clean_once().unwrap().is_some(),
            due,
            "age {age_ms} ms"
        );
        if !due {
            let m = cleaner.metrics();
            assert!(
                m.max_dirty_percent > 0.0 && m.max_dirty_percent < 99.0,
                "{m:?}"
            );
            assert_eq!(m.max_compaction_delay_secs, 0.0);
        }
    }
}

/// `LogCleaner::run` cleans due logs until shut down (Kafka's cleaner thread, `log.cleaner.backoff.ms` between
/// idle rounds).
#[test]
fn run_cleans_in_the_background_until_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(4096))
        .unwrap();
    let mut c = CleanerConfig::default();
    c.dedupe_buffer_size = 1 << 20;
    c.backoff_ms = 10;
    let cleaner = Arc::new(LogCleaner::new(c, manager.clone()).unwrap());
    let worker = {
        let cleaner = cleaner.clone();
        std::thread::spawn(move || cleaner.run())
    };
    overwrite(&log, 20, 10, 10, now());
    log.roll().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while read_all(&log).len() != 20 {
        assert!(std::time::Instant::now() < deadline, "not cleaned in time");
        std::thread::yield_now();
    }
    cleaner.shutdown();
    worker.join().unwrap();
}

/// Appends go on while a log is cleaned: the cleaner never touches the active segment, and a swap is refused if
/// the segments it read changed, so every key's latest value stays.
#[test]
fn appends_during_cleaning_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(2048))
        .unwrap();
    let cleaner = cleaner(&manager);
    let writer = {
        let log = log.clone();
        std::thread::spawn(move || overwrite(&log, 40, 30, 10, now()))
    };
    while !writer.is_finished() {
        cleaner.clean_once().unwrap();
    }
    writer.join().unwrap();
    log.roll().unwrap();
    while cleaner.clean_once().unwrap().is_some() {}
    let all = read_all(&log);
    assert_eq!(all.len(), 40);
    for (k, (_, v)) in latest(&all) {
        assert_eq!(v, Some(format!("v29-{}", &k[1..])));
    }
}

/// The active segment is never cleaned (Kafka): its bytes are unchanged and its overwrites stay.
#[test]
fn the_active_segment_is_never_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(4096))
        .unwrap();
    overwrite(&log, 20, 10, 10, now());
    log.roll().unwrap();
    let active_from = log.log_end_offset();
    overwrite(&log, 5, 3, 5, now()); // overwrites of k0..k4 in the active segment
    let active_path = dir
        .path()
        .join("compacted-0")
        .join(format!("{active_from:020}.log"));
    let active_before = std::fs::read(&active_path).unwrap();
    cleaner(&manager).clean_once().unwrap().expect("dirty");
    assert_eq!(std::fs::read(&active_path).unwrap(), active_before);
    let all = read_all(&log);
    assert_eq!(
        all.range(active_from..).count(),
        15,
        "active records all kept"
    );
    assert_eq!(all.range(..active_from).count(), 20);
}

/// Kafka's LogValidator: "Compacted topic cannot accept message without key" (INVALID_RECORD); nothing of the
/// request is written.
#[test]
fn a_keyless_record_is_refused_on_a_compacted_log_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(1 << 20))
        .unwrap();
    let mut b = RecordBatchBuilder::new();
    b.append(now(), Some(b"k"), Some(b"v"), &[]);
    b.append(now(), None, Some(b"no key"), &[]);
    let size = log.size_in_bytes();
    let err = log.append_as_leader(b.build(), 0).unwrap_err();
    assert!(
        matches!(&err, Error::RecordValidation { timestamp: false, record_errors, .. }
            if record_errors.len() == 1 && record_errors[0].batch_index == 1
                && record_errors[0].message.contains("without key")),
        "{err}"
    );
    assert_eq!((log.log_end_offset(), log.size_in_bytes()), (0, size));
    // The same batch is fine on a delete-policy log.
    let other = manager
        .get_or_create_log(
            &TopicPartition::new("plain", 0),
            uuid::Uuid::new_v4(),
            LogConfig::default(),
        )
        .unwrap();
    let mut b = RecordBatchBuilder::new();
    b.append(now(), None, Some(b"no key"), &[]);
    other.append_as_leader(b.build(), 0).unwrap();
}

/// `min.compaction.lag.ms`: segments whose newest record is younger are not cleaned (Kafka's first uncleanable
/// offset); once older, they are.
#[test]
fn min_compaction_lag_ms_keeps_young_segments_dirty() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let mut config = compact_config(4096);
    config.min_compaction_lag_ms = 3_600_000;
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), config.clone())
        .unwrap();
    overwrite(&log, 20, 10, 10, now());
    log.roll().unwrap();
    let cleaner = cleaner(&manager);
    assert!(
        cleaner.clean_once().unwrap().is_none(),
        "every segment is younger than the lag"
    );
    assert_eq!(read_all(&log).len(), 200);
    // Records two hours old: past the lag.
    let dir2 = tempfile::tempdir().unwrap();
    let manager2 = open(dir2.path());
    let log2 = manager2
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), config)
        .unwrap();
    overwrite(&log2, 20, 10, 10, now() - 2 * 3_600_000);
    log2.roll().unwrap();
    overwrite(&log2, 20, 2, 10, now()); // young segment(s) after them
    log2.roll().unwrap();
    let stats = super_clean(&manager2);
    let all = read_all(&log2);
    assert!(
        stats.end_offset <= 200,
        "cleaning stops before the young segments: {}",
        stats.end_offset
    );
    assert_eq!(all.range(200..).count(), 40, "young segments untouched");
}

fn super_clean(m: &Arc<LogManager>) -> strata_storage::CleanStats {
    cleaner(m).clean_once().unwrap().expect("dirty")
}

/// A log with more keys than one offset map holds (1 MiB: 39321 keys at 24 bytes and load factor 0.9) is cleaned
/// over several passes, each up to where its map filled (Kafka's partial map).
#[test]
fn a_log_larger_than_one_offset_map_is_cleaned_in_several_passes() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(256 << 10))
        .unwrap();
    overwrite(&log, 60_000, 2, 500, now());
    log.roll().unwrap();
    let end = log.log_end_offset();
    let cleaner = cleaner(&manager);
    let first = cleaner.clean_once().unwrap().expect("dirty");
    assert!(
        first.end_offset < end,
        "the first pass stops where the map filled: {}",
        first.end_offset
    );
    let mut passes = 1;
    while let Some(s) = cleaner.clean_once().unwrap() {
        passes += 1;
        assert!(passes < 10);
        if s.end_offset == end {
            break;
        }
    }
    assert!(passes >= 2);
    let all = read_all(&log);
    assert_eq!(all.len(), 60_000);
    for (k, (o, v)) in latest(&all) {
        let i: i64 = k[1..].parse().unwrap();
        assert_eq!((o, v), (60_000 + i, Some(format!("v1-{i}"))));
    }
}

fn compressed(codec: C, keys: &[(usize, usize)], base_ts: i64) -> Bytes {
    client_batch(
        codec,
        keys.iter().enumerate().map(|(i, (k, round))| {
            let value = format!("v{round}-{k}-{}", "x".repeat(30));
            (
                base_ts + i as i64,
                Some(Bytes::from(format!("k{k}"))),
                Some(Bytes::from(value)),
            )
        }),
    )
}

/// A batch that loses records is re-encoded with its own codec; a batch that keeps them all is copied byte for
/// byte (Kafka re-encodes only where records are dropped).
#[test]
fn compressed_batches_keep_their_codec_and_untouched_batches_their_bytes() {
    for codec in [C::Gzip, C::Snappy, C::Lz4, C::Zstd] {
        let dir = tempfile::tempdir().unwrap();
        let manager = open(dir.path());
        let log = manager
            .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(1 << 20))
            .unwrap();
        let ts = now();
        // Batch 0: k0..k9; batch 1: k0..k4 again (so batch 0 loses half); batch 2: k100..k109, untouched.
        log.append_as_leader(
            compressed(codec, &(0..10).map(|k| (k, 0)).collect::<Vec<_>>(), ts),
            0,
        )
        .unwrap();
        log.append_as_leader(
            compressed(codec, &(0..5).map(|k| (k, 1)).collect::<Vec<_>>(), ts),
            0,
        )
        .unwrap();
        let untouched = compressed(codec, &(100..110).map(|k| (k, 0)).collect::<Vec<_>>(), ts);
        log.append_as_leader(untouched, 0).unwrap();
        let before: Vec<RecordBatch> =
            RecordBatch::iter(&log.read(0, 1 << 20, true, None).unwrap().records)
                .map(Result::unwrap)
                .collect();
        log.roll().unwrap();
        let stats = cleaner(&manager).clean_once().unwrap().expect("dirty");
        assert_eq!(
            (stats.batches_rewritten, stats.batches_copied),
            (1, 2),
            "{codec:?}"
        );
        let after: Vec<RecordBatch> =
            RecordBatch::iter(&log.read(0, 1 << 20, true, None).unwrap().records)
                .map(Result::unwrap)
                .collect();
        assert_eq!(after.len(), 3);
        let expected = match codec {
            C::Gzip => Compression::Gzip,
            C::Snappy => Compression::Snappy,
            C::Lz4 => Compression::Lz4,
            _ => Compression::Zstd,
        };
        assert_eq!(after[0].compression(), expected);
        assert_eq!(
            (
                after[0].base_offset(),
                after[0].last_offset(),
                after[0].records_count()
            ),
            (0, 9, 5),
            "base and last offset kept, 5 records left"
        );
        assert_eq!(after[1].as_bytes(), before[1].as_bytes(), "{codec:?}");
        assert_eq!(after[2].as_bytes(), before[2].as_bytes(), "{codec:?}");
        let all = read_all(&log);
        assert_eq!(
            all.keys().copied().collect::<Vec<_>>(),
            (5..25).collect::<Vec<_>>()
        );
        assert_eq!(all[&5].1.as_deref().map(|v| &v[..6]), Some("v0-5-x"));
    }
}

/// Kafka keeps the last batch of a producer it still knows, emptied if need be, so the producer's sequence
/// survives cleaning (BatchRetention.RETAIN_EMPTY); producer fields are preserved.
#[test]
fn the_last_batch_of_an_idempotent_producer_is_kept_empty() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(1 << 20))
        .unwrap();
    let mut b = RecordBatchBuilder::new().producer(7, 2, 0);
    b.append(now(), Some(b"a"), Some(b"1"), &[]);
    b.append(now(), Some(b"b"), Some(b"1"), &[]);
    log.append_as_leader(b.build(), 0).unwrap();
    let mut b = RecordBatchBuilder::new();
    b.append(now(), Some(b"a"), Some(b"2"), &[]);
    b.append(now(), Some(b"b"), Some(b"2"), &[]);
    log.append_as_leader(b.build(), 0).unwrap();
    log.roll().unwrap();
    cleaner(&manager).clean_once().unwrap().expect("dirty");
    let batches: Vec<RecordBatch> =
        RecordBatch::iter(&log.read(0, 1 << 20, true, None).unwrap().records)
            .map(Result::unwrap)
            .collect();
    assert_eq!(batches.len(), 2);
    let empty = &batches[0];
    assert_eq!(
        (
            empty.records_count(),
            empty.base_offset(),
            empty.last_offset()
        ),
        (0, 0, 1)
    );
    assert_eq!(
        (
            empty.producer_id(),
            empty.producer_epoch(),
            empty.base_sequence()
        ),
        (7, 2, 0)
    );
    // The producer's next sequence is still accepted.
    let mut b = RecordBatchBuilder::new().producer(7, 2, 2);
    b.append(now(), Some(b"c"), Some(b"1"), &[]);
    log.append_as_leader(b.build(), 0).unwrap();
}

/// A crash at any step of the swap leaves, after recovery, either the old segments or the cleaned ones: every
/// key's latest value present, offsets unique and increasing, no `.cleaned` / `.swap` files left.
#[test]
fn a_crash_at_each_step_of_the_swap_recovers_old_or_new_never_a_mix() {
    let points = [
        CrashPoint::CleanedWritten,
        CrashPoint::SwapRenamed,
        CrashPoint::FirstOldDeleted,
        CrashPoint::AllOldDeleted,
        CrashPoint::Swapped,
    ];
    for point in points {
        let dir = tempfile::tempdir().unwrap();
        let manager = open(dir.path());
        let topic_id = uuid::Uuid::new_v4();
        let log = manager
            .get_or_create_log(&tp(), topic_id, compact_config(2048))
            .unwrap();
        overwrite(&log, 30, 8, 10, now());
        log.roll().unwrap();
        overwrite(&log, 5, 1, 5, now()); // active segment
        let before = read_all(&log);
        let expected = latest(&before);
        let cleaner = cleaner(&manager);
        cleaner.crash_at(Some(point));
        assert!(cleaner.clean_once().is_err(), "{point:?}");
        drop((cleaner, log, manager)); // the process dies: no shutdown, no clean-shutdown marker
        let manager = open(dir.path());
        let log = manager
            .get_or_create_log(&tp(), topic_id, compact_config(2048))
            .unwrap();
        let after = read_all(&log);
        assert_eq!(latest(&after), expected, "{point:?}");
        let pdir = dir.path().join("compacted-0");
        for suffix in [".cleaned", ".swap"] {
            assert!(
                files_ending(&pdir, suffix).is_empty(),
                "{point:?}: {suffix} left"
            );
        }
        // Old: everything; new: the first group cleaned (its records a subset) and the rest as before.
        let old = after.len() == before.len();
        let new = after.len() < before.len();
        assert!(old || new);
        if point == CrashPoint::CleanedWritten {
            assert!(old, "nothing was committed");
        } else {
            assert!(new, "{point:?}: the swap was committed");
        }
        for (o, rec) in &after {
            assert_eq!(before.get(o), Some(rec), "{point:?}: offset {o} changed");
        }
        // Cleaning goes on normally after recovery.
        let cleaner = self::cleaner(&manager);
        while cleaner.clean_once().unwrap().is_some() {}
        assert_eq!(latest(&read_all(&log)), expected, "{point:?}");
    }
}

/// A crash after the `.cleaned` → `.swap` rename of a group of several segments: recovery completes the swap,
/// deleting the replaced segments' files, and the later pass over index files without a `.log` must not fail on
/// the ones already gone (the start failed with "No such file or directory" before; found by tests/crash_loop.rs).
#[test]
fn a_crash_after_the_swap_rename_of_a_multi_segment_group_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let topic_id = uuid::Uuid::new_v4();
    let log = manager
        .get_or_create_log(&tp(), topic_id, compact_config(1 << 20))
        .unwrap();
    for _ in 0..3 {
        overwrite(&log, 5, 2, 5, now());
        log.roll().unwrap();
    }
    overwrite(&log, 5, 1, 5, now()); // active segment
    let expected = latest(&read_all(&log));
    let cleaner = cleaner(&manager);
    cleaner.crash_at(Some(CrashPoint::SwapRenamed));
    assert!(cleaner.clean_once().is_err());
    drop((cleaner, log, manager)); // the process dies
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), topic_id, compact_config(1 << 20))
        .unwrap();
    assert_eq!(latest(&read_all(&log)), expected);
    let pdir = dir.path().join("compacted-0");
    assert!(files_ending(&pdir, ".swap").is_empty());
    assert_eq!(
        files_ending(&pdir, ".log").len(),
        2,
        "the group swapped in, the active segment"
    );
}

/// Control batches (transaction markers) are kept whole by the cleaner until transactions are indexed; their
/// key parses as Kafka's control record key.
#[test]
fn control_batches_are_kept_whole() {
    use strata_storage::record::{ControlRecordKey, ControlRecordType};
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(1 << 20))
        .unwrap();
    let mut data = RecordBatchBuilder::new()
        .producer(9, 0, 0)
        .transactional(true);
    data.append(now(), Some(b"a"), Some(b"1"), &[]);
    log.append_as_leader(data.build(), 0).unwrap();
    let key = ControlRecordKey::encode(ControlRecordType::Commit);
    let mut marker = RecordBatchBuilder::new()
        .producer(9, 0, -1)
        .transactional(true)
        .control(true);
    marker.append(now(), Some(&key), Some(&[0, 0, 0, 0, 0, 1]), &[]);
    log.append_as_leader(marker.build(), 0).unwrap();
    log.append_as_leader(batch(&[("a".into(), Some("2".into()))], now()), 0)
        .unwrap();
    let before: Vec<RecordBatch> =
        RecordBatch::iter(&log.read(0, 1 << 20, true, None).unwrap().records)
            .map(Result::unwrap)
            .collect();
    log.roll().unwrap();
    cleaner(&manager).clean_once().unwrap().expect("dirty");
    let after: Vec<RecordBatch> =
        RecordBatch::iter(&log.read(0, 1 << 20, true, None).unwrap().records)
            .map(Result::unwrap)
            .collect();
    let marker = after.iter().find(|b| b.is_control()).expect("marker kept");
    assert_eq!(marker.as_bytes(), before[1].as_bytes());
    let record = marker.records().unwrap().next().unwrap().unwrap();
    assert_eq!(
        ControlRecordKey::parse(record.key.as_deref()).unwrap().kind,
        ControlRecordType::Commit
    );
}

/// Kafka's `LogConfig.maxSegmentMs`: a compacted log rolls its active segment once `max.compaction.lag.ms` old,
/// so its records become cleanable in time.
#[test]
fn a_compacted_log_rolls_at_max_compaction_lag_ms() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let mut config = compact_config(1 << 20);
    config.max_compaction_lag_ms = 60_000;
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), config)
        .unwrap();
    let t0 = now();
    log.append_as_leader_at(batch(&[("a".into(), Some("1".into()))], t0), 0, t0)
        .unwrap();
    log.append_as_leader_at(batch(&[("a".into(), Some("2".into()))], t0 + 30_000), 0, t0)
        .unwrap();
    assert_eq!(log.number_of_segments(), 1);
    log.append_as_leader_at(batch(&[("a".into(), Some("3".into()))], t0 + 61_000), 0, t0)
        .unwrap();
    assert_eq!(
        log.number_of_segments(),
        2,
        "rolled past max.compaction.lag.ms"
    );
}

/// A deleted log is forgotten in the checkpoint (Kafka's `updateCheckpoints` on deletion), so a new log of the
/// same name is cleaned from its start.
#[test]
fn a_forgotten_log_leaves_the_cleaner_offset_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let manager = open(dir.path());
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(4096))
        .unwrap();
    overwrite(&log, 10, 3, 10, now());
    log.roll().unwrap();
    let cleaner = cleaner(&manager);
    cleaner.clean_once().unwrap().expect("dirty");
    manager.delete_log(&tp()).unwrap();
    cleaner.forget_log(dir.path(), &tp()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(CLEANER_OFFSET_CHECKPOINT)).unwrap(),
        "0\n0\n"
    );
    let log = manager
        .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(4096))
        .unwrap();
    overwrite(&log, 10, 2, 10, now());
    log.roll().unwrap();
    let stats = cleaner.clean_once().unwrap().expect("dirty from its start");
    assert_eq!((stats.first_dirty_offset, stats.end_offset), (0, 20));
    assert_eq!(read_all(&log).len(), 10);
}

/// Random overwrites and tombstones, cleaned at random moments with several segment sizes: the log always holds
/// exactly the latest record of every key (tombstones included, within delete.retention.ms) at its original
/// offset, plus whatever is not yet cleanable, and nothing that was never written.
#[test]
fn random_workloads_keep_exactly_the_latest_record_per_key() {
    for seed in 1..=5u64 {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let dir = tempfile::tempdir().unwrap();
        let manager = open(dir.path());
        let segment_bytes = [300, 1000, 4096][next(3) as usize];
        let log = manager
            .get_or_create_log(&tp(), uuid::Uuid::new_v4(), compact_config(segment_bytes))
            .unwrap();
        let cleaner = cleaner(&manager);
        let mut written = BTreeMap::new();
        for _ in 0..200 {
            let n = 1 + next(8) as usize;
            let records: Vec<(String, Option<String>)> = (0..n)
                .map(|_| {
                    let k = format!("k{}", next(40));
                    let v = (next(5) != 0).then(|| format!("v{}", next(1_000_000)));
                    (k, v)
                })
                .collect();
            let first = log
                .append_as_leader(batch(&records, now()), 0)
                .unwrap()
                .first_offset;
            for (i, r) in records.into_iter().enumerate() {
                written.insert(first + i as i64, r);
            }
            if next(10) == 0 {
                while cleaner.clean_once().unwrap().is_some() {}
            }
        }
        log.roll().unwrap();
        while cleaner.clean_once().unwrap().is_some() {}
        let all = read_all(&log);
        for (o, rec) in &all {
            assert_eq!(written.get(o), Some(rec), "seed {seed}: offset {o}");
        }
        assert_eq!(latest(&all), latest(&written), "seed {seed}");
        assert_eq!(
            all.len(),
            latest(&written).len(),
            "seed {seed}: one record per key"
        );
    }
}
