//! The start-up connectivity check: put, ranged get, list and delete a probe object under `key.prefix`.
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::backend::BackendDescription;
use crate::error::{BoxError, Error, Result};

const PROBE_LEN: usize = 256;

/// Probes `store` (described by `b`) under `key_prefix`; the error names the backend and the failing call.
pub(crate) async fn check(
    store: &dyn ObjectStore,
    key_prefix: &str,
    b: &BackendDescription,
) -> Result<()> {
    let dir = format!("{key_prefix}_strata_probe");
    let key = Path::from(format!("{dir}/{}", uuid::Uuid::new_v4()));
    let probe = format!(
        "remote storage check probe {key} on backend {} (bucket {}, endpoint {}, region {})",
        b.backend, b.bucket, b.endpoint, b.region
    );
    let fail = |operation: &'static str, source: BoxError| Error::Unavailable {
        operation,
        what: probe.clone(),
        source,
    };
    let body: Vec<u8> = (0..PROBE_LEN).map(|i| (i * 7 % 251) as u8).collect();
    store
        .put(&key, PutPayload::from(body.clone()))
        .await
        .map_err(|e| fail("put", Box::new(e)))?;
    let got = store
        .get_range(&key, 10..100)
        .await
        .map_err(|e| fail("ranged get", Box::new(e)))?;
    if got.as_ref() != &body[10..100] {
        let _ = store.delete(&key).await;
        return Err(fail(
            "ranged get",
            format!(
                "read back {} bytes that differ from what was written",
                got.len()
            )
            .into(),
        ));
    }
    let prefix = Path::from(dir.as_str());
    let listed: Vec<_> = store
        .list(Some(&prefix))
        .try_collect()
        .await
        .map_err(|e| fail("list", Box::new(e)))?;
    if !listed.iter().any(|o| o.location == key) {
        let _ = store.delete(&key).await;
        return Err(fail(
            "list",
            format!("the probe was not listed under {prefix}").into(),
        ));
    }
    store
        .delete(&key)
        .await
        .map_err(|e| fail("delete", Box::new(e)))?;
    tracing::info!(backend = b.backend, bucket = %b.bucket, "remote storage reachable");
    Ok(())
}
