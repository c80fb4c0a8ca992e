//! The RSM conformance suite on the GCS and Azure Blob backends, against local emulators started by the tests
//! (`gcp-storage-emulator` from PyPI behind the shim serving what it lacks, Azurite from npm;
//! `.ci/install-emulators.sh` installs both): plain, and with compression and encryption; a segment of several
//! parts (GCS: XML multipart upload; Azure: Put Block + Put Block List); the start-up probe against each.
use strata_tiering::testing::emulator::{start_azurite, start_gcs, Emulator};
use strata_tiering::testing::rsm_conformance;
use strata_tiering::{Error, ObjectStoreRsm};
use strata_tiering::{RemoteStorageManager, RemoteStorageManagerExt};

fn with(emu: &Emulator, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut p = emu.props();
    p.push(("chunk.size".into(), "65536".into()));
    p.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    p
}

fn key_file(dir: &std::path::Path) -> String {
    let path = dir.join("kek");
    std::fs::write(&path, "22".repeat(32)).expect("write key");
    path.display().to_string()
}

async fn conformance(emu: &Emulator, extra: &[(&str, &str)]) {
    let scratch = tempfile::tempdir().unwrap();
    let rsm = ObjectStoreRsm::from_props(with(emu, extra)).unwrap();
    rsm.validate_connectivity().await.unwrap();
    rsm_conformance(&rsm, scratch.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_backend_passes_conformance() {
    let Some(emu) = start_gcs("tier") else { return };
    conformance(&emu, &[("key.prefix", "cluster-a/")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_backend_with_compression_and_encryption_passes_conformance() {
    let Some(emu) = start_gcs("tier") else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path());
    conformance(
        &emu,
        &[
            ("compression.enabled", "true"),
            ("encryption.enabled", "true"),
            ("encryption.key.file", key.as_str()),
            ("fetch.chunk.cache.prefetch.max.size", "131072"),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_backend_passes_conformance() {
    let Some(emu) = start_azurite("tier") else {
        return;
    };
    conformance(&emu, &[("key.prefix", "cluster-a/")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_backend_with_compression_encryption_and_small_blocks_passes_conformance() {
    let Some(emu) = start_azurite("tier") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path());
    conformance(
        &emu,
        &[
            ("compression.enabled", "true"),
            ("encryption.enabled", "true"),
            ("encryption.key.file", key.as_str()),
            // 100 KiB blocks: the 300 KB segment goes up in several Put Block calls.
            ("storage.azure.upload.block.size", "102400"),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_connection_string_reaches_azurite() {
    let Some(emu) = start_azurite("tier") else {
        return;
    };
    let cs = format!(
        "DefaultEndpointsProtocol=http;AccountName={};AccountKey={};BlobEndpoint={};",
        strata_tiering::testing::emulator::AZURITE_ACCOUNT,
        strata_tiering::testing::emulator::AZURITE_KEY,
        emu.endpoint
    );
    let rsm = ObjectStoreRsm::from_props([
        ("storage.backend", "azure"),
        ("storage.azure.container.name", "tier"),
        ("storage.azure.connection.string", cs.as_str()),
    ])
    .unwrap();
    rsm.validate_connectivity().await.unwrap();
}

/// A container that does not exist fails the start-up probe, naming the backend, account/container and endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_missing_container_fails_the_probe_by_name() {
    let Some(emu) = start_azurite("tier") else {
        return;
    };
    let mut p = emu.props();
    for (k, v) in p.iter_mut() {
        if k == "storage.azure.container.name" {
            *v = "absent".into();
        }
    }
    p.push(("storage.s3.api.call.timeout".into(), "2000".into()));
    let rsm = ObjectStoreRsm::from_props(p).unwrap();
    let e = rsm.validate_connectivity().await.unwrap_err();
    let msg = e.to_string();
    for part in ["azure", "devstoreaccount1/absent", emu.endpoint.as_str()] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    assert!(
        !msg.contains(strata_tiering::testing::emulator::AZURITE_KEY),
        "{msg}"
    );
    assert!(
        matches!(
            e,
            Error::Unavailable {
                operation: "put",
                ..
            }
        ),
        "{e}"
    );
}

/// A bucket that does not exist fails the start-up probe, naming the backend, bucket and endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_missing_bucket_fails_the_probe_by_name() {
    let Some(emu) = start_gcs("tier") else { return };
    let mut p = emu.props();
    for (k, v) in p.iter_mut() {
        if k == "storage.gcs.bucket.name" {
            *v = "absent".into();
        }
    }
    p.push(("storage.s3.api.call.timeout".into(), "2000".into()));
    let rsm = ObjectStoreRsm::from_props(p).unwrap();
    let e = rsm.validate_connectivity().await.unwrap_err();
    let msg = e.to_string();
    for part in ["gcs", "bucket absent", emu.endpoint.as_str()] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    assert!(
        matches!(
            e,
            Error::Unavailable {
                operation: "put",
                ..
            }
        ),
        "{e}"
    );
}

/// A segment of several parts: GCS XML multipart upload (5 MiB parts) and Azure Put Block List (1 MiB blocks),
/// read back whole and across a part boundary.
async fn multipart_round_trip(emu: &Emulator, part: (&str, &str)) {
    use strata_tiering::testing::{segment_bytes, segment_metadata, write_segment_files};
    let scratch = tempfile::tempdir().unwrap();
    let rsm = ObjectStoreRsm::from_props(with(emu, &[("chunk.size", "1048576"), part])).unwrap();
    let files = write_segment_files(
        scratch.path(),
        0,
        segment_bytes(12 * 1024 * 1024 + 7, 11, false),
        false,
    );
    let meta = segment_metadata("multipart", 0, 0, files.log.len() as u64);
    rsm.copy_log_segment_data(&meta, files.data.clone())
        .await
        .expect("copy");
    let all = rsm
        .fetch_log_segment_bytes(&meta, 0, None)
        .await
        .expect("fetch");
    assert!(all == files.log, "whole segment differs");
    let boundary = 5 * 1024 * 1024;
    let got = rsm
        .fetch_log_segment_bytes(&meta, boundary - 10, Some(boundary + 10))
        .await
        .expect("fetch range");
    assert_eq!(
        got,
        files
            .log
            .slice(boundary as usize - 10..=boundary as usize + 10)
    );
    rsm.delete_log_segment_data(&meta).await.expect("delete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_segment_larger_than_a_part_goes_up_in_parts() {
    let Some(emu) = start_gcs("tier") else { return };
    multipart_round_trip(&emu, ("storage.gcs.resumable.upload.chunk.size", "5242880")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_segment_larger_than_a_block_goes_up_in_blocks() {
    let Some(emu) = start_azurite("tier") else {
        return;
    };
    multipart_round_trip(&emu, ("storage.azure.upload.block.size", "1048576")).await;
}
