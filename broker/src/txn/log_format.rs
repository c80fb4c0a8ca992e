//! Records of the internal `__transaction_state` topic in Kafka's format (`TransactionLogKey` /
//! `TransactionLogValue`), so the state survives restarts and Kafka's tools (kafka-dump-log's transaction-log
//! decoder) read it. Big-endian; `string` = i16 length + UTF-8.
//!
//! | part | layout |
//! |---|---|
//! | key (version 0) | `version i16 = 0`, `transactional_id string` |
//! | value (version 0) | `version i16 = 0`, `producer_id i64`, `producer_epoch i16`, `transaction_timeout_ms i32`, `transaction_status i8`, `transaction_partitions` (i32 count, -1 = null; each `topic string`, i32 count + `partition_ids i32…`), `last_update_timestamp_ms i64`, `start_timestamp_ms i64` |
//! | value (version 1, flexible) | as version 0, but arrays and strings compact (unsigned varint length + 1, 0 = null), a tagged-field section after each partition entry and after the value: tag 0 `previous_producer_id i64` (default -1), tag 1 `next_producer_id i64` (default -1), tag 2 `client_transaction_version i16` (default 0); a tag is written only when it differs from its default, unknown tags are skipped |
//! | tombstone | key as above, null value (the transactional id expired) |
//!
//! Kafka writes value version 1 once `transaction.version` is finalized at 1 or more, version 0 below; both are
//! read. The partitions are null in state Empty (Kafka writes them so). The partition of a transactional id is
//! `abs(java hashCode(id)) % transaction.state.log.num.partitions` (Kafka's `partitionFor`).
use std::collections::BTreeSet;

use super::state::{TransactionMetadata, TransactionState};
use super::TxnError;

const KEY_VERSION: i16 = 0;
/// The highest value version read and written.
pub const MAX_VALUE_VERSION: i16 = 1;

/// The `__transaction_state` partition of `transactional_id` among `partitions` (Kafka's `partitionFor`:
/// `Utils.abs(hashCode) % n`, where `abs(i32::MIN)` is 0).
pub fn partition_for(transactional_id: &str, partitions: i32) -> i32 {
    let mut h: i32 = 0;
    for unit in transactional_id.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(unit as i32);
    }
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    abs % partitions.max(1)
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The record key of `transactional_id`.
pub fn encode_key(transactional_id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + transactional_id.len());
    out.extend_from_slice(&KEY_VERSION.to_be_bytes());
    put_string(&mut out, transactional_id);
    out
}

/// Appends an unsigned varint.
fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The partitions grouped by topic, in order.
fn by_topic(meta: &TransactionMetadata) -> Vec<(&str, Vec<i32>)> {
    let mut topics: Vec<(&str, Vec<i32>)> = Vec::new();
    for (topic, p) in &meta.partitions {
        match topics.last_mut() {
            Some((t, ps)) if *t == topic.as_str() => ps.push(*p),
            _ => topics.push((topic, vec![*p])),
        }
    }
    topics
}

/// The record value of `meta` in `version` (0 or 1, see the module docs).
pub fn encode_value(meta: &TransactionMetadata, version: i16) -> Vec<u8> {
    let flexible = version >= 1;
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&version.min(MAX_VALUE_VERSION).to_be_bytes());
    out.extend_from_slice(&meta.producer_id.to_be_bytes());
    out.extend_from_slice(&meta.producer_epoch.to_be_bytes());
    out.extend_from_slice(&meta.timeout_ms.to_be_bytes());
    out.push(meta.state.id() as u8);
    let topics = (meta.state != TransactionState::Empty).then(|| by_topic(meta));
    match (&topics, flexible) {
        (None, false) => out.extend_from_slice(&(-1i32).to_be_bytes()),
        (None, true) => put_uvarint(&mut out, 0),
        (Some(t), false) => out.extend_from_slice(&(t.len() as i32).to_be_bytes()),
        (Some(t), true) => put_uvarint(&mut out, t.len() as u64 + 1),
    }
    for (topic, ps) in topics.iter().flatten() {
        if flexible {
            put_uvarint(&mut out, topic.len() as u64 + 1);
            out.extend_from_slice(topic.as_bytes());
            put_uvarint(&mut out, ps.len() as u64 + 1);
        } else {
            put_string(&mut out, topic);
            out.extend_from_slice(&(ps.len() as i32).to_be_bytes());
        }
        for p in ps {
            out.extend_from_slice(&p.to_be_bytes());
        }
        if flexible {
            put_uvarint(&mut out, 0);
        }
    }
    out.extend_from_slice(&meta.last_update_ms.to_be_bytes());
    out.extend_from_slice(&meta.start_ms.to_be_bytes());
    if flexible {
        let mut tags: Vec<(u64, Vec<u8>)> = Vec::new();
        if meta.prev_producer_id != -1 {
            tags.push((0, meta.prev_producer_id.to_be_bytes().to_vec()));
        }
        if meta.next_producer_id != -1 {
            tags.push((1, meta.next_producer_id.to_be_bytes().to_vec()));
        }
        if meta.client_transaction_version != 0 {
            tags.push((2, meta.client_transaction_version.to_be_bytes().to_vec()));
        }
        put_uvarint(&mut out, tags.len() as u64);
        for (tag, data) in tags {
            put_uvarint(&mut out, tag);
            put_uvarint(&mut out, data.len() as u64);
            out.extend_from_slice(&data);
        }
    }
    out
}

