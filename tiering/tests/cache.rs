//! The chunk cache: repeated reads make no GETs, prefetch loads the following chunks, the byte budget holds.
use std::sync::Arc;
use std::time::{Duration, Instant};

use object_store::memory::InMemory;
use object_store::ObjectStore;
use strata_tiering::testing::{
    segment_bytes, segment_metadata, write_segment_files, FaultyStore, Op,
};
use strata_tiering::{ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt, RsmConfig};

fn rsm(store: Arc<dyn ObjectStore>, props: &[(&str, &str)]) -> ObjectStoreRsm {
    let mut c = RsmConfig::default();
    c.set("chunk.size", "4096").unwrap();
    // GETs are counted: no read-ahead unless the test asks for it (the default is 16 MiB).
    c.set("fetch.chunk.cache.prefetch.max.size", "0").unwrap();
    for (k, v) in props {
        c.set(k, v).unwrap();
    }
    ObjectStoreRsm::with_store(c, store).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_reads_make_no_gets() {
    let dir = tempfile::tempdir().unwrap();
    let counting = Arc::new(FaultyStore::new(Arc::new(InMemory::new())));
    let rsm = rsm(counting.clone(), &[]);
    let files = write_segment_files(dir.path(), 0, segment_bytes(40_000, 1, false), true);
    let meta = segment_metadata("c", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    rsm.fetch_log_segment_bytes(&meta, 5000, Some(9000))
        .await
        .unwrap();
    let gets = counting.calls(Op::Get);
    assert_eq!(gets, 1 + 2, "manifest and the two chunks the range covers");
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta, 5000, Some(9000))
            .await
            .unwrap(),
        files.log.slice(5000..=9000)
    );
    assert_eq!(
        counting.calls(Op::Get),
        gets,
        "second read served from the caches"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefetch_loads_following_chunks_of_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    let rsm = rsm(
        Arc::new(InMemory::new()),
        &[("fetch.chunk.cache.prefetch.max.size", "8192")],
    );
    let files = write_segment_files(dir.path(), 0, segment_bytes(40_000, 1, false), true);
    let meta = segment_metadata("c", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    rsm.fetch_log_segment_bytes(&meta, 0, Some(100))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(rsm.is_chunk_cached(&meta, 1) && rsm.is_chunk_cached(&meta, 2)) {
        assert!(
            Instant::now() < deadline,
            "chunks 1 and 2 were not prefetched"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !rsm.is_chunk_cached(&meta, 3),
        "prefetch stays within its byte budget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunk_cache_stays_within_its_byte_budget() {
    let dir = tempfile::tempdir().unwrap();
    let rsm = rsm(
        Arc::new(InMemory::new()),
        &[("fetch.chunk.cache.size", "20000")],
    );
    let files = write_segment_files(dir.path(), 0, segment_bytes(200_000, 1, false), true);
    let meta = segment_metadata("c", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta, 0, None).await.unwrap(),
        files.log
    );
    let held = rsm.chunk_cache_bytes().await;
    assert!(held > 0 && held <= 20_000, "chunk cache holds {held} bytes");
}
