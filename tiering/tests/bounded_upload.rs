//! Upload memory is bounded by `storage.s3.multipart.upload.part.size x upload.concurrency`: a 256 MiB segment
//! copied with 8 MiB parts and concurrency 2 never has more than 16 MiB of parts in flight.
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use object_store::local::LocalFileSystem;
use object_store::ObjectStore;
use strata_tiering::testing::{
    segment_bytes, segment_metadata, write_segment_files, InFlightStore,
};
use strata_tiering::{ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt, RsmConfig};

const MIB: u64 = 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copying_256_mib_with_8_mib_parts_and_concurrency_2_keeps_16_mib_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_segment_files(&dir.path().join("local"), 0, bytes::Bytes::new(), false);
    // Stream a 256 MiB .log to disk in 8 MiB pieces.
    let piece = segment_bytes(8 * MIB as usize, 11, false);
    let mut f = std::fs::File::create(&files.data.log_segment).unwrap();
    for i in 0..32u8 {
        let mut p = piece.to_vec();
        p[0] = i;
        f.write_all(&p).unwrap();
    }
    f.sync_all().unwrap();
    drop(f);

    let root = dir.path().join("remote");
    std::fs::create_dir_all(&root).unwrap();
    let fs: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&root).unwrap());
    let metered = Arc::new(InFlightStore::new(fs, Duration::from_millis(20)));
    let config = RsmConfig::from_props([
        ("storage.backend", "filesystem"),
        ("storage.filesystem.root", root.to_str().unwrap()),
        ("storage.s3.multipart.upload.part.size", "8388608"),
        ("upload.concurrency", "2"),
    ])
    .unwrap();
    let rsm = ObjectStoreRsm::with_store(config, metered.clone()).unwrap();
    let meta = segment_metadata("big", 0, 0, 256 * MIB);
    rsm.copy_log_segment_data(&meta, files.data.clone())
        .await
        .unwrap();

    let peak = metered.peak_bytes();
    assert!(
        peak <= 16 * MIB,
        "peak upload bytes in flight {peak} exceed part size x concurrency"
    );
    assert!(
        peak > 8 * MIB,
        "peak {peak}: the two parts never overlapped, concurrency is not used"
    );
    assert!(metered.total_bytes() >= 256 * MIB);
    assert_eq!(metered.current_bytes(), 0);

    // The copy reads back: the first bytes of a few 8 MiB pieces and a range across a part boundary.
    for i in [0u64, 1, 17, 31] {
        let got = rsm
            .fetch_log_segment_bytes(&meta, i * 8 * MIB, Some(i * 8 * MIB + 99))
            .await
            .unwrap();
        assert_eq!(got[0], i as u8);
        assert_eq!(got[1..], piece[1..100]);
    }
    let across = rsm
        .fetch_log_segment_bytes(&meta, 8 * MIB - 10, Some(8 * MIB + 9))
        .await
        .unwrap();
    assert_eq!(across[..10], piece[piece.len() - 10..]);
    assert_eq!(across[10], 1);
}
