//! Which `__remote_log_metadata` partition holds a user partition's records: Kafka's
//! `RemoteLogMetadataTopicPartitioner`, bit for bit, so the mapping is stable across restarts and versions.
use strata_storage::TopicIdPartition;

/// `toPositive(murmur2(int32BE(Objects.hash(topicId.lsb, topicId.msb, partition)))) % num_partitions`.
pub fn metadata_partition(tp: &TopicIdPartition, num_partitions: u32) -> i32 {
    assert!(
        num_partitions > 0,
        "the metadata topic has at least one partition"
    );
    let (msb, lsb) = tp.topic_id.as_u64_pair();
    let long_hash = |v: u64| (v ^ (v >> 32)) as i32; // Java's Long.hashCode
    let mut h: i32 = 1; // java.util.Objects.hash(Long, Long, Integer)
    for e in [long_hash(lsb), long_hash(msb), tp.partition()] {
        h = h.wrapping_mul(31).wrapping_add(e);
    }
    let positive = murmur2(&h.to_be_bytes()) & 0x7fff_ffff;
    (positive as u32 % num_partitions) as i32
}

/// Kafka's `Utils.murmur2`.
fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    let len = data.len();
    let mut h = SEED ^ len as u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        for (i, &b) in rest.iter().enumerate().rev() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

#[cfg(test)]
mod tests {
    use strata_storage::TopicPartition;
    use uuid::Uuid;

    use super::*;

    #[test]
    fn murmur2_matches_kafkas_test_vectors() {
        // From Kafka's UtilsTest.testMurmur2.
        let cases: [(&[u8], i32); 3] = [
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
        ];
        for (input, expected) in cases {
            assert_eq!(
                murmur2(input),
                expected,
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn partition_is_stable_and_in_range() {
        let tp = TopicIdPartition::new(
            Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
            TopicPartition::new("t", 3),
        );
        let p = metadata_partition(&tp, 50);
        assert!((0..50).contains(&p));
        assert_eq!(p, metadata_partition(&tp.clone(), 50));
        assert_eq!(metadata_partition(&tp, 1), 0);
        let spread: std::collections::BTreeSet<i32> = (0..200)
            .map(|i| {
                metadata_partition(
                    &TopicIdPartition::new(Uuid::from_u128(i), TopicPartition::new("t", 0)),
                    50,
                )
            })
            .collect();
        assert!(
            spread.len() > 30,
            "200 topics spread over {} of 50 partitions",
            spread.len()
        );
    }
}
