//! The fuzz targets' bodies, plain functions (`targets.rs`: the broker targets and `decode_request`; `append.rs`:
//! `produce_compressed`), shared with the stable smoke test `tests/fuzz_smoke.rs` of the main workspace, which
//! includes both files; and the libFuzzer binaries' paused runtime.

mod append;
mod targets;

use std::time::Duration;

pub use append::produce_compressed;
pub use targets::*;

/// The fuzz targets' harness: a current-thread runtime whose clock is paused (it jumps to the next timer when
/// every task waits), so a request's waits (long polls, rebalances, produce timeouts) take no wall time; a request
/// still waiting after 10 minutes of that clock ends the input.
pub fn paused_harness() -> Harness {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    Harness::new(rt, Duration::from_secs(600))
}
