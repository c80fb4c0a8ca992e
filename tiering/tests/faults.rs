//! Fault injection through `FaultyStore`: a failed, hung or cancelled copy removes what it wrote, aborts its
//! multipart upload and never leaves a manifest; a truncated body is an error, never short data.
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::ObjectStore;
use strata_tiering::testing::{
    segment_bytes, segment_metadata, write_segment_files, Fault, FaultyStore, Op,
};
use strata_tiering::{
    Error, IndexType, ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt, RsmConfig,
};

const MIB: usize = 1024 * 1024;

fn rsm_over(store: Arc<dyn ObjectStore>, tweak: impl FnOnce(&mut RsmConfig)) -> ObjectStoreRsm {
    let mut c = RsmConfig::default();
    c.set("storage.backend", "memory").unwrap();
    c.set("chunk.size", "65536").unwrap();
    // Faults are injected per call: no background read-ahead making calls of its own.
    c.set("fetch.chunk.cache.prefetch.max.size", "0").unwrap();
    c.set(
        "storage.s3.multipart.upload.part.size",
        &(5 * MIB).to_string(),
    )
    .unwrap();
    tweak(&mut c);
    ObjectStoreRsm::with_store(c, store).unwrap()
}

async fn object_count(store: &dyn ObjectStore) -> usize {
    store
        .list(None)
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
        .len()
}

async fn manifest_count(store: &dyn ObjectStore) -> usize {
    let all: Vec<_> = store.list(None).try_collect().await.unwrap();
    all.iter()
        .filter(|o| o.location.as_ref().ends_with(".rsm-manifest"))
        .count()
}

