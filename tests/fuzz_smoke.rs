//! The fuzz targets' smoke run on stable Rust (CI has no nightly or cargo-fuzz): each target's body
//! (`fuzz/src/targets.rs`, `fuzz/src/append.rs`, included here as the fuzz crate's library includes them) gets
//! every seed of its corpus (`fuzz/corpus/<target>/`) and then deterministic pseudo-random mutations of them
//! (bit flips, byte sets, interesting integers, inserts, deletes, splices of two seeds). Any panic, on this thread
//! or any other (a handler's blocking task), fails the test. The real fuzzing is `cargo +nightly fuzz run` (see
//! `fuzz/README.md`).

#[allow(dead_code)]
#[path = "../fuzz/src/targets.rs"]
mod targets;

#[allow(dead_code)]
#[path = "../fuzz/src/append.rs"]
mod append;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts panics on every thread (a panic in a blocking task comes back as an error, not as a panic here).
fn count_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default(info);
    }));
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

/// xorshift64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One to four mutations of a seed, libFuzzer's simplest ones.
fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut d = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(d.len() + 1);
        match rng.below(7) {
            0 if at < d.len() => d[at] ^= 1 << rng.below(8),
            1 if at < d.len() => d[at] = rng.next() as u8,
            2 if at + 4 <= d.len() => {
                let v: i32 = [0, -1, 1, i32::MAX, i32::MIN, 0x7fff, 255, 1 << 20][rng.below(8)];
                d[at..at + 4].copy_from_slice(&v.to_be_bytes());
            }
            3 => {
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                d.splice(at..at, bytes);
            }
            4 if at < d.len() => {
                let end = (at + 1 + rng.below(16)).min(d.len());
                d.drain(at..end);
            }
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len());
                d.truncate(at);
                d.extend_from_slice(&other[from..]);
            }
            _ => d.truncate(at),
        }
    }
    d
}

/// Seeds, then `mutations` mutants, through `run`; returns how many inputs ran.
fn smoke(target: &str, mutations: usize, mut run: impl FnMut(&[u8])) -> usize {
    let seeds = seeds(target);
    let started = Instant::now();
    for s in &seeds {
        run(s);
    }
    let mut rng = Rng(0x5eed_f00d_u64 ^ target.len() as u64);
    for _ in 0..mutations {
        run(&mutate(&mut rng, &seeds));
    }
    let n = seeds.len() + mutations;
    eprintln!("{target}: {n} inputs in {:?}", started.elapsed());
    n
}

fn harness() -> targets::Harness {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Real time here: a long poll or a rebalance wait in a mutant ends its input after 50 ms.
    targets::Harness::new(rt, Duration::from_millis(50))
}

#[test]
fn fuzz_targets_smoke() {
    count_panics();
    let mut h = harness();
    smoke("broker_frames", 2000, |d| h.frames(d));
    smoke("produce_batches", 1000, |d| h.produce(d));
    smoke("produce_compressed", 2000, append::produce_compressed);
    smoke("decode_request", 20_000, targets::decode_request);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a target panicked");
}
