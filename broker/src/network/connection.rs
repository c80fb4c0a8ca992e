//! One client connection: 4-byte length framing (bounded by `socket.request.max.bytes`), requests handled one
//! at a time in arrival order, responses written by a writer task in the same order. A connection without
//! requests for `connections.max.idle.ms` is closed, so is one whose request frame does not arrive in full within
//! `socket.request.read.timeout.ms` of its first byte; a frame's buffer grows as its bytes arrive, each growth
//! taken from `queued.max.request.bytes` shared by all connections (a declared length alone reserves nothing).
//! On an SSL/SASL_SSL listener the TLS handshake comes first, within `socket.request.read.timeout.ms` of the
//! accept (a stalled or garbled handshake closes only that connection); on a SASL listener nothing but
//! ApiVersions and the SASL exchange is served before authentication (`crate::security::sasl`), its frames
//! bounded by [`SASL_MAX_RECEIVE_SIZE`] (a raw SASL token after SaslHandshake v0 may be shorter than a request
//! header).

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use bytes::{BufMut, Bytes};
use std::time::Duration;

use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter,
};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::broker::request::{self, RequestContext};
use crate::broker::Broker;
use crate::codec::{Encoded, Part};
use crate::dispatch;
use crate::network::budget::{Held, RequestBudget};
use crate::network::limits::{ConnState, Registered};
use crate::network::low_water::LowWater;
use crate::security::sasl::{Completed, Session, Step};
use crate::security::ListenerSecurity;

/// Responses queued for the writer before the reader waits.
const RESPONSE_QUEUE: usize = 32;

/// Bytes of responses queued for the writer before the reader waits (one larger response is queued alone). A
/// client that pipelines fetches and stops reading holds at most this much (or one response) of broker memory,
/// not `RESPONSE_QUEUE` full fetch responses; Kafka mutes such a connection after one request.
const RESPONSE_QUEUE_BYTES: usize = 4 << 20;

/// Bytes read from the socket at once under TLS. rustls asks its transport for 4 KiB at a time (one recv
/// call each); reading the socket through a buffer of this size takes a 1 MB produce request in 16 calls, not
/// 256, as the PLAINTEXT path does.
const TLS_READ_BUFFER: usize = 64 * 1024;
/// The frame reader's buffer.
const FRAME_READ_BUFFER: usize = 64 * 1024;
/// The largest frame read before SASL authentication: Kafka's `sasl.server.max.receive.size` default (its
/// SaslServerAuthenticator fails the authentication on a larger one).
const SASL_MAX_RECEIVE_SIZE: usize = 512 * 1024;
/// The smallest request: api key + version + correlation id + client id length.
pub(super) const MIN_REQUEST: usize = 10;

/// Why a frame could not be read.
#[derive(Debug)]
pub(super) enum FrameError {
    /// A length below the smallest request header (or below 0 for a raw SASL token) or above the maximum.
    BadLength(i32),
    /// The frame did not arrive in full within `socket.request.read.timeout.ms` of its first byte.
    TooSlow(Duration),
    /// The peer went away mid-frame or the socket failed.
    Io(std::io::Error),
}

/// What bounds the reading of one frame.
#[derive(Debug, Clone)]
pub(super) struct FrameLimits {
    /// The smallest frame: a request header, or nothing for a raw SASL token.
    pub(super) min: usize,
    /// `socket.request.max.bytes` (before SASL authentication at most [`SASL_MAX_RECEIVE_SIZE`]).
    pub(super) max: usize,
    /// `socket.request.read.timeout.ms`: from the first byte to the last (waiting for the bytes budget aside).
    pub(super) read_timeout: Duration,
    /// `queued.max.request.bytes` shared by every connection (`None` = unbounded, and for frames before SASL
    /// authentication, which Kafka too reads outside its memory pool: they are at most 512 KiB each).
    pub(super) budget: Option<Arc<RequestBudget>>,
    /// The socket's receive low-water mark, raised while a large frame arrives.
    pub(super) low_water: Option<Arc<LowWater>>,
}