async fn wait_for(cond: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A 12 MiB segment: three multipart parts of 5, 5 and 2 MiB.
fn big_segment(dir: &std::path::Path) -> strata_tiering::testing::SegmentFiles {
    write_segment_files(dir, 0, segment_bytes(12 * MIB, 3, false), true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_part_aborts_multipart_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    faulty.inject(Op::PutPart, 2, Fault::Fail);
    let rsm = rsm_over(faulty.clone(), |_| {});
    let files = big_segment(dir.path());
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    let e = rsm
        .copy_log_segment_data(&meta, files.data.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Unavailable {
                operation: "put_part",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        faulty.calls(Op::AbortMultipart),
        1,
        "the multipart upload is aborted"
    );
    assert_eq!(object_count(base.as_ref()).await, 0, "nothing left behind");
    let e = rsm.fetch_log_segment(&meta, 0, None).await.err().unwrap();
    assert!(e.is_not_found(), "{e}");

    // A retry with a new id (as the RemoteLogManager does) succeeds.
    let retry = segment_metadata("t", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&retry, files.data.clone())
        .await
        .unwrap();
    assert_eq!(
        rsm.fetch_log_segment_bytes(&retry, 0, None).await.unwrap(),
        files.log
    );
    assert_eq!(object_count(base.as_ref()).await, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_complete_aborts_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    faulty.inject(Op::CompleteMultipart, 1, Fault::Fail);
    let rsm = rsm_over(faulty.clone(), |_| {});
    let files = big_segment(dir.path());
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    let e = rsm
        .copy_log_segment_data(&meta, files.data)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Unavailable {
                operation: "complete_multipart",
                ..
            }
        ),
        "{e}"
    );
    assert!(faulty.calls(Op::AbortMultipart) >= 1);
    assert_eq!(object_count(base.as_ref()).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_after_data_is_written_removes_log_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    // Small segment: .log is PUT #1, .indexes #2, the manifest #3.
    for failing_put in 1..=3 {
        let faulty = Arc::new(FaultyStore::new(base.clone()));
        faulty.inject(Op::Put, failing_put, Fault::Fail);
        let rsm = rsm_over(faulty.clone(), |_| {});
        let files = write_segment_files(
            &dir.path().join(failing_put.to_string()),
            0,
            segment_bytes(100_000, 1, false),
            false,
        );
        let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
        let e = rsm
            .copy_log_segment_data(&meta, files.data)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Unavailable {
                    operation: "put",
                    ..
                }
            ),
            "put #{failing_put}: {e}"
        );
        assert_eq!(
            object_count(base.as_ref()).await,
            0,
            "put #{failing_put} failing left objects"
        );
        assert_eq!(manifest_count(base.as_ref()).await, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_copy_cancelled_by_timeout_cleans_up_in_background() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    faulty.inject(Op::PutPart, 2, Fault::Hang);
    let rsm = rsm_over(faulty.clone(), |_| {});
    let files = big_segment(dir.path());
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    let copy = {
        let (rsm, meta) = (rsm.clone(), meta.clone());
        tokio::spawn(async move { rsm.copy_log_segment_data(&meta, files.data).await })
    };
    wait_for(
        || faulty.calls(Op::PutPart) >= 2,
        "the copy to reach the hanging second part",
    )
    .await;
    assert!(
        !copy.is_finished(),
        "the copy hangs at the hanging second part"
    );
    copy.abort(); // what a caller's timeout does: drop the copy future
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let aborted = faulty.calls(Op::AbortMultipart) == 1;
        let empty = object_count(base.as_ref()).await == 0;
        if aborted && empty {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "cleanup did not happen: aborted={aborted} empty={empty}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(manifest_count(base.as_ref()).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_manifest_put_leaves_no_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    faulty.inject(Op::Put, 3, Fault::Hang);
    let rsm = rsm_over(faulty.clone(), |_| {});
    let files = write_segment_files(dir.path(), 0, segment_bytes(10_000, 1, false), true);
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    let copy = {
        let (rsm, meta) = (rsm.clone(), meta.clone());
        tokio::spawn(async move { rsm.copy_log_segment_data(&meta, files.data).await })
    };
    wait_for(
        || faulty.calls(Op::Put) >= 3,
        "the copy to reach the hanging manifest put",
    )
    .await;
    assert!(
        !copy.is_finished(),
        "the copy hangs at the hanging manifest put"
    );
    copy.abort(); // what a caller's timeout does: drop the copy future
    let deadline = Instant::now() + Duration::from_secs(10);
    while object_count(base.as_ref()).await != 0 {
        assert!(
            Instant::now() < deadline,
            "objects of the cancelled copy remain"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let e = rsm.fetch_index(&meta, IndexType::Offset).await.unwrap_err();
    assert!(e.is_not_found(), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_get_body_is_an_error_not_short_data() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    let rsm = rsm_over(faulty.clone(), |c| {
        c.set("fetch.chunk.cache.size", "0").unwrap()
    });
    let files = write_segment_files(dir.path(), 0, segment_bytes(200_000, 5, false), true);
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    // GET #1 is the manifest, #2 the first chunk.
    faulty.inject(Op::Get, 2, Fault::Truncate);
    let e = rsm
        .fetch_log_segment_bytes(&meta, 0, Some(1000))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("chunk 0"), "{e}");
    // The next read is whole again.
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta, 0, Some(1000))
            .await
            .unwrap(),
        files.log.slice(0..=1000)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_upload_is_detected_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    faulty.inject(Op::Put, 1, Fault::Truncate);
    let rsm = rsm_over(faulty.clone(), |_| {});
    let files = write_segment_files(dir.path(), 0, segment_bytes(200_000, 5, false), true);
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    let r = rsm.fetch_log_segment_bytes(&meta, 0, None).await;
    assert!(r.is_err(), "a short .log must not read back as data");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_delete_can_be_retried() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultyStore::new(base.clone()));
    let rsm = rsm_over(faulty.clone(), |_| {});
    let files = write_segment_files(dir.path(), 0, segment_bytes(1000, 5, false), true);
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    faulty.inject(Op::Delete, 2, Fault::Fail);
    let e = rsm.delete_log_segment_data(&meta).await.unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Unavailable {
                operation: "delete",
                ..
            }
        ),
        "{e}"
    );
    // The manifest went first, so the segment already reads as absent.
    assert!(rsm
        .fetch_log_segment(&meta, 0, None)
        .await
        .err()
        .unwrap()
        .is_not_found());
    rsm.delete_log_segment_data(&meta).await.unwrap();
    assert_eq!(object_count(base.as_ref()).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_local_file_fails_the_copy_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let rsm = rsm_over(base.clone(), |_| {});
    let mut files = write_segment_files(dir.path(), 0, segment_bytes(1000, 5, false), true);
    files.data.producer_snapshot = dir.path().join("missing.snapshot");
    let meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    let e = rsm
        .copy_log_segment_data(&meta, files.data)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::Unavailable { .. }) && e.to_string().contains("missing.snapshot"),
        "{e}"
    );
    assert_eq!(object_count(base.as_ref()).await, 0);
}