/// A cursor over a record's bytes that names what is missing.
struct Reader<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], TxnError> {
        if self.b.len() < n {
            return Err(TxnError::CorruptStateRecord {
                reason: format!(
                    "{} ends early ({} bytes left, {n} needed)",
                    self.what,
                    self.b.len()
                ),
            });
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }
    fn i8(&mut self) -> Result<i8, TxnError> {
        Ok(self.take(1)?[0] as i8)
    }
    fn i16(&mut self) -> Result<i16, TxnError> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn i32(&mut self) -> Result<i32, TxnError> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn i64(&mut self) -> Result<i64, TxnError> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn uvarint(&mut self) -> Result<u64, TxnError> {
        let mut v: u64 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(TxnError::CorruptStateRecord {
            reason: format!("{} has a varint longer than 5 bytes", self.what),
        })
    }
    /// A compact length (unsigned varint of length + 1; None for null).
    fn compact_len(&mut self) -> Result<Option<usize>, TxnError> {
        Ok(match self.uvarint()? {
            0 => None,
            n => Some(n as usize - 1),
        })
    }
    /// Skips a tagged-field section.
    fn skip_tags(&mut self) -> Result<Vec<(u64, Vec<u8>)>, TxnError> {
        let n = self.uvarint()?;
        let mut tags = Vec::new();
        for _ in 0..n {
            let tag = self.uvarint()?;
            let len = self.uvarint()? as usize;
            tags.push((tag, self.take(len)?.to_vec()));
        }
        Ok(tags)
    }
    fn string(&mut self) -> Result<String, TxnError> {
        let len = self.i16()?;
        if len < 0 {
            return Err(TxnError::CorruptStateRecord {
                reason: format!("{} has a null string", self.what),
            });
        }
        self.utf8(len as usize)
    }
    fn compact_string(&mut self) -> Result<String, TxnError> {
        let Some(len) = self.compact_len()? else {
            return Err(TxnError::CorruptStateRecord {
                reason: format!("{} has a null string", self.what),
            });
        };
        self.utf8(len)
    }
    fn utf8(&mut self, len: usize) -> Result<String, TxnError> {
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| TxnError::CorruptStateRecord {
            reason: format!("{} has a string that is not UTF-8", self.what),
        })
    }
}

/// The transactional id of a record key.
pub fn decode_key(key: &[u8]) -> Result<String, TxnError> {
    let mut r = Reader {
        b: key,
        what: "transaction log key",
    };
    let version = r.i16()?;
    if version != KEY_VERSION {
        return Err(TxnError::CorruptStateRecord {
            reason: format!("transaction log key version {version} is not 0"),
        });
    }
    r.string()
}

