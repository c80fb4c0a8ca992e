//! The read-ahead of the chunk cache (`fetch.chunk.cache.prefetch.max.size`): chunks load in order with at most
//! `fetch.concurrency` GETs in flight, and the window runs on into the next segment when the reader hints it.
use std::sync::Arc;
use std::time::{Duration, Instant};

use object_store::memory::InMemory;
use strata_metadata::RemoteLogSegmentMetadata;
use strata_tiering::testing::{
    segment_bytes, segment_metadata, write_segment_files, FaultyStore, Op,
};
use strata_tiering::{ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt, RsmConfig};

const CHUNK: u64 = 4096;

fn rsm(store: Arc<FaultyStore>, props: &[(&str, &str)]) -> ObjectStoreRsm {
    let mut c = RsmConfig::default();
    c.set("chunk.size", &CHUNK.to_string()).unwrap();
    // No read-ahead unless the test asks for it (the default is 16 MiB).
    c.set("fetch.chunk.cache.prefetch.max.size", "0").unwrap();
    for (k, v) in props {
        c.set(k, v).unwrap();
    }
    ObjectStoreRsm::with_store(c, store).unwrap()
}

async fn copied(
    rsm: &ObjectStoreRsm,
    dir: &std::path::Path,
    start: i64,
    len: usize,
) -> RemoteLogSegmentMetadata {
    let files = write_segment_files(
        dir,
        start,
        segment_bytes(len, start as u64 + 1, false),
        true,
    );
    let meta = segment_metadata("p", 0, start, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    meta
}

/// Polls until `done` holds; `check` runs at every poll (an invariant that must hold meanwhile).
async fn poll(what: &str, mut done: impl FnMut() -> bool, mut check: impl FnMut()) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        check();
        if done() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefetch_loads_the_following_chunks_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FaultyStore::new(Arc::new(InMemory::new())));
    let rsm = rsm(
        store.clone(),
        &[
            (
                "fetch.chunk.cache.prefetch.max.size",
                &(6 * CHUNK).to_string(),
            ),
            ("fetch.concurrency", "1"),
        ],
    );
    let meta = copied(&rsm, dir.path(), 0, 16 * CHUNK as usize).await;
    store.delay_gets(Duration::from_millis(5));
    rsm.fetch_log_segment_bytes(&meta, 0, Some(100))
        .await
        .unwrap();
    poll(
        "chunks 1..=6 were not prefetched",
        || (1..=6).all(|i| rsm.is_chunk_cached(&meta, i)),
        || {
            // One GET at a time in chunk order: the cached chunks are always 1..=k.
            let cached: Vec<u32> = (1..=6).filter(|&i| rsm.is_chunk_cached(&meta, i)).collect();
            let k = cached.len() as u32;
            assert_eq!(
                cached,
                (1..=k).collect::<Vec<_>>(),
                "chunks loaded out of order"
            );
        },
    )
    .await;
    assert!(
        !rsm.is_chunk_cached(&meta, 7),
        "prefetch stays within its byte budget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefetch_gets_run_in_parallel_bounded_by_fetch_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FaultyStore::new(Arc::new(InMemory::new())));
    let rsm = rsm(
        store.clone(),
        &[
            (
                "fetch.chunk.cache.prefetch.max.size",
                &(10 * CHUNK).to_string(),
            ),
            ("fetch.concurrency", "3"),
        ],
    );
    let meta = copied(&rsm, dir.path(), 0, 16 * CHUNK as usize).await;
    store.delay_gets(Duration::from_millis(40));
    rsm.fetch_log_segment_bytes(&meta, 0, Some(100))
        .await
        .unwrap();
    poll(
        "chunks 1..=10 were not prefetched",
        || (1..=10).all(|i| rsm.is_chunk_cached(&meta, i)),
        || {},
    )
    .await;
    let peak = store.peak_gets_in_flight();
    // The read's own chunk GET plus `fetch.concurrency` prefetch GETs.
    assert!(
        (2..=4).contains(&peak),
        "{peak} GETs in flight at once, expected prefetch in parallel but bounded by fetch.concurrency"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_ahead_runs_into_the_next_segment() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FaultyStore::new(Arc::new(InMemory::new())));
    let rsm = rsm(
        store,
        &[(
            "fetch.chunk.cache.prefetch.max.size",
            &(3 * CHUNK).to_string(),
        )],
    );
    let first = copied(&rsm, dir.path(), 0, 4 * CHUNK as usize).await;
    let next = copied(&rsm, dir.path(), 100, 8 * CHUNK as usize).await;
    let size = first.segment_size_in_bytes;
    // A read ending one chunk before the end: the window of three chunks holds two chunks of `next`.
    let end = size - CHUNK - 1;
    rsm.fetch_log_segment_bytes(&first, end - 100, Some(end))
        .await
        .unwrap();
    rsm.prefetch_next_segment(&first, end, &next);
    poll(
        "chunks 0 and 1 of the next segment were not prefetched",
        || rsm.is_chunk_cached(&next, 0) && rsm.is_chunk_cached(&next, 1),
        || {},
    )
    .await;
    assert!(
        !rsm.is_chunk_cached(&next, 2),
        "the read-ahead into the next segment stays within the byte budget"
    );
}

/// A consumer catching up reads each chunk a few times and never again; the chunks read ahead must stay in a full
/// cache until they are read. (moka's default TinyLFU admission refused them in favour of the chunks just read,
/// so every chunk read ahead was fetched a second time.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_read_ahead_are_kept_in_a_full_cache_until_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FaultyStore::new(Arc::new(InMemory::new())));
    let rsm = rsm(
        store.clone(),
        &[
            ("fetch.chunk.cache.size", &(4 * CHUNK).to_string()),
            (
                "fetch.chunk.cache.prefetch.max.size",
                &(2 * CHUNK).to_string(),
            ),
        ],
    );
    let chunks = 16u64;
    let meta = copied(&rsm, dir.path(), 0, (chunks * CHUNK) as usize).await;
    let size = meta.segment_size_in_bytes;
    let gets_before = store.calls(Op::Get);
    let step = CHUNK / 4;
    let mut pos = 0;
    while pos < size {
        let end = (pos + step).min(size) - 1;
        rsm.fetch_log_segment_bytes(&meta, pos, Some(end))
            .await
            .unwrap();
        // The read-ahead of the chunks after this one lands before the next read (a consumer's round trip).
        let chunk = (end / CHUNK) as u32;
        let last = (chunks - 1) as u32;
        poll(
            "the chunks after the one read were not read ahead",
            || (chunk + 1..=(chunk + 2).min(last)).all(|i| rsm.is_chunk_cached(&meta, i)),
            || {},
        )
        .await;
        rsm.chunk_cache_bytes().await; // the cache's admission and eviction run here
        pos = end + 1;
    }
    let gets = store.calls(Op::Get) - gets_before;
    // The manifest once, then every chunk once.
    assert_eq!(
        gets,
        chunks as usize + 1,
        "GETs for a sequential read of {chunks} chunks with read-ahead"
    );
}
