//! Topic-based manager: restart replay, snapshots, torn tails, the on-topic record format, failure handling.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata_storage::time::now_ms;
use strata_storage::{LogManager, LogManagerConfig, RecordBatch, TopicPartition};

use super::*;

use crate::conformance::{fresh_partition, segment, update};
use crate::{
    Error, RemoteLogMetadataManager, RemoteLogMetadataRecord, RemoteLogSegmentState,
    RemotePartitionDeleteMetadata, RemotePartitionDeleteState, ValueFormat,
};

struct Broker {
    dir: tempfile::TempDir,
}

impl Broker {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn log_dir(&self) -> PathBuf {
        self.dir.path().join("logs")
    }
    fn log_manager(&self) -> Arc<LogManager> {
        Arc::new(LogManager::open(LogManagerConfig::new(vec![self.log_dir()])).unwrap())
    }
    fn open(
        &self,
        lm: &Arc<LogManager>,
        config: TopicBasedRemoteLogMetadataManagerConfig,
    ) -> (TopicBasedRemoteLogMetadataManager, ReplayStats) {
        TopicBasedRemoteLogMetadataManager::open(config, Arc::clone(lm), &self.log_dir()).unwrap()
    }
}

fn config() -> TopicBasedRemoteLogMetadataManagerConfig {
    // No automatic snapshots unless a test asks for them.
    TopicBasedRemoteLogMetadataManagerConfig::default()
        .with_num_partitions(4)
        .with_snapshot_interval_ms(86_400_000)
}

fn log_ends(lm: &LogManager, n: i32) -> Vec<i64> {
    (0..n)
        .map(|p| {
            lm.get_log(&TopicPartition::new(REMOTE_LOG_METADATA_TOPIC_NAME, p))
                .unwrap()
                .log_end_offset()
        })
        .collect()
}

/// A mix of every kind of record over a few partitions; returns how many records it wrote.
async fn workload(rlmm: &dyn RemoteLogMetadataManager, rounds: i64) -> u64 {
    let mut written = 0;
    for r in 0..rounds {
        let tp = fresh_partition("work", (r % 3) as i32);
        let mut prev = None;
        for s in 0..5i64 {
            let m = segment(&tp, s * 10, s * 10 + 9, &[(0, s * 10), (1, s * 10 + 5)]);
            rlmm.add_remote_log_segment_metadata(m.clone())
                .await
                .unwrap();
            rlmm.update_remote_log_segment_metadata(update(
                &m,
                RemoteLogSegmentState::CopySegmentFinished,
            ))
            .await
            .unwrap();
            written += 2;
            if let Some(p) = prev.replace(m) {
                rlmm.update_remote_log_segment_metadata(update(
                    &p,
                    RemoteLogSegmentState::DeleteSegmentStarted,
                ))
                .await
                .unwrap();
                rlmm.update_remote_log_segment_metadata(update(
                    &p,
                    RemoteLogSegmentState::DeleteSegmentFinished,
                ))
                .await
                .unwrap();
                written += 2;
            }
        }
        if r % 4 == 3 {
            for state in [
                RemotePartitionDeleteState::DeletePartitionMarked,
                RemotePartitionDeleteState::DeletePartitionStarted,
            ] {
                rlmm.put_remote_partition_delete_metadata(RemotePartitionDeleteMetadata::new(
                    tp.clone(),
                    state,
                    1,
                    1,
                ))
                .await
                .unwrap();
                written += 1;
            }
        }
    }
    written
}

fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn restart_replay_equals_pre_restart_cache() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config());
    assert_eq!(stats.replayed_records, 0);
    let topic_id = rlmm.topic_id();
    let written = workload(&rlmm, 8).await;
    let before = rlmm.cache_image();
    assert!(rlmm.live_segment_count() > 0);
    drop(rlmm);
    lm.shutdown().unwrap();
    drop(lm);

    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config());
    assert!(!stats.from_snapshot, "no snapshot was written");
    assert_eq!(stats.replayed_records, written);
    assert_eq!(
        rlmm.cache_image(),
        before,
        "replayed cache equals the pre-restart cache"
    );
    assert_eq!(rlmm.topic_id(), topic_id, "the internal topic keeps its id");
}

