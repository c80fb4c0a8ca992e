//! Reused buffers for chunk GETs. A consumer catching up from the remote tier cycles whole chunks through the
//! chunk cache; a fresh multi-MiB allocation per chunk is mapped, page-faulted and zeroed by the kernel each time
//! and unmapped when the cache evicts it (about a tenth of the broker's CPU in a catch-up against Garage). A
//! chunk's bytes live in a pooled `Vec` (`strata_storage::buffers`) that goes back to the pool when the last slice
//! of the chunk is dropped.
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt};
pub(crate) use strata_storage::buffers::BufferPool;

/// Idle buffers kept for reuse (each about `chunk.size`, whatever it is set to); more are freed.
const MAX_IDLE: usize = 4;

/// The pool of one RSM's chunk GETs, bounded by count only.
pub(crate) fn pool() -> Arc<BufferPool> {
    BufferPool::new(MAX_IDLE, usize::MAX)
}

/// Collects `body` (`len` bytes expected) into one pooled buffer. Returns what arrived; the caller checks the
/// length.
pub(crate) async fn collect<E>(
    pool: &Arc<BufferPool>,
    len: usize,
    mut body: impl Stream<Item = Result<Bytes, E>> + Unpin,
) -> Result<Bytes, E> {
    let mut buf = pool.take(len);
    buf.clear();
    while let Some(part) = body.next().await {
        buf.extend_from_slice(&part?);
    }
    Ok(pool.into_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(parts: &[&'static [u8]]) -> impl Stream<Item = Result<Bytes, ()>> + Unpin {
        futures::stream::iter(
            parts
                .iter()
                .map(|p| Ok(Bytes::from_static(p)))
                .collect::<Vec<_>>(),
        )
    }

    #[tokio::test]
    async fn a_buffer_is_reused_once_every_slice_of_its_chunk_is_dropped() {
        let pool = pool();
        let a = collect(&pool, 6, body(&[b"abc", b"def"])).await.unwrap();
        assert_eq!(&a[..], b"abcdef");
        let slice = a.slice(2..4);
        let first = a.as_ptr();
        drop(a);
        assert_eq!(pool.idle(), 0, "a slice still holds the buffer");
        drop(slice);
        assert_eq!(pool.idle(), 1);
        let b = collect(&pool, 4, body(&[b"wxyz"])).await.unwrap();
        assert_eq!(&b[..], b"wxyz");
        assert_eq!(b.as_ptr(), first, "the idle buffer is reused");
        assert_eq!(pool.idle(), 0);
    }

    #[tokio::test]
    async fn at_most_max_idle_buffers_are_kept() {
        let pool = pool();
        let mut held = Vec::new();
        for _ in 0..MAX_IDLE + 3 {
            held.push(collect(&pool, 3, body(&[b"abc"])).await.unwrap());
        }
        drop(held);
        assert_eq!(pool.idle(), MAX_IDLE);
    }

    #[tokio::test]
    async fn a_body_error_is_returned() {
        let pool = pool();
        let s = futures::stream::iter(vec![Ok(Bytes::from_static(b"ab")), Err("cut")]);
        assert_eq!(collect(&pool, 4, s).await.unwrap_err(), "cut");
    }
}
