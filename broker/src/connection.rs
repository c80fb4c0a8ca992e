//! One client connection: 4-byte length framing (bounded by `socket.request.max.bytes`), requests handled one
//! at a time in arrival order, responses written by a writer task in the same order.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::broker::Broker;
use crate::dispatch;

tokio::task_local! {
    /// The peer of the connection whose request is being handled.
    static PEER: SocketAddr;
}

/// The client host of the request being handled (`/ip`, as Kafka prints it).
pub(crate) fn peer_host() -> String {
    PEER.try_with(|p| format!("/{}", p.ip()))
        .unwrap_or_else(|_| "/unknown".into())
}

/// Responses queued for the writer before the reader waits.
const RESPONSE_QUEUE: usize = 32;

/// Bytes of responses queued for the writer before the reader waits (one larger response is queued alone). A
/// client that pipelines fetches and stops reading holds at most this much (or one response) of broker memory,
/// not `RESPONSE_QUEUE` full fetch responses; Kafka mutes such a connection after one request.
const RESPONSE_QUEUE_BYTES: usize = 4 << 20;

/// Why a frame could not be read.
#[derive(Debug)]
enum FrameError {
    /// A length below the smallest request header or above the configured maximum.
    BadLength(i32),
    /// The peer went away mid-frame or the socket failed.
    Io(std::io::Error),
}

/// Reads one frame; `Ok(None)` on a clean end of stream between frames.
async fn read_frame<R: AsyncReadExt + Unpin>(
    rd: &mut R,
    max: usize,
) -> Result<Option<Bytes>, FrameError> {
    let mut len = [0u8; 4];
    match rd.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(FrameError::Io(e)),
    }
    let n = i32::from_be_bytes(len);
    // api key + version + correlation id + client id length = 10 bytes minimum.
    if n < 10 || n as usize > max {
        return Err(FrameError::BadLength(n));
    }
    let mut buf = BytesMut::zeroed(n as usize);
    rd.read_exact(&mut buf).await.map_err(FrameError::Io)?;
    Ok(Some(buf.freeze()))
}

/// Serves one connection until the peer closes, a request is rejected with a close, or shutdown.
pub(crate) async fn serve(
    socket: TcpStream,
    peer: SocketAddr,
    broker: Arc<Broker>,
    cancel: CancellationToken,
) {
    let _ = socket.set_nodelay(true);
    let (rd, wr) = socket.into_split();
    let mut rd = BufReader::with_capacity(64 * 1024, rd);
    let (tx, rx) = mpsc::channel::<Queued>(RESPONSE_QUEUE);
    let queued_bytes = Arc::new(Semaphore::new(RESPONSE_QUEUE_BYTES));
    let writer = tokio::spawn(write_loop(wr, rx));
    let max = broker.config().socket_request_max_bytes;
    debug!(%peer, "connection opened");
    loop {
        let frame = tokio::select! {
            _ = cancel.cancelled() => break,
            f = read_frame(&mut rd, max) => f,
        };
        let frame = match frame {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(FrameError::BadLength(n)) => {
                warn!(%peer, length = n, max, "closing connection: request frame length out of range");
                break;
            }
            Err(FrameError::Io(e)) => {
                debug!(%peer, error = %e, "connection read failed");
                break;
            }
        };
        match PEER.scope(peer, dispatch::handle(&broker, frame)).await {
            Ok(Some(resp)) => {
                let want = resp.len().clamp(1, RESPONSE_QUEUE_BYTES) as u32;
                let permit = tokio::select! {
                    _ = cancel.cancelled() => break,
                    p = queued_bytes.clone().acquire_many_owned(want) => p.expect("never closed"),
                };
                if tx.send((resp, permit)).await.is_err() {
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
    drop(tx);
    let _ = writer.await;
    debug!(%peer, "connection closed");
}

/// A response waiting for the writer, with its share of [`RESPONSE_QUEUE_BYTES`] (given back once written).
type Queued = (Bytes, OwnedSemaphorePermit);

/// Writes framed responses in order, flushing when the queue runs dry.
async fn write_loop(wr: OwnedWriteHalf, mut rx: mpsc::Receiver<Queued>) {
    let mut wr = BufWriter::with_capacity(64 * 1024, wr);
    while let Some((first, _permit)) = rx.recv().await {
        if wr.write_all(&first).await.is_err() {
            return;
        }
        drop((first, _permit));
        while let Ok((next, _permit)) = rx.try_recv() {
            if wr.write_all(&next).await.is_err() {
                return;
            }
        }
        if wr.flush().await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frame_lengths_outside_bounds_are_rejected() {
        let mut data: &[u8] = &[0, 0, 0, 3, 1, 2, 3];
        assert!(matches!(
            read_frame(&mut data, 100).await,
            Err(FrameError::BadLength(3))
        ));
        let mut data: &[u8] = &[0, 0, 1, 0];
        assert!(matches!(
            read_frame(&mut data, 100).await,
            Err(FrameError::BadLength(256))
        ));
        let mut data: &[u8] = &[0xff, 0xff, 0xff, 0xff];
        assert!(matches!(
            read_frame(&mut data, 100).await,
            Err(FrameError::BadLength(-1))
        ));
    }

    #[tokio::test]
    async fn truncated_frame_is_an_io_error_and_clean_eof_is_none() {
        let mut data: &[u8] = &[0, 0, 0, 20, 1, 2];
        assert!(matches!(
            read_frame(&mut data, 100).await,
            Err(FrameError::Io(_))
        ));
        let mut data: &[u8] = &[];
        assert!(matches!(read_frame(&mut data, 100).await, Ok(None)));
    }
}
