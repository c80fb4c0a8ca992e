//! Progress of long start-up and maintenance work (loading thousands of logs, replaying the remote log metadata,
//! verifying a remote tier): an INFO line at most every [`Progress::INTERVAL`], and a last one when the work took
//! longer than that, so an operator watching a slow start sees it move instead of silence.
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts finished items of `total`; thread-safe (loaders on several threads share one).
#[derive(Debug)]
pub struct Progress {
    what: &'static str,
    total: u64,
    done: AtomicU64,
    started: Instant,
    last_report: Mutex<Instant>,
    interval: Duration,
}

impl Progress {
    /// How often a progress line is logged at most.
    pub const INTERVAL: Duration = Duration::from_secs(5);

    /// Progress of `total` items of `what` (e.g. "loading logs"), reporting every [`Progress::INTERVAL`].
    pub fn new(what: &'static str, total: u64) -> Self {
        Self::with_interval(what, total, Self::INTERVAL)
    }

    /// As [`Progress::new`] with another reporting interval.
    pub fn with_interval(what: &'static str, total: u64, interval: Duration) -> Self {
        let now = Instant::now();
        Self {
            what,
            total,
            done: AtomicU64::new(0),
            started: now,
            last_report: Mutex::new(now),
            interval,
        }
    }

    /// Marks `n` more items done; returns the line logged, if one was due.
    pub fn advance(&self, n: u64) -> Option<String> {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        let now = Instant::now();
        {
            let mut last = self.last_report.lock();
            if now.duration_since(*last) < self.interval {
                return None;
            }
            *last = now;
        }
        Some(self.report(done, now))
    }

    /// Items done so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Ends the work: logs a last line when it took longer than the interval (returned too).
    pub fn finish(&self) -> Option<String> {
        let now = Instant::now();
        (now.duration_since(self.started) >= self.interval).then(|| self.report(self.done(), now))
    }

    fn report(&self, done: u64, now: Instant) -> String {
        let pct = done
            .saturating_mul(100)
            .checked_div(self.total)
            .unwrap_or(100);
        let line = format!(
            "{}: {done}/{} ({pct}%) after {:.1} s",
            self.what,
            self.total,
            now.duration_since(self.started).as_secs_f64()
        );
        tracing::info!(what = self.what, done, total = self.total, "{line}");
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_only_once_the_interval_passed_and_counts_every_thread() {
        let p = Progress::with_interval("loading logs", 40, Duration::from_millis(40));
        assert_eq!(p.advance(1), None, "reported before the interval");
        assert_eq!(p.finish(), None, "short work ends without a line");
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..3 {
                        p.advance(1);
                    }
                });
            }
        });
        assert_eq!(p.done(), 10);
        let deadline = Instant::now() + Duration::from_secs(5);
        let line = loop {
            if let Some(l) = p.advance(2) {
                break l;
            }
            assert!(Instant::now() < deadline, "no report within 5 s");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(line.starts_with("loading logs: "), "{line}");
        let done: u64 = line["loading logs: ".len()..]
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(done >= 12 && done.is_multiple_of(2), "{line}");
        assert!(line.contains("/40 ("), "{line}");
        assert_eq!(p.advance(1), None, "a second line right after the first");
        let last = p
            .finish()
            .expect("work longer than the interval ends with a line");
        assert!(last.contains(&format!("{}/40", p.done())), "{last}");
    }
}
