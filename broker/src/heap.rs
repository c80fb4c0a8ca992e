//! Giving the allocator's free pages back to the operating system after a burst (issue 33, resident memory).
//!
//! glibc's malloc gives each thread that allocates under contention its own arena (up to 8 per core): the tokio
//! workers and the `spawn_blocking` threads that append produce requests, decompress batches and build fetch
//! responses each end up with one. What a burst frees goes back to the arena's free lists, not to the kernel: a
//! heap shrinks only from its top, so one live block above the freed ones keeps them all resident. After the
//! benchmark matrix that was ~59 of strata's 61 MiB (bench/RESULTS.md, "RSS").
//!
//! [`trim`] is `malloc_trim(0)`. malloc_trim(3): "Since glibc 2.8 this function frees memory in all arenas and in
//! all chunks with whole free pages" — glibc's `__malloc_trim` takes each arena's lock in turn and `mtrim`
//! consolidates its fast bins and `madvise(MADV_DONTNEED)`s the whole pages inside every free chunk (plus `sbrk`
//! shrinking of the main arena's top). Pages stay mapped, so the next burst reuses the same addresses and only
//! pays a page fault per page it touches again. It adds no lock traffic on the request path: capping the arenas
//! instead (`MALLOC_ARENA_MAX=2`) cost ~35 % of 12-partition consume throughput to arena-lock contention.
//!
//! What it cannot return: the free top of a thread arena's heap (`mtrim` shrinks only the main arena's top), which
//! shrinks on `free` only past the trim threshold that glibc raises to twice the largest block freed (up to
//! 64 MiB). After the 24 rdkafka rows of bench/vs-kafka.sh most of strata's RSS is there (bench/RESULTS.md, "RSS",
//! 2026-12-05: 47–68 MiB with the trim; fixed thresholds, `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=262144:
//! glibc.malloc.trim_threshold=1048576`, gave 22 MiB but slower 12-partition produce, so they are not set here).
//!
//! On other allocators (musl, non-Linux) [`trim`] does nothing and returns false: they return memory their own way.

use std::time::Duration;

/// How often the server trims ([`crate::server`]'s maintenance loops): a broker that went quiet gives back the
/// free pages below live blocks within this; under load, what one interval frees and takes back costs a page
/// fault per page (bench/RESULTS.md, "RSS", 2026-12-05: no throughput difference measured).
pub const TRIM_INTERVAL: Duration = Duration::from_secs(5);

/// Returns the free whole pages of every malloc arena to the operating system (`malloc_trim(0)`, glibc only).
/// True when memory was released. Blocks for one walk of each arena's free lists: call it off the async workers.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // malloc_trim, the only call of this module
pub fn trim() -> bool {
    // SAFETY: malloc_trim takes no pointers and is MT-Safe (malloc_trim(3)): it locks each arena while it walks
    // it, so it may run while other threads allocate and free.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Returns the free whole pages of every malloc arena to the operating system: a no-op on this allocator.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// This process's resident anonymous memory (`RssAnon` of /proc/self/status), in bytes.
    fn rss_anon() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("RssAnon:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("RssAnon in /proc/self/status");
        kib * 1024
    }

    #[test]
    fn trim_returns_the_pages_a_burst_freed_below_a_live_block() {
        const BLOCK: usize = 64 * 1024; // below the mmap threshold: served from the thread's arena
        const BURST: usize = 96 * 1024 * 1024;
        // Brokers started by other tests of this binary trim every 5 s (`crate::server`'s maintenance): one that
        // lands between the burst's free and the first measurement leaves nothing to show. Such a run is
        // repeated (a few times at most); the trim's own effect is checked in a run where the burst stayed.
        let mut seen = Vec::new();
        for _ in 0..5 {
            // On a thread of its own, as a tokio worker or a blocking thread: its own arena (or a shared one).
            let (kept, trimmed) = std::thread::spawn(|| {
                let before = rss_anon();
                let blocks: Vec<Vec<u8>> =
                    (0..BURST / BLOCK).map(|i| vec![i as u8; BLOCK]).collect();
                // A live block above the burst: the heap cannot shrink from its top when the burst is freed.
                let live = vec![1u8; 512];
                drop(blocks);
                let kept = rss_anon().saturating_sub(before);
                assert!(trim(), "malloc_trim released nothing");
                let trimmed = rss_anon().saturating_sub(before);
                drop(live);
                (kept, trimmed)
            })
            .join()
            .expect("burst thread");
            seen.push(kept);
            // Without the trim the freed burst stays resident (the case this module is for) ...
            if kept >= BURST as u64 * 3 / 4 {
                // ... and the trim gives it back (other tests of this binary allocate meanwhile: a margin of a
                // quarter).
                assert!(
                    trimmed <= BURST as u64 / 4,
                    "{trimmed} bytes of a {BURST}-byte freed burst still resident after the trim (before it: {kept})"
                );
                return;
            }
        }
        panic!("freed burst not resident before the trim in any of 5 runs: {seen:?} bytes above the start");
    }
}
