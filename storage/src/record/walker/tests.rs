//! The walker against hand-built hostile batches of every codec.
use std::io::Write;

use bytes::Bytes;
use proptest::prelude::*;

use super::*;
use crate::record::varint::{write_varint, write_varlong};

/// One record's bytes (without its length prefix) from raw field values, so tests can write any lie.
#[derive(Clone)]
struct Raw {
    ts_delta: i64,
    offset_delta: i32,
    key_len: i32,
    key: Vec<u8>,
    value_len: i32,
    value: Vec<u8>,
    headers: i32,
    header_bytes: Vec<u8>,
}

impl Raw {
    fn ok(i: i32) -> Self {
        Self {
            ts_delta: i as i64 * 10,
            offset_delta: i,
            key_len: 1,
            key: b"k".to_vec(),
            value_len: 5,
            value: b"value".to_vec(),
            headers: 0,
            header_bytes: Vec::new(),
        }
    }
    fn body(&self) -> Vec<u8> {
        let mut b = vec![0u8];
        write_varlong(&mut b, self.ts_delta);
        write_varint(&mut b, self.offset_delta);
        write_varint(&mut b, self.key_len);
        b.extend_from_slice(&self.key);
        write_varint(&mut b, self.value_len);
        b.extend_from_slice(&self.value);
        write_varint(&mut b, self.headers);
        b.extend_from_slice(&self.header_bytes);
        b
    }
    fn encoded(&self) -> Vec<u8> {
        let body = self.body();
        let mut out = Vec::new();
        write_varint(&mut out, body.len() as i32);
        out.extend_from_slice(&body);
        out
    }
}

fn compress(codec: Compression, plain: &[u8]) -> Vec<u8> {
    match codec {
        Compression::None => plain.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        Compression::Snappy => snap::raw::Encoder::new().compress_vec(plain).unwrap(),
        Compression::Lz4 => {
            let mut e = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
            e.write_all(plain).unwrap();
            let (out, r) = e.finish();
            r.unwrap();
            out
        }
        Compression::Zstd => zstd::encode_all(plain, 3).unwrap(),
    }
}

