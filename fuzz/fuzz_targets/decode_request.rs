//! Fuzzes what the broker does with untrusted bytes before any handler runs: request header + body decoding
//! for every advertised API/version, and record-batch validation of a produce payload
//! (`strata_fuzz::decode_request`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz::decode_request(data));
