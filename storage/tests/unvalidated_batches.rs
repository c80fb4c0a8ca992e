//! Batches stored without being opened (by a strata from before append validation) must not abort a read: a
//! timestamp lookup over them is an error naming the batch, whatever counts or lengths they declare.
mod common;

use std::io::Write;

use bytes::Bytes;
use common::*;
use strata_storage::{Error, LogConfig, RecordBatch};

const HOSTILE_TS: i64 = 1_800_000_000_000;

/// A v2 batch with a valid CRC: `codec`, `count` records declared, `payload` as the records.
fn raw_batch(codec: i16, count: i32, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((49 + payload.len()) as i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&codec.to_be_bytes());
    b.extend_from_slice(&(count - 1).to_be_bytes());
    b.extend_from_slice(&HOSTILE_TS.to_be_bytes());
    // maxTimestamp above every record's, so a lookup for HOSTILE_TS + 1 walks the whole batch.
    b.extend_from_slice(&(HOSTILE_TS + 100).to_be_bytes());
    b.extend_from_slice(&(-1i64).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(payload);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// One record: length 8, attributes, timestamp delta 0, offset delta 0, null key, value "ab", no headers.
const ONE_RECORD: [u8; 9] = [16, 0, 0, 0, 1, 4, b'a', b'b', 0];

fn gzip(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(plain).unwrap();
    e.finish().unwrap()
}

fn hostile() -> Vec<(&'static str, Vec<u8>)> {
    let mut two_billion_headers = ONE_RECORD[..8].to_vec();
    two_billion_headers[0] = 24; // length 12: the header count below takes 5 bytes
    two_billion_headers.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]);
    vec![
        (
            "2^31-1 records declared, one held",
            raw_batch(1, i32::MAX, &gzip(&ONE_RECORD)),
        ),
        (
            "2^31-1 headers declared",
            raw_batch(1, 1, &gzip(&two_billion_headers)),
        ),
        // Raw snappy whose preamble declares 4 GiB.
        (
            "snappy block declaring 4 GiB",
            raw_batch(2, 1, &[0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]),
        ),
        ("'zstd' that is not zstd", raw_batch(4, 1, &ONE_RECORD)),
    ]
}

#[test]
fn timestamp_lookup_in_a_hostile_stored_batch_is_an_error_naming_it() {
    for (what, b) in hostile() {
        let batch = RecordBatch::new(Bytes::from(b)).unwrap();
        if what.contains("well-formed") {
            assert_eq!(
                batch.find_timestamp(HOSTILE_TS, 0).unwrap(),
                Some((0, HOSTILE_TS))
            );
            continue;
        }
        match batch.find_timestamp(HOSTILE_TS + 1, 0) {
            Err(Error::CorruptRecord { reason }) => {
                assert!(reason.contains("batch at offset 0"), "{what}: {reason}")
            }
            other => panic!("{what}: expected CORRUPT_MESSAGE, got {other:?}"),
        }
    }
}

/// The same through the log: the batch is put in a segment file as an older strata would have left it, the log
/// is recovered from it (CRC valid, so it is kept), and ListOffsets by timestamp answers an error.
#[test]
fn a_log_holding_a_hostile_batch_answers_timestamp_lookups_with_an_error() {
    let (_, b) = hostile().remove(0);
    let dir = tempfile::tempdir().unwrap();
    let log_dir = {
        let m = open_manager(dir.path());
        let log = log(&m, LogConfig::default());
        log.append_as_leader(batch(1, 5), 0).unwrap();
        let d = log.dir().to_path_buf();
        m.shutdown().unwrap();
        d
    };
    std::fs::write(log_dir.join("00000000000000000000.log"), &b).unwrap();
    for ext in ["index", "timeindex"] {
        let _ = std::fs::remove_file(log_dir.join(format!("00000000000000000000.{ext}")));
    }
    let _ = std::fs::remove_file(dir.path().join(".kafka_cleanshutdown"));
    let m = open_manager(dir.path());
    let log = log(&m, LogConfig::default());
    assert_eq!(
        log.log_end_offset(),
        i32::MAX as i64,
        "the stored batch was recovered"
    );
    let res = log.fetch_offset_by_timestamp(HOSTILE_TS + 1);
    assert!(matches!(res, Err(Error::CorruptRecord { .. })), "{res:?}");
}
