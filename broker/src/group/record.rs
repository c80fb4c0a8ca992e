//! Group metadata records of `__consumer_offsets`, in Kafka's format (`GroupMetadataKey` / `GroupMetadataValue`),
//! so a restarted broker knows its classic groups, their generation and members (who then go on heartbeating):
//!
//! | part | layout |
//! |---|---|
//! | key (version 2) | `version i16 = 2`, `group string` |
//! | value (version 3, written) | `version i16 = 3`, `protocol_type string`, `generation i32`, `protocol string?`, `leader string?`, `current_state_timestamp i64`, `members [member]` |
//! | member (v3) | `member_id string`, `group_instance_id string?`, `client_id string`, `client_host string`, `rebalance_timeout i32`, `session_timeout i32`, `subscription bytes`, `assignment bytes` |
//! | tombstone | key as above, null value (group deleted) |
//!
//! `string` is an i16 length then UTF-8 (`?`: -1 = null), `bytes` an i32 length, `[x]` an i32 count. Versions 0..=2
//! lack `group_instance_id` (v3), `current_state_timestamp` (v2) and `rebalance_timeout` (v1); version 4 is the
//! flexible encoding of version 3 (compact lengths, tagged fields), read but not written (Kafka writes 3).

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Key version of group metadata records.
pub const KEY_VERSION: i16 = 2;
/// Value version written.
pub const VALUE_VERSION: i16 = 3;

/// One member of a stored group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberMetadataValue {
    /// Member id.
    pub member_id: String,
    /// Static membership id (KIP-345).
    pub group_instance_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// Rebalance timeout (ms).
    pub rebalance_timeout: i32,
    /// Session timeout (ms).
    pub session_timeout: i32,
    /// The member's metadata for the chosen protocol.
    pub subscription: Bytes,
    /// The member's assignment.
    pub assignment: Bytes,
}

/// A stored classic group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadataValue {
    /// Protocol type ("consumer", "connect", ...).
    pub protocol_type: String,
    /// Generation.
    pub generation: i32,
    /// Chosen protocol (null when empty).
    pub protocol: Option<String>,
    /// Leader (null when empty).
    pub leader: Option<String>,
    /// When the group entered its state (ms), -1 if unknown.
    pub current_state_timestamp: i64,
    /// Members.
    pub members: Vec<MemberMetadataValue>,
}

/// Encodes a group metadata key.
pub fn encode_key(group: &str) -> Bytes {
    let mut b = BytesMut::new();
    b.put_i16(KEY_VERSION);
    put_str(&mut b, Some(group));
    b.freeze()
}

/// The group of a group metadata key; `None` for other key versions or garbage.
pub fn decode_key(mut k: Bytes) -> Option<String> {
    if k.remaining() < 2 || k.get_i16() != KEY_VERSION {
        return None;
    }
    get_str(&mut k, false)?
}

/// Encodes a value (version 3). Strings longer than i16::MAX bytes cannot occur: ids are checked at the edge.
pub fn encode_value(v: &GroupMetadataValue) -> Bytes {
    let mut b = BytesMut::new();
    b.put_i16(VALUE_VERSION);
    put_str(&mut b, Some(&v.protocol_type));
    b.put_i32(v.generation);
    put_str(&mut b, v.protocol.as_deref());
    put_str(&mut b, v.leader.as_deref());
    b.put_i64(v.current_state_timestamp);
    b.put_i32(v.members.len() as i32);
    for m in &v.members {
        put_str(&mut b, Some(&m.member_id));
        put_str(&mut b, m.group_instance_id.as_deref());
        put_str(&mut b, Some(&m.client_id));
        put_str(&mut b, Some(&m.client_host));
        b.put_i32(m.rebalance_timeout);
        b.put_i32(m.session_timeout);
        b.put_i32(m.subscription.len() as i32);
        b.put_slice(&m.subscription);
        b.put_i32(m.assignment.len() as i32);
        b.put_slice(&m.assignment);
    }
    b.freeze()
}

/// Decodes a value of versions 0..=4; `None` for garbage.
pub fn decode_value(mut v: Bytes) -> Option<GroupMetadataValue> {
    if v.remaining() < 2 {
        return None;
    }
    let version = v.get_i16();
    if !(0..=4).contains(&version) {
        return None;
    }
    let flex = version >= 4;
    let r = &mut v;
    let protocol_type = get_str(r, flex)??;
    let generation = get_i32(r)?;
    let protocol = get_str(r, flex)?;
    let leader = get_str(r, flex)?;
    let current_state_timestamp = if version >= 2 { get_i64(r)? } else { -1 };
    let n = get_len(r, flex)?;
    let mut members = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let member_id = get_str(r, flex)??;
        let group_instance_id = if version >= 3 {
            get_str(r, flex)?
        } else {
            None
        };
        let client_id = get_str(r, flex)??;
        let client_host = get_str(r, flex)??;
        let rebalance_timeout = if version >= 1 { get_i32(r)? } else { -1 };
        let session_timeout = get_i32(r)?;
        let subscription = get_bytes(r, flex)?;
        let assignment = get_bytes(r, flex)?;
        if flex {
            skip_tags(r)?;
        }
        let rebalance_timeout = if rebalance_timeout < 0 {
            session_timeout
        } else {
            rebalance_timeout
        };
        members.push(MemberMetadataValue {
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout,
            session_timeout,
            subscription,
            assignment,
        });
    }
    Some(GroupMetadataValue {
        protocol_type,
        generation,
        protocol,
        leader,
        current_state_timestamp,
        members,
    })
}

