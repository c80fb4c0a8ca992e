//! Zigzag varints as used inside v2 records (protobuf style).

/// Reads a zigzag varint (up to 5 bytes); returns the value and the bytes consumed.
#[inline(always)]
pub(crate) fn read_varint(b: &[u8]) -> Option<(i32, usize)> {
    let (v, n) = read_unsigned(b, 5)?;
    let v = v as u32;
    Some((((v >> 1) as i32) ^ -((v & 1) as i32), n))
}

/// Reads a zigzag varlong (up to 10 bytes); returns the value and the bytes consumed.
#[inline(always)]
pub(crate) fn read_varlong(b: &[u8]) -> Option<(i64, usize)> {
    let (v, n) = read_unsigned(b, 10)?;
    Some((((v >> 1) as i64) ^ -((v & 1) as i64), n))
}

/// One- and two-byte values (nulls, lengths and deltas below 8 Ki) are what records are made of: they take the
/// straight-line branches, longer ones the loop. `max_len` is at least 5.
#[inline(always)]
fn read_unsigned(b: &[u8], max_len: usize) -> Option<(u64, usize)> {
    let first = *b.first()?;
    if first & 0x80 == 0 {
        return Some((first as u64, 1));
    }
    if let Some(&second) = b.get(1) {
        if second & 0x80 == 0 {
            return Some((((first & 0x7f) as u64) | ((second as u64) << 7), 2));
        }
    }
    read_unsigned_long(b, max_len)
}

#[inline]
fn read_unsigned_long(b: &[u8], max_len: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in b.iter().take(max_len).enumerate() {
        value |= ((byte & 0x7f) as u64) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Appends a zigzag varint.
pub(crate) fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_unsigned(out, ((v << 1) ^ (v >> 31)) as u32 as u64);
}

/// Appends a zigzag varlong.
pub(crate) fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_unsigned(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn write_unsigned(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_including_extremes() {
        for v in [0, 1, -1, 63, -64, 64, 300, i32::MAX, i32::MIN] {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(read_varint(&out), Some((v, out.len())));
        }
        for v in [0, -1, 1 << 40, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            write_varlong(&mut out, v);
            assert_eq!(read_varlong(&out), Some((v, out.len())));
        }
        // Kafka's zigzag: -1 encodes as 0x01, 1 as 0x02.
        let mut out = Vec::new();
        write_varint(&mut out, -1);
        write_varint(&mut out, 1);
        assert_eq!(out, [0x01, 0x02]);
        assert_eq!(read_varint(&[0x80, 0x80]), None);
        assert_eq!(read_varint(&[0x80]), None);
        // Every length of encoding, through the one- and two-byte branches and the loop.
        for v in [63, 64, 8191, -8192, 8192, 1 << 20, 1 << 27] {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(read_varint(&out), Some((v, out.len())));
            assert_eq!(read_varint(&out[..out.len() - 1]), None, "{v} cut short");
        }
        // A sixth byte is not a varint's, a tenth continuation not a varlong's.
        assert_eq!(read_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), None);
        assert_eq!(read_varlong(&[0xff; 11]), None);
    }
}
