//! [`HandleCache`]: the bound on the file handles the logs keep open (`log.max.open.files`).
//!
//! A segment's `.log` file descriptor and the memory maps of its `.index` and `.timeindex` are opened on first
//! use, not when the log loads, and each one open holds a [`HandleToken`] (one unit of the cap: an open file
//! descriptor or one memory map; an index keeps no descriptor once mapped). When taking a token brings the count
//! over the cap, the taker sweeps: it visits the registered logs, least recently used first, and each log it can
//! lock without waiting closes the handles of its segments not used since the previous sweep (every handle of a
//! log idle since then, its active segment included), until the count is back to three quarters of the cap; if
//! every log was used since the last sweep, the least recently used ones give up their handles as well. A closed
//! handle is reopened transparently on the next append or read. Logs being appended to or read right now (their
//! lock held) are skipped, so the count may exceed the cap by the handles such requests hold at once.
//!
//! The hot path pays one relaxed load (and a store when the sweep epoch changed) per append or read: no lock, no
//! shared counter written; the count changes only when a handle opens or closes.
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// Something holding handles that a sweep can ask to close some (a `UnifiedLog`).
pub(crate) trait ReleaseHandles: Send + Sync {
    /// The sweep epoch of the last use.
    fn last_used(&self) -> u64;
    /// Closes the handles of segments not used since `epoch` (every handle when `all`), if the holder can be
    /// locked without waiting. Returns false when it was busy.
    fn release_handles(&self, epoch: u64, all: bool) -> bool;
}

/// Counts open file handles (descriptors and memory maps) and closes idle ones past the cap. See the module docs.
pub(crate) struct HandleCache {
    cap: usize,
    open: AtomicUsize,
    /// Incremented by every sweep; uses record the current value.
    epoch: AtomicU64,
    holders: Mutex<Vec<Weak<dyn ReleaseHandles>>>,
    /// Held by the one sweep under way.
    sweeping: Mutex<()>,
    sweeps: AtomicU64,
}

impl std::fmt::Debug for HandleCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandleCache")
            .field("cap", &self.cap)
            .field("open", &self.open())
            .finish()
    }
}

/// One open handle counted by a [`HandleCache`]; dropping it gives the unit back.
#[derive(Debug)]
pub(crate) struct HandleToken {
    cache: Arc<HandleCache>,
}

