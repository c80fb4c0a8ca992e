//! The custom metadata a copy returns records the stored size and the key prefix, so segments stay readable
//! and deletable after `key.prefix` changes.
use futures::TryStreamExt;
use object_store::ObjectStore;
use strata_tiering::testing::{segment_bytes, segment_metadata, write_segment_files};
use strata_tiering::{
    ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt, SegmentCustomMetadata,
};

fn rsm(root: &std::path::Path, prefix: &str) -> ObjectStoreRsm {
    ObjectStoreRsm::from_props([
        ("storage.filesystem.root", root.to_str().unwrap()),
        ("key.prefix", prefix),
        ("chunk.size", "8192"),
    ])
    .unwrap()
}

#[tokio::test]
async fn segments_survive_a_key_prefix_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("remote");
    let old = rsm(&root, "old/");
    let files = write_segment_files(
        &dir.path().join("l"),
        0,
        segment_bytes(50_000, 3, false),
        true,
    );
    let mut meta = segment_metadata("t", 0, 0, files.log.len() as u64);
    let custom = old
        .copy_log_segment_data(&meta, files.data)
        .await
        .unwrap()
        .expect("custom metadata");
    assert!(custom.0.len() <= strata_metadata::CUSTOM_METADATA_MAX_BYTES);
    let decoded = SegmentCustomMetadata::decode(&custom).unwrap();
    assert_eq!(decoded.object_prefix.as_deref(), Some("old/"));
    let stored: u64 = old
        .store()
        .list(None)
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
        .iter()
        .map(|o| o.size)
        .sum();
    assert_eq!(
        decoded.remote_size, stored,
        "remote size counts all three objects"
    );

    // Without the custom metadata a reader with the new prefix cannot find the segment; with it, it can.
    let new = rsm(&root, "new/");
    assert!(new
        .fetch_log_segment(&meta, 0, None)
        .await
        .err()
        .unwrap()
        .is_not_found());
    meta.custom_metadata = Some(custom);
    assert_eq!(
        new.fetch_log_segment_bytes(&meta, 0, None).await.unwrap(),
        files.log
    );
    new.delete_log_segment_data(&meta).await.unwrap();
    let left: Vec<_> = new.store().list(None).try_collect().await.unwrap();
    assert!(left.is_empty(), "{left:?}");
}
