//! What a request knows of the connection it arrived on: the client's address and the listener it connected to.
//! Set by the connection for the time its request is handled (a task-local, so the handlers' signatures stay one
//! per API); read by JoinGroup (the member's client host) and by the answers that name the broker's endpoint
//! (Metadata, FindCoordinator, DescribeCluster), which give the listener the request arrived on, as Kafka does;
//! by the authorizer (`crate::guard`), which checks the connection's principal and address; and by Fetch, which
//! leaves records in their files only for a connection without TLS.

use std::future::Future;
use std::net::SocketAddr;

/// The connection of the request being handled.
#[derive(Debug, Clone)]
pub(crate) struct RequestContext {
    /// The client's address.
    pub peer: SocketAddr,
    /// Index of the listener the client connected to, in the broker's listener list.
    pub listener: usize,
    /// The connection's principal (`User:alice`, `User:ANONYMOUS`; `crate::authz::principal`).
    pub principal: std::sync::Arc<str>,
    /// Whether responses go to the socket as they are (no TLS), so a Fetch can leave its records in their files
    /// for `sendfile` (`crate::codec::parts`).
    pub sendfile: bool,
}

tokio::task_local! {
    static CONTEXT: RequestContext;
}

/// Runs `f` (the handling of one request) with `cx` as its context.
pub(crate) async fn scope<F: Future>(cx: RequestContext, f: F) -> F::Output {
    CONTEXT.scope(cx, f).await
}

/// The client host of the request being handled (`/ip`, as Kafka prints it).
pub(crate) fn peer_host() -> String {
    CONTEXT
        .try_with(|c| format!("/{}", c.peer.ip()))
        .unwrap_or_else(|_| "/unknown".into())
}

/// The listener the request being handled arrived on; `None` outside a request.
pub(crate) fn listener() -> Option<usize> {
    CONTEXT.try_with(|c| c.listener).ok()
}

/// Whether the request being handled came on a connection that takes file regions (see
/// [`RequestContext::sendfile`]); false outside a request.
pub(crate) fn sendfile() -> bool {
    CONTEXT.try_with(|c| c.sendfile).unwrap_or(false)
}

/// The principal and client IP address of the request being handled (`User:ANONYMOUS` and `unknown` outside a
/// request, which only tests do).
pub(crate) fn requester() -> (std::sync::Arc<str>, String) {
    CONTEXT
        .try_with(|c| (c.principal.clone(), c.peer.ip().to_string()))
        .unwrap_or_else(|_| (std::sync::Arc::from("User:ANONYMOUS"), "unknown".into()))
}