impl Drop for HandleToken {
    fn drop(&mut self) {
        self.cache.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl HandleCache {
    /// A cache allowing `cap` handles open at once (at least 16).
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap: cap.max(16),
            open: AtomicUsize::new(0),
            epoch: AtomicU64::new(1),
            holders: Mutex::new(Vec::new()),
            sweeping: Mutex::new(()),
            sweeps: AtomicU64::new(0),
        })
    }

    /// The cache of handles opened outside a `LogManager` (public constructors such as `FileRecords::open`):
    /// counted, never swept.
    pub(crate) fn unbounded() -> Arc<Self> {
        static UNBOUNDED: OnceLock<Arc<HandleCache>> = OnceLock::new();
        UNBOUNDED.get_or_init(|| Self::new(usize::MAX)).clone()
    }

    /// Handles open now.
    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// The cap.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Sweeps so far.
    #[cfg(test)]
    pub(crate) fn sweeps(&self) -> u64 {
        self.sweeps.load(Ordering::Relaxed)
    }

    /// The current epoch, for [`HandleCache::touch`].
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Records a use in `last_used` (a relaxed load, and a store only once per epoch).
    #[inline]
    pub(crate) fn touch(&self, last_used: &AtomicU64) {
        let now = self.epoch.load(Ordering::Relaxed);
        if last_used.load(Ordering::Relaxed) != now {
            last_used.store(now, Ordering::Relaxed);
        }
    }

    /// Lets sweeps close `holder`'s handles (it is forgotten once dropped).
    pub(crate) fn register(&self, holder: Weak<dyn ReleaseHandles>) {
        let mut holders = self.holders.lock();
        // Deleted logs are forgotten by sweeps, and here when the list doubles (amortised O(1)).
        if holders.len() >= 1024 && holders.len().is_power_of_two() {
            holders.retain(|w| w.strong_count() > 0);
        }
        holders.push(holder);
    }

    /// Counts one more open handle, first closing idle ones if that would pass the cap. Call before opening.
    pub(crate) fn acquire(self: &Arc<Self>) -> HandleToken {
        let now_open = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        if now_open > self.cap {
            self.sweep();
        }
        HandleToken {
            cache: Arc::clone(self),
        }
    }

    /// Closes handles of idle holders until three quarters of the cap are open (see the module docs). One sweep
    /// at a time; a caller finding one under way goes on (over the cap until it ends).
    pub(crate) fn sweep(&self) {
        let Some(_sweeping) = self.sweeping.try_lock() else {
            return;
        };
        let mut holders = self.holders.lock();
        self.sweeps.fetch_add(1, Ordering::Relaxed);
        let epoch = self.epoch.fetch_add(1, Ordering::Relaxed);
        let target = self.cap - self.cap / 4;
        let mut live: Vec<(u64, Arc<dyn ReleaseHandles>)> = Vec::with_capacity(holders.len());
        holders.retain(|w| match w.upgrade() {
            Some(h) => {
                live.push((h.last_used(), h));
                true
            }
            None => false,
        });
        drop(holders);
        live.sort_by_key(|(used, _)| *used);
        // First what was not used since the last sweep, then (if still over) whole holders, oldest first.
        for all in [false, true] {
            for (_, h) in &live {
                if self.open() <= target {
                    return;
                }
                h.release_handles(epoch, all);
            }
        }
        // Every 64th sweep at most, so a broker busy on more files than the cap does not flood its log.
        if self.open() > self.cap && self.sweeps.load(Ordering::Relaxed) % 64 == 1 {
            tracing::warn!(
                open = self.open(),
                cap = self.cap,
                "more file handles in use at once than log.max.open.files allows"
            );
        }
    }
}

/// The default cap: half the process's soft limit on open files, and at most half of `vm.max_map_count`
/// (each mapped index counts one map), read from `/proc` (4096 where it is unreadable).
pub fn default_max_open_files() -> usize {
    let nofile = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3)?.parse::<usize>().ok())
        })
        .unwrap_or(8192);
    let maps = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(65530);
    (nofile / 2).min(maps / 2).max(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Holder {
        cache: Arc<HandleCache>,
        tokens: Mutex<Vec<HandleToken>>,
        used: AtomicU64,
    }
    impl ReleaseHandles for Holder {
        fn last_used(&self) -> u64 {
            self.used.load(Ordering::Relaxed)
        }
        fn release_handles(&self, epoch: u64, all: bool) -> bool {
            if all || self.last_used() < epoch {
                self.tokens.lock().clear();
            }
            true
        }
    }

    #[test]
    fn acquiring_past_the_cap_closes_the_least_recently_used_handles() {
        let cache = HandleCache::new(16);
        let holders: Vec<Arc<Holder>> = (0..8)
            .map(|_| {
                Arc::new(Holder {
                    cache: cache.clone(),
                    tokens: Mutex::new(Vec::new()),
                    used: AtomicU64::new(0),
                })
            })
            .collect();
        for h in &holders {
            let w: Weak<dyn ReleaseHandles> =
                Arc::downgrade(&(h.clone() as Arc<dyn ReleaseHandles>));
            cache.register(w);
        }
        for round in 0..10 {
            for h in &holders {
                h.cache.touch(&h.used);
                let t = h.cache.acquire();
                h.tokens.lock().push(t);
                assert!(
                    cache.open() <= cache.cap() + 1,
                    "round {round}: {}",
                    cache.open()
                );
            }
        }
        assert!(cache.sweeps() > 0);
        drop(holders);
        assert_eq!(cache.open(), 0);
    }
}
