//! The public log API end to end on disk: append, read, offsets, roll, restart.
mod common;

use common::*;
use strata_storage::{Error, RecordBatch};

#[test]
fn append_assigns_offsets_and_read_returns_the_stored_batches() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, Default::default());
    let a = log.append_as_leader(batch(3, 1000), 5).unwrap();
    assert_eq!(
        (
            a.first_offset,
            a.last_offset,
            a.record_count,
            a.log_append_time_ms
        ),
        (0, 2, 3, -1)
    );
    let b = log.append_as_leader(batch(2, 2000), 5).unwrap();
    assert_eq!((b.first_offset, b.last_offset), (3, 4));
    assert_eq!(log.log_end_offset(), 5);
    assert_eq!(log.high_watermark(), 5);

    let got = log.read(4, 1 << 20, true, None).unwrap().records;
    let batches: Vec<RecordBatch> = RecordBatch::iter(&got).collect::<Result<_, _>>().unwrap();
    assert_eq!(batches.len(), 1);
    assert_eq!(
        (
            batches[0].base_offset(),
            batches[0].partition_leader_epoch()
        ),
        (3, 5)
    );
    let all = log.read(0, 1 << 20, true, None).unwrap().records;
    assert_eq!(RecordBatch::iter(&all).count(), 2);
    // The stored bytes are the client's bytes with offset and epoch written in.
    let mut expected = batch(3, 1000).to_vec();
    expected[0..8].copy_from_slice(&0i64.to_be_bytes());
    expected[12..16].copy_from_slice(&5i32.to_be_bytes());
    assert_eq!(&all[..expected.len()], &expected[..]);

    assert!(log.read(5, 100, true, None).unwrap().records.is_empty());
    assert!(matches!(
        log.read(6, 100, true, None),
        Err(Error::OffsetOutOfRange {
            offset: 6,
            log_end: 5,
            ..
        })
    ));
    assert!(log.read(0, 1 << 20, true, Some(3)).unwrap().records.len() < all.len());
    assert_eq!(log.leader_epoch_entries(), vec![(5, 0)]);
    // An unbounded budget reads what there is.
    assert_eq!(log.read(0, usize::MAX, false, None).unwrap().records, all);
}

#[test]
fn bad_batches_are_rejected_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, Default::default());
    let mut corrupt = batch(2, 1).to_vec();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xff;
    assert!(matches!(
        log.append_as_leader(corrupt.into(), 0),
        Err(Error::CorruptRecord { .. })
    ));
    let mut magic1 = batch(2, 1).to_vec();
    magic1[16] = 1;
    let err = log.append_as_leader(magic1.into(), 0).unwrap_err();
    assert!(
        matches!(err, Error::InvalidRecord { .. }) && err.to_string().contains("magic 1"),
        "{err}"
    );
    let truncated = batch(2, 1).slice(0..40);
    assert!(matches!(
        log.append_as_leader(truncated, 0),
        Err(Error::CorruptRecord { .. })
    ));
    assert!(matches!(
        log.append_as_leader(bytes::Bytes::new(), 0),
        Err(Error::InvalidRecord { .. })
    ));
    let mut cfg = strata_storage::LogConfig::default();
    cfg.max_message_bytes = 100;
    log.update_config(cfg).unwrap();
    assert!(matches!(
        log.append_as_leader(sized_batch(1, 200, 0), 0),
        Err(Error::RecordTooLarge { max: 100, .. })
    ));
    // Kafka's range starts at 0, which refuses every batch, the smallest included.
    let mut cfg = strata_storage::LogConfig::default();
    cfg.max_message_bytes = 0;
    log.update_config(cfg).unwrap();
    assert!(matches!(
        log.append_as_leader(sized_batch(1, 0, 0), 0),
        Err(Error::RecordTooLarge { max: 0, .. })
    ));
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.size_in_bytes(), 0);
}

