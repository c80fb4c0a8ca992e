//! Compressed batches through the leader's append path of a log (`strata_fuzz::produce_compressed`; the input
//! layout is in `fuzz/src/append.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz::produce_compressed(data));