/// The metadata of `transactional_id` from a record value (version 0 or 1).
pub fn decode_value(transactional_id: &str, value: &[u8]) -> Result<TransactionMetadata, TxnError> {
    let mut r = Reader {
        b: value,
        what: "transaction log value",
    };
    let version = r.i16()?;
    if !(0..=MAX_VALUE_VERSION).contains(&version) {
        return Err(TxnError::CorruptStateRecord {
            reason: format!(
                "transaction log value version {version} is not supported (0 and 1 are)"
            ),
        });
    }
    let flexible = version >= 1;
    let producer_id = r.i64()?;
    let producer_epoch = r.i16()?;
    let timeout_ms = r.i32()?;
    let status = r.i8()?;
    let state = TransactionState::from_id(status).ok_or_else(|| TxnError::CorruptStateRecord {
        reason: format!("unknown transaction status {status}"),
    })?;
    let mut partitions = BTreeSet::new();
    let topics = if flexible {
        r.compact_len()?.unwrap_or(0)
    } else {
        r.i32()?.max(0) as usize
    };
    for _ in 0..topics {
        let (topic, n) = if flexible {
            (r.compact_string()?, r.compact_len()?.unwrap_or(0))
        } else {
            (r.string()?, r.i32()?.max(0) as usize)
        };
        for _ in 0..n {
            partitions.insert((topic.clone(), r.i32()?));
        }
        if flexible {
            r.skip_tags()?;
        }
    }
    let last_update_ms = r.i64()?;
    let start_ms = r.i64()?;
    let mut meta = TransactionMetadata {
        transactional_id: transactional_id.to_string(),
        producer_id,
        producer_epoch,
        timeout_ms,
        state,
        partitions,
        last_update_ms,
        start_ms,
        prev_producer_id: -1,
        next_producer_id: -1,
        client_transaction_version: 0,
    };
    if flexible {
        for (tag, data) in r.skip_tags()? {
            match (tag, data.len()) {
                (0, 8) => meta.prev_producer_id = i64::from_be_bytes(data.try_into().expect("8")),
                (1, 8) => meta.next_producer_id = i64::from_be_bytes(data.try_into().expect("8")),
                (2, 2) => {
                    meta.client_transaction_version =
                        i16::from_be_bytes(data.try_into().expect("2"))
                }
                (0..=2, n) => {
                    return Err(TxnError::CorruptStateRecord {
                        reason: format!("transaction log value tag {tag} has {n} bytes"),
                    })
                }
                _ => {}
            }
        }
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's `TransactionLog.keyToBytes`: version 0, then the id as an i16-length string.
    #[test]
    fn key_is_kafkas_version_0_layout() {
        assert_eq!(encode_key("tx"), vec![0, 0, 0, 2, b't', b'x']);
        assert_eq!(decode_key(&encode_key("tx-1")).unwrap(), "tx-1");
        assert!(matches!(
            decode_key(&[0, 1, 0, 0]),
            Err(TxnError::CorruptStateRecord { .. })
        ));
    }

    /// The value round-trips; partitions are grouped by topic and null in state Empty, as Kafka writes them.
    #[test]
    fn value_round_trips_and_empty_has_null_partitions() {
        let mut meta = TransactionMetadata::new("tx".into(), 42, 3, 60_000, 1_000);
        meta.state = TransactionState::Ongoing;
        meta.partitions.insert(("a".into(), 0));
        meta.partitions.insert(("a".into(), 2));
        meta.partitions.insert(("b".into(), 1));
        meta.start_ms = 900;
        let bytes = encode_value(&meta, 0);
        // version, pid, epoch, timeout, status, 2 topics.
        assert_eq!(&bytes[..2], &[0, 0]);
        assert_eq!(bytes[16], 1, "Ongoing is status 1");
        assert_eq!(&bytes[17..21], &2i32.to_be_bytes());
        assert_eq!(decode_value("tx", &bytes).unwrap(), meta);
        let empty = TransactionMetadata::new("tx".into(), 42, 4, 60_000, 1_000);
        let bytes = encode_value(&empty, 0);
        assert_eq!(&bytes[17..21], &(-1i32).to_be_bytes());
        assert_eq!(decode_value("tx", &bytes).unwrap(), empty);
        assert!(matches!(
            decode_value("tx", &bytes[..10]),
            Err(TxnError::CorruptStateRecord { .. })
        ));
    }

    /// Kafka's `partitionFor` uses Java's `String.hashCode` and `Utils.abs`.
    #[test]
    fn partition_follows_java_hash_code() {
        // "tx".hashCode() = 't' * 31 + 'x' = 116 * 31 + 120 = 3716.
        assert_eq!(partition_for("tx", 50), 3716 % 50);
        assert_eq!(partition_for("", 50), 0);
        for id in ["a", "transactional-id-with-a-long-name", "ü"] {
            assert!((0..50).contains(&partition_for(id, 50)));
        }
    }

    /// Version 1 is Kafka's flexible layout (compact arrays and strings, tagged fields written only when not
    /// default) and round-trips the transaction-version-2 fields.
    #[test]
    fn value_version_1_round_trips_with_tagged_fields() {
        let mut meta = TransactionMetadata::new("tx".into(), 42, 3, 60_000, 1_000);
        meta.state = TransactionState::PrepareCommit;
        meta.partitions.insert(("a".into(), 0));
        meta.partitions.insert(("b".into(), 1));
        meta.start_ms = 900;
        meta.next_producer_id = 43;
        meta.client_transaction_version = 2;
        let bytes = encode_value(&meta, 1);
        assert_eq!(&bytes[..2], &[0, 1]);
        // version, pid, epoch, timeout, status, then compact array of 2 topics = varint 3, "a" = varint 2 + 'a'.
        assert_eq!(&bytes[17..20], &[3, 2, b'a']);
        assert_eq!(decode_value("tx", &bytes).unwrap(), meta);
        // No tag differs from its default: an empty tag section, the last byte.
        let empty = TransactionMetadata::new("tx".into(), 42, 4, 60_000, 1_000);
        let bytes = encode_value(&empty, 1);
        assert_eq!(bytes[17], 0, "null partitions");
        assert_eq!(*bytes.last().unwrap(), 0);
        assert_eq!(decode_value("tx", &bytes).unwrap(), empty);
        // An unknown tag (3) is skipped.
        let mut with_unknown = bytes[..bytes.len() - 1].to_vec();
        with_unknown.extend_from_slice(&[1, 3, 2, 0, 7]);
        assert_eq!(decode_value("tx", &with_unknown).unwrap(), empty);
        assert!(matches!(
            decode_value("tx", &[0, 2]),
            Err(TxnError::CorruptStateRecord { .. })
        ));
    }
}
