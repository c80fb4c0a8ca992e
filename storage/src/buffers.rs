//! Reused read buffers. Serving a consumer reads up to a partition's fetch size (1 MiB by default) per partition per
//! fetch; a fresh allocation of that size per read is zeroed, and with an allocator that returns freed pages to the
//! kernel (jemalloc) it is also mapped and page-faulted each time: with jemalloc, a consume of 8 M x 100 B spent a
//! fifth of the broker's CPU in page faults and page clearing. A buffer here lives in a `Bytes` and goes back to its
//! pool when the last slice of it is dropped (a fetch response written to the socket).
//!
//! [`reads`] is the pool of the log's reads ([`crate::file_records`]); the remote tier keeps its own for chunk GETs.
//! [`BufferPool::release_idle`] frees the idle buffers of a pool unused since the previous call (the broker calls it
//! every few seconds), so a quiet broker holds none.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Weak};

use bytes::Bytes;
use parking_lot::Mutex;

/// A pool of idle buffers, bounded in count and in bytes.
#[derive(Debug)]
pub struct BufferPool {
    idle: Mutex<Vec<Vec<u8>>>,
    max_idle: usize,
    max_idle_bytes: usize,
    used: AtomicBool,
}

static READS: LazyLock<Arc<BufferPool>> = LazyLock::new(|| BufferPool::new(16, 16 << 20));

/// The pool of the log's reads: at most 16 idle buffers and 16 MiB.
pub fn reads() -> &'static Arc<BufferPool> {
    &READS
}

impl BufferPool {
    /// A pool keeping at most `max_idle` idle buffers of at most `max_idle_bytes` in all (a larger buffer given
    /// back is freed).
    pub fn new(max_idle: usize, max_idle_bytes: usize) -> Arc<Self> {
        Arc::new(BufferPool {
            idle: Mutex::new(Vec::new()),
            max_idle,
            max_idle_bytes,
            used: AtomicBool::new(false),
        })
    }

    /// A buffer of at least `capacity` bytes' capacity, its contents unspecified (a reused one keeps what it held):
    /// the smallest idle one large enough, else a new one.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        self.used.store(true, Ordering::Relaxed);
        let reused = {
            let mut idle = self.idle.lock();
            idle.iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= capacity)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i)
                .map(|i| idle.swap_remove(i))
        };
        reused.unwrap_or_else(|| Vec::with_capacity(capacity))
    }

    /// A buffer of exactly `len` initialised bytes (stale contents of a reused buffer; zeroed only where it grew),
    /// to be overwritten whole by the caller.
    pub fn take_len(&self, len: usize) -> Vec<u8> {
        let mut b = self.take(len);
        if b.len() < len {
            b.resize(len, 0);
        } else {
            b.truncate(len);
        }
        b
    }

    /// `buf` as `Bytes`; the buffer comes back to this pool when the last slice of it is dropped.
    pub fn into_bytes(self: &Arc<Self>, buf: Vec<u8>) -> Bytes {
        Bytes::from_owner(Pooled {
            buf,
            pool: Arc::downgrade(self),
        })
    }

    /// Takes `buf` back for reuse, or frees it when the pool is full.
    pub fn give_back(&self, buf: Vec<u8>) {
        let mut idle = self.idle.lock();
        let held: usize = idle.iter().map(Vec::capacity).sum();
        if idle.len() < self.max_idle && held.saturating_add(buf.capacity()) <= self.max_idle_bytes
        {
            idle.push(buf);
        }
    }

    /// Frees the idle buffers when none was taken since the previous call; returns the bytes freed.
    pub fn release_idle(&self) -> usize {
        if self.used.swap(false, Ordering::Relaxed) {
            return 0;
        }
        let freed: Vec<Vec<u8>> = std::mem::take(&mut *self.idle.lock());
        freed.iter().map(Vec::capacity).sum()
    }

    /// Idle buffers.
    pub fn idle(&self) -> usize {
        self.idle.lock().len()
    }
}

/// A pooled buffer owned by a `Bytes`; back to its pool on drop.
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

    #[test]
    fn a_buffer_is_reused_once_every_slice_of_it_is_dropped() {
        let pool = BufferPool::new(4, 1 << 20);
        let mut v = pool.take_len(6);
        v.copy_from_slice(b"abcdef");
        let first = v.as_ptr();
        let a = pool.into_bytes(v);
        let slice = a.slice(2..4);
        drop(a);
        assert_eq!(pool.idle(), 0, "a slice still holds the buffer");
        drop(slice);
        assert_eq!(pool.idle(), 1);
        let b = pool.take_len(4);
        assert_eq!(b.as_ptr(), first, "the idle buffer is reused");
        assert_eq!(b.len(), 4);
        assert_eq!(pool.idle(), 0);
    }

    #[test]
    fn the_smallest_idle_buffer_that_fits_is_taken() {
        let pool = BufferPool::new(4, 1 << 20);
        pool.give_back(Vec::with_capacity(1000));
        pool.give_back(Vec::with_capacity(100));
        pool.give_back(Vec::with_capacity(10));
        let b = pool.take(50);
        assert!(
            b.capacity() >= 100 && b.capacity() < 1000,
            "{}",
            b.capacity()
        );
        assert_eq!(pool.take(2000).capacity(), 2000, "none fits: a new one");
    }

    #[test]
    fn idle_buffers_are_bounded_in_count_and_bytes() {
        let pool = BufferPool::new(3, 1000);
        for _ in 0..5 {
            pool.give_back(Vec::with_capacity(100));
        }
        assert_eq!(pool.idle(), 3);
        let pool = BufferPool::new(10, 250);
        for _ in 0..5 {
            pool.give_back(Vec::with_capacity(100));
        }
        assert_eq!(pool.idle(), 2);
    }

    #[test]
    fn idle_buffers_are_released_once_the_pool_went_unused_for_an_interval() {
        let pool = BufferPool::new(4, 1 << 20);
        let b = pool.take(100);
        pool.give_back(b);
        assert_eq!(pool.release_idle(), 0, "used since the last call");
        assert_eq!(pool.idle(), 1);
        assert_eq!(pool.release_idle(), 100);
        assert_eq!(pool.idle(), 0);
    }
}
