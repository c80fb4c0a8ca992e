//! [`MeteredStore`]: an `ObjectStore` wrapper that counts every object-store request (put, multipart create /
//! part / complete / abort, get, delete, list) with its latency into a [`RemoteLogMetrics`], so `/metrics` shows
//! S3-level request counts (`strata_object_store_requests_total{operation}`, errors, and
//! `strata_object_store_request_duration_seconds`).
use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};

use super::RemoteLogMetrics;

/// Wraps a store and counts each request (operation, errors, latency) into a [`RemoteLogMetrics`]. Build the
/// RSM over it with [`ObjectStoreRsm::with_store`](crate::ObjectStoreRsm::with_store) and hand the same metrics to
/// [`RemoteLogManager::with_metrics`](super::RemoteLogManager::with_metrics).
#[derive(Clone)]
pub struct MeteredStore {
    inner: Arc<dyn ObjectStore>,
    metrics: Arc<RemoteLogMetrics>,
}

impl MeteredStore {
    /// Wraps `inner`, recording into `metrics`.
    pub fn new(inner: Arc<dyn ObjectStore>, metrics: Arc<RemoteLogMetrics>) -> Self {
        Self { inner, metrics }
    }

    fn record<T>(&self, op: &'static str, started: Instant, r: &object_store::Result<T>) {
        self.metrics.store_call(op, started.elapsed(), r.is_ok());
    }
}

impl fmt::Debug for MeteredStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MeteredStore({})", self.inner)
    }
}

impl fmt::Display for MeteredStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MeteredStore({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for MeteredStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let t = Instant::now();
        let r = self.inner.put_opts(location, payload, opts).await;
        self.record("put", t, &r);
        r
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let t = Instant::now();
        let r = self.inner.put_multipart_opts(location, opts).await;
        self.record("create_multipart", t, &r);
        Ok(Box::new(MeteredUpload {
            inner: r?,
            metrics: self.metrics.clone(),
        }))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let t = Instant::now();
        let r = self.inner.get_opts(location, options).await;
        self.record("get", t, &r);
        r
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        let t = Instant::now();
        let r = self.inner.get_ranges(location, ranges).await;
        self.record("get", t, &r);
        r
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let metrics = self.metrics.clone();
        let t = Instant::now();
        self.inner
            .delete_stream(locations)
            .inspect(move |r| metrics.store_call("delete", t.elapsed(), r.is_ok()))
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.metrics
            .store_call("list", std::time::Duration::ZERO, true);
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let t = Instant::now();
        let r = self.inner.list_with_delimiter(prefix).await;
        self.record("list", t, &r);
        r
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        let t = Instant::now();
        let r = self.inner.copy_opts(from, to, options).await;
        self.record("copy", t, &r);
        r
    }
}

#[derive(Debug)]
struct MeteredUpload {
    inner: Box<dyn MultipartUpload>,
    metrics: Arc<RemoteLogMetrics>,
}

#[async_trait]
impl MultipartUpload for MeteredUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let metrics = self.metrics.clone();
        let fut = self.inner.put_part(data);
        Box::pin(async move {
            let t = Instant::now();
            let r = fut.await;
            metrics.store_call("put_part", t.elapsed(), r.is_ok());
            r
        })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let t = Instant::now();
        let r = self.inner.complete().await;
        self.metrics
            .store_call("complete_multipart", t.elapsed(), r.is_ok());
        r
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        let t = Instant::now();
        let r = self.inner.abort().await;
        self.metrics
            .store_call("abort_multipart", t.elapsed(), r.is_ok());
        r
    }
}
