//! Pins the on-disk format byte for byte with a hand-built vector (not produced by this crate's builder).
//!
//! The batch: one record, key null, value "hi", timestamp 1700000000000 (0x0000018BCFE56800), no producer.
//!
//! ```text
//! 00 00 00 00 00 00 00 00   baseOffset 0 (the log overwrites it)
//! 00 00 00 3A               batchLength 58 (70 bytes in all)
//! FF FF FF FF               partitionLeaderEpoch -1 (the log overwrites it)
//! 02                        magic 2
//! BB CC 41 15               CRC-32C of the 49 bytes below (computed independently, bitwise, poly 0x82F63B78)
//! 00 00                     attributes: no compression, CreateTime
//! 00 00 00 00               lastOffsetDelta 0
//! 00 00 01 8B CF E5 68 00   baseTimestamp
//! 00 00 01 8B CF E5 68 00   maxTimestamp
//! FF FF FF FF FF FF FF FF   producerId -1
//! FF FF                     producerEpoch -1
//! FF FF FF FF               baseSequence -1
//! 00 00 00 01               recordsCount 1
//! 10                        record length 8 (zigzag varint)
//! 00                        record attributes
//! 00                        timestampDelta 0 (zigzag varlong)
//! 00                        offsetDelta 0
//! 01                        keyLength -1 (null)
//! 04                        valueLength 2
//! 68 69                     "hi"
//! 00                        header count 0
//! ```
mod common;

use bytes::Bytes;
use common::*;
use strata_storage::{LogConfig, RecordBatch};

#[rustfmt::skip]
const BATCH: [u8; 70] = [
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x3A,
    0xFF, 0xFF, 0xFF, 0xFF,
    0x02,
    0xBB, 0xCC, 0x41, 0x15,
    0x00, 0x00,
    0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00,
    0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF,
    0x00, 0x00, 0x00, 0x01,
    0x10, 0x00, 0x00, 0x00, 0x01, 0x04, 0x68, 0x69, 0x00,
];

#[test]
fn hand_built_batch_parses_with_the_documented_fields() {
    let b = RecordBatch::new(Bytes::from_static(&BATCH)).unwrap();
    assert_eq!(b.crc(), 0xBBCC_4115);
    assert_eq!(b.compute_crc(), 0xBBCC_4115);
    assert_eq!(
        (
            b.batch_length(),
            b.magic(),
            b.records_count(),
            b.last_offset_delta()
        ),
        (58, 2, 1, 0)
    );
    assert_eq!(
        (b.first_timestamp(), b.max_timestamp()),
        (1_700_000_000_000, 1_700_000_000_000)
    );
    assert_eq!(
        (b.producer_id(), b.producer_epoch(), b.base_sequence()),
        (-1, -1, -1)
    );
    let r = b.records().unwrap().next().unwrap().unwrap();
    assert_eq!((r.key, r.value.as_deref()), (None, Some(&b"hi"[..])));
    // The crate's builder produces the identical bytes.
    let mut builder = strata_storage::RecordBatchBuilder::new();
    builder.append(1_700_000_000_000, None, Some(b"hi"), &[]);
    assert_eq!(&builder.build()[..], &BATCH[..]);
}

#[test]
fn on_disk_files_match_kafka_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let mut cfg = LogConfig::default();
    cfg.index_interval_bytes = 1;
    let log = log(&m, cfg);
    log.append_as_leader(Bytes::from_static(&BATCH), 7).unwrap();
    log.append_as_leader(Bytes::from_static(&BATCH), 7).unwrap();
    log.roll().unwrap();
    m.shutdown().unwrap();
    let p = dir.path().join("t-0");

    // .log: the client's bytes; only baseOffset (bytes 0..8) and partitionLeaderEpoch (12..16) differ, the CRC
    // is unchanged because both fields are outside it.
    let mut expected = Vec::new();
    for offset in [0u64, 1] {
        let mut b = BATCH;
        b[0..8].copy_from_slice(&offset.to_be_bytes());
        b[12..16].copy_from_slice(&[0, 0, 0, 7]);
        expected.extend_from_slice(&b);
    }
    assert_eq!(
        std::fs::read(p.join("00000000000000000000.log")).unwrap(),
        expected
    );
    // .index: one entry after the first 70 bytes (index.interval.bytes = 1): relative offset 1 -> position 70.
    assert_eq!(
        std::fs::read(p.join("00000000000000000000.index")).unwrap(),
        [0, 0, 0, 1, 0, 0, 0, 0x46]
    );
    // .timeindex: (max timestamp so far, relative offset of the record carrying it) = (1700000000000, 0).
    assert_eq!(
        std::fs::read(p.join("00000000000000000000.timeindex")).unwrap(),
        [0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00, 0, 0, 0, 0]
    );
    // The new active segment, trimmed at shutdown.
    assert_eq!(
        std::fs::read(p.join("00000000000000000002.log")).unwrap(),
        Vec::<u8>::new()
    );
    assert_eq!(
        std::fs::read(p.join("00000000000000000002.index")).unwrap(),
        Vec::<u8>::new()
    );
    // Producer snapshot at the roll: version 1, CRC-32C of the rest, zero entries.
    let snap = std::fs::read(p.join("00000000000000000002.snapshot")).unwrap();
    assert_eq!(snap.len(), 10);
    assert_eq!(&snap[0..2], &[0, 1]);
    assert_eq!(
        u32::from_be_bytes(snap[2..6].try_into().unwrap()),
        crc32c::crc32c(&[0, 0, 0, 0])
    );
    assert_eq!(&snap[6..10], &[0, 0, 0, 0]);
    assert_eq!(
        std::fs::read_to_string(p.join("leader-epoch-checkpoint")).unwrap(),
        "0\n1\n7 0\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("partition.metadata")).unwrap(),
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAABw\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("recovery-point-offset-checkpoint")).unwrap(),
        "0\n1\nt 0 2\n"
    );
    assert!(dir.path().join(".kafka_cleanshutdown").exists());
}
