//! KIP-848 consumer group records of `__consumer_offsets`, in Kafka's format (group-coordinator's
//! `ConsumerGroup*Key` / `ConsumerGroup*Value`), so a restarted broker knows its consumer groups, their members,
//! epochs and assignments (members go on heartbeating with their epoch, nothing is reassigned):
//!
//! | key version | key (`version i16`, then) | value (`version i16 = 0`, then flexible) |
//! |---|---|---|
//! | 3 `ConsumerGroupMetadata` | `group string` | `epoch i32` |
//! | 4 `ConsumerGroupPartitionMetadata` | `group string` | `topics [topic_id uuid, topic_name string, num_partitions i32, partition_metadata [..] (empty)]` |
//! | 5 `ConsumerGroupMemberMetadata` | `group string`, `member string` | `instance_id string?`, `rack_id string?`, `client_id string`, `client_host string`, `subscribed_topic_names [string]`, `subscribed_topic_regex string?`, `rebalance_timeout_ms i32`, `server_assignor string?` |
//! | 6 `ConsumerGroupTargetAssignmentMetadata` | `group string` | `assignment_epoch i32` |
//! | 7 `ConsumerGroupTargetAssignmentMember` | `group string`, `member string` | `topic_partitions [topic_id uuid, partitions [i32]]` |
//! | 8 `ConsumerGroupCurrentMemberAssignment` | `group string`, `member string` | `member_epoch i32`, `previous_member_epoch i32`, `state i8`, `assigned_partitions [topic_id uuid, partitions [i32]]`, `partitions_pending_revocation [same]` |
//!
//! Keys use i16-length strings (not flexible). Values are flexible: compact strings and arrays (uvarint length + 1,
//! 0 = null), and an empty tagged-field section (uvarint 0) after every struct; tagged fields read are skipped
//! (Kafka's `ClassicMemberMetadata`, tag 0, of members that joined with the classic protocol). A tombstone (null
//! value) removes the key: a member that left loses its three member records, a deleted group all of them.

use std::collections::{BTreeMap, BTreeSet};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use uuid::Uuid;

/// Key versions of the six record types.
pub mod key {
    /// `ConsumerGroupMetadataKey`.
    pub const GROUP_METADATA: i16 = 3;
    /// `ConsumerGroupPartitionMetadataKey`.
    pub const PARTITION_METADATA: i16 = 4;
    /// `ConsumerGroupMemberMetadataKey`.
    pub const MEMBER_METADATA: i16 = 5;
    /// `ConsumerGroupTargetAssignmentMetadataKey`.
    pub const TARGET_ASSIGNMENT_METADATA: i16 = 6;
    /// `ConsumerGroupTargetAssignmentMemberKey`.
    pub const TARGET_ASSIGNMENT_MEMBER: i16 = 7;
    /// `ConsumerGroupCurrentMemberAssignmentKey`.
    pub const CURRENT_MEMBER_ASSIGNMENT: i16 = 8;
}

/// Kafka's `MemberState` values stored in the current assignment record.
pub mod member_state {
    /// The member holds its target.
    pub const STABLE: i8 = 0;
    /// The member must revoke partitions first.
    pub const UNREVOKED_PARTITIONS: i8 = 1;
    /// Partitions of its target are still held by others.
    pub const UNRELEASED_PARTITIONS: i8 = 2;
}

/// A decoded key: its version (record type), group and, for member records, member id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConsumerKey {
    /// Key version (see [`key`]).
    pub version: i16,
    /// Group id.
    pub group: String,
    /// Member id of member records (versions 5, 7, 8).
    pub member: Option<String>,
}

impl ConsumerKey {
    fn has_member(version: i16) -> bool {
        matches!(
            version,
            key::MEMBER_METADATA | key::TARGET_ASSIGNMENT_MEMBER | key::CURRENT_MEMBER_ASSIGNMENT
        )
    }

    /// A group-level key.
    pub fn group(version: i16, group: &str) -> Self {
        ConsumerKey {
            version,
            group: group.to_string(),
            member: None,
        }
    }

    /// A member key.
    pub fn member(version: i16, group: &str, member: &str) -> Self {
        ConsumerKey {
            version,
            group: group.to_string(),
            member: Some(member.to_string()),
        }
    }

    /// Encodes the key. Ids are at most i16::MAX bytes (checked at the edge).
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(self.version);
        put_str(&mut b, &self.group);
        if let Some(m) = &self.member {
            put_str(&mut b, m);
        }
        b.freeze()
    }

    /// Decodes a key of versions 3..=8; `None` for other versions (offset commits, classic groups) or garbage.
    pub fn decode(mut k: Bytes) -> Option<Self> {
        if k.remaining() < 2 {
            return None;
        }
        let version = k.get_i16();
        if !(key::GROUP_METADATA..=key::CURRENT_MEMBER_ASSIGNMENT).contains(&version) {
            return None;
        }
        let group = get_str16(&mut k)?;
        let member = if Self::has_member(version) {
            Some(get_str16(&mut k)?)
        } else {
            None
        };
        k.is_empty().then_some(ConsumerKey {
            version,
            group,
            member,
        })
    }
}

