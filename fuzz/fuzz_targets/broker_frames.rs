//! Arbitrary frames through an in-process broker: the input is one connection's byte stream (4-byte length,
//! request header, body; any number of frames, any API key and version), read by the broker's frame reader and
//! handled by its dispatch and every API's handler (`strata_fuzz::Harness::frames`). Seeds: requests captured
//! from real clients (`fuzz/corpus/broker_frames/`, see `fuzz/README.md`).
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use strata_fuzz::Harness;

fn harness() -> &'static Mutex<Harness> {
    static H: OnceLock<Mutex<Harness>> = OnceLock::new();
    H.get_or_init(|| Mutex::new(strata_fuzz::paused_harness()))
}

fuzz_target!(|data: &[u8]| {
    harness().lock().unwrap().frames(data);
});
