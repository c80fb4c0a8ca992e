//! Faults of the remote tier, a user feature (`/api/v1/faults`, `strata::Broker::faults`): [`FaultyStore`], an
//! `ObjectStore` wrapper under the RSM, applies the [`RemoteFaults`] set at run time — added latency, errors
//! for the next N calls, or a full outage — to the store calls of a segment copy, a remote fetch or a delete.
//! With no fault set, a call costs one relaxed atomic load.
//!
//! Tests also make the n-th call of a kind fail, hang or truncate ([`FaultyStore::inject`]) and count calls
//! (including multipart aborts).
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};

/// The remote-tier operation a fault applies to (Kafka's RemoteStorageManager calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemoteOp {
    /// Copying a segment (`copy_log_segment_data`: single PUTs and multipart uploads).
    Copy,
    /// Reading a segment, its indexes or manifest (`fetch_log_segment`, `fetch_index`: GETs).
    Fetch,
    /// Deleting a segment (`delete_log_segment_data`: deletes).
    Delete,
}

impl RemoteOp {
    /// Every operation, in the order of [`name`](Self::name)s.
    pub const ALL: [RemoteOp; 3] = [RemoteOp::Copy, RemoteOp::Fetch, RemoteOp::Delete];

    /// `copy`, `fetch` or `delete`.
    pub fn name(self) -> &'static str {
        match self {
            RemoteOp::Copy => "copy",
            RemoteOp::Fetch => "fetch",
            RemoteOp::Delete => "delete",
        }
    }

    /// The operation named `name` (`copy`, `fetch`, `delete`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.name() == name)
    }

    fn of(op: Op) -> Option<Self> {
        match op {
            Op::Put | Op::CreateMultipart | Op::PutPart | Op::CompleteMultipart => {
                Some(RemoteOp::Copy)
            }
            Op::Get => Some(RemoteOp::Fetch),
            Op::Delete => Some(RemoteOp::Delete),
            Op::AbortMultipart | Op::List => None,
        }
    }
}

/// What a remote-tier fault does to each store call it applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteFaultKind {
    /// The call waits this long, then goes through.
    Latency(Duration),
    /// The call fails (for the rule's count of calls; without a count, until removed).
    Error,
    /// Every call fails until the fault is removed (an unreachable store).
    Outage,
}

impl RemoteFaultKind {
    /// `latency`, `error` or `outage` (the `kind` label of the injected-faults counter).
    pub fn name(self) -> &'static str {
        match self {
            RemoteFaultKind::Latency(_) => "latency",
            RemoteFaultKind::Error => "error",
            RemoteFaultKind::Outage => "outage",
        }
    }
}

/// One remote-tier fault as set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteFault {
    /// Its id (chosen by the caller, unique among the faults set).
    pub id: u64,
    /// The operation it applies to.
    pub op: RemoteOp,
    /// What it does.
    pub kind: RemoteFaultKind,
    /// Store calls it still applies to; `None`: until removed.
    pub remaining: Option<u64>,
}

/// Called once per injected remote fault with its operation and kind (the broker counts them on `/metrics`).
pub type OnInjected = Box<dyn Fn(RemoteOp, RemoteFaultKind) + Send + Sync>;

/// The remote-tier faults set at run time, shared by the [`FaultyStore`] under the RSM and whoever sets them.
/// Never persisted: a restart starts with none.
#[derive(Default)]
pub struct RemoteFaults {
    any: AtomicBool,
    rules: Mutex<Vec<RemoteFault>>,
    on_injected: OnceLock<OnInjected>,
}

impl fmt::Debug for RemoteFaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteFaults")
            .field("faults", &self.list())
            .finish()
    }
}

impl RemoteFaults {
    /// Calls `f` for every injected fault from now on (once; later calls are ignored).
    pub fn on_injected(&self, f: OnInjected) {
        let _ = self.on_injected.set(f);
    }

    /// Sets a fault; it applies to the next `fault.remaining` calls of its operation (or until removed).
    pub fn add(&self, fault: RemoteFault) {
        let mut rules = self.rules.lock();
        rules.push(fault);
        self.any.store(true, Ordering::Release);
    }