/// The group of a consumer group record key, if `k` is one (replay keeps these records by key).
pub fn key_group(k: &Bytes) -> Option<String> {
    ConsumerKey::decode(k.clone()).map(|k| k.group)
}

/// topic id → partitions.
pub type TopicPartitions = BTreeMap<Uuid, BTreeSet<i32>>;

/// `ConsumerGroupMemberMetadataValue`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberMetadata {
    /// Static membership id.
    pub instance_id: Option<String>,
    /// Rack.
    pub rack_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// Subscribed topic names.
    pub subscribed_topic_names: Vec<String>,
    /// Subscribed regex.
    pub subscribed_topic_regex: Option<String>,
    /// Rebalance timeout (ms).
    pub rebalance_timeout_ms: i32,
    /// Server assignor.
    pub server_assignor: Option<String>,
}

/// `ConsumerGroupCurrentMemberAssignmentValue`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CurrentAssignment {
    /// Member epoch.
    pub member_epoch: i32,
    /// Previous member epoch.
    pub previous_member_epoch: i32,
    /// [`member_state`].
    pub state: i8,
    /// Assigned partitions (kept).
    pub assigned: TopicPartitions,
    /// Partitions the member must revoke.
    pub pending_revocation: TopicPartitions,
}

/// `ConsumerGroupPartitionMetadataValue`: the subscribed topics the target was computed from.
pub type PartitionMetadata = Vec<(Uuid, String, i32)>;

/// Encodes an `int32`-only value (`ConsumerGroupMetadataValue`, `ConsumerGroupTargetAssignmentMetadataValue`).
pub fn encode_epoch(epoch: i32) -> Bytes {
    let mut b = head();
    b.put_i32(epoch);
    b.put_u8(0);
    b.freeze()
}

/// Decodes an `int32`-only value.
pub fn decode_epoch(v: Bytes) -> Option<i32> {
    let mut r = value_body(v)?;
    let e = get_i32(&mut r)?;
    skip_tags(&mut r)?;
    Some(e)
}

/// Encodes `ConsumerGroupPartitionMetadataValue` (no rack information: an empty list per topic, as Kafka 4).
pub fn encode_partition_metadata(topics: &PartitionMetadata) -> Bytes {
    let mut b = head();
    put_uvarint(&mut b, topics.len() as u64 + 1);
    for (id, name, n) in topics {
        b.put_slice(id.as_bytes());
        put_cstr(&mut b, Some(name));
        b.put_i32(*n);
        put_uvarint(&mut b, 1);
        b.put_u8(0);
    }
    b.put_u8(0);
    b.freeze()
}

/// Decodes `ConsumerGroupPartitionMetadataValue`.
pub fn decode_partition_metadata(v: Bytes) -> Option<PartitionMetadata> {
    let mut r = value_body(v)?;
    let n = get_clen(&mut r)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let id = get_uuid(&mut r)?;
        let name = get_cstr(&mut r)??;
        let parts = get_i32(&mut r)?;
        for _ in 0..get_clen(&mut r)? {
            get_i32(&mut r)?;
            for _ in 0..get_clen(&mut r)? {
                get_cstr(&mut r)??;
            }
            skip_tags(&mut r)?;
        }
        skip_tags(&mut r)?;
        out.push((id, name, parts));
    }
    skip_tags(&mut r)?;
    Some(out)
}

/// Encodes `ConsumerGroupMemberMetadataValue`.
pub fn encode_member(m: &MemberMetadata) -> Bytes {
    let mut b = head();
    put_cstr(&mut b, m.instance_id.as_deref());
    put_cstr(&mut b, m.rack_id.as_deref());
    put_cstr(&mut b, Some(&m.client_id));
    put_cstr(&mut b, Some(&m.client_host));
    put_uvarint(&mut b, m.subscribed_topic_names.len() as u64 + 1);
    for t in &m.subscribed_topic_names {
        put_cstr(&mut b, Some(t));
    }
    put_cstr(&mut b, m.subscribed_topic_regex.as_deref());
    b.put_i32(m.rebalance_timeout_ms);
    put_cstr(&mut b, m.server_assignor.as_deref());
    b.put_u8(0);
    b.freeze()
}

