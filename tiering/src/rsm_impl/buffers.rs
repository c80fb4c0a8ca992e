//! Reused buffers for chunk GETs. A consumer catching up from the remote tier cycles whole chunks through the
//! chunk cache; a fresh multi-MiB allocation per chunk is mapped, page-faulted and zeroed by the kernel each time
//! and unmapped when the cache evicts it (about a tenth of the broker's CPU in a catch-up against Garage). A
//! chunk's bytes live in a pooled `Vec` that goes back to the pool when the last slice of the chunk is dropped.
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// Idle buffers kept for reuse (each about `chunk.size`); more are freed.
const MAX_IDLE: usize = 4;

#[derive(Default)]
pub(crate) struct BufferPool {
    idle: Mutex<Vec<Vec<u8>>>,
}

impl BufferPool {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// An empty buffer of at least `len` bytes' capacity: an idle one when one is large enough.
    fn take(&self, len: usize) -> Vec<u8> {
        let reused = {
            let mut idle = self.idle.lock();
            idle.iter()
                .position(|b| b.capacity() >= len)
                .map(|i| idle.swap_remove(i))
        };
        match reused {
            Some(mut b) => {
                b.clear();
                b
            }
            None => Vec::with_capacity(len),
        }
    }

    fn give_back(&self, buf: Vec<u8>) {
        let mut idle = self.idle.lock();
        if idle.len() < MAX_IDLE {
            idle.push(buf);
        }
    }

    /// Idle buffers (for tests).
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.idle.lock().len()
    }

    /// Collects `body` (`len` bytes expected) into one pooled buffer. Returns what arrived; the caller checks the
    /// length.
    pub(crate) async fn collect<E>(
        self: &Arc<Self>,
        len: usize,
        mut body: impl Stream<Item = Result<Bytes, E>> + Unpin,
    ) -> Result<Bytes, E> {
        let mut buf = self.take(len);
        while let Some(part) = body.next().await {
            buf.extend_from_slice(&part?);
        }
        Ok(Bytes::from_owner(Pooled {
            buf,
            pool: Arc::downgrade(self),
        }))
    }
}

/// A pooled buffer owned by a `Bytes`; back to the pool on drop.
struct Pooled {
    buf: Vec<u8>,
    pool: Weak<BufferPool>,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            pool.give_back(std::mem::take(&mut self.buf));
        }
    }
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
        let pool = BufferPool::new();
        let a = pool.collect(6, body(&[b"abc", b"def"])).await.unwrap();
        assert_eq!(&a[..], b"abcdef");
        let slice = a.slice(2..4);
        let first = a.as_ptr();
        drop(a);
        assert_eq!(pool.idle(), 0, "a slice still holds the buffer");
        drop(slice);
        assert_eq!(pool.idle(), 1);
        let b = pool.collect(4, body(&[b"wxyz"])).await.unwrap();
        assert_eq!(&b[..], b"wxyz");
        assert_eq!(b.as_ptr(), first, "the idle buffer is reused");
        assert_eq!(pool.idle(), 0);
    }

    #[tokio::test]
    async fn at_most_max_idle_buffers_are_kept() {
        let pool = BufferPool::new();
        let mut held = Vec::new();
        for _ in 0..MAX_IDLE + 3 {
            held.push(pool.collect(3, body(&[b"abc"])).await.unwrap());
        }
        drop(held);
        assert_eq!(pool.idle(), MAX_IDLE);
    }

    #[tokio::test]
    async fn a_body_error_is_returned() {
        let pool = BufferPool::new();
        let s = futures::stream::iter(vec![Ok(Bytes::from_static(b"ab")), Err("cut")]);
        assert_eq!(pool.collect(4, s).await.unwrap_err(), "cut");
    }
}
