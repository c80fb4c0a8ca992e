//! A connection's request stream read from a byte buffer instead of a socket, for the fuzz targets (`fuzz/`) and
//! their smoke test: frames are read by the connection's own frame reader ([`super::connection`]'s, with the
//! listener's `socket.request.max.bytes`) and handled by the same dispatch, inside the same request context (a
//! PLAINTEXT client on 127.0.0.1, `User:ANONYMOUS`) a TCP connection on the first listener gives them. What is
//! left out is what needs a socket: the bytes budget, the low-water mark, the idle and read timeouts, the writer.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::connection::{read_frame, FrameLimits, MIN_REQUEST};
use crate::broker::request::{self, RequestContext};
use crate::broker::Broker;
use crate::dispatch;

/// What a connection sending a buffer of frames got back.
#[derive(Debug, Default)]
pub struct Replay {
    /// The responses, each with its 4-byte length, in order.
    pub responses: Vec<Bytes>,
    /// Frames read (a request with no response, Produce with acks=0, counts too).
    pub frames: usize,
    /// Why the broker closed the connection before the end of the buffer (a bad length, a truncated frame, a
    /// request it closes on, a request not handled within the caller's bound); `None` when every frame was served.
    pub closed: Option<String>,
    /// The request that hit the caller's bound (a long poll, a rebalance wait): not a close by the broker.
    pub timed_out: bool,
}

/// Serves `input` as the byte stream of one connection until its end or the first close. Each request is bounded
/// by `per_request` (the caller's clock: a fuzz target pauses time, so a 5-minute long poll costs nothing).
pub(crate) async fn serve_bytes(
    broker: &Arc<Broker>,
    input: &[u8],
    per_request: Duration,
) -> Replay {
    let limits = FrameLimits {
        min: MIN_REQUEST,
        max: broker.config().socket_request_max_bytes,
        read_timeout: Duration::from_secs(1),
        budget: None,
        low_water: None,
    };
    let mut rd = input;
    let mut out = Replay::default();
    let cx = RequestContext {
        peer: SocketAddr::from((Ipv4Addr::LOCALHOST, 40000)),
        listener: 0,
        principal: Arc::from(crate::authz::principal::ANONYMOUS),
        sendfile: false,
    };
    loop {
        let frame = match read_frame(&mut rd, &limits).await {
            Ok(Some((frame, _held))) => frame,
            Ok(None) => return out,
            Err(e) => {
                out.closed = Some(format!("{e:?}"));
                return out;
            }
        };
        out.frames += 1;
        let handled = request::scope(cx.clone(), dispatch::handle(broker, frame));
        match tokio::time::timeout(per_request, handled).await {
            Ok(Ok(Some(resp))) => match resp.into_bytes() {
                Ok(b) => out.responses.push(b),
                Err(e) => {
                    out.closed = Some(format!("cannot read the response's records: {e}"));
                    return out;
                }
            },
            Ok(Ok(None)) => {}
            Ok(Err(reason)) => {
                out.closed = Some(reason);
                return out;
            }
            Err(_) => {
                out.closed = Some(format!("not handled within {per_request:?}"));
                out.timed_out = true;
                return out;
            }
        }
    }
}
