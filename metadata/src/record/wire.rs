//! The primitives of Kafka's message-generator encoding at a flexible version, as far as the remote log metadata
//! records use them: fixed-width big-endian integers, unsigned varints, compact strings, compact nullable bytes,
//! compact arrays, 16-byte UUIDs and tagged-field sections.
use uuid::Uuid;

/// Appends the encoding of each field to a buffer.
#[derive(Default)]
pub(super) struct Writer {
    pub(super) buf: Vec<u8>,
}

impl Writer {
    pub(super) fn uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub(super) fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    pub(super) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(super) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Most significant 8 bytes first, as Kafka's `Uuid` (and RFC 4122 byte order).
    pub(super) fn uuid(&mut self, v: &Uuid) {
        self.buf.extend_from_slice(v.as_bytes());
    }

    /// A compact string: `uvarint(len + 1)` then the UTF-8 bytes.
    pub(super) fn string(&mut self, v: &str) {
        self.uvarint(len_plus_one(v.len()));
        self.buf.extend_from_slice(v.as_bytes());
    }

    /// Compact nullable bytes: `0` for null, else `uvarint(len + 1)` then the bytes.
    pub(super) fn nullable_bytes(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.uvarint(0),
            Some(b) => {
                self.uvarint(len_plus_one(b.len()));
                self.buf.extend_from_slice(b);
            }
        }
    }

    /// A compact array's length prefix: `uvarint(n + 1)`.
    pub(super) fn array_len(&mut self, n: usize) {
        self.uvarint(len_plus_one(n));
    }

    /// An empty tagged-field section (every struct and message ends with one).
    pub(super) fn no_tagged_fields(&mut self) {
        self.uvarint(0);
    }
}

fn len_plus_one(n: usize) -> u32 {
    // Strings, custom metadata and epoch lists are far below 4 GiB: the callers validate their sizes first.
    u32::try_from(n + 1).expect("a field of the metadata record is below 4 GiB")
}

/// Reads fields in order from a byte slice; every error names what was being read.
pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
}

/// A decoding failure's reason.
pub(super) type ReadResult<T> = Result<T, String>;

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    fn take(&mut self, n: usize, what: &str) -> ReadResult<&'a [u8]> {
        if self.buf.len() < n {
            return Err(format!("{what}: needs {n} bytes, {} left", self.buf.len()));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    pub(super) fn uvarint(&mut self, what: &str) -> ReadResult<u32> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = self.take(1, what)?[0];
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("{what}: unsigned varint longer than 5 bytes"))
    }

    pub(super) fn i8(&mut self, what: &str) -> ReadResult<i8> {
        Ok(self.take(1, what)?[0] as i8)
    }

    pub(super) fn i32(&mut self, what: &str) -> ReadResult<i32> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes(b.try_into().expect("4 bytes")))
    }

    pub(super) fn i64(&mut self, what: &str) -> ReadResult<i64> {
        let b = self.take(8, what)?;
        Ok(i64::from_be_bytes(b.try_into().expect("8 bytes")))
    }

    pub(super) fn uuid(&mut self, what: &str) -> ReadResult<Uuid> {
        let b = self.take(16, what)?;
        Ok(Uuid::from_bytes(b.try_into().expect("16 bytes")))
    }

    pub(super) fn string(&mut self, what: &str) -> ReadResult<String> {
        let n = self.uvarint(what)?;
        if n == 0 {
            return Err(format!("{what}: null, where the schema allows no null"));
        }
        let b = self.take(n as usize - 1, what)?;
        String::from_utf8(b.to_vec()).map_err(|e| format!("{what}: not UTF-8: {e}"))
    }

    pub(super) fn nullable_bytes(&mut self, what: &str) -> ReadResult<Option<Vec<u8>>> {
        match self.uvarint(what)? {
            0 => Ok(None),
            n => Ok(Some(self.take(n as usize - 1, what)?.to_vec())),
        }
    }

    pub(super) fn array_len(&mut self, what: &str) -> ReadResult<usize> {
        match self.uvarint(what)? {
            0 => Err(format!(
                "{what}: null array, where the schema allows no null"
            )),
            n => Ok(n as usize - 1),
        }
    }

    /// Reads a tagged-field section: calls `known(tag, value)` for each field, which returns `false` for a tag
    /// it does not know (skipped, as Kafka keeps it as an unknown tagged field).
    pub(super) fn tagged_fields(
        &mut self,
        what: &str,
        mut known: impl FnMut(u32, &[u8]) -> ReadResult<bool>,
    ) -> ReadResult<()> {
        let n = self.uvarint(what)?;
        let mut last: Option<u32> = None;
        for _ in 0..n {
            let tag = self.uvarint(what)?;
            if last.is_some_and(|l| tag <= l) {
                return Err(format!("{what}: tag {tag} is not above the previous one"));
            }
            last = Some(tag);
            let size = self.uvarint(what)? as usize;
            let value = self.take(size, what)?;
            known(tag, value)?;
        }
        Ok(())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uvarints_round_trip_at_every_width() {
        for v in [0, 1, 127, 128, 16_383, 16_384, 2_097_152, u32::MAX] {
            let mut w = Writer::default();
            w.uvarint(v);
            let mut r = Reader::new(&w.buf);
            assert_eq!(r.uvarint("v").unwrap(), v);
            assert!(r.is_empty());
        }
        let err = Reader::new(&[0x80; 6]).uvarint("frame").unwrap_err();
        assert!(err.contains("longer than 5 bytes"), "{err}");
    }

    #[test]
    fn short_input_names_the_field_and_the_shortfall() {
        let err = Reader::new(&[0, 0]).i64("start offset").unwrap_err();
        assert_eq!(err, "start offset: needs 8 bytes, 2 left");
        let err = Reader::new(&[0]).string("topic name").unwrap_err();
        assert!(err.contains("topic name: null"), "{err}");
    }
}
