//! Committed offsets, kept in the internal `__consumer_offsets` log in Kafka's record format so they survive
//! restarts (and any Kafka tool can read them):
//!
//! | part | layout |
//! |---|---|
//! | key (version 1) | `version i16 = 1`, `group string`, `topic string`, `partition i32` |
//! | value (version 3) | `version i16 = 3`, `offset i64`, `leader_epoch i32`, `metadata string`, `commit_timestamp i64` |
//! | tombstone | key as above, null value (offset deleted with its group or its topic) |
//!
//! `string` is an i16 length then UTF-8 bytes. The partition of a group is `(java hashCode(group) & 0x7fffffff) % n`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use crate::broker::{now_ms, Broker};
use crate::error::{Error, Result};
use crate::topics::CONSUMER_OFFSETS;

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

/// In-memory view of committed offsets, written through to `__consumer_offsets`.
#[derive(Debug, Default)]
pub struct OffsetStore {
    cache: Mutex<HashMap<String, BTreeMap<Tp, OffsetEntry>>>,
}

/// Java's `String.hashCode` (over UTF-16 code units), as Kafka uses to place a group.
fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The `__consumer_offsets` partition of `group`.
pub fn partition_for(group: &str, partitions: i32) -> i32 {
    (java_hash(group) & 0x7fff_ffff) % partitions.max(1)
}

/// Writes an i16-length string; a string longer than i16::MAX bytes is an error, never a wrapped length.
fn put_str(b: &mut BytesMut, what: &str, s: &str) -> Result<()> {
    let n = i16::try_from(s.len()).map_err(|_| Error::Protocol {
        api: "OffsetCommit".into(),
        message: format!(
            "{what} is {} bytes; __consumer_offsets stores at most {}",
            s.len(),
            i16::MAX
        ),
    })?;
    b.put_i16(n);
    b.put_slice(s.as_bytes());
    Ok(())
}

fn get_str(b: &mut Bytes) -> Option<String> {
    if b.remaining() < 2 {
        return None;
    }
    let n = b.get_i16();
    if n < 0 {
        return Some(String::new());
    }
    let n = n as usize;
    if b.remaining() < n {
        return None;
    }
    String::from_utf8(b.split_to(n).to_vec()).ok()
}

/// Encodes an offset-commit key; an error if the group id or topic is longer than i16::MAX bytes.
pub fn encode_key(group: &str, topic: &str, partition: i32) -> Result<Bytes> {
    let mut b = BytesMut::new();
    b.put_i16(1);
    put_str(&mut b, "group id", group)?;
    put_str(&mut b, "topic", topic)?;
    b.put_i32(partition);
    Ok(b.freeze())
}

/// Encodes an offset-commit value (version 3); an error if the metadata is longer than i16::MAX bytes.
pub fn encode_value(e: &OffsetEntry) -> Result<Bytes> {
    let mut b = BytesMut::new();
    b.put_i16(3);
    b.put_i64(e.offset);
    b.put_i32(e.leader_epoch);
    put_str(&mut b, "offset metadata", &e.metadata)?;
    b.put_i64(e.commit_timestamp);
    Ok(b.freeze())
}

/// Decodes an offset-commit key; `None` for other key versions (group metadata) or garbage.
pub fn decode_key(mut k: Bytes) -> Option<(String, String, i32)> {
    if k.remaining() < 2 {
        return None;
    }
    let v = k.get_i16();
    if v != 0 && v != 1 {
        return None;
    }
    let g = get_str(&mut k)?;
    let t = get_str(&mut k)?;
    if k.remaining() < 4 {
        return None;
    }
    Some((g, t, k.get_i32()))
}

/// Decodes an offset-commit value of versions 0..=4.
pub fn decode_value(mut v: Bytes) -> Option<OffsetEntry> {
    if v.remaining() < 10 {
        return None;
    }
    let version = v.get_i16();
    let offset = v.get_i64();
    let leader_epoch = if version >= 3 && v.remaining() >= 4 {
        v.get_i32()
    } else {
        -1
    };
    let metadata = get_str(&mut v)?;
    let commit_timestamp = if v.remaining() >= 8 { v.get_i64() } else { -1 };
    Some(OffsetEntry {
        offset,
        leader_epoch,
        metadata,
        commit_timestamp,
    })
}

fn record(key: Bytes, value: Option<Bytes>, ts: i64) -> Record {
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: -1,
        timestamp: ts,
        key: Some(key),
        value,
        headers: IndexMap::new(),
    }
}

fn encode_batch(records: &[Record]) -> Result<Bytes> {
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    for (i, r) in records.iter().enumerate() {
        let mut r = r.clone();
        r.offset = i as i64;
        RecordBatchEncoder::encode(&mut buf, std::iter::once(&r), &opts).map_err(|e| {
            Error::Protocol {
                api: "OffsetCommit".into(),
                message: e.to_string(),
            }
        })?;
    }
    Ok(buf.freeze())
}

