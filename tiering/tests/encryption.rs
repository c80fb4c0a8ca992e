//! Encryption and compression as stored: wrong or missing keys fail with clear errors, tampering is detected,
//! stored bytes do not show the plaintext, and the compression heuristic skips compressed batches.
use std::path::Path;

use futures::TryStreamExt;
use object_store::ObjectStoreExt;
use strata_tiering::manifest::SegmentManifest;
use strata_tiering::testing::{segment_bytes, segment_metadata, write_segment_files};
use strata_tiering::{
    Error, IndexType, ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt,
};

fn key_file(dir: &Path, name: &str, byte: u8) -> String {
    let p = dir.join(name);
    std::fs::write(&p, [byte; 32]).unwrap();
    p.display().to_string()
}

fn fs_rsm(root: &Path, extra: &[(&str, &str)]) -> ObjectStoreRsm {
    let root = root.display().to_string();
    let mut props = vec![
        ("storage.filesystem.root", root.as_str()),
        ("chunk.size", "4096"),
    ];
    props.extend_from_slice(extra);
    ObjectStoreRsm::from_props(props).unwrap()
}

#[tokio::test]
async fn wrong_key_fails_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (key_file(dir.path(), "a", 1), key_file(dir.path(), "b", 2));
    let root = dir.path().join("remote");
    let writer = fs_rsm(
        &root,
        &[("encryption.enabled", "true"), ("encryption.key.file", &a)],
    );
    let files = write_segment_files(
        &dir.path().join("l"),
        0,
        segment_bytes(20_000, 1, false),
        true,
    );
    let meta = segment_metadata("enc", 0, 0, files.log.len() as u64);
    writer
        .copy_log_segment_data(&meta, files.data)
        .await
        .unwrap();
    assert_eq!(
        writer
            .fetch_log_segment_bytes(&meta, 0, None)
            .await
            .unwrap(),
        files.log
    );

    let wrong = fs_rsm(
        &root,
        &[("encryption.enabled", "true"), ("encryption.key.file", &b)],
    );
    let e = wrong.fetch_log_segment(&meta, 0, None).await.err().unwrap();
    assert!(
        matches!(&e, Error::Corrupt { .. }) && e.to_string().contains("encrypted under key id"),
        "{e}"
    );
    assert!(
        e.to_string().contains("encrypted under key id")
            && e.to_string().contains("encryption.key.file"),
        "{e}"
    );
    let e = wrong
        .fetch_index(&meta, IndexType::Offset)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt { .. }) && e.to_string().contains("encrypted under key id"),
        "{e}"
    );

    let keyless = fs_rsm(&root, &[]);
    let e = keyless
        .fetch_log_segment(&meta, 0, None)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&e, Error::Corrupt { .. })
            && e.to_string().contains("no encryption key is configured"),
        "{e}"
    );

    // Turning encryption off for new segments keeps old ones readable when the key file stays configured.
    let reader = fs_rsm(&root, &[("encryption.key.file", &a)]);
    assert_eq!(
        reader
            .fetch_log_segment_bytes(&meta, 100, Some(5000))
            .await
            .unwrap(),
        files.log.slice(100..=5000)
    );
}

#[tokio::test]
async fn tampered_chunk_fails_to_decrypt_and_ciphertext_hides_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let a = key_file(dir.path(), "a", 1);
    let root = dir.path().join("remote");
    let rsm = fs_rsm(
        &root,
        &[
            ("encryption.enabled", "true"),
            ("encryption.key.file", &a),
            ("fetch.chunk.cache.size", "0"),
        ],
    );
    let log = segment_bytes(20_000, 1, true);
    let files = write_segment_files(&dir.path().join("l"), 0, log.clone(), true);
    let meta = segment_metadata("enc", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
    let log_key = rsm
        .segment_keys(&meta)
        .key(strata_tiering::key::ObjectSuffix::Log);
    let stored = rsm
        .store()
        .get(&log_key)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(
        !stored.windows(19).any(|w| w == b"kafka-record-value-"),
        "plaintext visible in the stored object"
    );

    let path = root.join(log_key.as_ref());
    let mut raw = std::fs::read(&path).unwrap();
    raw[5000] ^= 0xff; // inside chunk 1 (4096 + 28 bytes per stored chunk)
    std::fs::write(&path, raw).unwrap();
    let e = rsm
        .fetch_log_segment_bytes(&meta, 4096, Some(4100))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt { .. })
            && e.to_string().contains("chunk 1")
            && e.to_string().contains("decryption failed"),
        "{e}"
    );
    // Chunk 0 is untouched.
    assert_eq!(
        rsm.fetch_log_segment_bytes(&meta, 0, Some(10))
            .await
            .unwrap(),
        log.slice(0..=10)
    );
}

async fn manifest_of(
    rsm: &ObjectStoreRsm,
    meta: &strata_metadata::RemoteLogSegmentMetadata,
) -> SegmentManifest {
    let key = rsm
        .segment_keys(meta)
        .key(strata_tiering::key::ObjectSuffix::Manifest);
    let bytes = rsm.store().get(&key).await.unwrap().bytes().await.unwrap();
    SegmentManifest::from_json(key.as_ref(), &bytes).unwrap()
}

#[tokio::test]
async fn heuristic_skips_compression_of_compressed_batches() {
    let dir = tempfile::tempdir().unwrap();
    let rsm = fs_rsm(
        &dir.path().join("remote"),
        &[
            ("compression.enabled", "true"),
            ("compression.heuristic.detection.enabled", "true"),
        ],
    );
    let mut plain = segment_bytes(50_000, 1, true).to_vec();
    plain[16] = 2; // magic 2, attributes 0: uncompressed first batch
    plain[21] = 0;
    plain[22] = 0;
    let mut zstd_batches = plain.clone();
    zstd_batches[22] = 4; // attributes codec 4 = zstd
    for (name, log, expect_compression) in [("plain", plain, true), ("zstd", zstd_batches, false)] {
        let files = write_segment_files(&dir.path().join(name), 0, log.into(), false);
        let meta = segment_metadata(name, 0, 0, files.log.len() as u64);
        rsm.copy_log_segment_data(&meta, files.data).await.unwrap();
        let m = manifest_of(&rsm, &meta).await;
        assert_eq!(m.compression, expect_compression, "{name}");
        assert_eq!(
            rsm.fetch_log_segment_bytes(&meta, 0, None).await.unwrap(),
            files.log,
            "{name}"
        );
    }
    // Compression actually shrinks the stored .log.
    let all: Vec<_> = rsm.store().list(None).try_collect().await.unwrap();
    let size = |n: &str| {
        all.iter()
            .find(|o| o.location.as_ref().starts_with(n) && o.location.as_ref().ends_with(".log"))
            .unwrap()
            .size
    };
    assert!(
        size("plain") < 25_000,
        "compressed .log is {} bytes",
        size("plain")
    );
    assert_eq!(size("zstd"), 50_000);
}
