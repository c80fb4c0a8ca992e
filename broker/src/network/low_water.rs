//! `SO_RCVLOWAT` while a large request frame arrives: the kernel then wakes the connection's reader once a useful
//! amount has arrived instead of at every segment. A client that writes a frame in many small writes (librdkafka
//! over TLS writes one 16 KiB record per `write`) otherwise costs a wake-up of the broker per write, paid on both
//! sides of a loopback connection. The low-water mark never exceeds the frame bytes still to come minus what the
//! layers below the frame reader may already hold, so a read never waits for bytes the client will not send.
//! Holds one of the broker crate's three `unsafe` uses (the others: `crate::heap`'s `malloc_trim` and
//! `crate::codec::parts`' `BufMut`): the `setsockopt` call.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

/// The highest low-water mark set.
const MAX_LOW_WATER: usize = 256 * 1024;

/// A connection socket's receive low-water mark.
#[derive(Debug)]
pub(crate) struct LowWater {
    fd: RawFd,
    /// Bytes of the frame the layers between the socket and the frame reader may hold (their buffers).
    held_above: usize,
    current: AtomicI32,
    /// Whether the mark was ever raised.
    #[cfg(test)]
    raised: std::sync::atomic::AtomicBool,
}

impl LowWater {
    /// For the socket `fd`, read through buffers holding up to `held_above` bytes.
    pub(crate) fn new(fd: RawFd, held_above: usize) -> Self {
        Self {
            fd,
            held_above,
            current: AtomicI32::new(1),
            #[cfg(test)]
            raised: Default::default(),
        }
    }

    /// Sets the mark for a frame with `remaining` bytes still to come (0 once it is read: back to 1 byte).
    pub(crate) fn expect(&self, remaining: usize) {
        let want = match remaining.checked_sub(self.held_above) {
            Some(sure) if sure >= 64 * 1024 => sure.min(MAX_LOW_WATER) as i32,
            _ => 1,
        };
        if self.current.load(Ordering::Relaxed) == want {
            return;
        }
        // SAFETY: `fd` is the connection's socket, open while its connection is served (the `LowWater` lives in
        // the connection's frame reader); `want` is a valid `c_int` whose size is passed.
        let rc = unsafe {
            libc::setsockopt(
                self.fd,
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&want as *const i32).cast(),
                std::mem::size_of::<i32>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            self.current.store(want, Ordering::Relaxed);
            #[cfg(test)]
            if want > 1 {
                self.raised.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The mark now (bytes).
    #[cfg(test)]
    pub(crate) fn current(&self) -> i32 {
        self.current.load(Ordering::Relaxed)
    }

    /// Whether the mark was ever raised above one byte.
    #[cfg(test)]
    pub(crate) fn raised(&self) -> bool {
        self.raised.load(Ordering::Relaxed)
    }
}
