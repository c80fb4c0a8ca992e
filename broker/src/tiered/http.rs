//! `http.listener`: `GET /metrics` answers the RemoteLogManager's Prometheus text (Kafka's metric names plus
//! object-store request counts and latency); any other path is 404, any other method 405.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use strata_tiering::RemoteLogManager;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};

use super::TieringError;

/// More Prometheus text appended to the RemoteLogManager's on `/metrics` (the log cleaner's metrics).
pub type MetricsSource = std::sync::Arc<dyn Fn() -> String + Send + Sync>;

/// Open `/metrics` connections at most; further ones wait in the accept queue.
const MAX_CONNECTIONS: usize = 16;

/// The running `/metrics` endpoint.
pub(crate) struct MetricsServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

fn respond(
    rlm: &RemoteLogManager,
    extra: Option<&MetricsSource>,
    req: &Request<Incoming>,
) -> Response<Full<Bytes>> {
    let (status, ctype, body) = match (req.method(), req.uri().path()) {
        (&Method::GET | &Method::HEAD, "/metrics") => (
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            rlm.render_metrics() + &extra.map(|f| f()).unwrap_or_default(),
        ),
        (_, "/metrics") => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "only GET\n".into(),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found: strata serves /metrics\n".into(),
        ),
    };
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(ctype),
    );
    resp
}

impl MetricsServer {
    /// Binds `addr` and serves until [`stop`](Self::stop) or until `parent` is cancelled. Its accept loop and
    /// connections run on its own tracker, which `stop` waits for.
    pub(crate) async fn start(
        addr: SocketAddr,
        rlm: RemoteLogManager,
        extra: Option<MetricsSource>,
        parent: &CancellationToken,
    ) -> Result<Self, TieringError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| TieringError::io(format!("binding http.listener={addr}"), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| TieringError::io("reading the http.listener address", e))?;
        let cancel = parent.child_token();
        let tracker = TaskTracker::new();
        let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let (c, t) = (cancel.clone(), tracker.clone());
        tracker.spawn(async move {
            loop {
                let permit = tokio::select! {
                    _ = c.cancelled() => return,
                    p = limit.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
                };
                let (socket, peer) = tokio::select! {
                    _ = c.cancelled() => return,
                    r = listener.accept() => match r {
                        Ok(x) => x,
                        Err(e) => {
                            warn!(error = %e, "http.listener accept failed");
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                            continue;
                        }
                    },
                };
                let rlm = rlm.clone();
                let extra = extra.clone();
                let conn_cancel = c.clone();
                t.spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let resp = respond(&rlm, extra.as_ref(), &req);
                        async move { Ok::<_, Infallible>(resp) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service);
                    tokio::select! {
                        r = conn => if let Err(e) = r { debug!(%peer, error = %e, "/metrics connection ended") },
                        _ = conn_cancel.cancelled() => {}
                    }
                    drop(permit);
                });
            }
        });
        Ok(Self {
            addr,
            cancel,
            tracker,
        })
    }

    /// The bound address.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, closes open connections and waits for the tasks.
    pub(crate) async fn stop(&self) {
        self.cancel.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}
