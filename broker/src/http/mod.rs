//! `http.listener` (default `127.0.0.1:9464`, empty = off): the console (`/`, HTML/JS/CSS embedded in the
//! binary), its JSON API (`/api/v1/…`, [`api`]) and `GET /metrics` (Prometheus/OpenMetrics text through
//! `prometheus-client`, [`metrics`]). Served whether or not tiered storage is on; a port already in use is a
//! WARN and the broker runs without it.
//!
//! Requests are answered on the blocking pool (they read logs and the RLMM); connections are bounded and end
//! with the server's root token.

pub mod api;
pub mod client;
pub mod faults;
pub mod metrics;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};

use crate::broker::Broker;
use crate::tiered::Tiering;

/// Open HTTP connections at most; further ones wait in the accept queue.
const MAX_CONNECTIONS: usize = 64;

/// Largest request body accepted (the console's produce form).
const MAX_BODY: usize = 1 << 20;

const INDEX_HTML: &str = include_str!("console/index.html");
const CONSOLE_JS: &str = include_str!("console/console.js");
const CONSOLE_CSS: &str = include_str!("console/console.css");

/// What the endpoints read: the broker, tiering when it runs, and the metric registry.
pub struct HttpContext {
    broker: Arc<Broker>,
    tiering: Option<Arc<Tiering>>,
    registry: Registry,
    started_ms: i64,
}

impl std::fmt::Debug for HttpContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpContext")
            .field("tiering", &self.tiering.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpContext {
    /// The context of `broker` (and `tiering`), with every metric registered.
    pub fn new(broker: Arc<Broker>, tiering: Option<Arc<Tiering>>) -> Self {
        let registry = metrics::registry(&broker, tiering.as_ref());
        Self {
            broker,
            tiering,
            registry,
            started_ms: strata_storage::time::now_ms(),
        }
    }

    /// The broker.
    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// Tiered storage, when on.
    pub fn tiering(&self) -> Option<&Arc<Tiering>> {
        self.tiering.as_ref()
    }

    /// `/metrics` text.
    pub fn metrics_text(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// One answer: status, content type, body.
pub struct Reply {
    status: StatusCode,
    ctype: &'static str,
    body: Bytes,
}

impl Reply {
    fn new(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Self {
        Self {
            status,
            ctype,
            body: body.into(),
        }
    }

    /// A JSON body with 200.
    pub fn json(v: &serde_json::Value) -> Self {
        Self::new(StatusCode::OK, "application/json", v.to_string())
    }

    /// An error as `{"error": msg}`.
    pub fn error(status: StatusCode, msg: impl std::fmt::Display) -> Self {
        Self::new(
            status,
            "application/json",
            serde_json::json!({ "error": msg.to_string() }).to_string(),
        )
    }

    /// The status (tests).
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The body (tests).
    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

/// Routes one request (blocking: call it on the blocking pool).
pub fn route(ctx: &HttpContext, method: &Method, path: &str, query: &str, body: &[u8]) -> Reply {
    let get = method == Method::GET || method == Method::HEAD;
    match path {
        "/metrics" if get => Reply::new(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            ctx.metrics_text(),
        ),
        "/" | "/index.html" if get => {
            Reply::new(StatusCode::OK, "text/html; charset=utf-8", INDEX_HTML)
        }
        "/console.js" if get => {
            Reply::new(StatusCode::OK, "text/javascript; charset=utf-8", CONSOLE_JS)
        }
        "/console.css" if get => Reply::new(StatusCode::OK, "text/css; charset=utf-8", CONSOLE_CSS),
        "/metrics" | "/" | "/index.html" | "/console.js" | "/console.css" => {
            Reply::error(StatusCode::METHOD_NOT_ALLOWED, "only GET")
        }
        p if p.starts_with("/api/v1/") => {
            api::route(ctx, method, &p["/api/v1/".len()..], query, body)
        }
        _ => Reply::error(
            StatusCode::NOT_FOUND,
            format!("not found: {path} (strata serves /, /api/v1/ and /metrics)"),
        ),
    }
}

async fn serve_one(ctx: Arc<HttpContext>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let reply = match Limited::new(body, MAX_BODY).collect().await {
        Err(e) => Reply::error(StatusCode::PAYLOAD_TOO_LARGE, format!("request body: {e}")),
        Ok(collected) => {
            let body = collected.to_bytes();
            let method = parts.method.clone();
            let path = parts.uri.path().to_string();
            let query = parts.uri.query().unwrap_or_default().to_string();
            // The produce form posts JSON: a cross-site HTML form (no preflight) cannot set that content type.
            let json_post = parts
                .headers
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
            if method == Method::POST && !json_post {
                Reply::error(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "POST needs Content-Type: application/json",
                )
            } else {
                tokio::task::spawn_blocking(move || route(&ctx, &method, &path, &query, &body))
                    .await
                    .unwrap_or_else(|e| {
                        Reply::error(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            format!("handler failed: {e}"),
                        )
                    })
            }
        }
    };
    let mut resp = Response::new(Full::new(if parts.method == Method::HEAD {
        Bytes::new()
    } else {
        reply.body
    }));
    *resp.status_mut() = reply.status;
    let h = resp.headers_mut();
    h.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(reply.ctype),
    );
    h.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    resp
}

/// The running HTTP endpoint.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
}

impl HttpServer {
    /// Binds `addr` and serves `ctx` on `tasks` until `cancel` is cancelled. A bind failure (the port is taken)
    /// is a WARN and `None`: the broker runs without the console.
    pub async fn start(
        addr: SocketAddr,
        ctx: Arc<HttpContext>,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> Option<Self> {
        let listener = match TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                warn!(http_listener = %addr, error = %e,
                    "http.listener not served (console, /api/v1/, /metrics off); set http.listener=host:port, or empty to turn it off");
                return None;
            }
        };
        let addr = listener.local_addr().unwrap_or(addr);
        let limit = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let t = tasks.clone();
        let stop = cancel.clone();
        tasks.spawn(async move {
            loop {
                let permit = tokio::select! {
                    _ = cancel.cancelled() => return,
                    p = limit.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
                };
                let (socket, peer) = tokio::select! {
                    _ = cancel.cancelled() => return,
                    r = listener.accept() => match r {
                        Ok(x) => x,
                        Err(e) => {
                            warn!(error = %e, "http.listener accept failed");
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                            continue;
                        }
                    },
                };
                let ctx = ctx.clone();
                let conn_cancel = cancel.clone();
                t.spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let ctx = ctx.clone();
                        async move { Ok::<_, Infallible>(serve_one(ctx, req).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service);
                    tokio::select! {
                        r = conn => if let Err(e) = r { debug!(%peer, error = %e, "http connection ended") },
                        _ = conn_cancel.cancelled() => {}
                    }
                    drop(permit);
                });
            }
        });
        Some(Self { addr, cancel: stop })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting and closes open connections (their tasks end on the server's tracker).
    pub fn stop(&self) {
        self.cancel.cancel();
    }
}
