//! Fuzzes what the broker does with untrusted bytes before any handler runs: request header + body decoding
//! for every advertised API/version, and record-batch validation of a produce payload.
//!
//! Run: `cargo fuzz run decode_request` (from `fuzz/`, needs cargo-fuzz and a nightly toolchain).
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = Bytes::copy_from_slice(data);
    // Request frame (without the 4-byte length): must never panic, whatever it holds.
    let _ = strata_broker::decode_request_for_fuzzing(bytes.clone());
    // The same bytes as a produce request's record set: batch views, CRC check, record iteration.
    for batch in strata_storage::RecordBatch::iter(&bytes).take(1024) {
        let Ok(batch) = batch else { break };
        let _ = batch.ensure_valid_crc();
        let _ = (batch.last_offset(), batch.max_timestamp(), batch.last_sequence());
        if let Ok(records) = batch.records() {
            let _ = records.take(4096).count();
        }
    }
});