#[test]
fn segments_roll_on_size_and_notify_listeners() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let rolled = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let r2 = rolled.clone();
    m.add_roll_listener(std::sync::Arc::new(move |tp, seg| {
        r2.lock().unwrap().push((tp.clone(), seg.clone()))
    }));
    let log = log(&m, small_segments());
    for i in 0..20 {
        log.append_as_leader(sized_batch(2, 100, i), 0).unwrap();
    }
    let segs = log.rolled_segments();
    assert!(segs.len() >= 3, "{segs:?}");
    let seen = rolled.lock().unwrap().clone();
    assert_eq!(seen.len(), segs.len());
    for w in segs.windows(2) {
        assert_eq!(w[0].next_offset, w[1].base_offset);
    }
    assert!(segs[0].log_file.ends_with("00000000000000000000.log"));
    assert!(segs[0].producer_snapshot_file.as_ref().unwrap().exists());
    assert!(segs.iter().all(|s| s.size_bytes <= 1024));
    // Reads across segments return every batch in order.
    let mut next = 0;
    while next < log.log_end_offset() {
        let got = log.read(next, 300, true, None).unwrap().records;
        let b: Vec<RecordBatch> = RecordBatch::iter(&got).collect::<Result<_, _>>().unwrap();
        assert_eq!(b[0].base_offset(), next);
        next = b.last().unwrap().next_offset();
    }
    assert_eq!(next, 40);
}

#[test]
fn log_survives_clean_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let m = open_manager(dir.path());
        let log = log(&m, small_segments());
        for i in 0..10 {
            log.append_as_leader(sized_batch(2, 100, 1000 + i), 3)
                .unwrap();
        }
        m.shutdown().unwrap();
        assert!(matches!(
            log.append_as_leader(batch(1, 0), 3),
            Err(Error::Storage { .. })
        ));
        assert!(dir.path().join(".kafka_cleanshutdown").exists());
    }
    let m = open_manager(dir.path());
    assert!(!dir.path().join(".kafka_cleanshutdown").exists());
    let log = m.get_log(&tp()).unwrap();
    assert_eq!(log.topic_id(), uuid::Uuid::from_u128(7));
    assert_eq!(log.log_end_offset(), 20);
    assert_eq!(log.leader_epoch_entries(), vec![(3, 0)]);
    assert_eq!(log.max_timestamp_and_offset(), Some((1010, 19)));
    let a = log.append_as_leader(batch(1, 5), 4).unwrap();
    assert_eq!(a.first_offset, 20);
}

#[test]
fn a_slice_left_in_its_file_is_exactly_what_a_read_returns() {
    use strata_storage::LogSlice;
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = strata_storage::LogConfig::default();
    cfg.segment_bytes = 64 * 1024;
    cfg.index_interval_bytes = 1000;
    let log = log(&m, cfg);
    // Batches of varied sizes (1 to 9 records of 40-300 bytes) over several segments.
    for i in 0..300usize {
        let n = 1 + i % 9;
        log.append_as_leader(sized_batch(n, 40 + (i * 37) % 260, 1000 + i as i64), 0)
            .unwrap();
    }
    let end = log.log_end_offset();
    let mut checked_regions = 0;
    for offset in (0..end).step_by(97) {
        for max_bytes in [0usize, 1, 200, 1500, 4096, 20_000, 1 << 20] {
            for max_offset in [None, Some(offset + 1), Some(offset + 50), Some(end)] {
                for first in [true, false] {
                    let want = log
                        .read(offset, max_bytes, first, max_offset)
                        .unwrap()
                        .records;
                    let got = log
                        .read_slice(offset, max_bytes, first, max_offset, 0)
                        .unwrap();
                    let (bytes, next) = match &got {
                        LogSlice::Bytes(b) => (b.clone(), None),
                        LogSlice::File {
                            region,
                            next_offset,
                        } => {
                            checked_regions += 1;
                            (region.read().unwrap(), Some(*next_offset))
                        }
                    };
                    let at = (offset, max_bytes, max_offset, first);
                    assert_eq!(bytes, want, "{at:?}");
                    assert_eq!(got.len(), want.len(), "{at:?}");
                    if let Some(next) = next {
                        // The offset after the slice: the next batch's base offset (no gaps here).
                        let last = RecordBatch::iter(&want).last().unwrap().unwrap();
                        assert_eq!(next, last.next_offset(), "{at:?}");
                    }
                }
            }
        }
    }
    assert!(checked_regions > 100, "{checked_regions} regions checked");
    // A read below the threshold stays in memory.
    assert!(matches!(
        log.read_slice(0, 1 << 20, true, None, usize::MAX).unwrap(),
        LogSlice::Bytes(ref b) if !b.is_empty()
    ));
}