/// A batch with a valid CRC: `count` declared records, `payload` as the (already compressed) records.
fn batch(codec: Compression, count: i32, payload: &[u8]) -> RecordBatch {
    let mut out = Vec::new();
    out.extend_from_slice(&0i64.to_be_bytes());
    out.extend_from_slice(&((49 + payload.len()) as i32).to_be_bytes());
    out.extend_from_slice(&(-1i32).to_be_bytes());
    out.push(2);
    out.extend_from_slice(&[0; 4]);
    let attrs: i16 = match codec {
        Compression::None => 0,
        Compression::Gzip => 1,
        Compression::Snappy => 2,
        Compression::Lz4 => 3,
        Compression::Zstd => 4,
    };
    out.extend_from_slice(&attrs.to_be_bytes());
    out.extend_from_slice(&(count.max(1) - 1).to_be_bytes());
    out.extend_from_slice(&1000i64.to_be_bytes());
    out.extend_from_slice(&2000i64.to_be_bytes());
    out.extend_from_slice(&(-1i64).to_be_bytes());
    out.extend_from_slice(&(-1i16).to_be_bytes());
    out.extend_from_slice(&(-1i32).to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c(&out[21..]);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    RecordBatch::new(Bytes::from(out)).unwrap()
}

fn records(rs: &[Raw]) -> Vec<u8> {
    rs.iter().flat_map(Raw::encoded).collect()
}

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn check(codec: Compression, count: i32, plain: &[u8]) -> Result<()> {
    let mut budget = 1 << 20;
    walk(
        &batch(codec, count, &compress(codec, plain)),
        &mut budget,
        true,
        |_| ControlFlow::Continue(()),
    )
}

fn assert_invalid(codec: Compression, count: i32, plain: &[u8], needle: &str) {
    match check(codec, count, plain) {
        Err(Error::InvalidRecord { reason }) => {
            assert!(
                reason.contains(needle),
                "{codec:?}: {reason:?} lacks {needle:?}"
            )
        }
        other => panic!("{codec:?}: expected INVALID_RECORD ({needle}), got {other:?}"),
    }
}

#[test]
fn well_formed_records_of_every_codec_walk_and_report_their_deltas() {
    let mut with_header = Raw::ok(2);
    with_header.headers = 1;
    with_header.header_bytes = {
        let mut h = Vec::new();
        write_varint(&mut h, 1);
        h.push(b'h');
        write_varint(&mut h, -1);
        h
    };
    let rs = [Raw::ok(0), Raw::ok(1), with_header];
    for codec in CODECS {
        let mut seen = Vec::new();
        let mut budget = 1 << 20;
        let b = batch(codec, 3, &compress(codec, &records(&rs)));
        walk(&b, &mut budget, true, |m| {
            seen.push((m.offset_delta, m.timestamp_delta));
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen, [(0, 0), (1, 10), (2, 20)], "{codec:?}");
        if codec != Compression::None {
            assert_eq!((1 << 20) - budget, records(&rs).len(), "{codec:?}");
        }
    }
}

#[test]
fn a_record_count_far_above_the_records_held_is_a_premature_end() {
    for codec in CODECS {
        assert_invalid(codec, i32::MAX, &records(&[Raw::ok(0)]), "premature end");
    }
}

#[test]
fn fewer_declared_records_than_held_leave_bytes_after_the_last() {
    for codec in CODECS {
        assert_invalid(
            codec,
            1,
            &records(&[Raw::ok(0), Raw::ok(1)]),
            "bytes follow",
        );
    }
}

#[test]
fn a_header_count_of_two_billion_is_refused_without_allocating() {
    let mut r = Raw::ok(0);
    r.headers = i32::MAX;
    for codec in CODECS {
        assert_invalid(codec, 1, &records(&[r.clone()]), "header count");
    }
}

#[test]
fn negative_key_lengths_other_than_null_are_refused() {
    let mut r = Raw::ok(0);
    r.key_len = -7;
    r.key.clear();
    for codec in CODECS {
        assert_invalid(codec, 1, &records(&[r.clone()]), "key length -7");
    }
}

#[test]
fn a_value_running_past_the_record_is_refused() {
    let mut r = Raw::ok(0);
    r.value_len = 1000;
    for codec in CODECS {
        assert_invalid(codec, 1, &records(&[r.clone()]), "runs past");
    }
}

#[test]
fn a_record_of_length_zero_is_refused() {
    let mut plain = Vec::new();
    write_varint(&mut plain, 0);
    for codec in CODECS {
        assert_invalid(codec, 1, &plain, "record length 0");
    }
}

#[test]
fn a_record_length_that_disagrees_with_its_fields_is_refused() {
    // Length one byte longer than the fields, with a spare byte so the stream does not end early.
    let body = Raw::ok(0).body();
    let mut plain = Vec::new();
    write_varint(&mut plain, body.len() as i32 + 1);
    plain.extend_from_slice(&body);
    plain.push(0);
    for codec in CODECS {
        assert_invalid(codec, 1, &plain, "unread after the headers");
    }
}

#[test]
fn an_offset_delta_out_of_place_is_refused() {
    for codec in CODECS {
        assert_invalid(
            codec,
            2,
            &records(&[Raw::ok(0), Raw::ok(5)]),
            "offset delta 5",
        );
    }
}

#[test]
fn a_payload_that_is_not_its_codec_is_corrupt() {
    let plain = records(&[Raw::ok(0)]);
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut budget = 1 << 20;
        let res = walk(&batch(codec, 1, &plain), &mut budget, true, |_| {
            ControlFlow::Continue(())
        });
        assert!(
            matches!(res, Err(Error::CorruptRecord { .. })),
            "{codec:?}: {res:?}"
        );
    }
}

#[test]
fn records_inflating_past_the_budget_are_refused_and_stop_reading() {
    let mut r = Raw::ok(0);
    r.value = vec![0; 4 << 20];
    r.value_len = r.value.len() as i32;
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut budget = 1 << 20;
        let res = walk(
            &batch(codec, 1, &compress(codec, &records(&[r.clone()]))),
            &mut budget,
            true,
            |_| ControlFlow::Continue(()),
        );
        assert!(
            matches!(res, Err(Error::DecompressedTooLarge { .. })),
            "{codec:?}: {res:?}"
        );
    }
}

