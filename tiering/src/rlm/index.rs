//! Lookups in a remote segment's index files (fetched whole through `RSM::fetch_index` and cached).
//!
//! Index formats (Kafka's, big-endian; a rolled segment's files are trimmed, but a zero tail is tolerated):
//!
//! | file | entry | bytes |
//! |---|---|---|
//! | `.index` | relative offset `u32`, file position `u32` | 8 |
//! | `.timeindex` | timestamp `i64`, relative offset `u32` | 12 |
//!
//! Batches in remote bytes are framed by `strata_storage`'s [`BatchHeader`](strata_storage::record::BatchHeader).

/// Position of the greatest `.index` entry whose offset is <= `target` (0 when none), Kafka's
/// `OffsetIndex.lookup`.
pub(crate) fn offset_index_lookup(index: &[u8], base_offset: i64, target: i64) -> u64 {
    let mut best = 0u64;
    for (i, e) in index.chunks_exact(8).enumerate() {
        let rel = u32::from_be_bytes(e[0..4].try_into().expect("4 bytes"));
        let pos = u32::from_be_bytes(e[4..8].try_into().expect("4 bytes"));
        if i > 0 && rel == 0 && pos == 0 {
            break; // preallocated zero tail
        }
        if base_offset + i64::from(rel) > target {
            break;
        }
        best = u64::from(pos);
    }
    best
}

/// Offset of the greatest `.timeindex` entry whose timestamp is <= `ts` (`base_offset` when none), Kafka's
/// `TimeIndex.lookup`.
pub(crate) fn time_index_lookup(index: &[u8], base_offset: i64, ts: i64) -> i64 {
    let mut best = base_offset;
    for (i, e) in index.chunks_exact(12).enumerate() {
        let t = i64::from_be_bytes(e[0..8].try_into().expect("8 bytes"));
        let rel = u32::from_be_bytes(e[8..12].try_into().expect("4 bytes"));
        if i > 0 && t == 0 && rel == 0 {
            break;
        }
        if t > ts {
            break;
        }
        best = base_offset + i64::from(rel);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_entries(e: &[(u32, u32)]) -> Vec<u8> {
        e.iter()
            .flat_map(|(r, p)| [r.to_be_bytes(), p.to_be_bytes()].concat())
            .collect()
    }

    #[test]
    fn offset_lookup_returns_greatest_entry_at_or_below_target() {
        let idx = offset_entries(&[(3, 100), (9, 400), (20, 900), (0, 0)]);
        assert_eq!(offset_index_lookup(&idx, 100, 99), 0);
        assert_eq!(offset_index_lookup(&idx, 100, 103), 100);
        assert_eq!(offset_index_lookup(&idx, 100, 115), 400);
        assert_eq!(offset_index_lookup(&idx, 100, 1_000), 900);
        assert_eq!(offset_index_lookup(&[], 100, 1_000), 0);
    }

    #[test]
    fn time_lookup_returns_offset_of_greatest_entry_at_or_below() {
        let idx: Vec<u8> = [(1_000i64, 5u32), (2_000, 9)]
            .iter()
            .flat_map(|(t, r)| [t.to_be_bytes().to_vec(), r.to_be_bytes().to_vec()].concat())
            .collect();
        assert_eq!(time_index_lookup(&idx, 50, 999), 50);
        assert_eq!(time_index_lookup(&idx, 50, 1_500), 55);
        assert_eq!(time_index_lookup(&idx, 50, 5_000), 59);
    }
}
