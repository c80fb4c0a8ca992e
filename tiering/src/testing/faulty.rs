//! `FaultyStore`: an `ObjectStore` wrapper that fails, hangs or truncates the n-th call of a kind, and counts
//! calls (including multipart aborts), for fault-injection tests.
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};

/// A kind of store call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// A single-request PUT.
    Put,
    /// Starting a multipart upload.
    CreateMultipart,
    /// One multipart part.
    PutPart,
    /// Completing a multipart upload.
    CompleteMultipart,
    /// Aborting a multipart upload (counted, never faulted).
    AbortMultipart,
    /// A GET (whole or ranged).
    Get,
    /// Deleting one object.
    Delete,
    /// A listing.
    List,
}

/// What happens to the chosen call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The call returns an error.
    Fail,
    /// The call never completes.
    Hang,
    /// The call goes through with half of its body (PUT payload, part, or GET response).
    Truncate,
    /// A single PUT fails after waiting this long (a slow store that then errors); other calls fail at once.
    FailAfter(std::time::Duration),
}

#[derive(Debug, Default)]
struct State {
    rules: Vec<(Op, usize, Fault)>,
    counts: HashMap<Op, usize>,
    get_delay: std::time::Duration,
    gets_in_flight: usize,
    peak_gets_in_flight: usize,
}

/// Counts a GET as in flight until dropped.
struct GetInFlight(Arc<Mutex<State>>);

impl GetInFlight {
    fn new(state: &Arc<Mutex<State>>) -> Self {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        s.gets_in_flight += 1;
        s.peak_gets_in_flight = s.peak_gets_in_flight.max(s.gets_in_flight);
        Self(state.clone())
    }
}

impl Drop for GetInFlight {
    fn drop(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .gets_in_flight -= 1;
    }
}

impl State {
    fn next(state: &Mutex<State>, op: Op) -> Option<Fault> {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        let n = {
            let c = s.counts.entry(op).or_insert(0);
            *c += 1;
            *c
        };
        s.rules
            .iter()
            .find(|(o, nth, _)| *o == op && *nth == n)
            .map(|(_, _, f)| *f)
    }
}

fn injected(op: Op) -> object_store::Error {
    object_store::Error::Generic {
        store: "FaultyStore",
        source: format!("injected failure of {op:?}").into(),
    }
}

fn half(payload: PutPayload) -> PutPayload {
    let b: Bytes = payload.into();
    PutPayload::from(b.slice(..b.len() / 2))
}

/// Wraps a store and injects faults; see [`FaultyStore::inject`].
#[derive(Clone)]
pub struct FaultyStore {
    inner: Arc<dyn ObjectStore>,
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for FaultyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultyStore({})", self.inner)
    }
}

impl fmt::Display for FaultyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultyStore({})", self.inner)
    }
}

impl FaultyStore {
    /// Wraps `inner` with no faults.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Makes the `nth` call of kind `op` (1-based, counted since the store was created) fail, hang or truncate.
    pub fn inject(&self, op: Op, nth: usize, fault: Fault) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .rules
            .push((op, nth, fault));
    }

    /// Makes every later GET wait `delay` before it goes through (a slow or distant store).
    pub fn delay_gets(&self, delay: std::time::Duration) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_delay = delay;
    }

    /// How many calls of kind `op` were made.
    pub fn calls(&self, op: Op) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .counts
            .get(&op)
            .copied()
            .unwrap_or(0)
    }

    /// The most GETs that were in flight at once (a GET is in flight from its call to its response).
    pub fn peak_gets_in_flight(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .peak_gets_in_flight
    }

    /// The wrapped store.
    pub fn inner(&self) -> &Arc<dyn ObjectStore> {
        &self.inner
    }
}

#[async_trait]
impl ObjectStore for FaultyStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        match State::next(&self.state, Op::Put) {
            Some(Fault::Fail) => Err(injected(Op::Put)),
            Some(Fault::FailAfter(wait)) => {
                tokio::time::sleep(wait).await;
                Err(injected(Op::Put))
            }
            Some(Fault::Hang) => futures::future::pending().await,
            Some(Fault::Truncate) => self.inner.put_opts(location, half(payload), opts).await,
            None => self.inner.put_opts(location, payload, opts).await,
        }
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        match State::next(&self.state, Op::CreateMultipart) {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                Err(injected(Op::CreateMultipart))
            }
            Some(Fault::Hang) => futures::future::pending().await,
            None => {
                let inner = self.inner.put_multipart_opts(location, opts).await?;
                Ok(Box::new(FaultyUpload {
                    inner,
                    state: self.state.clone(),
                }))
            }
        }
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let delay = self
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_delay;
        let _in_flight = GetInFlight::new(&self.state);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        match State::next(&self.state, Op::Get) {
            Some(Fault::Fail) | Some(Fault::FailAfter(_)) => Err(injected(Op::Get)),
            Some(Fault::Hang) => futures::future::pending().await,
            Some(Fault::Truncate) => {
                let r = self.inner.get_opts(location, options).await?;
                let (meta, range, attributes) =
                    (r.meta.clone(), r.range.clone(), r.attributes.clone());
                let body = r.bytes().await?;
                let cut = body.slice(..body.len() / 2);
                Ok(GetResult {
                    payload: GetResultPayload::Stream(
                        futures::stream::once(async move { Ok(cut) }).boxed(),
                    ),
                    meta,
                    range,
                    attributes,
                    extensions: Default::default(),
                })
            }
            None => self.inner.get_opts(location, options).await,
        }
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            out.push(object_store::ObjectStoreExt::get_range(self, location, r.clone()).await?);
        }
        Ok(out)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let state = self.state.clone();
        let checked = locations
            .then(move |loc| {
                let state = state.clone();
                async move {
                    match State::next(&state, Op::Delete) {
                        Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                            Err(injected(Op::Delete))
                        }
                        Some(Fault::Hang) => futures::future::pending().await,
                        None => loc,
                    }
                }
            })
            .boxed();
        self.inner.delete_stream(checked)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        match State::next(&self.state, Op::List) {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                futures::stream::once(async { Err(injected(Op::List)) }).boxed()
            }
            Some(Fault::Hang) => futures::stream::pending().boxed(),
            None => self.inner.list(prefix),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        match State::next(&self.state, Op::List) {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                Err(injected(Op::List))
            }
            Some(Fault::Hang) => futures::future::pending().await,
            None => self.inner.list_with_delimiter(prefix).await,
        }
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
struct FaultyUpload {
    inner: Box<dyn MultipartUpload>,
    state: Arc<Mutex<State>>,
}

#[async_trait]
impl MultipartUpload for FaultyUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        match State::next(&self.state, Op::PutPart) {
            Some(Fault::Fail) | Some(Fault::FailAfter(_)) => {
                Box::pin(async { Err(injected(Op::PutPart)) })
            }
            Some(Fault::Hang) => Box::pin(futures::future::pending()),
            Some(Fault::Truncate) => self.inner.put_part(half(data)),
            None => self.inner.put_part(data),
        }
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        match State::next(&self.state, Op::CompleteMultipart) {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                Err(injected(Op::CompleteMultipart))
            }
            Some(Fault::Hang) => futures::future::pending().await,
            None => self.inner.complete().await,
        }
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        State::next(&self.state, Op::AbortMultipart);
        self.inner.abort().await
    }
}