#[tokio::test]
async fn snapshot_plus_tail_replay_reads_only_the_tail() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    workload(&rlmm, 6).await;
    rlmm.snapshot().await.unwrap();
    let tail = workload(&rlmm, 3).await;
    let before = rlmm.cache_image();
    drop(rlmm);
    lm.shutdown().unwrap();
    drop(lm);

    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config());
    assert!(stats.from_snapshot);
    assert_eq!(
        stats.replayed_records, tail,
        "only records after the snapshot are read"
    );
    assert_eq!(rlmm.cache_image(), before);

    // close() snapshots: the next start reads nothing from the log.
    rlmm.close().await.unwrap();
    let err = rlmm
        .add_remote_log_segment_metadata(segment(&fresh_partition("x", 0), 0, 1, &[(0, 0)]))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Closed), "{err}");
    drop(rlmm);
    lm.shutdown().unwrap();
    drop(lm);
    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config());
    assert_eq!((stats.from_snapshot, stats.replayed_records), (true, 0));
    assert_eq!(rlmm.cache_image(), before);
}

#[tokio::test]
async fn snapshot_interval_triggers_snapshots_during_writes() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config().with_snapshot_interval_ms(1));
    workload(&rlmm, 2).await;
    std::thread::sleep(std::time::Duration::from_millis(2)); // let the 1 ms interval pass before the last write
    let m = segment(&fresh_partition("last", 0), 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m).await.unwrap();
    let before = rlmm.cache_image();
    drop(rlmm);
    lm.shutdown().unwrap();
    drop(lm);
    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config());
    assert!(stats.from_snapshot);
    assert_eq!(
        stats.replayed_records, 0,
        "the last write stored a snapshot covering everything"
    );
    assert_eq!(rlmm.cache_image(), before);
}

#[tokio::test]
async fn torn_tail_recovers_to_the_last_complete_record() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config().with_num_partitions(1));
    workload(&rlmm, 3).await;
    let complete = rlmm.cache_image();
    let last = segment(&fresh_partition("torn", 0), 100, 199, &[(0, 100)]);
    rlmm.add_remote_log_segment_metadata(last.clone())
        .await
        .unwrap();
    assert_ne!(rlmm.cache_image(), complete);
    drop(rlmm);
    drop(lm); // no clean shutdown: the loader must recover

    let part_dir = b
        .log_dir()
        .join(format!("{REMOTE_LOG_METADATA_TOPIC_NAME}-0"));
    let file = segment_files(&part_dir).pop().expect("a segment file");
    let len = std::fs::metadata(&file).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(len - 7).unwrap(); // tear the last record's batch
    drop(f);

    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config().with_num_partitions(1));
    assert_eq!(
        rlmm.cache_image(),
        complete,
        "the torn record is gone, every complete one is there"
    );
    // and the log accepts writes again after the truncation
    rlmm.add_remote_log_segment_metadata(last).await.unwrap();
}

#[tokio::test]
async fn snapshot_past_the_log_end_is_ignored() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config().with_num_partitions(1));
    workload(&rlmm, 2).await;
    let complete = rlmm.cache_image();
    let last = segment(&fresh_partition("lost", 0), 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(last).await.unwrap();
    rlmm.snapshot().await.unwrap(); // covers `last`
    drop(rlmm);
    drop(lm);
    // the disk loses the last record although the snapshot covers it
    let part_dir = b
        .log_dir()
        .join(format!("{REMOTE_LOG_METADATA_TOPIC_NAME}-0"));
    let file = segment_files(&part_dir).pop().unwrap();
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len - 3)
        .unwrap();

    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config().with_num_partitions(1));
    assert!(
        !stats.from_snapshot,
        "a snapshot ahead of the log would hide later records: ignored"
    );
    assert_eq!(rlmm.cache_image(), complete);
}

