//! Arbitrary record batches (every codec, attributes, producer fields, records with headers; a valid CRC) in
//! Produce requests of every version from 3 to 11, through an in-process broker's dispatch and append path; what
//! is acknowledged must read back in a Fetch (`strata_fuzz::Harness::produce`, input layout in
//! `strata_fuzz::ProduceInput`).
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use strata_fuzz::Harness;

fn harness() -> &'static Mutex<Harness> {
    static H: OnceLock<Mutex<Harness>> = OnceLock::new();
    H.get_or_init(|| Mutex::new(strata_fuzz::paused_harness()))
}

fuzz_target!(|data: &[u8]| {
    harness().lock().unwrap().produce(data);
});
