//! Records of the internal `__transaction_state` topic in Kafka's format (`TransactionLogKey` /
//! `TransactionLogValue`, as Kafka 3.x writes them: key version 0, value version 0), so the state survives restarts
//! and Kafka's tools can read it. Big-endian; `string` = i16 length + UTF-8.
//!
//! | part | layout |
//! |---|---|
//! | key (version 0) | `version i16 = 0`, `transactional_id string` |
//! | value (version 0) | `version i16 = 0`, `producer_id i64`, `producer_epoch i16`, `transaction_timeout_ms i32`, `transaction_status i8`, `transaction_partitions` (i32 count, -1 = null; each `topic string`, i32 count + `partition_ids i32…`), `last_update_timestamp_ms i64`, `start_timestamp_ms i64` |
//! | tombstone | key as above, null value (the transactional id expired) |
//!
//! The partitions are null in state Empty (Kafka writes them so). The partition of a transactional id is
//! `abs(java hashCode(id)) % transaction.state.log.num.partitions` (Kafka's `partitionFor`).
use std::collections::BTreeSet;

use super::state::{TransactionMetadata, TransactionState};
use super::TxnError;

const KEY_VERSION: i16 = 0;
const VALUE_VERSION: i16 = 0;

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

/// The record value of `meta` (version 0).
pub fn encode_value(meta: &TransactionMetadata) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&VALUE_VERSION.to_be_bytes());
    out.extend_from_slice(&meta.producer_id.to_be_bytes());
    out.extend_from_slice(&meta.producer_epoch.to_be_bytes());
    out.extend_from_slice(&meta.timeout_ms.to_be_bytes());
    out.push(meta.state.id() as u8);
    if meta.state == TransactionState::Empty {
        out.extend_from_slice(&(-1i32).to_be_bytes());
    } else {
        let mut topics: Vec<(&str, Vec<i32>)> = Vec::new();
        for (topic, p) in &meta.partitions {
            match topics.last_mut() {
                Some((t, ps)) if *t == topic.as_str() => ps.push(*p),
                _ => topics.push((topic, vec![*p])),
            }
        }
        out.extend_from_slice(&(topics.len() as i32).to_be_bytes());
        for (topic, ps) in topics {
            put_string(&mut out, topic);
            out.extend_from_slice(&(ps.len() as i32).to_be_bytes());
            for p in ps {
                out.extend_from_slice(&p.to_be_bytes());
            }
        }
    }
    out.extend_from_slice(&meta.last_update_ms.to_be_bytes());
    out.extend_from_slice(&meta.start_ms.to_be_bytes());
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
    fn string(&mut self) -> Result<String, TxnError> {
        let len = self.i16()?;
        if len < 0 {
            return Err(TxnError::CorruptStateRecord {
                reason: format!("{} has a null string", self.what),
            });
        }
        let bytes = self.take(len as usize)?;
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

/// The metadata of `transactional_id` from a record value.
pub fn decode_value(transactional_id: &str, value: &[u8]) -> Result<TransactionMetadata, TxnError> {
    let mut r = Reader {
        b: value,
        what: "transaction log value",
    };
    let version = r.i16()?;
    if version != VALUE_VERSION {
        return Err(TxnError::CorruptStateRecord {
            reason: format!("transaction log value version {version} is not supported (0 is)"),
        });
    }
    let producer_id = r.i64()?;
    let producer_epoch = r.i16()?;
    let timeout_ms = r.i32()?;
    let status = r.i8()?;
    let state = TransactionState::from_id(status).ok_or_else(|| TxnError::CorruptStateRecord {
        reason: format!("unknown transaction status {status}"),
    })?;
    let mut partitions = BTreeSet::new();
    let topics = r.i32()?;
    for _ in 0..topics.max(0) {
        let topic = r.string()?;
        let n = r.i32()?;
        for _ in 0..n.max(0) {
            partitions.insert((topic.clone(), r.i32()?));
        }
    }
    let last_update_ms = r.i64()?;
    let start_ms = r.i64()?;
    Ok(TransactionMetadata {
        transactional_id: transactional_id.to_string(),
        producer_id,
        producer_epoch,
        timeout_ms,
        state,
        partitions,
        last_update_ms,
        start_ms,
    })
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
        let bytes = encode_value(&meta);
        // version, pid, epoch, timeout, status, 2 topics.
        assert_eq!(&bytes[..2], &[0, 0]);
        assert_eq!(bytes[16], 1, "Ongoing is status 1");
        assert_eq!(&bytes[17..21], &2i32.to_be_bytes());
        assert_eq!(decode_value("tx", &bytes).unwrap(), meta);
        let empty = TransactionMetadata::new("tx".into(), 42, 4, 60_000, 1_000);
        let bytes = encode_value(&empty);
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
}