#[tokio::test]
async fn retention_deletes_only_records_a_snapshot_covers() {
    let b = Broker::new();
    let lm = b.log_manager();
    let cfg = config().with_num_partitions(1).with_retention_ms(60_000);
    let (rlmm, _) = b.open(&lm, cfg.clone());
    workload(&rlmm, 2).await;
    rlmm.snapshot().await.unwrap(); // nothing is a minute old yet: nothing deleted
    let log = lm
        .get_log(&TopicPartition::new(REMOTE_LOG_METADATA_TOPIC_NAME, 0))
        .unwrap();
    assert_eq!(log.log_start_offset(), 0);
    let covered = log.log_end_offset();
    workload(&rlmm, 1).await; // not in the snapshot
                              // Two minutes later every record is past retention, but only the snapshot's share may go.
    rlmm.apply_retention_at(&[covered], now_ms() + 120_000);
    assert_eq!(
        log.log_start_offset(),
        covered,
        "log start moved to the snapshot's end, not past it"
    );
    let before = rlmm.cache_image();
    drop(rlmm);
    drop(log);
    lm.shutdown().unwrap();
    drop(lm);
    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, cfg);
    assert!(stats.from_snapshot);
    assert_eq!(
        rlmm.cache_image(),
        before,
        "the records left after retention plus the snapshot rebuild all"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_commit_answers_each_write_on_its_own() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config().with_num_partitions(1));
    let tp = fresh_partition("group", 0);
    let x = segment(&tp, 0, 9, &[(0, 0)]);
    let y = segment(&tp, 10, 19, &[(0, 10)]);
    let unknown = segment(&tp, 20, 29, &[(0, 20)]);
    let writes = vec![
        vec![RemoteLogMetadataRecord::Segment(x.clone())],
        vec![RemoteLogMetadataRecord::SegmentUpdate(update(
            &x,
            RemoteLogSegmentState::CopySegmentFinished,
        ))],
        vec![RemoteLogMetadataRecord::SegmentUpdate(update(
            &unknown,
            RemoteLogSegmentState::CopySegmentFinished,
        ))],
        // all or nothing: the second record is illegal, so `y` is not added either
        vec![
            RemoteLogMetadataRecord::Segment(y.clone()),
            RemoteLogMetadataRecord::SegmentUpdate(update(
                &y,
                RemoteLogSegmentState::DeleteSegmentFinished,
            )),
        ],
        vec![RemoteLogMetadataRecord::SegmentUpdate(update(
            &x,
            RemoteLogSegmentState::DeleteSegmentStarted,
        ))],
    ];
    let n = writes.len();
    let guard = rlmm.hold_writer().await;
    let mut tasks = Vec::new();
    for (i, w) in writes.into_iter().enumerate() {
        let r = rlmm.clone();
        tasks.push(tokio::spawn(async move { r.write_records(w).await }));
        // keep arrival order = index order
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while rlmm.queued_writes() < i + 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "write {i} never queued"
            );
            tokio::task::yield_now().await;
        }
    }
    assert_eq!(rlmm.queued_writes(), n);
    drop(guard);
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    assert!(
        results[0].is_ok() && results[1].is_ok() && results[4].is_ok(),
        "{results:?}"
    );
    assert!(
        matches!(results[2], Err(Error::UnknownSegment { .. })),
        "{results:?}"
    );
    assert!(
        matches!(results[3], Err(Error::InvalidStateTransition { .. })),
        "{results:?}"
    );
    let listed = rlmm.list_remote_log_segments(&tp).unwrap();
    assert_eq!(listed.len(), 1, "only x exists");
    assert_eq!(listed[0].state, RemoteLogSegmentState::DeleteSegmentStarted);

    let log = lm
        .get_log(&TopicPartition::new(REMOTE_LOG_METADATA_TOPIC_NAME, 0))
        .unwrap();
    let data = log.read(0, 1 << 20, true, None).unwrap();
    let batches: Vec<_> = RecordBatch::iter(&data.records)
        .map(|b| b.unwrap())
        .collect();
    assert_eq!(
        batches.len(),
        1,
        "the three accepted writes went out as one batch"
    );
    assert_eq!(batches[0].records_count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_write_is_still_performed_whole() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    let tp = fresh_partition("cancelled", 0);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    let guard = rlmm.hold_writer().await;
    let r = rlmm.clone();
    let add = m.clone();
    let task = tokio::spawn(async move { r.add_remote_log_segment_metadata(add).await });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rlmm.queued_writes() < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the write never queued"
        );
        tokio::task::yield_now().await;
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    drop(guard);
    assert!(
        rlmm.list_remote_log_segments(&tp).unwrap().is_empty(),
        "not yet: no group ran"
    );
    rlmm.snapshot().await.unwrap(); // commits what is queued first
    assert_eq!(rlmm.queued_writes(), 0);
    let listed = rlmm.list_remote_log_segments(&tp).unwrap();
    assert_eq!(listed, vec![m], "the abandoned write was performed whole");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_all_land_and_survive_restart() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    let mut tasks = Vec::new();
    for w in 0..16 {
        let r = rlmm.clone();
        tasks.push(tokio::spawn(async move {
            let tp = fresh_partition("concurrent", w);
            for s in 0..5i64 {
                let m = segment(&tp, s * 10, s * 10 + 9, &[(0, s * 10)]);
                r.add_remote_log_segment_metadata(m.clone()).await.unwrap();
                r.update_remote_log_segment_metadata(update(
                    &m,
                    RemoteLogSegmentState::CopySegmentFinished,
                ))
                .await
                .unwrap();
            }
            tp
        }));
    }
    for t in tasks {
        let tp = t.await.unwrap();
        assert_eq!(rlmm.highest_offset_for_epoch(&tp, 0).unwrap(), Some(49));
    }
    assert_eq!(rlmm.live_segment_count(), 80);
    let before = rlmm.cache_image();
    drop(rlmm);
    lm.shutdown().unwrap();
    drop(lm);
    let lm = b.log_manager();
    let (rlmm, stats) = b.open(&lm, config());
    assert_eq!(stats.replayed_records, 160);
    assert_eq!(rlmm.cache_image(), before);
}

