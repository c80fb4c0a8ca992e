//! A byte-rate quota (Kafka's `remote.log.manager.{copy,fetch}.max.bytes.per.second`, KIP-956): a token bucket
//! holding at most one second of bytes. A caller takes its bytes and, when the bucket is in debt, waits until the
//! debt is paid back, so one large segment is never refused, only delayed. The rate may change at run time
//! (a dynamic broker config): waiters then recompute their wait at the new rate.
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

#[derive(Debug)]
pub(crate) struct Quota {
    rate: AtomicU64,
    state: Mutex<(f64, Instant)>,
    changed: Notify,
}

impl Quota {
    pub(crate) fn new(bytes_per_second: u64) -> Self {
        Self {
            rate: AtomicU64::new(bytes_per_second),
            state: Mutex::new((bytes_per_second as f64, Instant::now())),
            changed: Notify::new(),
        }
    }

    /// The rate in bytes per second (`i64::MAX` or more: no quota).
    pub(crate) fn rate(&self) -> u64 {
        self.rate.load(Ordering::Relaxed)
    }

    /// Changes the rate at once: the bucket keeps its balance (capped at one second of the new rate), a debt is
    /// paid back at the new rate, and no quota forgives it; waiters in [`acquire`](Self::acquire) recompute.
    pub(crate) fn set_rate(&self, bytes_per_second: u64) {
        {
            let mut s = self.state.lock();
            let now = Instant::now();
            let (tokens, last) = *s;
            let old = self.rate() as f64;
            let refilled = if self.unlimited() {
                bytes_per_second as f64
            } else {
                (tokens + now.duration_since(last).as_secs_f64() * old).min(old)
            };
            let tokens = if bytes_per_second >= i64::MAX as u64 {
                bytes_per_second as f64
            } else {
                refilled.min(bytes_per_second as f64)
            };
            *s = (tokens, now);
            self.rate.store(bytes_per_second, Ordering::Relaxed);
        }
        self.changed.notify_waiters();
    }

    fn unlimited(&self) -> bool {
        self.rate() >= i64::MAX as u64
    }

    /// Takes `bytes` from the bucket; returns how long the caller must wait first (zero when within quota).
    pub(crate) fn take(&self, bytes: u64) -> Duration {
        if self.unlimited() {
            return Duration::ZERO;
        }
        let mut s = self.state.lock();
        let now = Instant::now();
        let rate = self.rate() as f64;
        let (tokens, last) = *s;
        let tokens =
            (tokens + now.duration_since(last).as_secs_f64() * rate).min(rate) - bytes as f64;
        *s = (tokens, now);
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-tokens / rate)
        }
    }

    /// How long until the bucket's debt is paid back at the current rate (zero when none or no quota).
    fn debt_wait(&self) -> Duration {
        if self.unlimited() {
            return Duration::ZERO;
        }
        let s = self.state.lock();
        let (tokens, last) = *s;
        let rate = self.rate() as f64;
        let tokens = tokens + Instant::now().duration_since(last).as_secs_f64() * rate;
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-tokens / rate)
        }
    }

    /// Whether the bucket is in debt (Kafka's `isRemoteLogFetchQuotaExceeded`): a read should not start now.
    pub(crate) fn exceeded(&self) -> bool {
        if self.unlimited() {
            return false;
        }
        let s = self.state.lock();
        let (tokens, last) = *s;
        tokens + Instant::now().duration_since(last).as_secs_f64() * self.rate() as f64 <= 0.0
    }

    /// [`take`](Self::take), then sleep until the debt is paid back, at the rate in force (a rate changed
    /// meanwhile shortens or lengthens the wait).
    pub(crate) async fn acquire(&self, bytes: u64) {
        if self.take(bytes).is_zero() {
            return;
        }
        loop {
            // Registered before the wait is computed, so a rate change in between is not missed.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let wait = self.debt_wait();
            if wait.is_zero() {
                return;
            }
            tracing::debug!(
                wait_ms = wait.as_millis() as u64,
                bytes,
                "remote storage quota throttles"
            );
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = changed => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_a_second_of_bytes_then_charges_debt() {
        let q = Quota::new(1_000);
        assert!(!q.exceeded());
        assert_eq!(q.take(600), Duration::ZERO);
        assert!(!q.exceeded(), "400 bytes left");
        let wait = q.take(900);
        assert!(
            wait >= Duration::from_millis(450) && wait <= Duration::from_millis(510),
            "{wait:?}"
        );
        assert!(q.exceeded(), "500 bytes in debt");
        assert_eq!(
            Quota::new(i64::MAX as u64).take(u64::MAX / 2),
            Duration::ZERO
        );
    }

    /// A waiter throttled by a tiny rate returns at once when the quota is lifted (a dynamic broker config).
    #[tokio::test]
    async fn lifting_the_rate_releases_a_throttled_waiter() {
        let q = std::sync::Arc::new(Quota::new(10));
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.acquire(1_000_000).await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!waiter.is_finished(), "a megabyte at 10 B/s waits");
        assert_eq!(q.rate(), 10);
        q.set_rate(i64::MAX as u64);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("released once the quota is lifted")
            .unwrap();
        assert_eq!(q.take(u64::MAX / 2), Duration::ZERO);
        q.set_rate(1_000);
        assert!(q.take(2_000) > Duration::ZERO, "the new rate applies");
    }
}
