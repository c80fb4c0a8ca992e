//! A response encoded in parts: the fields the codec writes are copied into one buffer, and the record sets a
//! Fetch response carries are referenced, not copied, so the bytes read from a log file or from remote storage
//! go to the socket from where they were read (one `writev` for the whole response), as Kafka hands a file
//! region to `sendfile`.

use std::ops::Range;

use bytes::buf::UninitSlice;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::protocol::buf::ByteBufMut;

/// Record sets smaller than this are copied: a part of their own would cost more (an iovec, a reference count)
/// than copying them.
pub(crate) const MIN_REFERENCED: usize = 4096;

/// One framed response: its parts, written in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Encoded {
    parts: Vec<Bytes>,
}

impl Encoded {
    /// The response's bytes in total.
    pub(crate) fn len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }

    /// The parts, in order.
    pub(crate) fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    /// The response as one buffer (copied when it is in more than one part).
    pub(crate) fn into_bytes(mut self) -> Bytes {
        match self.parts.len() {
            0 => Bytes::new(),
            1 => self.parts.pop().unwrap_or_default(),
            _ => {
                let mut out = BytesMut::with_capacity(self.len());
                for p in &self.parts {
                    out.extend_from_slice(p);
                }
                out.freeze()
            }
        }
    }
}

impl From<Bytes> for Encoded {
    fn from(b: Bytes) -> Self {
        Encoded { parts: vec![b] }
    }
}

/// The buffer a response is encoded into: `put_slice` of a slice that is one of `refs` (the same memory, the
/// same length) ends the current part and adds that `Bytes` as a part of its own; everything else is copied
/// into the current part.
pub(crate) struct PartsBuf<'a> {
    done: Vec<Bytes>,
    cur: BytesMut,
    /// Sorted by address.
    refs: &'a [Bytes],
}

impl<'a> PartsBuf<'a> {
    /// `refs` sorted by address (see [`sort_refs`]); `capacity` is what the copied fields are expected to take.
    pub(crate) fn new(refs: &'a [Bytes], capacity: usize) -> Self {
        PartsBuf {
            done: Vec::with_capacity(2 * refs.len() + 1),
            cur: BytesMut::with_capacity(capacity),
            refs,
        }
    }

    /// The bytes written in total.
    pub(crate) fn len(&self) -> usize {
        self.done_len() + self.cur.len()
    }

    /// Bytes in the finished parts.
    fn done_len(&self) -> usize {
        self.done.iter().map(Bytes::len).sum()
    }

    pub(crate) fn finish(mut self) -> Encoded {
        if !self.cur.is_empty() || self.done.is_empty() {
            self.done.push(self.cur.freeze());
        }
        Encoded { parts: self.done }
    }

    fn referenced(&self, src: &[u8]) -> Option<&Bytes> {
        let at = src.as_ptr() as usize;
        let i = self
            .refs
            .binary_search_by_key(&at, |b| b.as_ptr() as usize)
            .ok()?;
        let b = &self.refs[i];
        (b.len() == src.len()).then_some(b)
    }

    /// Copies every part into `cur` (only for a write before the current part, which no response makes).
    fn flatten(&mut self) {
        let mut all = BytesMut::with_capacity(self.len());
        for p in self.done.drain(..) {
            all.extend_from_slice(&p);
        }
        all.extend_from_slice(&self.cur);
        self.cur = all;
    }
}

/// Sorts record sets by address for [`PartsBuf`], keeping only those worth a part of their own.
pub(crate) fn sort_refs(mut refs: Vec<Bytes>) -> Vec<Bytes> {
    refs.retain(|b| b.len() >= MIN_REFERENCED);
    refs.sort_by_key(|b| b.as_ptr() as usize);
    refs
}

// SAFETY: every method forwards to `BytesMut`'s, whose contract this keeps: `chunk_mut` and `advance_mut` act on
// the current part only, and `remaining_mut` is that part's.
unsafe impl BufMut for PartsBuf<'_> {
    fn remaining_mut(&self) -> usize {
        self.cur.remaining_mut()
    }

    unsafe fn advance_mut(&mut self, cnt: usize) {
        // SAFETY: the caller initialised `cnt` bytes of `chunk_mut()`, which is `cur`'s.
        unsafe { self.cur.advance_mut(cnt) }
    }

    fn chunk_mut(&mut self) -> &mut UninitSlice {
        self.cur.chunk_mut()
    }

    fn put_slice(&mut self, src: &[u8]) {
        if src.len() >= MIN_REFERENCED {
            if let Some(b) = self.referenced(src).cloned() {
                if !self.cur.is_empty() {
                    let head = self.cur.split().freeze();
                    self.done.push(head);
                }
                self.done.push(b);
                return;
            }
        }
        self.cur.extend_from_slice(src);
    }
}

impl ByteBufMut for PartsBuf<'_> {
    fn offset(&self) -> usize {
        self.len()
    }

    fn seek(&mut self, offset: usize) {
        if offset < self.done_len() {
            self.flatten();
        }
        let d = self.done_len();
        self.cur.resize(offset - d, 0);
    }

    fn range(&mut self, r: Range<usize>) -> &mut [u8] {
        if r.start < self.done_len() {
            self.flatten();
        }
        let d = self.done_len();
        &mut self.cur[r.start - d..r.end - d]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(e: &Encoded) -> Vec<u8> {
        e.parts().iter().flat_map(|p| p.iter().copied()).collect()
    }

    #[test]
    fn listed_record_sets_are_parts_of_their_own_and_the_rest_is_copied() {
        let big = Bytes::from(vec![7u8; 10_000]);
        let small = Bytes::from(vec![9u8; 100]);
        let unlisted = vec![5u8; 8_000];
        let refs = sort_refs(vec![big.clone(), small.clone()]);
        assert_eq!(refs.len(), 1, "a small record set is copied");
        let mut b = PartsBuf::new(&refs, 64);
        b.put_i32(1);
        b.put_slice(&big);
        b.put_slice(&small);
        b.put_slice(&unlisted);
        b.put_slice(&big[..5000]); // the same memory, another length: copied
        b.put_u8(3);
        let total = b.len();
        let e = b.finish();
        assert_eq!(e.parts().len(), 3);
        assert_eq!(
            e.parts()[1].as_ptr(),
            big.as_ptr(),
            "referenced, not copied"
        );
        assert_eq!(e.len(), total);
        let mut want = 1i32.to_be_bytes().to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(&small);
        want.extend_from_slice(&unlisted);
        want.extend_from_slice(&big[..5000]);
        want.push(3);
        assert_eq!(joined(&e), want);
        assert_eq!(e.into_bytes().as_ref(), &want[..]);
    }

    #[test]
    fn a_write_before_the_current_part_flattens_and_stays_right() {
        let big = Bytes::from(vec![1u8; 5_000]);
        let refs = sort_refs(vec![big.clone()]);
        let mut b = PartsBuf::new(&refs, 16);
        b.put_u32(0);
        b.put_slice(&big);
        b.put_u8(2);
        b.range(0..4).copy_from_slice(&[0, 0, 0, 8]);
        b.seek(b.offset());
        let e = b.finish();
        let mut want = vec![0, 0, 0, 8];
        want.extend_from_slice(&big);
        want.push(2);
        assert_eq!(joined(&e), want);
    }
}