#[tokio::test]
async fn records_are_kafka_batches_with_null_keys_and_kafkas_serde_values() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    let tp = fresh_partition("orders", 2);
    let m = segment(&tp, 0, 99, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    let done = update(&m, RemoteLogSegmentState::CopySegmentFinished);
    rlmm.update_remote_log_segment_metadata(done.clone())
        .await
        .unwrap();

    let p = rlmm.metadata_partition_for(&tp);
    assert_eq!(p, metadata_partition(&tp, 4));
    let log = lm
        .get_log(&TopicPartition::new(REMOTE_LOG_METADATA_TOPIC_NAME, p))
        .unwrap();
    assert_eq!(log.topic_id(), rlmm.topic_id());
    let data = log.read(0, 1 << 20, true, None).unwrap();
    let mut values = Vec::new();
    for batch in RecordBatch::iter(&data.records) {
        let batch = batch.unwrap();
        batch.ensure_valid_crc().unwrap();
        assert_eq!(batch.magic(), 2);
        for r in batch.records().unwrap() {
            let r = r.unwrap();
            assert_eq!(r.key, None, "Kafka's RLMM writes null keys");
            values.push(r.value.unwrap().to_vec());
        }
    }
    let expected = [
        RemoteLogMetadataRecord::Segment(m),
        RemoteLogMetadataRecord::SegmentUpdate(done),
    ];
    assert_eq!(values.len(), expected.len());
    for (v, want) in values.iter().zip(&expected) {
        // Frame version 1, the api key (0 segment, 1 update), message version 0.
        assert_eq!(ValueFormat::of(v), ValueFormat::Kafka);
        assert_eq!(v, &want.to_bytes().unwrap());
        let decoded = RemoteLogMetadataRecord::from_bytes(v, || "value".into()).unwrap();
        assert_eq!(&decoded, want);
    }
    assert_eq!(&values[0][..3], &[1, 0, 0]);
    assert_eq!(&values[1][..3], &[1, 1, 0]);
}

#[tokio::test]
async fn rejected_writes_append_nothing() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    let tp = fresh_partition("reject", 0);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    let ends = log_ends(&lm, 4);
    let err = rlmm
        .update_remote_log_segment_metadata(update(
            &m,
            RemoteLogSegmentState::DeleteSegmentFinished,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidStateTransition { .. }), "{err}");
    let other = segment(&tp, 10, 19, &[(0, 10)]);
    let err = rlmm
        .update_remote_log_segment_metadata(update(
            &other,
            RemoteLogSegmentState::CopySegmentFinished,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::UnknownSegment { .. }), "{err}");
    // a batch write with one bad record writes none of them
    let good = RemoteLogMetadataRecord::SegmentUpdate(update(
        &m,
        RemoteLogSegmentState::CopySegmentFinished,
    ));
    let bad = RemoteLogMetadataRecord::SegmentUpdate(update(
        &m,
        RemoteLogSegmentState::CopySegmentStarted,
    ));
    let err = rlmm
        .write_records(vec![good.clone(), bad])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidMetadata { .. }), "{err}");
    assert_eq!(log_ends(&lm, 4), ends, "nothing was appended");
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap()[0].state,
        RemoteLogSegmentState::CopySegmentStarted
    );
    // the same sequence checks the second record against the first
    let del = RemoteLogMetadataRecord::SegmentUpdate(update(
        &m,
        RemoteLogSegmentState::DeleteSegmentStarted,
    ));
    rlmm.write_records(vec![good, del]).await.unwrap();
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap()[0].state,
        RemoteLogSegmentState::DeleteSegmentStarted
    );
}

#[tokio::test]
async fn partition_count_change_of_a_used_topic_is_refused() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    workload(&rlmm, 1).await;
    drop(rlmm);
    for n in [2, 8] {
        let err = TopicBasedRemoteLogMetadataManager::open(
            config().with_num_partitions(n),
            Arc::clone(&lm),
            &b.log_dir(),
        )
        .unwrap_err();
        assert!(err.to_string().contains(NUM_PARTITIONS_KEY), "{err}");
    }
    let (rlmm, _) = b.open(&lm, config());
    assert_eq!(rlmm.num_partitions(), 4);
}

