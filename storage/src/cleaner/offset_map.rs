//! [`OffsetMap`]: key hash → latest offset, in one fixed buffer (Kafka's `SkimpyOffsetMap`).
//!
//! Each slot is 24 bytes: a 16-byte hash of the key and the 8-byte offset (big-endian), as Kafka's MD5-based map.
//! The hash is two independent 64-bit SipHash-1-3 digests (std's hasher, fixed keys): the map lives for one
//! cleaning pass only, so the hash need not be stable across builds. Two keys share a slot only if their 128-bit
//! hashes collide (as with Kafka's 16-byte MD5). Open addressing with linear probing; the map is "full" at
//! `slots * load_factor` entries (`log.cleaner.io.buffer.load.factor`, 0.9), after which the cleaner stops mapping
//! and cleans up to the last mapped offset.
use std::hash::Hasher;

/// Bytes per slot: 16-byte hash + 8-byte offset.
pub(crate) const BYTES_PER_ENTRY: usize = 24;
const HASH_BYTES: usize = 16;

/// A bounded map from key (by hash) to the latest offset seen.
pub(crate) struct OffsetMap {
    /// `slots * 24` bytes, zeroed = empty (an all-zero hash is taken as empty, as in Kafka).
    bytes: Vec<u8>,
    slots: usize,
    entries: usize,
    max_entries: usize,
    latest_offset: i64,
}

fn hash(key: &[u8]) -> [u8; HASH_BYTES] {
    let mut a = std::collections::hash_map::DefaultHasher::new();
    a.write(key);
    let mut b = std::collections::hash_map::DefaultHasher::new();
    b.write_u64(0x9e37_79b9_7f4a_7c15);
    b.write(key);
    let mut out = [0u8; HASH_BYTES];
    out[..8].copy_from_slice(&a.finish().to_be_bytes());
    out[8..].copy_from_slice(&b.finish().to_be_bytes());
    out
}

impl OffsetMap {
    /// A map in `memory` bytes (at least one slot) filled up to `load_factor`. The buffer is zero-allocated, so
    /// pages are only resident once used.
    pub(crate) fn new(memory: usize, load_factor: f64) -> Self {
        let slots = (memory / BYTES_PER_ENTRY).max(2);
        Self {
            bytes: vec![0u8; slots * BYTES_PER_ENTRY],
            slots,
            entries: 0,
            max_entries: ((slots as f64 * load_factor) as usize).clamp(1, slots - 1),
            latest_offset: -1,
        }
    }

    /// Slots in the buffer.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }
    /// Keys held.
    pub(crate) fn size(&self) -> usize {
        self.entries
    }
    /// Whether no more keys may be added (Kafka's `maxDesiredMapSize` reached).
    pub(crate) fn is_full(&self) -> bool {
        self.entries >= self.max_entries
    }
    /// Share of the slots in use (Kafka's `utilization`).
    pub(crate) fn utilization(&self) -> f64 {
        self.entries as f64 / self.slots as f64
    }
    /// The last offset put (or set with [`OffsetMap::update_latest_offset`]), -1 if none.
    pub(crate) fn latest_offset(&self) -> i64 {
        self.latest_offset
    }
    /// Raises the latest offset (a batch without keys still moves the cleaned range).
    pub(crate) fn update_latest_offset(&mut self, offset: i64) {
        self.latest_offset = offset;
    }

    fn slot_of(&self, h: &[u8; HASH_BYTES]) -> usize {
        (u64::from_be_bytes(h[..8].try_into().expect("8")) % self.slots as u64) as usize
    }

    /// Maps `key` to `offset` (the caller stops once [`OffsetMap::is_full`]).
    pub(crate) fn put(&mut self, key: &[u8], offset: i64) {
        let h = hash(key);
        let mut slot = self.slot_of(&h);
        loop {
            let at = slot * BYTES_PER_ENTRY;
            let stored = &mut self.bytes[at..at + BYTES_PER_ENTRY];
            let empty = stored[..HASH_BYTES].iter().all(|&b| b == 0);
            if empty || stored[..HASH_BYTES] == h {
                if empty {
                    stored[..HASH_BYTES].copy_from_slice(&h);
                    self.entries += 1;
                }
                stored[HASH_BYTES..].copy_from_slice(&offset.to_be_bytes());
                self.latest_offset = offset;
                return;
            }
            slot = (slot + 1) % self.slots;
        }
    }

    /// The latest offset mapped for `key`, or None.
    pub(crate) fn get(&self, key: &[u8]) -> Option<i64> {
        let h = hash(key);
        let mut slot = self.slot_of(&h);
        loop {
            let at = slot * BYTES_PER_ENTRY;
            let stored = &self.bytes[at..at + BYTES_PER_ENTRY];
            if stored[..HASH_BYTES].iter().all(|&b| b == 0) {
                return None;
            }
            if stored[..HASH_BYTES] == h {
                return Some(i64::from_be_bytes(
                    stored[HASH_BYTES..].try_into().expect("8"),
                ));
            }
            slot = (slot + 1) % self.slots;
        }
    }

    /// Empties the map (a fresh zeroed buffer: pages used by the last pass are returned).
    pub(crate) fn clear(&mut self) {
        self.bytes = vec![0u8; self.slots * BYTES_PER_ENTRY];
        self.entries = 0;
        self.latest_offset = -1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_put_wins_and_the_map_is_full_at_its_load_factor() {
        let mut m = OffsetMap::new(100 * BYTES_PER_ENTRY, 0.9);
        assert_eq!(m.slots(), 100);
        for round in 0..3i64 {
            for k in 0..50i64 {
                m.put(format!("key-{k}").as_bytes(), round * 100 + k);
            }
        }
        assert_eq!(m.size(), 50);
        assert_eq!(m.get(b"key-7"), Some(207));
        assert_eq!(m.get(b"absent"), None);
        assert_eq!(m.latest_offset(), 249);
        assert!(!m.is_full());
        for k in 50..90i64 {
            m.put(format!("key-{k}").as_bytes(), 1000 + k);
        }
        assert!(m.is_full(), "90 of 100 slots at load factor 0.9");
        assert!((m.utilization() - 0.9).abs() < 1e-9);
        m.clear();
        assert_eq!(
            (m.size(), m.get(b"key-7"), m.latest_offset()),
            (0, None, -1)
        );
    }
}
