//! Test support shared by this crate's tests, benchmarks and other crates' tests: the RSM conformance suite
//! ([`rsm_conformance`]), store wrappers that inject faults ([`FaultyStore`]) or measure upload bytes in flight
//! ([`InFlightStore`]), helpers that write a segment's local files, and the GCS and Azure emulators ([`emulator`]).
mod conformance;
pub mod emulator;
mod gcs_shim;
mod inflight;

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use strata_metadata::{
    RemoteLogSegmentId, RemoteLogSegmentMetadata, TopicIdPartition, TopicPartition,
};

pub use crate::faults::{Fault, FaultyStore, Op};
pub use conformance::rsm_conformance;
pub use inflight::InFlightStore;

use crate::rsm::LogSegmentData;

/// Metadata for a new copy attempt (fresh segment id) of a segment of `topic`-`partition` starting at
/// `start_offset` with `size` bytes.
pub fn segment_metadata(
    topic: &str,
    partition: i32,
    start_offset: i64,
    size: u64,
) -> RemoteLogSegmentMetadata {
    let tp = TopicIdPartition::new(
        uuid::Uuid::from_u128(0x5eed_0000_0000_0000_0000_0000_0000_0001),
        TopicPartition::new(topic, partition),
    );
    let id = RemoteLogSegmentId::generate_new(tp);
    let epochs = BTreeMap::from([(0, start_offset)]);
    RemoteLogSegmentMetadata::new(
        id,
        start_offset,
        start_offset + 99,
        1_700_000_000_000,
        0,
        1_700_000_000_000,
        size,
        epochs,
    )
    .expect("valid test metadata")
}

/// The local files written by [`write_segment_files`], with their contents for comparison.
#[derive(Clone, Debug)]
pub struct SegmentFiles {
    /// What to hand to `copy_log_segment_data`.
    pub data: LogSegmentData,
    /// The `.log` bytes.
    pub log: Bytes,
    /// The `.index` bytes.
    pub offset_index: Bytes,
    /// The `.timeindex` bytes.
    pub time_index: Bytes,
    /// The `.txnindex` bytes, if written.
    pub transaction_index: Option<Bytes>,
    /// The `.snapshot` bytes.
    pub producer_snapshot: Bytes,
}

/// Writes `{base:020}.log|.index|.timeindex|.snapshot` (and `.txnindex` when `txn` is set) into `dir`, with
/// `log` as the segment and small distinct index contents.
pub fn write_segment_files(dir: &Path, base_offset: i64, log: Bytes, txn: bool) -> SegmentFiles {
    let name = |ext: &str| dir.join(format!("{base_offset:020}.{ext}"));
    let fill = |len: usize, seed: u8| -> Bytes {
        Bytes::from(
            (0..len)
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
                .collect::<Vec<u8>>(),
        )
    };
    let offset_index = fill(8 * 37, 1);
    let time_index = fill(12 * 37, 2);
    let producer_snapshot = fill(93, 3);
    let transaction_index = txn.then(|| fill(34 * 3, 4));
    std::fs::create_dir_all(dir).expect("create segment dir");
    std::fs::write(name("log"), &log).expect("write .log");
    std::fs::write(name("index"), &offset_index).expect("write .index");
    std::fs::write(name("timeindex"), &time_index).expect("write .timeindex");
    std::fs::write(name("snapshot"), &producer_snapshot).expect("write .snapshot");
    if let Some(t) = &transaction_index {
        std::fs::write(name("txnindex"), t).expect("write .txnindex");
    }
    let data = LogSegmentData {
        log_segment: name("log"),
        offset_index: name("index"),
        time_index: name("timeindex"),
        transaction_index: txn.then(|| name("txnindex")),
        producer_snapshot: name("snapshot"),
        leader_epoch_index: Bytes::from(format!("0\n1\n0 {base_offset}\n")),
    };
    SegmentFiles {
        data,
        log,
        offset_index,
        time_index,
        transaction_index,
        producer_snapshot,
    }
}

/// Deterministic pseudo-random bytes (xorshift), compressible when `compressible` is set.
pub fn segment_bytes(len: usize, seed: u64, compressible: bool) -> Bytes {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if compressible {
            let word = b"kafka-record-value-";
            v.extend_from_slice(&word[..word.len().min(len - v.len())]);
            v.push((x % 10) as u8 + b'0');
        } else {
            v.extend_from_slice(&x.to_le_bytes());
        }
    }
    v.truncate(len);
    Bytes::from(v)
}
