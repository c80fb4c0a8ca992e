//! A byte-rate quota (Kafka's `remote.log.manager.{copy,fetch}.max.bytes.per.second`, KIP-956): a token bucket
//! holding at most one second of bytes. A caller takes its bytes and, when the bucket is in debt, waits until the
//! debt is paid back, so one large segment is never refused, only delayed.
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub(crate) struct Quota {
    rate: u64,
    state: Mutex<(f64, Instant)>,
}

impl Quota {
    pub(crate) fn new(bytes_per_second: u64) -> Self {
        Self {
            rate: bytes_per_second,
            state: Mutex::new((bytes_per_second as f64, Instant::now())),
        }
    }

    fn unlimited(&self) -> bool {
        self.rate >= i64::MAX as u64
    }

    /// Takes `bytes` from the bucket; returns how long the caller must wait first (zero when within quota).
    pub(crate) fn take(&self, bytes: u64) -> Duration {
        if self.unlimited() {
            return Duration::ZERO;
        }
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let rate = self.rate as f64;
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

    /// Whether the bucket is in debt (Kafka's `isRemoteLogFetchQuotaExceeded`): a read should not start now.
    pub(crate) fn exceeded(&self) -> bool {
        if self.unlimited() {
            return false;
        }
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = *s;
        tokens + Instant::now().duration_since(last).as_secs_f64() * self.rate as f64 <= 0.0
    }

    /// [`take`](Self::take), then sleep for the debt.
    pub(crate) async fn acquire(&self, bytes: u64) {
        let wait = self.take(bytes);
        if !wait.is_zero() {
            tracing::debug!(
                wait_ms = wait.as_millis() as u64,
                bytes,
                "remote storage quota throttles"
            );
            tokio::time::sleep(wait).await;
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
}