    /// Removes the fault `id`; whether it was set.
    pub fn remove(&self, id: u64) -> bool {
        let mut rules = self.rules.lock();
        let before = rules.len();
        rules.retain(|r| r.id != id);
        self.any.store(!rules.is_empty(), Ordering::Release);
        rules.len() != before
    }

    /// Removes every fault.
    pub fn clear(&self) {
        let mut rules = self.rules.lock();
        rules.clear();
        self.any.store(false, Ordering::Release);
    }

    /// The faults set, in the order they were added.
    pub fn list(&self) -> Vec<RemoteFault> {
        self.rules.lock().clone()
    }

    /// The faults for one store call of kind `op`: the latency to add and whether the call fails. Counts each
    /// fault applied down (removing it at zero), logs it and reports it to [`on_injected`](Self::on_injected).
    fn take(&self, op: Op) -> (Duration, bool) {
        if !self.any.load(Ordering::Relaxed) {
            return (Duration::ZERO, false);
        }
        let Some(remote) = RemoteOp::of(op) else {
            return (Duration::ZERO, false);
        };
        let mut applied = Vec::new();
        {
            let mut rules = self.rules.lock();
            for r in rules.iter_mut().filter(|r| r.op == remote) {
                if let Some(n) = r.remaining.as_mut() {
                    *n = n.saturating_sub(1);
                }
                applied.push(r.clone());
            }
            rules.retain(|r| r.remaining != Some(0));
            self.any.store(!rules.is_empty(), Ordering::Release);
        }
        let (mut delay, mut fail) = (Duration::ZERO, false);
        for r in &applied {
            match r.kind {
                RemoteFaultKind::Latency(d) => delay += d,
                RemoteFaultKind::Error | RemoteFaultKind::Outage => fail = true,
            }
            tracing::warn!(fault_id = r.id, op = remote.name(), store_call = ?op, fault = r.kind.name(),
                latency_ms = delay.as_millis() as u64,
                remaining = r.remaining.map_or_else(|| "until cleared".to_string(), |n| n.to_string()),
                "injected remote storage fault");
            if let Some(f) = self.on_injected.get() {
                f(remote, r.kind);
            }
        }
        (delay, fail)
    }
}

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
        let mut s = state.lock();
        s.gets_in_flight += 1;
        s.peak_gets_in_flight = s.peak_gets_in_flight.max(s.gets_in_flight);
        Self(state.clone())
    }
}

impl Drop for GetInFlight {
    fn drop(&mut self) {
        self.0.lock().gets_in_flight -= 1;
    }
}

impl State {
    fn next(state: &Mutex<State>, op: Op) -> Option<Fault> {
        let mut s = state.lock();
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

fn user_injected(op: Op) -> object_store::Error {
    let remote = RemoteOp::of(op).map_or("store", RemoteOp::name);
    object_store::Error::Generic {
        store: "strata faults",
        source: format!("injected remote {remote} fault ({op:?}); clear it at /api/v1/faults")
            .into(),
    }
}

/// The scripted fault of one call of kind `op` (counted), when counting.
fn scripted(state: &Mutex<State>, counting: bool, op: Op) -> Option<Fault> {
    if counting {
        State::next(state, op)
    } else {
        None
    }
}

/// Applies the run-time faults of one call of kind `op` (waits, or fails it), then looks up the scripted one.
async fn next_fault(
    faults: &RemoteFaults,
    state: &Mutex<State>,
    counting: bool,
    op: Op,
) -> object_store::Result<Option<Fault>> {
    let (delay, fail) = faults.take(op);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if fail {
        return Err(user_injected(op));
    }
    Ok(scripted(state, counting, op))
}

fn half(payload: PutPayload) -> PutPayload {
    let b: Bytes = payload.into();
    PutPayload::from(b.slice(..b.len() / 2))
}

/// Wraps a store and injects faults: those set in its [`RemoteFaults`], and (tests) [`FaultyStore::inject`].
#[derive(Clone)]
pub struct FaultyStore {
    inner: Arc<dyn ObjectStore>,
    state: Arc<Mutex<State>>,
    faults: Arc<RemoteFaults>,
    /// Whether calls are counted and scripted faults looked up ([`new`](Self::new), for tests); off
    /// ([`with_faults`](Self::with_faults), the broker), a call with no fault set takes no lock.
    counting: bool,
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
            counting: true,
            ..Self::with_faults(inner, Arc::default())
        }
    }

