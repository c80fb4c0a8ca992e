//! The value types the offset store (`offsets.rs`) and the offsets pending in transactions (`txn_offsets.rs`)
//! share: one committed offset and the partition it is committed for. Reached as `group::offsets::{OffsetEntry,
//! Tp}`.

/// One committed offset.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetEntry {
    /// Committed offset.
    pub offset: i64,
    /// Leader epoch of the committed position (-1 if unknown).
    pub leader_epoch: i32,
    /// Client metadata.
    pub metadata: String,
    /// When it was committed.
    pub commit_timestamp: i64,
}

/// (topic, partition)
pub type Tp = (String, i32);