fn put_str(b: &mut BytesMut, s: Option<&str>) {
    match s {
        Some(s) => {
            b.put_i16(s.len().min(i16::MAX as usize) as i16);
            b.put_slice(&s.as_bytes()[..s.len().min(i16::MAX as usize)]);
        }
        None => b.put_i16(-1),
    }
}

fn get_i32(b: &mut Bytes) -> Option<i32> {
    (b.remaining() >= 4).then(|| b.get_i32())
}

fn get_i64(b: &mut Bytes) -> Option<i64> {
    (b.remaining() >= 8).then(|| b.get_i64())
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

/// A length: i32 (or compact uvarint - 1); -1 = null.
fn get_len_or_null(b: &mut Bytes, flex: bool, wide: bool) -> Option<Option<usize>> {
    let n: i64 = if flex {
        get_uvarint(b)? as i64 - 1
    } else if wide {
        i64::from(get_i32(b)?)
    } else {
        if b.remaining() < 2 {
            return None;
        }
        i64::from(b.get_i16())
    };
    if n < 0 {
        return Some(None);
    }
    let n = n as usize;
    Some(Some(n))
}

fn get_len(b: &mut Bytes, flex: bool) -> Option<usize> {
    get_len_or_null(b, flex, true)?
}

/// `Some(None)` for a null string, `None` for garbage.
fn get_str(b: &mut Bytes, flex: bool) -> Option<Option<String>> {
    let Some(n) = get_len_or_null(b, flex, false)? else {
        return Some(None);
    };
    if b.remaining() < n {
        return None;
    }
    String::from_utf8(b.split_to(n).to_vec()).ok().map(Some)
}

fn get_bytes(b: &mut Bytes, flex: bool) -> Option<Bytes> {
    let n = get_len_or_null(b, flex, true)?.unwrap_or(0);
    (b.remaining() >= n).then(|| b.split_to(n))
}

fn skip_tags(b: &mut Bytes) -> Option<()> {
    let n = get_uvarint(b)?;
    for _ in 0..n {
        get_uvarint(b)?;
        let size = get_uvarint(b)? as usize;
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

    fn sample() -> GroupMetadataValue {
        GroupMetadataValue {
            protocol_type: "consumer".into(),
            generation: 7,
            protocol: Some("cooperative-sticky".into()),
            leader: Some("m1".into()),
            current_state_timestamp: 1_700_000_000_000,
            members: vec![MemberMetadataValue {
                member_id: "m1".into(),
                group_instance_id: Some("i1".into()),
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                rebalance_timeout: 300_000,
                session_timeout: 45_000,
                subscription: Bytes::from_static(b"sub"),
                assignment: Bytes::from_static(b"asg"),
            }],
        }
    }

    #[test]
    fn group_metadata_round_trips_at_version_3() {
        let v = sample();
        let bytes = encode_value(&v);
        assert_eq!(&bytes[..2], &[0, 3]);
        assert_eq!(decode_value(bytes), Some(v));
        assert_eq!(decode_key(encode_key("g")), Some("g".into()));
    }

    /// Kafka's key version 2 is the group metadata key; offset commit keys (0, 1) are not.
    #[test]
    fn offset_commit_keys_are_not_group_keys() {
        let k = crate::group::offsets::encode_key("g", "t", 0).unwrap();
        assert_eq!(decode_key(k), None);
    }

    /// Version 0 (Kafka 0.9 / 0.10.0) has no rebalance timeout: the session timeout stands in, as Kafka reads it.
    #[test]
    fn version_0_reads_with_the_session_timeout_as_rebalance_timeout() {
        let mut b = BytesMut::new();
        b.put_i16(0);
        put_str(&mut b, Some("consumer"));
        b.put_i32(3);
        put_str(&mut b, Some("range"));
        put_str(&mut b, Some("m"));
        b.put_i32(1);
        put_str(&mut b, Some("m"));
        put_str(&mut b, Some("c"));
        put_str(&mut b, Some("h"));
        b.put_i32(10_000);
        b.put_i32(0);
        b.put_i32(0);
        let v = decode_value(b.freeze()).unwrap();
        assert_eq!(v.generation, 3);
        assert_eq!(v.members[0].rebalance_timeout, 10_000);
        assert_eq!(v.members[0].group_instance_id, None);
    }

    #[test]
    fn truncated_values_are_refused() {
        let bytes = encode_value(&sample());
        for cut in 0..bytes.len() {
            assert_eq!(decode_value(bytes.slice(..cut)), None, "cut at {cut}");
        }
    }
}
