//! `queued.max.request.bytes`: the bytes of request frames being read across all connections, and how a frame
//! takes its share as its bytes arrive ([`Held::grow`]).
//!
//! The budget has two parts. Most of it is shared by every frame; one eighth, the reserve, only by small frames
//! (declaring at most [`SMALL_FRAME`] bytes, or the reserve if less). Without the reserve, a dozen connections
//! that each declare a `socket.request.max.bytes` frame, send most of it and stop hold the whole budget until
//! their read timeout, and every other client's requests, however small, wait behind them (issue 30: Metadata and
//! produce timed out 4 times in 23). With it, such frames can hold at most seven eighths of the budget (plus the
//! one frame allowed past it) and small requests keep being read from the reserve. Why a reserve and not:
//! - a share per connection: the stalled connections are many (and may come from the client's own address, so a
//!   share per IP does not help either); each one's share would still add up to the whole budget;
//! - admission before the body (Kafka takes a frame's whole length from its memory pool when the length is read):
//!   a declared length would then hold its bytes before they arrive, which made sockets that declare large frames
//!   and send one byte a cheap denial of service (tester report R7-2);
//!
//! The reserve is carved out of the budget, so what frames hold together stays within `queued.max.request.bytes`
//! plus the one frame past it. Small frames take from the shared part first and from the reserve when it has none;
//! large frames never touch the reserve. What is left: stalled small frames can still exhaust the reserve, but it
//! takes one connection per [`SMALL_FRAME`] bytes of it (25 for the 200 MiB default), each bounded by
//! `socket.request.read.timeout.ms`, `max.connections` and `max.connections.per.ip`.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The largest declared length that may take from the reserve: a default librdkafka or Java produce request
/// (`message.max.bytes` / `max.request.size` about 1 MB) and every Metadata, ApiVersions, heartbeat or commit.
pub(crate) const SMALL_FRAME: usize = 1 << 20;

/// `queued.max.request.bytes`: the bytes of request frames being read across all connections, reserved as they
/// arrive, and the one frame at a time that may finish past it.
#[derive(Debug)]
pub(crate) struct RequestBudget {
    /// The part every frame takes from, one permit per byte.
    pub(crate) bytes: Arc<Semaphore>,
    /// The size of that part.
    shared_size: usize,
    /// The part only small frames take from.
    pub(crate) reserve: Arc<Semaphore>,
    /// A frame declaring at most this many bytes is small.
    pub(crate) small: usize,
    /// Held by the frame that goes past the budget: a frame that holds part of the budget and finds none left
    /// takes it (if free) and reads the rest of its frame without waiting, as Kafka's non-strict memory pool lets
    /// one request dip below zero. Frames that each hold part of the budget can then never wait on each other
    /// until their read timeout; the bytes in flight stay below the budget plus one frame.
    pub(crate) overdraft: Arc<tokio::sync::Mutex<()>>,
}

impl RequestBudget {
    /// A budget of `bytes`, one eighth of it reserved for small frames.
    pub(crate) fn new(bytes: usize) -> Self {
        let bytes = bytes.min(Semaphore::MAX_PERMITS);
        let reserve = bytes / 8;
        Self::split(bytes - reserve, reserve, SMALL_FRAME.min(reserve))
    }

