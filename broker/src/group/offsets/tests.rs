use super::*;

#[test]
fn key_and_value_round_trip() {
    let k = encode_key("g", "t", 7).unwrap();
    assert_eq!(decode_key(k), Some(("g".into(), "t".into(), 7)));
    let e = OffsetEntry {
        offset: 42,
        leader_epoch: 3,
        metadata: "m".into(),
        commit_timestamp: 9,
    };
    assert_eq!(decode_value(encode_value(&e).unwrap()), Some(e));
}

#[test]
fn strings_longer_than_i16_max_are_refused_not_wrapped() {
    let long = "m".repeat(40_000);
    let e = OffsetEntry {
        offset: 7,
        leader_epoch: -1,
        metadata: long.clone(),
        commit_timestamp: 9,
    };
    let err = encode_value(&e).unwrap_err().to_string();
    assert!(err.contains("offset metadata is 40000 bytes"), "{err}");
    assert!(encode_key(&long, "t", 0).is_err());
    // The longest storable string still round-trips.
    let e = OffsetEntry {
        metadata: "m".repeat(i16::MAX as usize),
        ..e
    };
    assert_eq!(decode_value(encode_value(&e).unwrap()), Some(e));
}

#[test]
fn partition_matches_java_hash_code() {
    // "group".hashCode() == 98629247 in Java.
    assert_eq!(java_hash("group"), 98_629_247);
    assert_eq!(partition_for("group", 50), 98_629_247 % 50);
}

/// Kafka's `GroupMetadata.completePendingTxnOffsetCommit`: at COMMIT, a pending offset replaces the committed one
/// only if its record is later in `__consumer_offsets` (the log cleaner keeps the later record of the key, so
/// a replay after a clean gives the same answer).
#[test]
fn a_transactional_commit_replaces_only_an_earlier_committed_offset() {
    let e = |offset| OffsetEntry {
        offset,
        leader_epoch: -1,
        metadata: String::new(),
        commit_timestamp: 1,
    };
    let tp = |p| ("t".to_string(), p);
    let mut cache = HashMap::new();
    cache.insert(
        "g".to_string(),
        BTreeMap::from([
            (
                tp(0),
                Stored {
                    entry: e(100),
                    at: 20,
                },
            ),
            (tp(1), Stored { entry: e(7), at: 5 }),
        ]),
    );
    let pending = vec![
        ("g".to_string(), tp(0), e(50), 10),
        ("g".to_string(), tp(1), e(8), 11),
        ("g".to_string(), tp(2), e(9), 12),
    ];
    apply_committed(&mut cache, pending);
    let g = &cache["g"];
    assert_eq!(g[&tp(0)].entry.offset, 100, "the later plain commit stays");
    assert_eq!(g[&tp(1)].entry.offset, 8);
    assert_eq!(g[&tp(2)].entry.offset, 9);
}

#[test]
fn garbage_keys_are_skipped() {
    assert_eq!(decode_key(Bytes::from_static(&[0, 2, 0])), None);
    assert_eq!(decode_key(Bytes::from_static(&[0])), None);
}

/// The value Kafka 4.4 wrote for a commit of offset 100 (flexible version 4: compact metadata, the topic id as
/// tagged field 0), taken from a `__consumer_offsets` segment Kafka wrote.
#[test]
fn reads_kafka_4_flexible_version_4_values() {
    let mut v = vec![0x00, 0x04];
    v.extend_from_slice(&100i64.to_be_bytes());
    v.extend_from_slice(&(-1i32).to_be_bytes());
    v.push(0x01); // metadata "" (compact: length + 1)
    v.extend_from_slice(&0x0000_01a2_43fd_1dd1i64.to_be_bytes());
    v.extend_from_slice(&[0x01, 0x00, 0x10]); // one tagged field: tag 0, 16 bytes
    v.extend_from_slice(&[0xa9; 16]);
    let e = decode_value(Bytes::from(v)).expect("decodes");
    assert_eq!(
        (
            e.offset,
            e.leader_epoch,
            e.metadata.as_str(),
            e.commit_timestamp
        ),
        (100, -1, "", 0x0000_01a2_43fd_1dd1)
    );
}
