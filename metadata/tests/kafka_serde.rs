//! strata's remote log metadata records in Kafka's serialization, byte for byte: `fixtures/kafka_serde.hex` holds
//! what Kafka 4.4's own `RemoteLogMetadataSerde` wrote for the values built here (`fixtures/KafkaSerdeFixtures.java`
//! regenerates it), and each must encode to exactly those bytes and decode back to the same value.
use std::collections::{BTreeMap, HashMap};

use strata_metadata::{
    CustomMetadata, Error, KafkaRemoteLogMetadata, RemoteLogMetadataRecord, RemoteLogSegmentId,
    RemoteLogSegmentMetadata, RemoteLogSegmentMetadataSnapshot, RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState, RemotePartitionDeleteMetadata, RemotePartitionDeleteState,
    TopicIdPartition, TopicPartition, ValueFormat,
};
use uuid::Uuid;

fn fixtures() -> HashMap<String, Vec<u8>> {
    let text = include_str!("fixtures/kafka_serde.hex");
    text.lines()
        .map(|l| {
            let (name, hex) = l.split_once(' ').expect("name hex");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (name.to_owned(), bytes)
        })
        .collect()
}

fn tp() -> TopicIdPartition {
    TopicIdPartition::new(
        Uuid::from_u64_pair(0x0123_4567_89ab_cdef, 0x0fed_cba9_8765_4321),
        TopicPartition::new("orders", 7),
    )
}

fn id() -> RemoteLogSegmentId {
    RemoteLogSegmentId::new(
        tp(),
        Uuid::from_u64_pair(0x1111_2222_3333_4444, 0x5555_6666_7777_8888),
    )
}

fn segment() -> RemoteLogSegmentMetadata {
    RemoteLogSegmentMetadata::new(
        id(),
        100,
        199,
        1_700_000_000_123,
        1,
        1_700_000_000_456,
        65536,
        BTreeMap::from([(0, 100), (3, 150)]),
    )
    .unwrap()
}

fn records() -> Vec<(&'static str, RemoteLogMetadataRecord)> {
    let mut txn_empty = segment();
    txn_empty.broker_id = 2;
    txn_empty.custom_metadata = Some(CustomMetadata(vec![1, 2, 3]));
    txn_empty.txn_idx_empty = true;
    let update = RemoteLogSegmentMetadataUpdate::new(
        id(),
        1_700_000_000_789,
        RemoteLogSegmentState::CopySegmentFinished,
        1,
    );
    let mut update_custom = update.clone();
    update_custom.state = RemoteLogSegmentState::DeleteSegmentStarted;
    update_custom.custom_metadata = Some(CustomMetadata(vec![]));
    vec![
        ("segment", RemoteLogMetadataRecord::Segment(segment())),
        (
            "segment_txn_empty_custom",
            RemoteLogMetadataRecord::Segment(txn_empty),
        ),
        (
            "segment_update",
            RemoteLogMetadataRecord::SegmentUpdate(update),
        ),
        (
            "segment_update_custom",
            RemoteLogMetadataRecord::SegmentUpdate(update_custom),
        ),
        (
            "partition_delete",
            RemoteLogMetadataRecord::PartitionDelete(RemotePartitionDeleteMetadata::new(
                tp(),
                RemotePartitionDeleteState::DeletePartitionMarked,
                1_700_000_001_000,
                1,
            )),
        ),
    ]
}

#[test]
fn records_encode_to_kafkas_bytes_and_decode_back() {
    let fx = fixtures();
    for (name, record) in records() {
        let kafka = &fx[name];
        assert_eq!(&record.to_bytes().unwrap(), kafka, "{name}");
        assert_eq!(ValueFormat::of(kafka), ValueFormat::Kafka, "{name}");
        let back = RemoteLogMetadataRecord::from_bytes(kafka, || name.to_owned()).unwrap();
        assert_eq!(back, record, "{name}");
    }
}

#[test]
fn segment_snapshot_encodes_to_kafkas_bytes_and_is_refused_as_a_topic_record() {
    let fx = fixtures();
    let mut m = segment();
    m.state = RemoteLogSegmentState::CopySegmentFinished;
    m.txn_idx_empty = true;
    let snap = RemoteLogSegmentMetadataSnapshot::create(&m);
    let kafka = &fx["segment_snapshot"];
    assert_eq!(&snap.to_bytes().unwrap(), kafka);
    assert_eq!(
        KafkaRemoteLogMetadata::from_bytes(kafka, || "snap".into()).unwrap(),
        KafkaRemoteLogMetadata::Snapshot(snap)
    );
    let err =
        RemoteLogMetadataRecord::from_bytes(kafka, || "record at offset 4".into()).unwrap_err();
    assert!(
        err.to_string().contains("record at offset 4") && err.to_string().contains("api key 3"),
        "{err}"
    );
}