    /// A budget of `shared` bytes for every frame and `reserve` for frames declaring at most `small` bytes.
    pub(crate) fn split(shared: usize, reserve: usize, small: usize) -> Self {
        RequestBudget {
            bytes: Arc::new(Semaphore::new(shared)),
            shared_size: shared,
            reserve: Arc::new(Semaphore::new(reserve)),
            small,
            overdraft: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// Takes `want` bytes now, from the shared part or (for a `small` frame) the reserve.
    fn try_take(&self, want: u32, small: bool) -> Option<(Part, OwnedSemaphorePermit)> {
        if let Ok(p) = self.bytes.clone().try_acquire_many_owned(want) {
            return Some((Part::Shared, p));
        }
        if small {
            if let Ok(p) = self.reserve.clone().try_acquire_many_owned(want) {
                return Some((Part::Reserve, p));
            }
        }
        None
    }

    /// Waits for `want` bytes from the shared part or (for a `small` frame) the reserve, whichever has them first.
    async fn take(&self, want: u32, small: bool) -> (Part, OwnedSemaphorePermit) {
        let shared = self.bytes.clone().acquire_many_owned(want);
        if !small {
            return (Part::Shared, shared.await.expect("never closed"));
        }
        let reserve = self.reserve.clone().acquire_many_owned(want);
        tokio::select! {
            p = shared => (Part::Shared, p.expect("never closed")),
            p = reserve => (Part::Reserve, p.expect("never closed")),
        }
    }
}

/// Which part of the budget bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Shared,
    Reserve,
}

/// The frame did not arrive in full within its read timeout while it waited for the budget.
#[derive(Debug)]
pub(crate) struct TooSlow;

/// A frame's share of `queued.max.request.bytes` (and the overdraft, if it went past the budget), given back
/// when dropped: once the request is handled.
#[derive(Debug, Default)]
pub(crate) struct Held {
    shared: Option<OwnedSemaphorePermit>,
    reserve: Option<OwnedSemaphorePermit>,
    /// Taken when this frame goes past the budget (see RequestBudget::overdraft); kept until it is handled.
    overdraft: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Held {
    /// Whether the frame went past the budget (it takes nothing more from it).
    pub(crate) fn past_budget(&self) -> bool {
        self.overdraft.is_some()
    }

    fn holds_some(&self) -> bool {
        self.shared.is_some() || self.reserve.is_some()
    }

    fn keep(&mut self, (part, more): (Part, OwnedSemaphorePermit)) {
        let slot = match part {
            Part::Shared => &mut self.shared,
            Part::Reserve => &mut self.reserve,
        };
        match slot {
            Some(h) => h.merge(more),
            None => *slot = Some(more),
        }
    }

    /// Takes `want` more bytes from `budget` for a growing frame of `declared` bytes, or the overdraft. Waiting
    /// while the frame holds nothing moves `deadline` on (the broker's doing, not the peer's); otherwise it
    /// counts, and `Err(TooSlow)` when it passes.
    pub(crate) async fn grow(
        &mut self,
        budget: &RequestBudget,
        declared: usize,
        want: u32,
        deadline: &mut tokio::time::Instant,
    ) -> Result<(), TooSlow> {
        let small = declared <= budget.small;
        if let Some(taken) = budget.try_take(want, small) {
            self.keep(taken);
            return Ok(());
        }
        let mut want = want;
        if !self.holds_some() {
            // Holding none: waiting does not count against the read timeout. At most the shared part's size is
            // waited for (a first growth larger than it could never be granted); the rest is past the budget.
            let first = want.min(budget.shared_size.max(1) as u32);
            let waiting = tokio::time::Instant::now();
            let taken = budget.take(first, small).await;
            *deadline += waiting.elapsed();
            self.keep(taken);
            want -= first;
            if want == 0 {
                return Ok(());
            }
            if let Some(taken) = budget.try_take(want, small) {
                self.keep(taken);
                return Ok(());
            }
        }
        // None left while this frame holds some: past the budget if no other frame is.
        if let Ok(g) = budget.overdraft.clone().try_lock_owned() {
            self.overdraft = Some(g);
            return Ok(());
        }
        // The bytes, or the overdraft once the frame past the budget is handled (whichever comes first; a waiter
        // parked on the bytes alone could wait for bytes that only come back when it finishes).
        let token = budget.overdraft.clone().lock_owned();
        let first = async {
            tokio::select! {
                taken = budget.take(want, small) => Ok(taken),
                g = token => Err(g),
            }
        };
        match tokio::time::timeout_at(*deadline, first).await {
            Err(_) => Err(TooSlow),
            Ok(Ok(taken)) => {
                self.keep(taken);
                Ok(())
            }
            Ok(Err(g)) => {
                self.overdraft = Some(g);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// With the shared part held, a small frame takes from the reserve at once and a large one waits; a small
    /// frame that finds the reserve empty too waits for either.
    #[tokio::test]
    async fn small_frames_take_the_reserve_when_the_shared_part_is_held() {
        let budget = RequestBudget::split(100, 20, 10);
        let _hog = budget.bytes.clone().acquire_many_owned(100).await.unwrap();
        let mut small = Held::default();
        let mut deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        small.grow(&budget, 10, 8, &mut deadline).await.unwrap();
        assert_eq!(budget.reserve.available_permits(), 12);

        let mut large = Held::default();
        let mut d = tokio::time::Instant::now() + Duration::from_secs(5);
        let waited = tokio::time::timeout(
            Duration::from_millis(50),
            large.grow(&budget, 11, 4, &mut d),
        )
        .await;
        assert!(waited.is_err(), "a large frame took the reserve");
        assert_eq!(budget.reserve.available_permits(), 12);

        let mut second = Held::default();
        let mut d = tokio::time::Instant::now() + Duration::from_secs(5);
        second.grow(&budget, 10, 10, &mut d).await.unwrap();
        assert_eq!(budget.reserve.available_permits(), 2);
        let mut third = Held::default();
        {
            let waiting = third.grow(&budget, 10, 4, &mut d);
            tokio::pin!(waiting);
            assert!(
                tokio::time::timeout(Duration::from_millis(50), &mut waiting)
                    .await
                    .is_err(),
                "the reserve is bounded"
            );
            drop(small);
            waiting.await.unwrap();
        }
        assert!(third.reserve.is_some());
        drop((second, third));
        assert_eq!(budget.reserve.available_permits(), 20);
    }

    #[test]
    fn the_reserve_is_an_eighth_of_the_budget_and_small_frames_at_most_1_mib() {
        let b = RequestBudget::new(200 << 20);
        assert_eq!(b.bytes.available_permits(), 175 << 20);
        assert_eq!(b.reserve.available_permits(), 25 << 20);
        assert_eq!(b.small, 1 << 20);
        let b = RequestBudget::new(4096);
        assert_eq!(
            (
                b.bytes.available_permits(),
                b.reserve.available_permits(),
                b.small
            ),
            (3584, 512, 512)
        );
    }
}