#[tokio::test]
async fn failed_append_poisons_the_manager() {
    let b = Broker::new();
    let lm = b.log_manager();
    let (rlmm, _) = b.open(&lm, config());
    let tp = fresh_partition("poison", 0);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    lm.shutdown().unwrap(); // later appends fail
    let err = rlmm
        .update_remote_log_segment_metadata(update(&m, RemoteLogSegmentState::CopySegmentFinished))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Storage { .. }), "{err}");
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap()[0].state,
        RemoteLogSegmentState::CopySegmentStarted,
        "not applied"
    );
    let err = rlmm
        .update_remote_log_segment_metadata(update(&m, RemoteLogSegmentState::CopySegmentFinished))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Poisoned { .. }), "{err}");
}

mod props {
    use proptest::prelude::*;
    use strata_storage::TopicIdPartition;
    use uuid::Uuid;

    use super::*;
    use crate::{
        InMemoryRemoteLogMetadataManager, RemoteLogSegmentId, RemoteLogSegmentMetadataUpdate,
    };

    fn tp(p: u8) -> TopicIdPartition {
        TopicIdPartition::new(
            Uuid::from_u128(0xfeed),
            TopicPartition::new("props", i32::from(p)),
        )
    }

    fn record(kind: u8, p: u8, seg: u8, state: u8) -> RemoteLogMetadataRecord {
        let id =
            RemoteLogSegmentId::new(tp(p), Uuid::from_u128(u128::from(p) << 8 | u128::from(seg)));
        let start = i64::from(seg) * 10;
        match kind {
            0 => RemoteLogMetadataRecord::Segment(
                crate::RemoteLogSegmentMetadata::new(
                    id,
                    start,
                    start + 9,
                    0,
                    0,
                    0,
                    10,
                    [(0, start), (1, start + 5)].into(),
                )
                .unwrap(),
            ),
            1 => RemoteLogMetadataRecord::SegmentUpdate(RemoteLogSegmentMetadataUpdate::new(
                id,
                1,
                RemoteLogSegmentState::ALL[usize::from(state % 4)],
                0,
            )),
            _ => RemoteLogMetadataRecord::PartitionDelete(RemotePartitionDeleteMetadata::new(
                tp(p),
                RemotePartitionDeleteState::ALL[usize::from(state % 3)],
                1,
                0,
            )),
        }
    }

    fn ops() -> impl Strategy<Value = Vec<RemoteLogMetadataRecord>> {
        let op = (
            prop::sample::select(vec![0u8, 1, 1, 1, 2]),
            0..2u8,
            0..3u8,
            0..4u8,
        )
            .prop_map(|(k, p, s, st)| record(k, p, s, st));
        prop::collection::vec(op, 1..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        /// The same writes give the topic-based manager the in-memory manager's cache, and a restart (from the
        /// log alone, then from a snapshot) gives it back unchanged.
        #[test]
        fn topic_based_matches_in_memory_and_survives_restart(records in ops()) {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            rt.block_on(async {
                let b = Broker::new();
                let lm = b.log_manager();
                let (rlmm, _) = b.open(&lm, config());
                let mem = InMemoryRemoteLogMetadataManager::new();
                for r in &records {
                    let topic = rlmm.write_records(vec![r.clone()]).await;
                    let memory = mem.write(r.clone());
                    prop_assert_eq!(topic.is_ok(), memory.is_ok(), "{:?}: {:?} vs {:?}", r, topic, memory);
                }
                let image = rlmm.cache_image();
                prop_assert_eq!(&image, &mem.cache_image());
                drop(rlmm);
                lm.shutdown().unwrap();
                drop(lm);

                let lm = b.log_manager();
                let (rlmm, stats) = b.open(&lm, config());
                prop_assert!(!stats.from_snapshot);
                prop_assert_eq!(&rlmm.cache_image(), &image, "replay from the log");
                rlmm.close().await.unwrap();
                drop(rlmm);
                lm.shutdown().unwrap();
                drop(lm);

                let lm = b.log_manager();
                let (rlmm, stats) = b.open(&lm, config());
                prop_assert!(stats.from_snapshot);
                prop_assert_eq!(&rlmm.cache_image(), &image, "replay from the snapshot");
                Ok(())
            })?;
        }
    }
}
