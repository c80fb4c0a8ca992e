//! [`Throttler`]: holds the cleaner's I/O to `log.cleaner.io.max.bytes.per.second` (Kafka's `Throttler`): bytes
//! read and written are counted, and once a check interval passed (or an interval's worth of bytes) with a rate
//! above the limit the caller sleeps
//! until the rate is back at it. Shared by the cleaner threads (the limit is for all of them, as in Kafka).
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the rate is checked (Kafka: 300 ms).
const CHECK_INTERVAL: Duration = Duration::from_millis(100);

pub(crate) struct Throttler {
    /// The limit's `f64` bits (changed at run time by [`Throttler::set_rate`]).
    bytes_per_second: AtomicU64,
    state: Mutex<(Instant, f64)>,
}

impl Throttler {
    pub(crate) fn new(bytes_per_second: f64) -> Self {
        Self {
            bytes_per_second: AtomicU64::new(bytes_per_second.to_bits()),
            state: Mutex::new((Instant::now(), 0.0)),
        }
    }

    /// Sets the limit, from the next check on.
    pub(crate) fn set_rate(&self, bytes_per_second: f64) {
        self.bytes_per_second
            .store(bytes_per_second.to_bits(), Ordering::Relaxed);
    }

    /// Counts `bytes` of I/O and sleeps if the rate since the last check is above the limit.
    pub(crate) fn maybe_throttle(&self, bytes: u64) {
        let rate = f64::from_bits(self.bytes_per_second.load(Ordering::Relaxed));
        if !(rate.is_finite() && rate > 0.0) || rate >= f64::MAX / 2.0 {
            return;
        }
        let sleep = {
            let mut st = self.state.lock();
            st.1 += bytes as f64;
            let elapsed = st.0.elapsed();
            // Check each interval, or sooner once the bytes exceed what one interval allows.
            if elapsed < CHECK_INTERVAL && st.1 < rate * CHECK_INTERVAL.as_secs_f64() {
                return;
            }
            let needed = Duration::from_secs_f64(st.1 / rate);
            *st = (Instant::now(), 0.0);
            needed.saturating_sub(elapsed)
        };
        if !sleep.is_zero() {
            std::thread::sleep(sleep);
            let mut st = self.state.lock();
            st.0 = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_above_the_limit_is_slowed_to_it() {
        let t = Throttler::new(10.0 * 1024.0 * 1024.0); // 10 MiB/s
        let start = Instant::now();
        // 3 MiB in 64 KiB steps: about 0.3 s at the limit.
        for _ in 0..48 {
            t.maybe_throttle(64 << 10);
        }
        assert!(
            start.elapsed() >= Duration::from_millis(150),
            "{:?}",
            start.elapsed()
        );
        let unlimited = Throttler::new(f64::MAX);
        let start = Instant::now();
        for _ in 0..10_000 {
            unlimited.maybe_throttle(1 << 20);
        }
        assert!(start.elapsed() < Duration::from_millis(100));
    }
}
