//! `InFlightStore`: an `ObjectStore` wrapper that measures upload bytes in flight (PUT payloads and multipart
//! parts handed to the store and not yet acknowledged) and their peak, optionally adding latency per upload so
//! concurrency shows.
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};

#[derive(Debug, Default)]
struct Gauge {
    now: AtomicU64,
    peak: AtomicU64,
    total: AtomicU64,
}

impl Gauge {
    fn enter(self: &Arc<Self>, n: u64) -> GaugeGuard {
        let now = self.now.fetch_add(n, Ordering::SeqCst) + n;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.total.fetch_add(n, Ordering::SeqCst);
        GaugeGuard {
            gauge: self.clone(),
            n,
        }
    }
}

struct GaugeGuard {
    gauge: Arc<Gauge>,
    n: u64,
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.gauge.now.fetch_sub(self.n, Ordering::SeqCst);
    }
}

/// Wraps a store and measures upload bytes in flight.
#[derive(Clone)]
pub struct InFlightStore {
    inner: Arc<dyn ObjectStore>,
    gauge: Arc<Gauge>,
    latency: Duration,
}

impl fmt::Debug for InFlightStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InFlightStore({})", self.inner)
    }
}

impl fmt::Display for InFlightStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InFlightStore({})", self.inner)
    }
}

impl InFlightStore {
    /// Wraps `inner`; every PUT and part takes at least `latency` (simulated network time).
    pub fn new(inner: Arc<dyn ObjectStore>, latency: Duration) -> Self {
        Self {
            inner,
            gauge: Arc::default(),
            latency,
        }
    }

    /// The most upload bytes that were in flight at once.
    pub fn peak_bytes(&self) -> u64 {
        self.gauge.peak.load(Ordering::SeqCst)
    }

    /// Upload bytes in flight now.
    pub fn current_bytes(&self) -> u64 {
        self.gauge.now.load(Ordering::SeqCst)
    }

    /// All upload bytes handed to the store.
    pub fn total_bytes(&self) -> u64 {
        self.gauge.total.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl ObjectStore for InFlightStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let _g = self.gauge.enter(payload.content_length() as u64);
        tokio::time::sleep(self.latency).await;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(InFlightUpload {
            inner,
            gauge: self.gauge.clone(),
            latency: self.latency,
        }))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[derive(Debug)]
struct InFlightUpload {
    inner: Box<dyn MultipartUpload>,
    gauge: Arc<Gauge>,
    latency: Duration,
}

#[async_trait]
impl MultipartUpload for InFlightUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let guard = self.gauge.enter(data.content_length() as u64);
        let latency = self.latency;
        let part = self.inner.put_part(data);
        Box::pin(async move {
            let _guard = guard;
            tokio::time::sleep(latency).await;
            part.await
        })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        self.inner.complete().await
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.inner.abort().await
    }
}
