//! Control records (batch attributes bit 5): the key that says what a control batch marks. Shared by the log
//! cleaner (which keeps control batches) and the transaction work (`.txnindex`, last stable offset).
//!
//! Key layout (big-endian), Kafka's `ControlRecordType.parse` / `ControlRecordUtils`:
//!
//! | off | len | field | notes |
//! |----:|----:|-------|-------|
//! | 0 | 2 | version | 0 today; a negative version is invalid, a higher one is read as version 0 |
//! | 2 | 2 | type | 0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, 3 SNAPSHOT_HEADER, 4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS |
//!
//! The value of an ABORT/COMMIT record is Kafka's `EndTransactionMarker` (version, coordinator epoch); it is not
//! needed here.
use crate::{Error, Result};

/// Kafka's `ControlRecordType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// 0: the end of an aborted transaction.
    Abort,
    /// 1: the end of a committed transaction.
    Commit,
    /// 2: a KRaft leader change (not written by strata).
    LeaderChange,
    /// 3: a KRaft snapshot header.
    SnapshotHeader,
    /// 4: a KRaft snapshot footer.
    SnapshotFooter,
    /// 5: a KRaft version record.
    KraftVersion,
    /// 6: a KRaft voters record.
    KraftVoters,
    /// Any other type id (Kafka's `UNKNOWN`), kept with its id.
    Unknown(i16),
}

impl ControlRecordType {
    /// The type id written in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KraftVersion => 5,
            ControlRecordType::KraftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KraftVersion,
            6 => ControlRecordType::KraftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// Whether this marks the end of a transaction (ABORT or COMMIT).
    pub fn is_transaction_marker(self) -> bool {
        matches!(self, ControlRecordType::Abort | ControlRecordType::Commit)
    }
}

/// A parsed control record key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlRecordKey {
    /// The key's version (0 today).
    pub version: i16,
    /// What the control record marks.
    pub kind: ControlRecordType,
}

impl ControlRecordKey {
    /// Parses a control record's key. A null key, a key shorter than 4 bytes or a negative version is an
    /// [`Error::InvalidRecord`] (Kafka: `InvalidRecordException`); extra bytes after the type are ignored, as
    /// Kafka reads only the fields of version 0.
    pub fn parse(key: Option<&[u8]>) -> Result<Self> {
        let key = key.ok_or_else(|| Error::InvalidRecord {
            reason: "a control record has a null key".into(),
        })?;
        if key.len() < 4 {
            return Err(Error::InvalidRecord {
                reason: format!(
                    "a control record key of {} bytes is too short (version and type need 4)",
                    key.len()
                ),
            });
        }
        let version = i16::from_be_bytes([key[0], key[1]]);
        if version < 0 {
            return Err(Error::InvalidRecord {
                reason: format!("control record key version {version} is negative"),
            });
        }
        Ok(Self {
            version,
            kind: ControlRecordType::from_id(i16::from_be_bytes([key[2], key[3]])),
        })
    }

    /// The 4-byte key of version 0 for `kind` (what a transaction coordinator writes).
    pub fn encode(kind: ControlRecordType) -> [u8; 4] {
        let mut out = [0u8; 4];
        out[2..4].copy_from_slice(&kind.id().to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_and_commit_keys_parse_as_kafka_writes_them() {
        for kind in [ControlRecordType::Abort, ControlRecordType::Commit] {
            let key = ControlRecordKey::encode(kind);
            let parsed = ControlRecordKey::parse(Some(&key)).unwrap();
            assert_eq!(parsed, ControlRecordKey { version: 0, kind });
            assert!(parsed.kind.is_transaction_marker());
        }
        // Kafka's COMMIT key bytes: version 0, type 1.
        assert_eq!(
            ControlRecordKey::encode(ControlRecordType::Commit),
            [0, 0, 0, 1]
        );
        let leader = ControlRecordKey::parse(Some(&[0, 0, 0, 2, 9, 9])).unwrap();
        assert_eq!(leader.kind, ControlRecordType::LeaderChange);
        assert!(!leader.kind.is_transaction_marker());
        assert_eq!(
            ControlRecordKey::parse(Some(&[0, 1, 0, 42])).unwrap().kind,
            ControlRecordType::Unknown(42)
        );
    }

    #[test]
    fn null_short_or_negative_version_keys_are_invalid_records() {
        for key in [None, Some(&[0u8, 0, 1][..]), Some(&[0xff, 0xff, 0, 0][..])] {
            assert!(matches!(
                ControlRecordKey::parse(key),
                Err(Error::InvalidRecord { .. })
            ));
        }
    }
}
