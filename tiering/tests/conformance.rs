//! The RSM conformance suite against every backend: memory, filesystem, and S3 through a real S3 HTTP server
//! in this process.
mod common;

use strata_tiering::testing::rsm_conformance;
use strata_tiering::ObjectStoreRsm;

use common::s3::S3Server;

fn props(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = vec![("chunk.size".into(), "65536".into())];
    p.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    p
}

fn key_file(dir: &std::path::Path) -> String {
    let path = dir.join("kek");
    std::fs::write(&path, "11".repeat(32)).expect("write key");
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_backend_passes_conformance() {
    let scratch = tempfile::tempdir().unwrap();
    let rsm = ObjectStoreRsm::from_props(props(&[("storage.backend", "memory")])).unwrap();
    rsm.validate_connectivity().await.unwrap();
    rsm_conformance(&rsm, scratch.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_backend_passes_conformance() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("remote");
    let root = root.display().to_string();
    let rsm = ObjectStoreRsm::from_props(props(&[
        ("storage.backend", "filesystem"),
        ("storage.filesystem.root", &root),
        ("key.prefix", "tiered/"),
    ]))
    .unwrap();
    rsm.validate_connectivity().await.unwrap();
    rsm_conformance(&rsm, &scratch.path().join("local")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_backend_passes_conformance() {
    let server = S3Server::start("tier").await;
    let scratch = tempfile::tempdir().unwrap();
    let mut p = server.props();
    p.push(("chunk.size".into(), "65536".into()));
    p.push(("key.prefix".into(), "cluster-a/".into()));
    let rsm = ObjectStoreRsm::from_props(p).unwrap();
    rsm.validate_connectivity().await.unwrap();
    rsm_conformance(&rsm, scratch.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_backend_with_compression_and_encryption_passes_conformance() {
    let server = S3Server::start("tier").await;
    let scratch = tempfile::tempdir().unwrap();
    let key = key_file(scratch.path());
    let mut p = server.props();
    for (k, v) in [
        ("chunk.size", "65536"),
        ("compression.enabled", "true"),
        ("encryption.enabled", "true"),
        ("encryption.key.file", key.as_str()),
        ("fetch.chunk.cache.prefetch.max.size", "131072"),
    ] {
        p.push((k.into(), v.into()));
    }
    let rsm = ObjectStoreRsm::from_props(p).unwrap();
    rsm_conformance(&rsm, &scratch.path().join("local")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_backend_without_caches_passes_conformance() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("remote").display().to_string();
    let rsm = ObjectStoreRsm::from_props(props(&[
        ("storage.filesystem.root", &root),
        ("fetch.chunk.cache.size", "0"),
        ("fetch.manifest.cache.size", "0"),
        ("fetch.indexes.cache.size", "0"),
        ("compression.enabled", "true"),
    ]))
    .unwrap();
    rsm_conformance(&rsm, &scratch.path().join("local")).await;
}
