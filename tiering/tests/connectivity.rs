//! The start-up check names the backend, bucket, endpoint, region and failing call.
mod common;

use common::s3::S3Server;
use strata_tiering::{Error, ObjectStoreRsm};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_listening_fails_at_put_naming_the_endpoint() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let rsm = ObjectStoreRsm::from_props([
        ("storage.backend", "s3"),
        ("storage.s3.bucket.name", "tier"),
        ("storage.s3.region", "eu-west-3"),
        ("storage.s3.endpoint.url", endpoint.as_str()),
        ("storage.aws.access.key.id", "x"),
        ("storage.aws.secret.access.key", "y"),
        ("storage.s3.api.call.timeout", "300"),
    ])
    .unwrap();
    let e = rsm.validate_connectivity().await.unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Unavailable {
                operation: "put",
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    for part in [
        "s3",
        "bucket tier",
        &endpoint,
        "region eu-west-3",
        "put of remote storage check probe",
    ] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    assert!(!msg.contains('y') || !msg.contains("secret"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_fail_at_put() {
    let server = S3Server::start("tier").await;
    let mut props = server.props();
    for (k, v) in props.iter_mut() {
        if k == "storage.aws.secret.access.key" {
            *v = "not-the-secret".into();
        }
    }
    props.push(("storage.s3.api.call.timeout".into(), "1000".into()));
    let rsm = ObjectStoreRsm::from_props(props).unwrap();
    let e = rsm.validate_connectivity().await.unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Unavailable {
                operation: "put",
                ..
            }
        ),
        "{e}"
    );
    assert!(!e.to_string().contains("not-the-secret"), "{e}");
    assert!(!format!("{rsm:?}").contains("not-the-secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn working_s3_passes_and_leaves_no_probe() {
    let server = S3Server::start("tier").await;
    let mut props = server.props();
    props.push(("key.prefix".into(), "p/".into()));
    let rsm = ObjectStoreRsm::from_props(props).unwrap();
    rsm.validate_connectivity().await.unwrap();
    use futures::TryStreamExt;
    let left: Vec<_> = rsm.store().list(None).try_collect().await.unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn filesystem_root_that_is_a_file_is_rejected_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let e = ObjectStoreRsm::from_props([("storage.filesystem.root", file.to_str().unwrap())])
        .unwrap_err();
    assert!(e.to_string().contains("storage.filesystem.root"), "{e}");
}
