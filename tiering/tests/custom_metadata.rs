//! The custom metadata a copy returns records the stored size and the key prefix, so segments stay readable
//! and deletable after `key.prefix` changes.
use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt};
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

/// A legal topic name has up to 249 characters. Copies now write keys whose every component fits a file name
/// (key layout V2, recorded in the custom metadata); segments copied by older versions (no layout recorded) kept
/// the whole topic in the key — S3 took it — and must stay readable and deletable where they are.
#[tokio::test]
async fn long_topic_segments_of_the_old_key_layout_stay_readable_and_deletable() {
    use strata_tiering::key::{KeyLayout, ObjectSuffix, SegmentKeys};
    let dir = tempfile::tempdir().unwrap();
    let rsm = ObjectStoreRsm::from_props([("storage.backend", "memory"), ("chunk.size", "8192")])
        .unwrap();
    let files = write_segment_files(
        &dir.path().join("l"),
        0,
        segment_bytes(20_000, 3, false),
        true,
    );
    let topic = "t".repeat(249);
    let mut meta = segment_metadata(&topic, 0, 0, files.log.len() as u64);
    let custom = rsm
        .copy_log_segment_data(&meta, files.data)
        .await
        .unwrap()
        .expect("custom metadata");
    let mut decoded = SegmentCustomMetadata::decode(&custom).unwrap();
    assert_eq!(decoded.key_layout, Some(KeyLayout::V2));
    let new_keys = SegmentKeys::new(
        "",
        meta.topic_id_partition(),
        0,
        &meta.remote_log_segment_id.id,
    );
    for key in new_keys.all() {
        assert!(key.as_ref().split('/').all(|c| c.len() <= 255), "{key}");
    }

    // Put the objects where an older version wrote them and record no layout, as it did.
    let old_keys = SegmentKeys::with_layout(
        KeyLayout::V1,
        "",
        meta.topic_id_partition(),
        0,
        &meta.remote_log_segment_id.id,
    );
    assert_ne!(old_keys, new_keys);
    for suffix in [
        ObjectSuffix::Log,
        ObjectSuffix::Indexes,
        ObjectSuffix::Manifest,
    ] {
        rsm.store()
            .rename(&new_keys.key(suffix), &old_keys.key(suffix))
            .await
            .unwrap();
    }
    decoded.key_layout = None;
    meta.custom_metadata = Some(decoded.encode());
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta, 0, None).await.unwrap(),
        files.log,
        "a segment of the old layout reads from its old keys"
    );
    rsm.delete_log_segment_data(&meta).await.unwrap();
    let left: Vec<_> = rsm.store().list(None).try_collect().await.unwrap();
    assert!(left.is_empty(), "{left:?}");
}