impl OffsetStore {
    /// Writes the commits to `__consumer_offsets` and then to the cache. Blocking.
    pub fn commit(
        &self,
        broker: &Broker,
        group: &str,
        entries: Vec<(Tp, OffsetEntry)>,
    ) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let ts = now_ms();
        let records = entries
            .iter()
            .map(|((t, p), e)| {
                Ok(record(
                    encode_key(group, t, *p)?,
                    Some(encode_value(e)?),
                    ts,
                ))
            })
            .collect::<Result<Vec<Record>>>()?;
        self.append(broker, group, &records)?;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let g = cache.entry(group.to_string()).or_default();
        for (tp, e) in entries {
            g.insert(tp, e);
        }
        Ok(())
    }

    /// Deletes every offset of `group` (tombstones). Blocking.
    pub fn delete_group(&self, broker: &Broker, group: &str) -> Result<()> {
        let keys: Vec<Tp> = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            cache
                .get(group)
                .map(|g| g.keys().cloned().collect())
                .unwrap_or_default()
        };
        if !keys.is_empty() {
            let ts = now_ms();
            let records = keys
                .iter()
                .map(|(t, p)| Ok(record(encode_key(group, t, *p)?, None, ts)))
                .collect::<Result<Vec<Record>>>()?;
            self.append(broker, group, &records)?;
        }
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(group);
        Ok(())
    }

    /// Deletes every group's committed offsets of `topic` (tombstones), as Kafka does when a topic is deleted, so
    /// consumers of a later topic with the same name do not resume at stale positions. Blocking.
    pub fn delete_topic(&self, broker: &Broker, topic: &str) -> Result<()> {
        let by_group: Vec<(String, Vec<i32>)> = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            cache
                .iter()
                .map(|(g, tps)| {
                    let parts = tps
                        .keys()
                        .filter(|(t, _)| t == topic)
                        .map(|(_, p)| *p)
                        .collect::<Vec<_>>();
                    (g.clone(), parts)
                })
                .filter(|(_, parts)| !parts.is_empty())
                .collect()
        };
        let ts = now_ms();
        for (group, parts) in by_group {
            let records = parts
                .iter()
                .map(|p| Ok(record(encode_key(&group, topic, *p)?, None, ts)))
                .collect::<Result<Vec<Record>>>()?;
            self.append(broker, &group, &records)?;
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(g) = cache.get_mut(&group) {
                for p in parts {
                    g.remove(&(topic.to_string(), p));
                }
            }
        }
        Ok(())
    }

    fn append(&self, broker: &Broker, group: &str, records: &[Record]) -> Result<()> {
        let partitions = broker
            .topics()
            .get(CONSUMER_OFFSETS)
            .map_or(1, |m| m.partitions);
        let log = broker.log(CONSUMER_OFFSETS, partition_for(group, partitions))?;
        // One batch per record keeps each batch small; they are appended together.
        let batch = encode_batch(records)?;
        log.append_as_leader(batch, 0)?;
        broker.notify_appended();
        Ok(())
    }

    /// The committed offset of one partition.
    pub fn get(&self, group: &str, topic: &str, partition: i32) -> Option<OffsetEntry> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(group)?
            .get(&(topic.to_string(), partition))
            .cloned()
    }

    /// Every committed offset of `group`.
    pub fn all(&self, group: &str) -> BTreeMap<Tp, OffsetEntry> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(group).cloned().unwrap_or_default()
    }

    /// Groups that have committed offsets.
    pub fn groups(&self) -> Vec<String> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .iter()
            .filter(|(_, g)| !g.is_empty())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Replays every `__consumer_offsets` partition into the cache. Blocking.
    pub fn load(&self, broker: &Broker) -> Result<()> {
        let partitions = broker
            .topics()
            .get(CONSUMER_OFFSETS)
            .map_or(0, |m| m.partitions);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for p in 0..partitions {
            let log = broker.log(CONSUMER_OFFSETS, p)?;
            let end = log.high_watermark();
            let mut offset = log.log_start_offset();
            while offset < end {
                let data = log.read(offset, 1 << 20, true, Some(end))?;
                if data.records.is_empty() {
                    break;
                }
                let mut buf = data.records.clone();
                let sets =
                    RecordBatchDecoder::decode_all(&mut buf).map_err(|e| Error::Protocol {
                        api: "__consumer_offsets replay".into(),
                        message: e.to_string(),
                    })?;
                let before = offset;
                for r in sets.into_iter().flat_map(|s| s.records) {
                    offset = offset.max(r.offset + 1);
                    let Some((g, t, part)) = r.key.and_then(decode_key) else {
                        continue;
                    };
                    match r.value.and_then(decode_value) {
                        Some(e) => {
                            cache.entry(g).or_default().insert((t, part), e);
                        }
                        None => {
                            if let Some(gm) = cache.get_mut(&g) {
                                gm.remove(&(t, part));
                            }
                        }
                    }
                }
                if offset == before {
                    break;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_and_value_round_trip() {
        let k = encode_key("g", "t", 7).unwrap();
        assert_eq!(decode_key(k), Some(("g".into(), "t".into(), 7)));
        let e = OffsetEntry {
            offset: 42,
            leader_epoch: 3,
            metadata: "m".into(),
            commit_timestamp: 9,
        };
        assert_eq!(decode_value(encode_value(&e).unwrap()), Some(e));
    }

    #[test]
    fn strings_longer_than_i16_max_are_refused_not_wrapped() {
        let long = "m".repeat(40_000);
        let e = OffsetEntry {
            offset: 7,
            leader_epoch: -1,
            metadata: long.clone(),
            commit_timestamp: 9,
        };
        let err = encode_value(&e).unwrap_err().to_string();
        assert!(err.contains("offset metadata is 40000 bytes"), "{err}");
        assert!(encode_key(&long, "t", 0).is_err());
        // The longest storable string still round-trips.
        let e = OffsetEntry {
            metadata: "m".repeat(i16::MAX as usize),
            ..e
        };
        assert_eq!(decode_value(encode_value(&e).unwrap()), Some(e));
    }

    #[test]
    fn partition_matches_java_hash_code() {
        // "group".hashCode() == 98629247 in Java.
        assert_eq!(java_hash("group"), 98_629_247);
        assert_eq!(partition_for("group", 50), 98_629_247 % 50);
    }

    #[test]
    fn garbage_keys_are_skipped() {
        assert_eq!(decode_key(Bytes::from_static(&[0, 2, 0])), None);
        assert_eq!(decode_key(Bytes::from_static(&[0])), None);
    }
}