/// Decodes `ConsumerGroupMemberMetadataValue`.
pub fn decode_member(v: Bytes) -> Option<MemberMetadata> {
    let mut r = value_body(v)?;
    let r = &mut r;
    let instance_id = get_cstr(r)?;
    let rack_id = get_cstr(r)?;
    let client_id = get_cstr(r)??;
    let client_host = get_cstr(r)??;
    let mut subscribed_topic_names = Vec::new();
    for _ in 0..get_clen(r)? {
        subscribed_topic_names.push(get_cstr(r)??);
    }
    let subscribed_topic_regex = get_cstr(r)?;
    let rebalance_timeout_ms = get_i32(r)?;
    let server_assignor = get_cstr(r)?;
    skip_tags(r)?;
    Some(MemberMetadata {
        instance_id,
        rack_id,
        client_id,
        client_host,
        subscribed_topic_names,
        subscribed_topic_regex,
        rebalance_timeout_ms,
        server_assignor,
    })
}

/// Encodes `ConsumerGroupTargetAssignmentMemberValue`.
pub fn encode_target(tps: &TopicPartitions) -> Bytes {
    let mut b = head();
    put_tps(&mut b, tps);
    b.put_u8(0);
    b.freeze()
}

/// Decodes `ConsumerGroupTargetAssignmentMemberValue`.
pub fn decode_target(v: Bytes) -> Option<TopicPartitions> {
    let mut r = value_body(v)?;
    let tps = get_tps(&mut r)?;
    skip_tags(&mut r)?;
    Some(tps)
}

/// Encodes `ConsumerGroupCurrentMemberAssignmentValue`.
pub fn encode_current(c: &CurrentAssignment) -> Bytes {
    let mut b = head();
    b.put_i32(c.member_epoch);
    b.put_i32(c.previous_member_epoch);
    b.put_i8(c.state);
    put_tps(&mut b, &c.assigned);
    put_tps(&mut b, &c.pending_revocation);
    b.put_u8(0);
    b.freeze()
}

/// Decodes `ConsumerGroupCurrentMemberAssignmentValue`.
pub fn decode_current(v: Bytes) -> Option<CurrentAssignment> {
    let mut r = value_body(v)?;
    let r = &mut r;
    let member_epoch = get_i32(r)?;
    let previous_member_epoch = get_i32(r)?;
    if !r.has_remaining() {
        return None;
    }
    let state = r.get_i8();
    let assigned = get_tps(r)?;
    let pending_revocation = get_tps(r)?;
    skip_tags(r)?;
    Some(CurrentAssignment {
        member_epoch,
        previous_member_epoch,
        state,
        assigned,
        pending_revocation,
    })
}

/// A value starts with version 0 (the only one Kafka defines for these records).
fn head() -> BytesMut {
    let mut b = BytesMut::new();
    b.put_i16(0);
    b
}

fn value_body(mut v: Bytes) -> Option<Bytes> {
    (v.remaining() >= 2 && v.get_i16() == 0).then_some(v)
}

fn put_tps(b: &mut BytesMut, tps: &TopicPartitions) {
    put_uvarint(b, tps.len() as u64 + 1);
    for (id, ps) in tps {
        b.put_slice(id.as_bytes());
        put_uvarint(b, ps.len() as u64 + 1);
        for p in ps {
            b.put_i32(*p);
        }
        b.put_u8(0);
    }
}

fn get_tps(r: &mut Bytes) -> Option<TopicPartitions> {
    let mut out = TopicPartitions::new();
    for _ in 0..get_clen(r)? {
        let id = get_uuid(r)?;
        let mut ps = BTreeSet::new();
        for _ in 0..get_clen(r)? {
            ps.insert(get_i32(r)?);
        }
        skip_tags(r)?;
        out.insert(id, ps);
    }
    Some(out)
}

fn put_str(b: &mut BytesMut, s: &str) {
    let n = s.len().min(i16::MAX as usize);
    b.put_i16(n as i16);
    b.put_slice(&s.as_bytes()[..n]);
}

fn get_str16(b: &mut Bytes) -> Option<String> {
    if b.remaining() < 2 {
        return None;
    }
    let n = usize::try_from(b.get_i16()).ok()?;
    if b.remaining() < n {
        return None;
    }
    String::from_utf8(b.split_to(n).to_vec()).ok()
}

fn put_uvarint(b: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        b.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    b.put_u8(v as u8);
}

fn get_uvarint(b: &mut Bytes) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        if !b.has_remaining() {
            return None;
        }
        let byte = b.get_u8();
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn put_cstr(b: &mut BytesMut, s: Option<&str>) {
    match s {
        None => b.put_u8(0),
        Some(s) => {
            put_uvarint(b, s.len() as u64 + 1);
            b.put_slice(s.as_bytes());
        }
    }
}

