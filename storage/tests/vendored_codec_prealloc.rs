//! Every decoder of the vendored kafka-protocol that sizes an allocation from a length read off the wire (arrays,
//! compact arrays, strings, compact strings, bytes, compact bytes, a batch's record count, a record's header count,
//! tagged fields) allocates no more than the input could hold, whatever length a hostile peer declares
//! (vendor/kafka-protocol-0.18.0/STRATA-PATCH.md). A global allocator in this test binary records the largest single
//! allocation made on the decoding thread, so an unpatched decoder fails here even where the operating system would
//! have granted the huge (lazily zeroed) allocation.
#![allow(unsafe_code)] // the recording allocator below; it only forwards to `System`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiVersionsRequest, MetadataRequest, SaslAuthenticateRequest};
use kafka_protocol::protocol::Decodable;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

struct Recording;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the slot may be gone while a thread is being torn down.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: forwards every call unchanged to the system allocator; recording touches only a const-initialised
// thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Recording = Recording;

/// The most a decoder may allocate at once for the few-byte inputs below (the largest honest container is a
/// handful of `Record`s).
const BOUND: usize = 64 * 1024;

/// Runs `decode` and returns whether it failed, asserting it allocated at most [`BOUND`] bytes at once.
fn decode_bounded<T, E>(what: &str, decode: impl FnOnce() -> Result<T, E>) -> bool {
    LARGEST.with(|l| l.set(0));
    let failed = decode().is_err();
    let largest = LARGEST.with(|l| l.get());
    assert!(
        largest <= BOUND,
        "{what}: decoding allocated {largest} bytes at once (bound {BOUND})"
    );
    failed
}

/// Unsigned varint of `v` (Kafka's compact lengths and counts).
fn uvarint(mut v: u32) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

#[test]
fn an_array_declaring_two_billion_elements_allocates_only_what_the_input_holds() {
    // Metadata v1 (ARRAY, INT32 count): topics declares i32::MAX entries, none follow.
    let input = i32::MAX.to_be_bytes();
    assert!(decode_bounded("Array", || MetadataRequest::decode(
        &mut Bytes::copy_from_slice(&input),
        1
    )));
}

#[test]
fn a_compact_array_declaring_four_billion_elements_allocates_only_what_the_input_holds() {
    // Metadata v9 (COMPACT_ARRAY, unsigned varint count + 1): topics declares u32::MAX − 1 entries.
    let input = uvarint(u32::MAX);
    assert!(decode_bounded("CompactArray", || MetadataRequest::decode(
        &mut Bytes::copy_from_slice(&input),
        9
    )));
}

#[test]
fn a_string_declaring_more_bytes_than_sent_allocates_nothing_of_that_size() {
    // Metadata v1: one topic whose name (STRING, INT16 length) declares 32767 bytes; two follow.
    let mut input = 1i32.to_be_bytes().to_vec();
    input.extend_from_slice(&i16::MAX.to_be_bytes());
    input.extend_from_slice(b"ab");
    assert!(decode_bounded("String", || MetadataRequest::decode(
        &mut Bytes::copy_from_slice(&input),
        1
    )));
}

#[test]
fn a_compact_string_declaring_four_billion_bytes_allocates_nothing_of_that_size() {
    // ApiVersions v3: client_software_name (COMPACT_STRING) declares u32::MAX − 1 bytes; two follow.
    let mut input = uvarint(u32::MAX);
    input.extend_from_slice(b"ab");
    assert!(decode_bounded("CompactString", || {
        ApiVersionsRequest::decode(&mut Bytes::copy_from_slice(&input), 3)
    }));
}

#[test]
fn bytes_declaring_two_billion_bytes_allocate_nothing_of_that_size() {
    // SaslAuthenticate v1: auth_bytes (BYTES, INT32 length) declares i32::MAX bytes; two follow.
    let mut input = i32::MAX.to_be_bytes().to_vec();
    input.extend_from_slice(b"ab");
    assert!(decode_bounded("Bytes", || SaslAuthenticateRequest::decode(
        &mut Bytes::copy_from_slice(&input),
        1
    )));
}

#[test]
fn compact_bytes_declaring_four_billion_bytes_allocate_nothing_of_that_size() {
    // SaslAuthenticate v2: auth_bytes (COMPACT_BYTES) declares u32::MAX − 1 bytes; two follow.
    let mut input = uvarint(u32::MAX);
    input.extend_from_slice(b"ab");
    assert!(decode_bounded("CompactBytes", || {
        SaslAuthenticateRequest::decode(&mut Bytes::copy_from_slice(&input), 2)
    }));
}

#[test]
fn a_tagged_field_declaring_four_billion_bytes_allocates_nothing_of_that_size() {
    // ApiVersions v3 (flexible): client_software_name "a", version "1", then the tagged-field section: one
    // field, tag 7, size u32::MAX − 1, followed by two bytes.
    let mut input = vec![2, b'a', 2, b'1'];
    input.extend(uvarint(1));
    input.extend(uvarint(7));
    input.extend(uvarint(u32::MAX - 1));
    input.extend_from_slice(b"ab");
    assert!(decode_bounded("tagged field", || {
        ApiVersionsRequest::decode(&mut Bytes::copy_from_slice(&input), 3)
    }));
}

fn one_record_batch(headers: usize) -> BytesMut {
    let mut h = kafka_protocol::indexmap::IndexMap::new();
    for i in 0..headers {
        h.insert(format!("h{i}").into(), None);
    }
    let r = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: -1,
        timestamp: 1,
        key: None,
        value: Some(Bytes::from_static(b"v")),
        headers: h,
    };
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, &[r], &opts).unwrap();
    buf
}

fn fix_crc(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn a_batch_declaring_two_billion_records_allocates_only_what_the_batch_holds() {
    let mut b = one_record_batch(0);
    b[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    fix_crc(&mut b);
    let mut buf = b.freeze();
    assert!(decode_bounded("record count", || {
        RecordBatchDecoder::decode(&mut buf)
    }));
}

#[test]
fn a_record_declaring_two_billion_headers_allocates_only_what_the_record_holds() {
    let b = one_record_batch(1);
    // The record ends with: header count 1 (zigzag 0x02), key len 2 ("h0"), "h0", value len -1 (0x01).
    let at = b.len() - 5;
    assert_eq!(b[at], 0x02);
    let mut v = b[..at].to_vec();
    v.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]); // zigzag varint of i32::MAX
    v.extend_from_slice(&b[at + 1..]);
    v[61] += 8; // record length: a one-byte zigzag varint for this small record, so +4 bytes is +8
    let len = i32::from_be_bytes(v[8..12].try_into().unwrap()) + 4;
    v[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut v);
    let mut buf = Bytes::from(v);
    assert!(decode_bounded("header count", || {
        RecordBatchDecoder::decode(&mut buf)
    }));
}
