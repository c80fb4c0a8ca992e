//! The two KIP-405 state machines: a remote segment's lifecycle and a partition's remote deletion.
use std::fmt;

use serde::{Deserialize, Serialize};

/// The lifecycle of one remote segment copy attempt, Kafka's `RemoteLogSegmentState`.
///
/// ```text
///  (none) ──> COPY_SEGMENT_STARTED ──> COPY_SEGMENT_FINISHED ──> DELETE_SEGMENT_STARTED ──> DELETE_SEGMENT_FINISHED
///                      │                                               ^
///                      └───────────────────────────────────────────────┘
/// ```
/// plus every self-transition (so retries and failover stay idempotent). Nothing else is legal.
/// Serialized as Kafka's constant names (`"COPY_SEGMENT_STARTED"`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RemoteLogSegmentState {
    /// The copy to remote storage started; the data may be partial. Id 0.
    CopySegmentStarted,
    /// The copy finished; the segment serves reads. Id 1.
    CopySegmentFinished,
    /// Deletion from remote storage started. Id 2.
    DeleteSegmentStarted,
    /// The remote data is gone; the cache forgets the segment. Id 3.
    DeleteSegmentFinished,
}

impl RemoteLogSegmentState {
    /// Every state, in id order.
    pub const ALL: [Self; 4] = [
        Self::CopySegmentStarted,
        Self::CopySegmentFinished,
        Self::DeleteSegmentStarted,
        Self::DeleteSegmentFinished,
    ];

    /// Kafka's byte id (0..=3).
    pub fn id(self) -> i8 {
        match self {
            Self::CopySegmentStarted => 0,
            Self::CopySegmentFinished => 1,
            Self::DeleteSegmentStarted => 2,
            Self::DeleteSegmentFinished => 3,
        }
    }

    /// The state with Kafka's byte id, `None` for an unknown id.
    pub fn from_id(id: i8) -> Option<Self> {
        Self::ALL.get(usize::try_from(id).ok()?).copied()
    }

    /// Kafka's constant name.
    pub fn name(self) -> &'static str {
        match self {
            Self::CopySegmentStarted => "COPY_SEGMENT_STARTED",
            Self::CopySegmentFinished => "COPY_SEGMENT_FINISHED",
            Self::DeleteSegmentStarted => "DELETE_SEGMENT_STARTED",
            Self::DeleteSegmentFinished => "DELETE_SEGMENT_FINISHED",
        }
    }

    /// Kafka's `RemoteLogSegmentState.isValidTransition(src, dst)`; `src = None` means the segment is unknown.
    pub fn is_valid_transition(src: Option<Self>, dst: Self) -> bool {
        use RemoteLogSegmentState::*;
        match src {
            None => dst == CopySegmentStarted,
            Some(src) if src == dst => true,
            Some(CopySegmentStarted) => matches!(dst, CopySegmentFinished | DeleteSegmentStarted),
            Some(CopySegmentFinished) => dst == DeleteSegmentStarted,
            Some(DeleteSegmentStarted) => dst == DeleteSegmentFinished,
            Some(DeleteSegmentFinished) => false,
        }
    }
}

impl fmt::Display for RemoteLogSegmentState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The remote deletion of a whole partition (topic deletion), Kafka's `RemotePartitionDeleteState`.
///
/// `(none) → DELETE_PARTITION_MARKED → DELETE_PARTITION_STARTED → DELETE_PARTITION_FINISHED`, plus
/// self-transitions. Once FINISHED is recorded the cache forgets the partition (its segments and its delete
/// state), so a later MARKED starts over from `(none)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RemotePartitionDeleteState {
    /// The partition is marked for deletion. Id 0.
    DeletePartitionMarked,
    /// Deleting its remote segments started. Id 1.
    DeletePartitionStarted,
    /// Every remote segment is gone. Id 2.
    DeletePartitionFinished,
}

impl RemotePartitionDeleteState {
    /// Every state, in id order.
    pub const ALL: [Self; 3] = [
        Self::DeletePartitionMarked,
        Self::DeletePartitionStarted,
        Self::DeletePartitionFinished,
    ];

