//! The vendored kafka-protocol record decoder (used by the broker for `__consumer_offsets`) pre-allocates no more
//! than the bytes it was given, whatever count a batch declares (vendor/kafka-protocol-0.18.0/STRATA-PATCH.md).
use bytes::{Bytes, BytesMut};
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

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
fn a_batch_declaring_two_billion_records_is_an_error_not_an_abort() {
    let mut b = one_record_batch(0);
    b[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    fix_crc(&mut b);
    let mut buf = b.freeze();
    assert!(RecordBatchDecoder::decode(&mut buf).is_err());
}

#[test]
fn a_record_declaring_two_billion_headers_is_an_error_not_an_abort() {
    let b = one_record_batch(1);
    // The record ends with: header count 1 (zigzag 0x02), key len 2 ("h0"), "h0", value len -1 (0x01).
    let at = b.len() - 5;
    assert_eq!(b[at], 0x02);
    // Replace the count with a 5-byte varint for i32::MAX and keep the length prefix honest.
    let mut v = b[..at].to_vec();
    v.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]);
    v.extend_from_slice(&b[at + 1..]);
    v[61] += 8; // record length: a one-byte zigzag varint for this small record, so +4 bytes is +8
    let len = i32::from_be_bytes(v[8..12].try_into().unwrap()) + 4;
    v[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut v);
    let mut buf = Bytes::from(v);
    assert!(RecordBatchDecoder::decode(&mut buf).is_err());
}