/// Reads one frame whose first byte is available or awaited, all of it within `read_timeout`. The frame's
/// buffer grows as its bytes arrive (first to what arrived, then doubling when full, so the socket is read
/// straight into it), and each growth first takes its size from the bytes budget: a peer that declares a large
/// frame and sends little holds at most twice what it sent, never its declared length. Waiting
/// for the budget before the frame holds any of it does not count against `read_timeout` (the broker's doing);
/// once it holds some, it does, and the frame finds none left, it takes the overdraft when free (or as soon as
/// the frame past the budget is handled) and reads the rest without the budget, so frames that together fill the
/// budget mid-way finish one after another. `Ok(None)` on a clean end of stream between frames. Not cancel-safe: a cancelled read leaves the stream
/// mid-frame, so the caller closes the connection.
pub(super) async fn read_frame<R: AsyncBufReadExt + Unpin>(
    rd: &mut R,
    limits: &FrameLimits,
) -> Result<Option<(Bytes, Held)>, FrameError> {
    let mut deadline = tokio::time::Instant::now() + limits.read_timeout;
    let Some(n) = read_length(rd, limits, deadline).await? else {
        return Ok(None);
    };
    let mut buf = Vec::new();
    let mut held = Held::default();
    while buf.len() < n {
        if buf.len() == buf.capacity() {
            // The first growth waits for the body's first bytes (a declared length alone takes nothing) and
            // takes what arrived; later ones double (bounded by the frame), so the buffer is at most about twice
            // what arrived and the reallocations copy about one frame in all.
            let arrived = if buf.is_empty() {
                let a = tokio::time::timeout_at(deadline, rd.fill_buf())
                    .await
                    .map_err(|_| FrameError::TooSlow(limits.read_timeout))?
                    .map_err(FrameError::Io)?
                    .len();
                if a == 0 {
                    return Err(FrameError::Io(std::io::ErrorKind::UnexpectedEof.into()));
                }
                a
            } else {
                0
            };
            let cap = arrived.max(buf.capacity() * 2).min(n);
            if let Some(budget) = limits.budget.as_ref().filter(|_| !held.past_budget()) {
                let want = (cap - buf.capacity()) as u32;
                held.grow(budget, n, want, &mut deadline)
                    .await
                    .map_err(|_| FrameError::TooSlow(limits.read_timeout))?;
            }
            buf.reserve_exact(cap - buf.len());
        }
        // Straight into the frame's spare capacity: the reader's buffer is bypassed once the spare is at least
        // its size (no copy through it, no zeroing).
        let room = n - buf.len();
        let got = tokio::time::timeout_at(deadline, rd.read_buf(&mut (&mut buf).limit(room)))
            .await
            .map_err(|_| FrameError::TooSlow(limits.read_timeout))?
            .map_err(FrameError::Io)?;
        if got == 0 {
            return Err(FrameError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        if let Some(lw) = &limits.low_water {
            lw.expect(n - buf.len());
        }
    }
    Ok(Some((Bytes::from(buf), held)))
}

/// Reads a frame's 4-byte length and checks it against `limits`; `Ok(None)` on a clean end of stream.
async fn read_length<R: AsyncBufReadExt + Unpin>(
    rd: &mut R,
    limits: &FrameLimits,
    deadline: tokio::time::Instant,
) -> Result<Option<usize>, FrameError> {
    let mut len = [0u8; 4];
    match tokio::time::timeout_at(deadline, rd.read_exact(&mut len))
        .await
        .map_err(|_| FrameError::TooSlow(limits.read_timeout))?
    {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(FrameError::Io(e)),
    }
    let n = i32::from_be_bytes(len);
    if n < 0 || (n as usize) < limits.min || n as usize > limits.max {
        return Err(FrameError::BadLength(n));
    }
    Ok(Some(n as usize))
}

/// Why the wait for the next request ended without one.
enum Wait {
    /// The first byte of a request is here.
    Request,
    /// The peer closed the connection.
    Eof,
    /// No request for `connections.max.idle.ms`.
    Idle,
    /// Closed by the broker (shutdown, or making room at `max.connections`).
    Closed,
}

/// Waits for the first byte of the next request (cancel-safe: it stays buffered), closing the connection
/// after `idle` without activity (a response still being written counts as activity).
async fn wait_for_request<R: AsyncBufReadExt + Unpin>(
    rd: &mut R,
    state: &ConnState,
    idle: Duration,
) -> std::io::Result<Wait> {
    state.set_idle(true);
    loop {
        let left = idle.saturating_sub(state.idle_for());
        if left.is_zero() {
            return Ok(Wait::Idle);
        }
        tokio::select! {
            _ = state.close_token().cancelled() => return Ok(Wait::Closed),
            r = rd.fill_buf() => {
                let wait = if r?.is_empty() { Wait::Eof } else { Wait::Request };
                state.set_idle(false);
                return Ok(wait);
            }
            _ = tokio::time::sleep(left) => {}
        }
    }
}

/// Serves one connection until the peer closes, a request is rejected with a close, it is idle for
/// `connections.max.idle.ms`, a frame is too slow, or the broker closes it (shutdown, room at max.connections).
/// `listener` is the index of the listener the client connected to, `security` what its protocol needs.
pub(crate) async fn serve(
    socket: TcpStream,
    peer: SocketAddr,
    listener: usize,
    security: Arc<ListenerSecurity>,
    broker: Arc<Broker>,
    conn: Registered,
) {
    let _ = socket.set_nodelay(true);
    let _open = broker.metrics().connection_opened(&security.name);
    let fd = socket.as_raw_fd();
    let Some(acceptor) = security.tls.clone() else {
        let (rd, wr) = socket.into_split();
        let low_water = LowWater::new(fd, FRAME_READ_BUFFER);
        let principal = Arc::from(crate::authz::principal::ANONYMOUS);
        let halves = Halves {
            rd,
            wr,
            low_water,
            principal,
        };
        return serve_stream(halves, peer, listener, security, broker, conn).await;
    };
    let deadline = Duration::from_millis(broker.config().socket_request_read_timeout_ms);
    let close = conn.state().close_token().clone();
    let handshake = tokio::select! {
        _ = close.cancelled() => return,
        h = tokio::time::timeout(deadline, acceptor.accept(BufReader::with_capacity(TLS_READ_BUFFER, socket))) => h,
    };
    match handshake {
        Ok(Ok(tls)) => {
            let cert = tls.get_ref().1.peer_certificates().and_then(|c| c.first());
            let principal = match crate::authz::principal::ssl_principal(
                &security.principal_mapper,
                cert.map(|c| c.as_ref()),
            ) {
                Ok(p) => Arc::from(p),
                Err(e) => {
                    warn!(%peer, listener = %security.name, error = %e, "closing connection: SSL authentication failed");
                    return;
                }
            };
            let (rd, wr) = tokio::io::split(tls);
            // Below the frame reader: rustls's plaintext (a record) and its deframer (a record), and the
            // socket's read buffer.
            let low_water = LowWater::new(fd, FRAME_READ_BUFFER + TLS_READ_BUFFER + 40 * 1024);
            let halves = Halves {
                rd,
                wr,
                low_water,
                principal,
            };
            serve_stream(halves, peer, listener, security, broker, conn).await
        }
        Ok(Err(e)) => {
            let text = e.to_string();
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                // A TCP probe (load balancer, tcpSocket health check) connects and closes without a handshake.
                debug!(%peer, listener = %security.name, error = %e, "connection closed before the TLS handshake")
            } else if text.contains("InvalidContentType") || text.contains("corrupt message") {
                warn!(%peer, listener = %security.name, error = %e,
                    "closing connection: TLS handshake failed: the client does not speak TLS (a PLAINTEXT or SASL_PLAINTEXT client on this TLS listener?)")
            } else {
                warn!(%peer, listener = %security.name, error = %e, "closing connection: TLS handshake failed")
            }
        }
        Err(_) => warn!(%peer, listener = %security.name, timeout_ms = deadline.as_millis() as u64,
            "closing connection: the TLS handshake did not complete within socket.request.read.timeout.ms"),
    }
}

/// A connection's two directions (after TLS, when the listener has it), its socket's low-water mark, and the
/// principal the transport established (the SSL client certificate's, else `User:ANONYMOUS`; SASL replaces it).
struct Halves<R, W> {
    rd: R,
    wr: W,
    low_water: LowWater,
    principal: Arc<str>,
}

/// Serves the connection's request stream (after TLS, when the listener has it).
async fn serve_stream<R, W>(
    Halves {
        rd,
        wr,
        low_water,
        mut principal,
    }: Halves<R, W>,
    peer: SocketAddr,
    listener: usize,
    security: Arc<ListenerSecurity>,
    broker: Arc<Broker>,
    conn: Registered,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: ResponseStream + Send + 'static,
{
    let sendfile = wr.tcp().is_some();
    let mut rd = BufReader::with_capacity(FRAME_READ_BUFFER, rd);
    let (tx, rx) = mpsc::channel::<Queued>(RESPONSE_QUEUE);
    let state = conn.state().clone();
    let writer = tokio::spawn(write_loop(wr, rx, state.clone()));
    let cfg = broker.config();
    let bounds = Bounds::new(cfg, &conn, low_water);
    let idle = Duration::from_millis(cfg.connections_max_idle_ms);
    let close = state.close_token().clone();
    let responses = Responses {
        tx,
        queued_bytes: Arc::new(Semaphore::new(RESPONSE_QUEUE_BYTES)),
        close: close.clone(),
    };
    let mut sasl = security
        .sasl
        .clone()
        .map(|c| Session::new(c, broker.scram().clone()));
    let name = security.name.as_str();
    debug!(%peer, listener = name, protocol = %security.protocol, "connection opened");
    loop {
        if !next_request(&mut rd, &state, idle, peer).await {
            break;
        }
        let limits = bounds.for_session(sasl.as_ref());
        let frame = tokio::select! {
            _ = close.cancelled() => break,
            f = read_frame(&mut rd, limits) => f,
        };
        // `_budget` (this frame's share of queued.max.request.bytes) is given back once the request is handled.
        let Some((frame, _budget)) = frame_or_close(frame, peer, name, limits.max) else {
            break;
        };
        state.touch();
        if let Some(session) = sasl.as_mut() {
            match sasl_step(session, frame.clone(), &responses, &broker, peer, name).await {
                Flow::Dispatch => {}
                Flow::Next => continue,
                Flow::Close => break,
            }
        }
        if let Some(p) = sasl.as_ref().and_then(|s| s.principal()) {
            if *principal != *p {
                principal = Arc::from(p);
            }
        }
        let cx = RequestContext {
            peer,
            listener,
            principal: principal.clone(),
            sendfile,
        };
        match request::scope(cx, dispatch::handle(&broker, frame)).await {
            Ok(Some(resp)) => {
                if !responses.queue(resp).await {
                    break;
                }
            }
            Ok(None) => {}
            Err(reason) => {
                warn!(%peer, %reason, "closing connection");
                break;
            }
        }
    }
    drop(responses);
    finish_writing(writer, &state, idle).await;
    drop(conn);
    let principal = sasl
        .as_ref()
        .and_then(|s| s.principal())
        .unwrap_or("User:ANONYMOUS");
    debug!(%peer, listener = name, principal, "connection closed");
}

/// The bounds of a connection's frames: once authenticated (or without SASL), before SASL authentication and
/// during a re-authentication, and for a raw SASL token after SaslHandshake v0.
struct Bounds {
    limits: FrameLimits,
    pre_auth: FrameLimits,
    raw_token: FrameLimits,
}

impl Bounds {
    fn new(cfg: &crate::config::BrokerConfig, conn: &Registered, low_water: LowWater) -> Self {
        let limits = FrameLimits {
            min: MIN_REQUEST,
            max: cfg.socket_request_max_bytes,
            read_timeout: Duration::from_millis(cfg.socket_request_read_timeout_ms),
            budget: conn.request_bytes().cloned(),
            low_water: Some(Arc::new(low_water)),
        };
        let pre_auth = FrameLimits {
            max: limits.max.min(SASL_MAX_RECEIVE_SIZE),
            budget: None,
            ..limits.clone()
        };
        let raw_token = FrameLimits {
            min: 0,
            ..pre_auth.clone()
        };
        Bounds {
            limits,
            pre_auth,
            raw_token,
        }
    }

    /// The bounds of the next frame, by where the SASL exchange (if any) stands.
    fn for_session(&self, sasl: Option<&Session>) -> &FrameLimits {
        match sasl {
            Some(s) if s.expects_raw_token() => &self.raw_token,
            Some(s) if !s.authenticated() || s.reauthenticating() => &self.pre_auth,
            _ => &self.limits,
        }
    }
}

/// The connection's side of the writer's queue, bounded in entries and in bytes.
struct Responses {
    tx: mpsc::Sender<Queued>,
    queued_bytes: Arc<Semaphore>,
    close: CancellationToken,
}

impl Responses {
    /// Queues one response for the writer; false when the connection is closing.
    async fn queue(&self, resp: impl Into<Encoded>) -> bool {
        let resp = resp.into();
        let want = resp.len().clamp(1, RESPONSE_QUEUE_BYTES) as u32;
        let permit = tokio::select! {
            _ = self.close.cancelled() => return false,
            p = self.queued_bytes.clone().acquire_many_owned(want) => p.expect("never closed"),
        };
        self.tx.send((resp, permit)).await.is_ok()
    }
}

/// Waits for the next request; false (logged) when the connection ends instead.
async fn next_request<R: AsyncBufReadExt + Unpin>(
    rd: &mut R,
    state: &ConnState,
    idle: Duration,
    peer: SocketAddr,
) -> bool {
    match wait_for_request(rd, state, idle).await {
        Ok(Wait::Request) => return true,
        Ok(Wait::Eof) => {}
        Ok(Wait::Idle) => {
            debug!(%peer, idle_ms = idle.as_millis() as u64, "closing connection idle for connections.max.idle.ms");
        }
        Ok(Wait::Closed) => debug!(%peer, "connection closed by the broker"),
        Err(e) => debug!(%peer, error = %e, "connection read failed"),
    }
    false
}

/// The frame read, or `None` (logged) when the connection ends instead; `max` is the frame bound it was read
/// with.
fn frame_or_close(
    frame: Result<Option<(Bytes, Held)>, FrameError>,
    peer: SocketAddr,
    name: &str,
    max: usize,
) -> Option<(Bytes, Held)> {
    match frame {
        Ok(f) => f,
        Err(FrameError::BadLength(n)) => {
            if (n as u32) >> 16 == 0x1603 {
                // 0x16 0x03: a TLS record header (handshake, version 3.x) where a frame length belongs.
                warn!(%peer, listener = name, "closing connection: the client speaks TLS to this non-TLS listener (security.protocol SSL or SASL_SSL on a PLAINTEXT or SASL_PLAINTEXT port?)");
            } else {
                warn!(%peer, listener = name, length = n, max, "closing connection: request frame length out of range");
            }
            None
        }
        Err(FrameError::TooSlow(t)) => {
            warn!(%peer, timeout_ms = t.as_millis() as u64,
                "closing connection: a request frame did not arrive in full within socket.request.read.timeout.ms");
            None
        }
        Err(FrameError::Io(e)) => {
            debug!(%peer, error = %e, "connection read failed");
            None
        }
    }
}

/// What the connection does with a frame after the SASL session saw it.
enum Flow {
    /// Serve it as a request.
    Dispatch,
    /// The session answered it: read the next frame.
    Next,
    /// Close the connection.
    Close,
}

/// Hands a frame to the connection's SASL session, queueing its answer and logging how an exchange ended.
async fn sasl_step(
    session: &mut Session,
    frame: Bytes,
    responses: &Responses,
    broker: &Broker,
    peer: SocketAddr,
    name: &str,
) -> Flow {
    match session.step(frame) {
        Step::Dispatch => Flow::Dispatch,
        Step::Reply(resp) => {
            if !responses.queue(resp).await {
                return Flow::Close;
            }
            let completed = session.take_completed();
            let (principal, mechanism) = (session.principal(), session.mechanism());
            match completed {
                Some(Completed::Authenticated) => info!(%peer, listener = name, principal,
                    mechanism, "SASL authentication succeeded"),
                Some(Completed::Reauthenticated) => {
                    broker.metrics().reauthenticated(name);
                    info!(%peer, listener = name, principal, mechanism, "SASL re-authentication succeeded");
                }
                None => {}
            }
            Flow::Next
        }
        Step::Expired(reason) => {
            broker.metrics().expired_connection_killed(name);
            info!(%peer, listener = name, %reason, "closing connection: SASL session expired");
            Flow::Close
        }
        Step::ReplyAndClose(resp, reason) => {
            let _ = responses.queue(resp).await;
            warn!(%peer, listener = name, %reason, "closing connection: SASL authentication failed");
            Flow::Close
        }
        Step::Close(reason) => {
            warn!(%peer, listener = name, %reason, "closing connection");
            Flow::Close
        }
    }
}

/// A response waiting for the writer, with its share of [`RESPONSE_QUEUE_BYTES`] (given back once written).
type Queued = (Encoded, OwnedSemaphorePermit);

/// How long a writer still busy when the broker closes the connection may go without progress before it is
/// stopped.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Lets the writer send what is queued once no more requests will be read, as long as it makes progress: a peer
/// that stopped reading (no response finished for `connections.max.idle.ms`, or for [`CLOSE_GRACE`] once the broker
/// closes the connection) gets its connection closed instead of holding it, its queued responses and the log files
/// they send from, forever (Kafka's idle expiry counts a stalled write as idle too).
async fn finish_writing(
    mut writer: tokio::task::JoinHandle<()>,
    state: &ConnState,
    idle: Duration,
) {
    let close = state.close_token().clone();
    loop {
        let limit = if close.is_cancelled() {
            idle.min(CLOSE_GRACE)
        } else {
            idle
        };
        let left = limit.saturating_sub(state.idle_for());
        if left.is_zero() {
            writer.abort();
            let _ = writer.await;
            return;
        }
        tokio::select! {
            _ = &mut writer => return,
            _ = close.cancelled(), if !close.is_cancelled() => {}
            _ = tokio::time::sleep(left) => {}
        }
    }
}

/// Where responses are written: a plain TCP stream also takes a [`Part::File`] with `sendfile`; a stream with TLS
/// in between gets the region's bytes read into memory (Fetch leaves no records in their files for it).
pub(crate) trait ResponseStream: AsyncWrite + Unpin {
    /// The TCP stream `sendfile` can write to, when nothing is in between.
    fn tcp(&self) -> Option<&TcpStream> {
        None
    }
}

impl ResponseStream for tokio::net::tcp::OwnedWriteHalf {
    fn tcp(&self) -> Option<&TcpStream> {
        Some(self.as_ref())
    }
}

impl<T: AsyncRead + AsyncWrite> ResponseStream for tokio::io::WriteHalf<T> {}

#[cfg(test)]
impl ResponseStream for tokio::io::DuplexStream {}

/// Writes framed responses in order, flushing when the queue runs dry.
async fn write_loop<W: ResponseStream>(
    wr: W,
    mut rx: mpsc::Receiver<Queued>,
    state: Arc<ConnState>,
) {
    let mut wr = BufWriter::with_capacity(64 * 1024, wr);
    while let Some((first, _permit)) = rx.recv().await {
        // Writing counts as activity from its start (and again once flushed): the idle clock measures a write
        // that makes no progress.
        state.touch();
        if write_parts(&mut wr, first.parts()).await.is_err() {
            return;
        }
        drop((first, _permit));
        while let Ok((next, _permit)) = rx.try_recv() {
            state.touch();
            if write_parts(&mut wr, next.parts()).await.is_err() {
                return;
            }
        }
        if wr.flush().await.is_err() {
            return;
        }
        state.touch();
    }
    let _ = wr.shutdown().await;
}

/// The most parts handed to one `writev`.
const MAX_IOVECS: usize = 64;

/// Writes a response's parts in order: runs of parts in memory as [`write_mem`] does, file regions with
/// [`send_region`].
async fn write_parts<W: ResponseStream>(
    wr: &mut BufWriter<W>,
    parts: &[Part],
) -> std::io::Result<()> {
    let mut rest = parts;
    while !rest.is_empty() {
        let mem = rest
            .iter()
            .position(|p| matches!(p, Part::File(_)))
            .unwrap_or(rest.len());
        write_mem(wr, &rest[..mem]).await?;
        rest = &rest[mem..];
        if let Some((Part::File(region), after)) = rest.split_first() {
            send_region(wr, region).await?;
            rest = after;
        }
    }
    Ok(())
}

/// Writes parts in memory (`Part::Mem`; there is no other kind in a run). Parts that fit go through the writer's
/// buffer; more than it holds go to the socket with one vectored write (`writev` on a plain TCP stream) from
/// where they are.
async fn write_mem<W: AsyncWrite + Unpin>(
    wr: &mut BufWriter<W>,
    parts: &[Part],
) -> std::io::Result<()> {
    if let [Part::Mem(one)] = parts {
        return wr.write_all(one).await;
    }
    let mut all: Vec<std::io::IoSlice<'_>> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Mem(b) if !b.is_empty() => Some(std::io::IoSlice::new(b)),
            _ => None,
        })
        .collect();
    let mut left = &mut all[..];
    while !left.is_empty() {
        let n = wr
            .write_vectored(&left[..left.len().min(MAX_IOVECS)])
            .await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        std::io::IoSlice::advance_slices(&mut left, n);
    }
    Ok(())
}