#[test]
fn legacy_json_values_still_read() {
    for (name, record) in records() {
        let json = record.to_json();
        assert_eq!(ValueFormat::of(&json), ValueFormat::Json);
        let back = RemoteLogMetadataRecord::from_bytes(&json, || name.to_owned()).unwrap();
        assert_eq!(back, record, "{name}");
    }
}

#[test]
fn damaged_kafka_values_are_refused_naming_the_record_and_the_field() {
    let fx = fixtures();
    let good = &fx["segment_update"];
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..good.len() - 3].to_vec(), "needs"),
        ([good.as_slice(), &[0]].concat(), "garbage after api key 1"),
        ([&[2u8][..], &good[1..]].concat(), "unknown frame version 2"),
        ([&[1u8, 9, 0][..], &good[3..]].concat(), "unknown api key 9"),
        (
            [&[1u8, 1, 1][..], &good[3..]].concat(),
            "only version 0 exists",
        ),
        (
            {
                let mut b = good.clone();
                let state_at = b.len() - 2;
                b[state_at] = 7;
                b
            },
            "unknown remote log segment state id 7",
        ),
    ];
    for (bytes, want) in cases {
        let err = RemoteLogMetadataRecord::from_bytes(&bytes, || {
            "record at offset 9 of __remote_log_metadata-0".into()
        })
        .unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(want) && msg.contains("offset 9"),
            "want {want:?} in {msg}"
        );
    }
}

#[test]
fn a_segment_kafkas_int32_can_not_hold_is_refused_before_it_is_written() {
    let mut m = segment();
    m.segment_size_in_bytes = i32::MAX as u64 + 1;
    let err = m.validate().unwrap_err();
    assert!(err.to_string().contains("int32"), "{err}");
    m.segment_size_in_bytes = i32::MAX as u64;
    m.validate().unwrap();
}

proptest::proptest! {
    #[test]
    fn any_valid_segment_round_trips_through_kafkas_format(
        start in 0i64..1 << 40,
        len in 0i64..1 << 20,
        epochs in proptest::collection::btree_set(0i32..1000, 1..6),
        size in 0u64..=i32::MAX as u64,
        custom in proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..=128)),
        txn_idx_empty: bool,
        ts: i64,
        broker: i32,
        topic in "[a-zA-Z0-9._-]{1,249}",
    ) {
        let tp = TopicIdPartition::new(Uuid::from_u128(u128::from(size) << 7 | 5), TopicPartition::new(topic, 3));
        // Epoch i starts at start + i (strictly increasing, within the segment).
        let end = start + len + epochs.len() as i64;
        let leader_epochs: BTreeMap<i32, i64> =
            epochs.iter().enumerate().map(|(i, &e)| (e, start + i as i64)).collect();
        let mut m = RemoteLogSegmentMetadata::new(
            RemoteLogSegmentId::new(tp, Uuid::from_u128(u128::from(ts as u64))),
            start, end, ts, broker, ts ^ 1, size, leader_epochs,
        ).unwrap();
        m.custom_metadata = custom.map(CustomMetadata);
        m.txn_idx_empty = txn_idx_empty;
        let r = RemoteLogMetadataRecord::Segment(m);
        let bytes = r.to_bytes().unwrap();
        proptest::prop_assert_eq!(RemoteLogMetadataRecord::from_bytes(&bytes, String::new).unwrap(), r);
        // Every strict prefix is refused, never misread.
        for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
            proptest::prop_assert!(RemoteLogMetadataRecord::from_bytes(&bytes[..cut], String::new).is_err());
        }
    }
}

proptest::proptest! {
    /// Damaged or hostile values (a Kafka frame header then random bytes, or random bytes mutating a valid
    /// value): decoding never panics, and whatever decodes re-encodes to a value that decodes the same.
    #[test]
    fn hostile_values_never_panic_and_what_decodes_round_trips(
        api_key in 0u8..5,
        body in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        flips in proptest::collection::vec((0usize..200, proptest::num::u8::ANY), 0..4),
    ) {
        let fx = fixtures();
        let mut inputs = vec![[&[1u8, api_key, 0][..], &body].concat()];
        for name in ["segment", "segment_txn_empty_custom", "segment_update", "partition_delete"] {
            let mut v = fx[name].clone();
            for &(at, b) in &flips {
                let i = at % v.len();
                v[i] = b;
            }
            inputs.push(v);
        }
        for v in inputs {
            if let Ok(KafkaRemoteLogMetadata::Record(r)) = KafkaRemoteLogMetadata::from_bytes(&v, String::new) {
                if r.to_bytes().is_ok() {
                    let again = RemoteLogMetadataRecord::from_bytes(&r.to_bytes().unwrap(), String::new);
                    proptest::prop_assert_eq!(again.unwrap(), r);
                }
            }
        }
    }
}