    /// Kafka's byte id (0..=2).
    pub fn id(self) -> i8 {
        match self {
            Self::DeletePartitionMarked => 0,
            Self::DeletePartitionStarted => 1,
            Self::DeletePartitionFinished => 2,
        }
    }

    /// The state with Kafka's byte id, `None` for an unknown id.
    pub fn from_id(id: i8) -> Option<Self> {
        Self::ALL.get(usize::try_from(id).ok()?).copied()
    }

    /// Kafka's constant name.
    pub fn name(self) -> &'static str {
        match self {
            Self::DeletePartitionMarked => "DELETE_PARTITION_MARKED",
            Self::DeletePartitionStarted => "DELETE_PARTITION_STARTED",
            Self::DeletePartitionFinished => "DELETE_PARTITION_FINISHED",
        }
    }

    /// Kafka's `RemotePartitionDeleteState.isValidTransition(src, dst)`; `src = None` means no delete recorded.
    pub fn is_valid_transition(src: Option<Self>, dst: Self) -> bool {
        use RemotePartitionDeleteState::*;
        match src {
            None => dst == DeletePartitionMarked,
            Some(src) if src == dst => true,
            Some(DeletePartitionMarked) => dst == DeletePartitionStarted,
            Some(DeletePartitionStarted) => dst == DeletePartitionFinished,
            Some(DeletePartitionFinished) => false,
        }
    }
}

impl fmt::Display for RemotePartitionDeleteState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RemoteLogSegmentState::*;

    #[test]
    fn segment_transitions_are_exactly_kafkas() {
        let legal = [
            (None, CopySegmentStarted),
            (Some(CopySegmentStarted), CopySegmentStarted),
            (Some(CopySegmentStarted), CopySegmentFinished),
            (Some(CopySegmentStarted), DeleteSegmentStarted),
            (Some(CopySegmentFinished), CopySegmentFinished),
            (Some(CopySegmentFinished), DeleteSegmentStarted),
            (Some(DeleteSegmentStarted), DeleteSegmentStarted),
            (Some(DeleteSegmentStarted), DeleteSegmentFinished),
            (Some(DeleteSegmentFinished), DeleteSegmentFinished),
        ];
        let mut count = 0;
        for src in std::iter::once(None).chain(RemoteLogSegmentState::ALL.map(Some)) {
            for dst in RemoteLogSegmentState::ALL {
                let expected = legal.contains(&(src, dst));
                assert_eq!(
                    RemoteLogSegmentState::is_valid_transition(src, dst),
                    expected,
                    "{src:?} -> {dst}"
                );
                count += usize::from(expected);
            }
        }
        assert_eq!(count, legal.len());
    }

    #[test]
    fn partition_delete_transitions_are_exactly_kafkas() {
        use RemotePartitionDeleteState::*;
        let legal = [
            (None, DeletePartitionMarked),
            (Some(DeletePartitionMarked), DeletePartitionMarked),
            (Some(DeletePartitionMarked), DeletePartitionStarted),
            (Some(DeletePartitionStarted), DeletePartitionStarted),
            (Some(DeletePartitionStarted), DeletePartitionFinished),
            (Some(DeletePartitionFinished), DeletePartitionFinished),
        ];
        for src in std::iter::once(None).chain(RemotePartitionDeleteState::ALL.map(Some)) {
            for dst in RemotePartitionDeleteState::ALL {
                assert_eq!(
                    RemotePartitionDeleteState::is_valid_transition(src, dst),
                    legal.contains(&(src, dst)),
                    "{src:?} -> {dst}"
                );
            }
        }
    }

    #[test]
    fn ids_and_names_round_trip() {
        for s in RemoteLogSegmentState::ALL {
            assert_eq!(RemoteLogSegmentState::from_id(s.id()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        for s in RemotePartitionDeleteState::ALL {
            assert_eq!(RemotePartitionDeleteState::from_id(s.id()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        assert_eq!(RemoteLogSegmentState::from_id(4), None);
        assert_eq!(RemoteLogSegmentState::from_id(-1), None);
        assert_eq!(RemotePartitionDeleteState::from_id(3), None);
    }
}
