//! Offsets committed inside a transaction (TxnOffsetCommit), as Kafka's `GroupMetadata` keeps them: written to
//! `__consumer_offsets` at once, in a transactional batch of the producer, but visible to OffsetFetch only when the
//! transaction's COMMIT marker lands in that partition (an ABORT drops them). Replay at start-up does the same
//! from the log: transactional offset records wait for their producer's marker.

use parking_lot::Mutex;
use std::collections::HashMap;

use super::offset_entry::{OffsetEntry, Tp};

/// One pending transactional commit: group, partition, offset, and the `__consumer_offsets` offset of its record.
pub type PendingCommit = (String, Tp, OffsetEntry, i64);

/// Pending transactional offsets per (`__consumer_offsets` partition, producer id).
#[derive(Debug, Default)]
pub struct PendingTxnOffsets {
    pending: Mutex<HashMap<(i32, i64), Vec<PendingCommit>>>,
}

impl PendingTxnOffsets {
    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<(i32, i64), Vec<PendingCommit>>> {
        self.pending.lock()
    }

    /// Records commits written in `producer_id`'s open transaction to `partition`.
    pub fn add(&self, partition: i32, producer_id: i64, commits: Vec<PendingCommit>) {
        self.lock()
            .entry((partition, producer_id))
            .or_default()
            .extend(commits);
    }

    /// The marker of `producer_id` reached `partition`: its commits in order (to apply on COMMIT; dropped on
    /// ABORT by the caller ignoring them).
    pub fn take(&self, partition: i32, producer_id: i64) -> Vec<PendingCommit> {
        self.lock()
            .remove(&(partition, producer_id))
            .unwrap_or_default()
    }

    /// Drops the pending commits of `keys` of `group` in `partition` (the partitions' offsets were deleted: Kafka's
    /// `removeOffsets` drops them from pending transactions too).
    pub fn drop_keys(&self, partition: i32, group: &str, keys: &[Tp]) {
        for commits in self
            .lock()
            .iter_mut()
            .filter(|((p, _), _)| *p == partition)
            .map(|(_, c)| c)
        {
            commits.retain(|(g, tp, _, _)| g != group || !keys.contains(tp));
        }
    }

    /// Pending commits of `group` (for OffsetFetch's `require_stable`: a partition with one is unstable).
    pub fn has_pending(&self, group: &str, tp: &Tp) -> bool {
        self.lock()
            .values()
            .flatten()
            .any(|(g, t, _, _)| g == group && t == tp)
    }
}

/// The type of a control record from its key (Kafka's `ControlRecordType`: version i16, type i16): `Some(true)`
/// for COMMIT, `Some(false)` for ABORT, `None` for another control record.
pub fn marker_commits(key: Option<&[u8]>) -> Option<bool> {
    let k = key?;
    if k.len() < 4 {
        return None;
    }
    match i16::from_be_bytes([k[2], k[3]]) {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(offset: i64) -> OffsetEntry {
        OffsetEntry {
            offset,
            leader_epoch: -1,
            metadata: String::new(),
            commit_timestamp: 1,
        }
    }

    #[test]
    fn commits_wait_for_their_producers_marker_in_their_partition() {
        let p = PendingTxnOffsets::default();
        p.add(0, 7, vec![("g".into(), ("t".into(), 0), entry(5), 10)]);
        p.add(0, 8, vec![("g".into(), ("t".into(), 1), entry(9), 11)]);
        assert!(p.has_pending("g", &("t".into(), 0)));
        assert!(p.take(1, 7).is_empty(), "another partition's marker");
        let taken = p.take(0, 7);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].2.offset, 5);
        assert!(!p.has_pending("g", &("t".into(), 0)));
        assert!(
            p.has_pending("g", &("t".into(), 1)),
            "producer 8 still pending"
        );
        p.drop_keys(1, "g", &[("t".into(), 1)]);
        assert!(
            p.has_pending("g", &("t".into(), 1)),
            "another partition's tombstone"
        );
        p.drop_keys(0, "g", &[("t".into(), 1)]);
        assert!(
            !p.has_pending("g", &("t".into(), 1)),
            "its offset was deleted"
        );
    }

    #[test]
    fn marker_keys_are_read_as_kafka_writes_them() {
        assert_eq!(marker_commits(Some(&[0, 0, 0, 1])), Some(true));
        assert_eq!(marker_commits(Some(&[0, 0, 0, 0])), Some(false));
        assert_eq!(marker_commits(Some(&[0, 0, 0, 5])), None);
        assert_eq!(marker_commits(Some(&[0, 0])), None);
        assert_eq!(marker_commits(None), None);
    }
}
