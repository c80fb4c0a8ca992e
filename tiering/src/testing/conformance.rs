//! The one contract test every [`RemoteStorageManager`] must pass.
use std::path::Path;

use crate::error::Error;
use crate::rsm::{IndexType, RemoteStorageManager, RemoteStorageManagerExt};
use crate::testing::{segment_bytes, segment_metadata, write_segment_files};

/// Checks the `# Contract` of [`RemoteStorageManager`] against `rsm`, writing local segment files under
/// `scratch`. Panics on the first violation. Works with any chunk size; segments are a few hundred KiB.
pub async fn rsm_conformance(rsm: &dyn RemoteStorageManager, scratch: &Path) {
    // Copy, then read back whole and in ranges.
    let files = write_segment_files(
        &scratch.join("a"),
        1000,
        segment_bytes(300_001, 7, false),
        true,
    );
    let meta = segment_metadata("conformance", 0, 1000, files.log.len() as u64);
    let custom = rsm
        .copy_log_segment_data(&meta, files.data.clone())
        .await
        .expect("copy");
    assert!(custom
        .as_ref()
        .is_none_or(|c| c.0.len() <= strata_metadata::CUSTOM_METADATA_MAX_BYTES));
    let size = files.log.len() as u64;
    let all = rsm
        .fetch_log_segment_bytes(&meta, 0, None)
        .await
        .expect("fetch whole");
    assert_eq!(all, files.log, "whole segment");
    for (start, end) in [
        (0, Some(0)),
        (1, Some(1)),
        (size - 1, None),
        (size - 1, Some(size - 1)),
        (12_345, Some(200_000)),
        (65_535, Some(65_536)),
        (100, Some(size + 1000)),
    ] {
        let got = rsm
            .fetch_log_segment_bytes(&meta, start, end)
            .await
            .expect("fetch range");
        let last = end.map_or(size - 1, |e| e.min(size - 1));
        assert_eq!(
            got,
            files.log.slice(start as usize..=last as usize),
            "range [{start}, {end:?}]"
        );
    }
    let past = rsm
        .fetch_log_segment(&meta, size, None)
        .await
        .err()
        .expect("start at end of segment fails");
    assert!(
        matches!(past, Error::InvalidRange { .. }),
        "start past end: {past}"
    );
    let backwards = rsm
        .fetch_log_segment(&meta, 10, Some(9))
        .await
        .err()
        .expect("end before start fails");
    assert!(
        matches!(backwards, Error::InvalidRange { .. }),
        "end before start: {backwards}"
    );

    // Every index comes back as it was.
    assert_eq!(
        rsm.fetch_index(&meta, IndexType::Offset)
            .await
            .expect("offset index"),
        files.offset_index
    );
    assert_eq!(
        rsm.fetch_index(&meta, IndexType::Timestamp)
            .await
            .expect("time index"),
        files.time_index
    );
    assert_eq!(
        rsm.fetch_index(&meta, IndexType::ProducerSnapshot)
            .await
            .expect("snapshot"),
        files.producer_snapshot
    );
    assert_eq!(
        rsm.fetch_index(&meta, IndexType::LeaderEpoch)
            .await
            .expect("epochs"),
        files.data.leader_epoch_index
    );
    assert_eq!(
        Some(
            rsm.fetch_index(&meta, IndexType::Transaction)
                .await
                .expect("txn index")
        ),
        files.transaction_index
    );

    // Copy is idempotent: the same id again overwrites and succeeds.
    rsm.copy_log_segment_data(&meta, files.data.clone())
        .await
        .expect("copy again");
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta, 0, None)
            .await
            .expect("fetch after re-copy"),
        files.log
    );

    // No transaction index: a distinct not-found, the other indexes still there.
    let no_txn = write_segment_files(
        &scratch.join("b"),
        2000,
        segment_bytes(70_000, 9, true),
        false,
    );
    let meta_b = segment_metadata("conformance", 1, 2000, no_txn.log.len() as u64);
    rsm.copy_log_segment_data(&meta_b, no_txn.data.clone())
        .await
        .expect("copy without txn index");
    let e = rsm
        .fetch_index(&meta_b, IndexType::Transaction)
        .await
        .expect_err("absent txn index");
    assert!(
        e.is_not_found(),
        "absent transaction index must be not-found, got {e}"
    );
    assert_eq!(
        rsm.fetch_index(&meta_b, IndexType::Offset)
            .await
            .expect("offset index"),
        no_txn.offset_index
    );
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta_b, 0, None)
            .await
            .expect("fetch b"),
        no_txn.log
    );

    // An empty segment.
    let empty = write_segment_files(&scratch.join("c"), 3000, bytes::Bytes::new(), false);
    let meta_c = segment_metadata("conformance", 2, 3000, 0);
    rsm.copy_log_segment_data(&meta_c, empty.data.clone())
        .await
        .expect("copy empty");
    assert!(rsm
        .fetch_log_segment_bytes(&meta_c, 0, None)
        .await
        .expect("fetch empty")
        .is_empty());

    // A segment that was never copied: not found everywhere, delete still succeeds.
    let never = segment_metadata("conformance", 0, 5000, 10);
    let e = rsm
        .fetch_log_segment(&never, 0, None)
        .await
        .err()
        .expect("never copied");
    assert!(
        e.is_not_found(),
        "fetch of a never-copied segment must be not-found, got {e}"
    );
    let e = rsm
        .fetch_index(&never, IndexType::Offset)
        .await
        .expect_err("never copied index");
    assert!(
        e.is_not_found(),
        "index of a never-copied segment must be not-found, got {e}"
    );
    rsm.delete_log_segment_data(&never)
        .await
        .expect("delete of a missing segment is fine");

    // Delete is idempotent and makes the segment unreadable.
    for m in [&meta, &meta_b, &meta_c] {
        rsm.delete_log_segment_data(m).await.expect("delete");
        rsm.delete_log_segment_data(m).await.expect("delete again");
        let e = rsm
            .fetch_log_segment(m, 0, None)
            .await
            .err()
            .expect("deleted");
        assert!(
            e.is_not_found(),
            "fetch after delete must be not-found, got {e}"
        );
        let e = rsm
            .fetch_index(m, IndexType::Offset)
            .await
            .expect_err("deleted index");
        assert!(
            e.is_not_found(),
            "index after delete must be not-found, got {e}"
        );
    }
}