#[test]
fn the_budget_is_shared_by_the_batches_of_one_append() {
    let rs = records(&[Raw::ok(0)]);
    let b = batch(Compression::Zstd, 1, &compress(Compression::Zstd, &rs));
    let mut budget = rs.len() * 2;
    let go = |_| ControlFlow::Continue(());
    walk(&b, &mut budget, true, go).unwrap();
    walk(&b, &mut budget, true, go).unwrap();
    assert!(matches!(
        walk(&b, &mut budget, true, go),
        Err(Error::DecompressedTooLarge { .. })
    ));
}

proptest! {
    /// Arbitrary record bytes, under every codec, either walk or give an error; never a panic, and never more
    /// decompressed bytes than the budget.
    #[test]
    fn prop_arbitrary_records_never_panic(
        plain in proptest::collection::vec(any::<u8>(), 0..200),
        count in -2i32..6,
        codec in 0usize..5,
    ) {
        let codec = CODECS[codec];
        let count = count.max(1);
        let mut budget = 4096;
        let _ = walk(&batch(codec, count, &compress(codec, &plain)), &mut budget, true, |_| ControlFlow::Continue(()));
        prop_assert!(budget <= 4096);
    }

    /// Mutating a valid compressed payload never panics.
    #[test]
    fn prop_mutated_compressed_payloads_never_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        codec in 1usize..5,
    ) {
        let codec = CODECS[codec];
        let mut data = compress(codec, &records(&[Raw::ok(0), Raw::ok(1), Raw::ok(2)]));
        for (i, v) in &flips {
            let at = i.index(data.len());
            data[at] = *v;
        }
        let mut budget = 1 << 20;
        let _ = walk(&batch(codec, 3, &data), &mut budget, true, |_| ControlFlow::Continue(()));
    }
}

/// A source that hands out one byte per `fill_buf`, so no record is ever whole in the window: every record takes
/// the byte-wise path.
struct OneByte<'a>(&'a [u8]);

impl std::io::Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

impl BufRead for OneByte<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(&self.0[..self.0.len().min(1)])
    }
    fn consume(&mut self, amt: usize) {
        self.0 = &self.0[amt..];
    }
}

fn walk_with<R: BufRead>(src: R, count: i32) -> (Vec<RecordMeta>, Result<()>) {
    let ctx = Ctx {
        codec: Compression::None,
        base_offset: 0,
        count,
    };
    let mut seen = Vec::new();
    let res = Reader::new(src, ctx, 4096, true).walk(&mut |m| {
        seen.push(m);
        ControlFlow::Continue(())
    });
    (seen, res)
}

fn same_outcome(plain: &[u8], count: i32) -> std::result::Result<(), TestCaseError> {
    let (fast_seen, fast) = walk_with(plain, count);
    let (slow_seen, slow) = walk_with(OneByte(plain), count);
    prop_assert_eq!(&fast_seen, &slow_seen);
    prop_assert_eq!(
        std::mem::discriminant(&fast.map_err(|e| std::mem::discriminant(&e))),
        std::mem::discriminant(&slow.map_err(|e| std::mem::discriminant(&e)))
    );
    Ok(())
}

#[test]
fn the_byte_wise_path_accepts_well_formed_records() {
    let plain = records(&[Raw::ok(0), Raw::ok(1)]);
    let (seen, res) = walk_with(OneByte(&plain), 2);
    res.unwrap();
    assert_eq!(seen.len(), 2);
}

proptest! {
    /// The in-window fast path and the byte-wise path agree on every input: same records reported, same
    /// outcome (the fast path only ever accepts what the byte-wise path accepts).
    #[test]
    fn prop_fast_and_byte_wise_paths_agree(
        plain in proptest::collection::vec(any::<u8>(), 0..120),
        count in 1i32..4,
    ) {
        same_outcome(&plain, count)?;
    }

    /// The same on mutations of well-formed records (arbitrary bytes rarely get far into a record).
    #[test]
    fn prop_fast_and_byte_wise_paths_agree_on_mutated_records(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        count in 1i32..4,
    ) {
        let mut with_header = Raw::ok(1);
        with_header.headers = 1;
        with_header.header_bytes = vec![2, b'h', 1];
        let mut plain = records(&[Raw::ok(0), with_header, Raw::ok(2)]);
        for (i, v) in &flips {
            let at = i.index(plain.len());
            plain[at] = *v;
        }
        same_outcome(&plain, count)?;
    }
}