/// Writes a file region: with `sendfile` from the page cache to a plain TCP socket (after what the writer has
/// buffered), else read into memory first.
async fn send_region<W: ResponseStream>(
    wr: &mut BufWriter<W>,
    region: &strata_storage::FileRegion,
) -> std::io::Result<()> {
    if wr.get_ref().tcp().is_some() {
        wr.flush().await?;
    }
    let Some(tcp) = wr.get_ref().tcp() else {
        let bytes = region.read().map_err(std::io::Error::other)?;
        return wr.write_all(&bytes).await;
    };
    let mut done = 0;
    while done < region.len() {
        tcp.writable().await?;
        match tcp.try_io(tokio::io::Interest::WRITABLE, || {
            region.send_to(std::os::fd::AsFd::as_fd(tcp), done)
        }) {
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize) -> FrameLimits {
        FrameLimits {
            min: MIN_REQUEST,
            max,
            read_timeout: Duration::from_secs(5),
            budget: None,
            low_water: None,
        }
    }

    #[tokio::test]
    async fn a_response_in_parts_arrives_whole_through_short_writes() {
        // A pipe of 100 bytes takes each vectored write only in part.
        let (a, mut b) = tokio::io::duplex(100);
        let bytes: Vec<Bytes> = (0..200u32)
            .map(|i| Bytes::from(vec![i as u8; (i as usize * 37) % 9000]))
            .collect();
        let want: Vec<u8> = bytes.iter().flat_map(|p| p.iter().copied()).collect();
        let parts: Vec<Part> = bytes.iter().cloned().map(Part::Mem).collect();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            b.read_to_end(&mut got).await.unwrap();
            got
        });
        let mut wr = BufWriter::with_capacity(1024, a);
        write_parts(&mut wr, &parts).await.unwrap();
        write_parts(&mut wr, &parts[3..4]).await.unwrap();
        wr.shutdown().await.unwrap();
        drop(wr);
        let got = reader.await.unwrap();
        assert_eq!(got.len(), want.len() + bytes[3].len());
        assert!(got[..want.len()] == want[..], "the parts' bytes in order");
        assert!(got[want.len()..] == bytes[3][..]);
    }

    /// Writes `parts` to a TCP connection on loopback (a slow reader: `sendfile` meets a full socket) and returns
    /// what the peer read.
    async fn through_tcp<W>(
        parts: Vec<Part>,
        wrap: impl FnOnce(tokio::net::tcp::OwnedWriteHalf) -> W,
    ) -> Vec<u8>
    where
        W: ResponseStream + Send + 'static,
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            let mut buf = vec![0u8; 7000];
            loop {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    return got;
                }
                got.extend_from_slice(&buf[..n]);
                tokio::task::yield_now().await;
            }
        });
        let (_rd, wr) = TcpStream::connect(addr).await.unwrap().into_split();
        let mut wr = BufWriter::with_capacity(1024, wrap(wr));
        write_parts(&mut wr, &parts).await.unwrap();
        wr.flush().await.unwrap();
        wr.shutdown().await.unwrap();
        drop(wr);
        tokio::time::timeout(Duration::from_secs(30), reader)
            .await
            .expect("the peer read everything within 30 s")
            .unwrap()
    }

    /// An `AsyncWrite` with no TCP stream `sendfile` could use (as a TLS stream).
    struct NoSendfile(tokio::net::tcp::OwnedWriteHalf);

    impl AsyncWrite for NoSendfile {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
        }
        fn poll_flush(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::pin::Pin::new(&mut self.0).poll_flush(cx)
        }
        fn poll_shutdown(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
        }
    }

    impl ResponseStream for NoSendfile {}

    #[tokio::test]
    async fn file_regions_go_out_with_sendfile_between_parts_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        // About 3 MiB, more than loopback's socket buffers take at once.
        let (bytes, region) = crate::codec::parts::tests::region(dir.path(), 30_000);
        let head = Bytes::from_static(b"head");
        let tail = Bytes::from(vec![3u8; 5000]);
        let parts = vec![
            Part::Mem(head.clone()),
            Part::File(region.clone()),
            Part::Mem(tail.clone()),
            Part::File(region),
        ];
        let mut want = head.to_vec();
        want.extend_from_slice(&bytes);
        want.extend_from_slice(&tail);
        want.extend_from_slice(&bytes);
        let got = through_tcp(parts.clone(), |w| w).await;
        assert_eq!(got.len(), want.len());
        assert!(got == want, "sendfile: the bytes in order");
        let got = through_tcp(parts, NoSendfile).await;
        assert!(got == want, "read into memory: the same bytes");
    }

    #[tokio::test]
    async fn frame_lengths_outside_bounds_are_rejected() {
        let mut data: &[u8] = &[0, 0, 0, 3, 1, 2, 3];
        assert!(matches!(
            read_frame(&mut data, &limits(100)).await,
            Err(FrameError::BadLength(3))
        ));
        let mut data: &[u8] = &[0, 0, 1, 0];
        assert!(matches!(
            read_frame(&mut data, &limits(100)).await,
            Err(FrameError::BadLength(256))
        ));
        let mut data: &[u8] = &[0xff, 0xff, 0xff, 0xff];
        assert!(matches!(
            read_frame(&mut data, &limits(100)).await,
            Err(FrameError::BadLength(-1))
        ));
    }

    /// KIP-43: a raw SASL token after SaslHandshake v0 has no request header (a PLAIN token `\0a\0b` is 4
    /// bytes, an empty token 0); the maximum and a negative length still close the connection.
    #[tokio::test]
    async fn a_raw_sasl_token_may_be_shorter_than_a_request_header() {
        let raw = FrameLimits {
            min: 0,
            ..limits(100)
        };
        let mut data: &[u8] = &[0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0];
        let (token, _) = read_frame(&mut data, &raw).await.unwrap().unwrap();
        assert_eq!(&token[..], &[1, 2, 3]);
        let (token, _) = read_frame(&mut data, &raw).await.unwrap().unwrap();
        assert!(token.is_empty());
        for bad in [[0xff, 0xff, 0xff, 0xff], [0, 0, 0, 101]] {
            let mut data: &[u8] = &bad;
            assert!(matches!(
                read_frame(&mut data, &raw).await,
                Err(FrameError::BadLength(_))
            ));
        }
    }

    #[tokio::test]
    async fn truncated_frame_is_an_io_error_and_clean_eof_is_none() {
        let mut data: &[u8] = &[0, 0, 0, 20, 1, 2];
        assert!(matches!(
            read_frame(&mut data, &limits(100)).await,
            Err(FrameError::Io(_))
        ));
        let mut data: &[u8] = &[];
        assert!(matches!(
            read_frame(&mut data, &limits(100)).await,
            Ok(None)
        ));
    }

    #[tokio::test]
    async fn a_frame_waits_for_the_bytes_budget_before_it_is_allocated() {
        let shared = Arc::new(RequestBudget::split(30, 0, 0));
        let budget = shared.bytes.clone();
        let held = budget.clone().acquire_many_owned(20).await.unwrap();
        let l = FrameLimits {
            budget: Some(shared.clone()),
            ..limits(100)
        };
        let mut frame = vec![0, 0, 0, 16];
        frame.extend_from_slice(&[7; 16]);
        let mut data: &[u8] = &frame;
        let read = read_frame(&mut data, &l);
        tokio::pin!(read);
        // 16 bytes do not fit in the 10 left: the read waits.
        assert!(tokio::time::timeout(Duration::from_millis(50), &mut read)
            .await
            .is_err());
        drop(held);
        let (bytes, permit) = read.await.unwrap().unwrap();
        assert_eq!(bytes.len(), 16);
        assert_eq!(budget.available_permits(), 14);
        drop(permit);
        assert_eq!(budget.available_permits(), 30);
    }

    /// Two frames that each hold part of the budget and both need more than is left (black-box round 5: four
    /// producers of 1.5 MB records under a 2 MiB budget stalled for the read timeout and lost records): one goes
    /// past the budget and is read at once; the other follows once the first is handled.
    #[tokio::test]
    async fn frames_holding_parts_of_the_budget_do_not_wait_on_each_other() {
        let shared = Arc::new(RequestBudget::split(30, 0, 0));
        let l = FrameLimits {
            budget: Some(shared.clone()),
            read_timeout: Duration::from_secs(3),
            ..limits(100)
        };
        let (mut ta, ra) = tokio::io::duplex(64);
        let (mut tb, rb) = tokio::io::duplex(64);
        let (mut ra, mut rb) = (BufReader::new(ra), BufReader::new(rb));
        for t in [&mut ta, &mut tb] {
            t.write_all(&[0, 0, 0, 40]).await.unwrap();
            t.write_all(&[1; 10]).await.unwrap();
        }
        let a = read_frame(&mut ra, &l);
        let b = read_frame(&mut rb, &l);
        tokio::pin!(a, b);
        // Both hold part of the budget (their 10 bytes, one of them doubled to 20) and none is left; then the
        // last 30 of each arrive.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while shared.bytes.available_permits() != 0 {
            tokio::select! {
                _ = &mut a => panic!("a finished early"),
                _ = &mut b => panic!("b finished early"),
                _ = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
            assert!(tokio::time::Instant::now() < deadline);
        }
        ta.write_all(&[2; 30]).await.unwrap();
        tb.write_all(&[2; 30]).await.unwrap();
        let started = tokio::time::Instant::now();
        let (first, rest) = tokio::select! {
            r = &mut a => (r, &mut b),
            r = &mut b => (r, &mut a),
        };
        let (bytes, held) = first.unwrap().unwrap();
        assert_eq!(bytes.len(), 40);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        drop(held);
        let (bytes, held) = tokio::time::timeout(Duration::from_secs(1), rest)
            .await
            .expect("the second frame follows once the first is handled")
            .unwrap()
            .unwrap();
        assert_eq!(bytes.len(), 40);
        drop(held);
        assert_eq!(shared.bytes.available_permits(), 30);
    }

    /// Three frames hold the whole budget (5, 15 and 10 of 30) and each needs more than the others give back:
    /// each in turn goes past the budget once the one before is handled, none waits for its read timeout.
    #[tokio::test]
    async fn frames_waiting_for_more_than_comes_back_take_the_overdraft_in_turn() {
        let shared = Arc::new(RequestBudget::split(30, 0, 0));
        let l = FrameLimits {
            budget: Some(shared.clone()),
            read_timeout: Duration::from_secs(5),
            ..limits(100)
        };
        let mut writers = Vec::new();
        let mut reads = Vec::new();
        for first in [5usize, 15, 10] {
            let (mut tx, rx) = tokio::io::duplex(64);
            tx.write_all(&[0, 0, 0, 40]).await.unwrap();
            tx.write_all(&vec![1; first]).await.unwrap();
            writers.push((tx, 40 - first));
            let l = l.clone();
            reads.push(tokio::spawn(async move {
                let mut rx = BufReader::new(rx);
                read_frame(&mut rx, &l).await.map(|f| f.unwrap())
            }));
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while shared.bytes.available_permits() != 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{}",
                shared.bytes.available_permits()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        for (tx, rest) in &mut writers {
            tx.write_all(&vec![2; *rest]).await.unwrap();
        }
        let started = tokio::time::Instant::now();
        let mut done = 0;
        while done < 3 {
            let i = reads
                .iter()
                .position(|r| r.is_finished())
                .unwrap_or(usize::MAX);
            if i == usize::MAX {
                assert!(
                    started.elapsed() < Duration::from_secs(3),
                    "{done} of 3 frames read"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            let (bytes, held) = reads.remove(i).await.unwrap().expect("read, not timed out");
            assert_eq!(bytes.len(), 40);
            // Handled: its share comes back.
            drop(held);
            done += 1;
        }
        assert_eq!(shared.bytes.available_permits(), 30);
    }

    #[tokio::test]
    async fn a_declared_length_reserves_at_most_twice_the_bytes_that_arrived() {
        let shared = Arc::new(RequestBudget::split(1000, 0, 0));
        let budget = shared.bytes.clone();
        let l = FrameLimits {
            budget: Some(shared.clone()),
            ..limits(1000)
        };
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut rx = BufReader::new(rx);
        tx.write_all(&[0, 0, 3, 0xe8, 1, 2, 3]).await.unwrap();
        let read = read_frame(&mut rx, &l);
        tokio::pin!(read);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        // 3 of the 1000 declared bytes arrived: the frame holds 3 of the budget, then 6 (its buffer doubled, to
        // be read into directly), never 1000.
        while budget.available_permits() != 994 {
            assert!(
                budget.available_permits() >= 994,
                "{}",
                budget.available_permits()
            );
            assert!(tokio::time::timeout(Duration::from_millis(10), &mut read)
                .await
                .is_err());
            assert!(
                tokio::time::Instant::now() < deadline,
                "{}",
                budget.available_permits()
            );
        }
        assert!(tokio::time::timeout(Duration::from_millis(50), &mut read)
            .await
            .is_err());
        assert_eq!(
            budget.available_permits(),
            994,
            "no more until more arrives"
        );
        let writer = async {
            tx.write_all(&[9; 997]).await.unwrap();
        };
        let (r, ()) = tokio::join!(read, writer);
        let (bytes, permit) = r.unwrap().unwrap();
        assert_eq!(bytes.len(), 1000);
        assert_eq!(&bytes[..3], &[1, 2, 3]);
        assert_eq!(
            budget.available_permits(),
            0,
            "the whole frame is held until handled"
        );
        drop(permit);
        assert_eq!(budget.available_permits(), 1000);
    }

    /// Releases what it reads from `inner` a whole 16 KiB record at a time, the way rustls holds a partial TLS
    /// record until the rest arrives: bytes of the frame that the socket no longer has and the frame reader does
    /// not have yet.
    struct Records<R> {
        inner: R,
        partial: Vec<u8>,
        whole: std::collections::VecDeque<u8>,
    }

    impl<R: AsyncRead + Unpin> AsyncRead for Records<R> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            const RECORD: usize = 16 * 1024;
            let this = &mut *self;
            while this.whole.is_empty() {
                let mut chunk = [0u8; 4096];
                let mut rb = tokio::io::ReadBuf::new(&mut chunk);
                std::task::ready!(std::pin::Pin::new(&mut this.inner).poll_read(cx, &mut rb))?;
                if rb.filled().is_empty() {
                    return std::task::Poll::Ready(Ok(()));
                }
                this.partial.extend_from_slice(rb.filled());
                while this.partial.len() >= RECORD {
                    this.whole.extend(this.partial.drain(..RECORD));
                }
            }
            let n = buf.remaining().min(this.whole.len());
            let out: Vec<u8> = this.whole.drain(..n).collect();
            buf.put_slice(&out);
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Two frames of 1 MiB written in 16 KiB writes (as librdkafka writes TLS records) over a real socket, read
    /// through a layer that holds partial records (as rustls does) and a buffer (as under TLS): the raised
    /// low-water mark never waits for bytes beyond the frame — both frames complete within the read timeout
    /// though the writer sends the last 100 KiB of each only once the reader waits (a mark that leaves the
    /// partial record out waits for bytes that never come) — and it is back to one byte
    /// between frames so the next frame's length is read at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_raised_low_water_mark_never_waits_past_the_frame() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        // What the layers below the frame reader may hold: the buffer and a partial record.
        let below = 2 * FRAME_READ_BUFFER + 16 * 1024;
        let low_water = Arc::new(LowWater::new(server.as_raw_fd(), below));
        let l = FrameLimits {
            low_water: Some(low_water.clone()),
            read_timeout: Duration::from_secs(3),
            ..limits(2 << 20)
        };
        // 4 + LEN is a whole number of records.
        const LEN: usize = 64 * 16 * 1024 - 4;
        let mut frame = (LEN as i32).to_be_bytes().to_vec();
        frame.extend((0..LEN).map(|i| i as u8));
        let (sent_all_but_last, mut last_sent) = (
            Arc::new(tokio::sync::Notify::new()),
            tokio::sync::mpsc::channel::<()>(1),
        );
        let (go_on, mut go) = tokio::sync::mpsc::channel::<()>(1);
        let notify = sent_all_but_last.clone();
        let writer = tokio::spawn(async move {
            for _ in 0..2 {
                let (head, tail) = frame.split_at(frame.len() - 100 * 1024 - 100);
                for part in head.chunks(16 * 1024) {
                    client.write_all(part).await.unwrap();
                }
                // The reader now holds a partial record; the last 100 KiB come once it waits for them.
                notify.notify_one();
                go.recv().await.unwrap();
                client.write_all(tail).await.unwrap();
                last_sent.0.send(()).await.unwrap();
            }
            // Kept open: the reader must not need an end of stream to finish.
            client
        });
        let mut rd = BufReader::with_capacity(
            FRAME_READ_BUFFER,
            BufReader::with_capacity(
                2 * FRAME_READ_BUFFER,
                Records {
                    inner: server,
                    partial: Vec::new(),
                    whole: Default::default(),
                },
            ),
        );
        for _ in 0..2 {
            let read = read_frame(&mut rd, &l);
            tokio::pin!(read);
            tokio::select! {
                _ = &mut read => panic!("the frame was read before its last bytes were sent"),
                _ = sent_all_but_last.notified() => {}
            }
            // Let the reader take everything there is and wait (bounded: it never finishes without the tail).
            assert!(tokio::time::timeout(Duration::from_millis(200), &mut read)
                .await
                .is_err());
            go_on.send(()).await.unwrap();
            last_sent.1.recv().await.unwrap();
            let (bytes, _) = read.await.expect("read within the read timeout").unwrap();
            assert_eq!(bytes.len(), LEN);
            assert!(bytes.iter().enumerate().all(|(i, b)| *b == i as u8));
            assert_eq!(low_water.current(), 1, "back to one byte after the frame");
        }
        assert!(low_water.raised(), "the mark was raised during the frames");
        drop(writer.await.unwrap());
    }
}
