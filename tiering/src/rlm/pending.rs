//! What the copy task has left to do: the rolled segments of a partition not yet in remote storage (the copy
//! task uploads them, the expiration task and the gauges count them).
use strata_storage::{RolledSegment, UnifiedLog};

/// Rolled segments not yet in remote storage, in offset order, up to the last stable offset: as Kafka, a segment
/// holding data of a transaction still open is copied only once the transaction ended (its aborted-transaction
/// entries are then final in the segment's `.txnindex`).
pub(crate) fn pending_segments(log: &UnifiedLog) -> Vec<RolledSegment> {
    let highest = log.highest_offset_in_remote_storage();
    let log_start = log.log_start_offset();
    let lso = log.last_stable_offset();
    log.rolled_segments()
        .into_iter()
        .filter(|s| {
            s.next_offset > s.base_offset
                && s.next_offset - 1 > highest
                && s.next_offset > log_start
        })
        .take_while(|s| s.next_offset <= lso)
        .collect()
}

/// Bytes of rolled segments that only exist locally (what a failing upload holds on disk).
pub(crate) fn local_only_rolled_bytes(log: &UnifiedLog) -> u64 {
    pending_segments(log).iter().map(|s| s.size_bytes).sum()
}