/// `Some(None)` for null, `None` for garbage.
pub(super) fn get_cstr(b: &mut Bytes) -> Option<Option<String>> {
    let n = get_uvarint(b)?;
    if n == 0 {
        return Some(None);
    }
    let n = usize::try_from(n - 1).ok()?;
    if b.remaining() < n {
        return None;
    }
    String::from_utf8(b.split_to(n).to_vec()).ok().map(Some)
}

/// A compact array length (null read as empty); bounded by the bytes left, so garbage cannot allocate.
fn get_clen(b: &mut Bytes) -> Option<usize> {
    let n = usize::try_from(get_uvarint(b)?.saturating_sub(1)).ok()?;
    (n <= b.remaining()).then_some(n)
}

fn get_i32(b: &mut Bytes) -> Option<i32> {
    (b.remaining() >= 4).then(|| b.get_i32())
}

fn get_uuid(b: &mut Bytes) -> Option<Uuid> {
    if b.remaining() < 16 {
        return None;
    }
    let mut id = [0u8; 16];
    b.copy_to_slice(&mut id);
    Some(Uuid::from_bytes(id))
}

fn skip_tags(b: &mut Bytes) -> Option<()> {
    for _ in 0..get_uvarint(b)? {
        get_uvarint(b)?;
        let size = usize::try_from(get_uvarint(b)?).ok()?;
        if b.remaining() < size {
            return None;
        }
        b.advance(size);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tps() -> TopicPartitions {
        BTreeMap::from([(Uuid::from_u128(7), BTreeSet::from([0, 2, 5]))])
    }

    /// Kafka's key layout: version then i16-length strings; other key versions are not consumer group keys.
    #[test]
    fn keys_round_trip_and_other_versions_are_refused() {
        let k = ConsumerKey::member(key::CURRENT_MEMBER_ASSIGNMENT, "g", "m-1");
        let b = k.encode();
        assert_eq!(&b[..], b"\x00\x08\x00\x01g\x00\x03m-1");
        assert_eq!(ConsumerKey::decode(b), Some(k));
        let g = ConsumerKey::group(key::GROUP_METADATA, "g");
        assert_eq!(ConsumerKey::decode(g.encode()), Some(g));
        assert_eq!(
            ConsumerKey::decode(crate::group::record::encode_key("g")),
            None
        );
        assert_eq!(
            ConsumerKey::decode(crate::group::offsets::encode_key("g", "t", 0).unwrap()),
            None
        );
    }

    /// The bytes Kafka's generated `ConsumerGroupMetadataValue` serializer writes for epoch 5 (version 0,
    /// int32, no tagged fields).
    #[test]
    fn epoch_value_matches_kafkas_bytes() {
        assert_eq!(&encode_epoch(5)[..], &[0, 0, 0, 0, 0, 5, 0]);
        assert_eq!(decode_epoch(encode_epoch(5)), Some(5));
    }

    #[test]
    fn member_and_assignment_values_round_trip() {
        let m = MemberMetadata {
            instance_id: Some("i".into()),
            rack_id: None,
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            subscribed_topic_names: vec!["a".into(), "b".into()],
            subscribed_topic_regex: Some("t.*".into()),
            rebalance_timeout_ms: 300_000,
            server_assignor: Some("uniform".into()),
        };
        assert_eq!(decode_member(encode_member(&m)), Some(m));
        assert_eq!(decode_target(encode_target(&tps())), Some(tps()));
        let c = CurrentAssignment {
            member_epoch: 4,
            previous_member_epoch: 3,
            state: member_state::UNREVOKED_PARTITIONS,
            assigned: tps(),
            pending_revocation: BTreeMap::from([(Uuid::from_u128(9), BTreeSet::from([1]))]),
        };
        assert_eq!(decode_current(encode_current(&c)), Some(c));
        let pm = vec![(Uuid::from_u128(7), "t".to_string(), 6)];
        assert_eq!(
            decode_partition_metadata(encode_partition_metadata(&pm)),
            Some(pm)
        );
    }

    /// A member that joined with the classic protocol carries Kafka's tagged `ClassicMemberMetadata` (tag 0):
    /// it is skipped, the rest read.
    #[test]
    fn tagged_fields_are_skipped() {
        let m = MemberMetadata {
            client_id: "c".into(),
            ..Default::default()
        };
        let mut b = BytesMut::from(&encode_member(&m)[..]);
        b.truncate(b.len() - 1);
        b.put_slice(&[1, 0, 3, 9, 9, 9]);
        assert_eq!(decode_member(b.freeze()), Some(m));
    }

    #[test]
    fn truncated_values_are_refused() {
        let c = encode_current(&CurrentAssignment {
            assigned: tps(),
            ..Default::default()
        });
        for cut in 0..c.len() {
            assert_eq!(decode_current(c.slice(..cut)), None, "cut at {cut}");
        }
        let v = encode_epoch(1);
        assert_eq!(decode_epoch(v.slice(..v.len() - 1)), None);
    }
}