    /// Wraps `inner`, applying the faults set in `faults`.
    pub fn with_faults(inner: Arc<dyn ObjectStore>, faults: Arc<RemoteFaults>) -> Self {
        Self {
            inner,
            state: Arc::new(Mutex::new(State::default())),
            faults,
            counting: false,
        }
    }

    /// The faults set at run time.
    pub fn faults(&self) -> &Arc<RemoteFaults> {
        &self.faults
    }

    /// The run-time faults of one call of kind `op`, then the scripted one (tests).
    async fn next(&self, op: Op) -> object_store::Result<Option<Fault>> {
        next_fault(&self.faults, &self.state, self.counting, op).await
    }

    /// Makes the `nth` call of kind `op` (1-based, counted since the store was created) fail, hang or truncate.
    pub fn inject(&self, op: Op, nth: usize, fault: Fault) {
        self.state.lock().rules.push((op, nth, fault));
    }

    /// Makes every later GET wait `delay` before it goes through (a slow or distant store).
    pub fn delay_gets(&self, delay: std::time::Duration) {
        self.state.lock().get_delay = delay;
    }

    /// How many calls of kind `op` were made.
    pub fn calls(&self, op: Op) -> usize {
        self.state.lock().counts.get(&op).copied().unwrap_or(0)
    }

    /// The most GETs that were in flight at once (a GET is in flight from its call to its response).
    pub fn peak_gets_in_flight(&self) -> usize {
        self.state.lock().peak_gets_in_flight
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
        match self.next(Op::Put).await? {
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
        match self.next(Op::CreateMultipart).await? {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                Err(injected(Op::CreateMultipart))
            }
            Some(Fault::Hang) => futures::future::pending().await,
            None => {
                let inner = self.inner.put_multipart_opts(location, opts).await?;
                Ok(Box::new(FaultyUpload {
                    inner,
                    state: self.state.clone(),
                    faults: self.faults.clone(),
                    counting: self.counting,
                }))
            }
        }
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let _in_flight = self.counting.then(|| GetInFlight::new(&self.state));
        if self.counting {
            let delay = self.state.lock().get_delay;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        }
        match self.next(Op::Get).await? {
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
        let (state, faults, counting) = (self.state.clone(), self.faults.clone(), self.counting);
        let checked = locations
            .then(move |loc| {
                let (state, faults) = (state.clone(), faults.clone());
                async move {
                    let next = match next_fault(&faults, &state, counting, Op::Delete).await {
                        Ok(n) => n,
                        Err(e) => return Err(e),
                    };
                    match next {
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
        match scripted(&self.state, self.counting, Op::List) {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                futures::stream::once(async { Err(injected(Op::List)) }).boxed()
            }
            Some(Fault::Hang) => futures::stream::pending().boxed(),
            None => self.inner.list(prefix),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        match scripted(&self.state, self.counting, Op::List) {
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
    faults: Arc<RemoteFaults>,
    counting: bool,
}

#[async_trait]
impl MultipartUpload for FaultyUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let (delay, fail) = self.faults.take(Op::PutPart);
        if fail {
            return Box::pin(async move {
                tokio::time::sleep(delay).await;
                Err(user_injected(Op::PutPart))
            });
        }
        let part: UploadPart = match scripted(&self.state, self.counting, Op::PutPart) {
            Some(Fault::Fail) | Some(Fault::FailAfter(_)) => {
                Box::pin(async { Err(injected(Op::PutPart)) })
            }
            Some(Fault::Hang) => Box::pin(futures::future::pending()),
            Some(Fault::Truncate) => self.inner.put_part(half(data)),
            None => self.inner.put_part(data),
        };
        if delay.is_zero() {
            part
        } else {
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                part.await
            })
        }
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        match next_fault(
            &self.faults,
            &self.state,
            self.counting,
            Op::CompleteMultipart,
        )
        .await?
        {
            Some(Fault::Fail) | Some(Fault::Truncate) | Some(Fault::FailAfter(_)) => {
                Err(injected(Op::CompleteMultipart))
            }
            Some(Fault::Hang) => futures::future::pending().await,
            None => self.inner.complete().await,
        }
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        scripted(&self.state, self.counting, Op::AbortMultipart);
        self.inner.abort().await
    }
}
