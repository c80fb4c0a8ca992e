//! A response encoded in parts: the fields the codec writes are copied into one buffer, and the record sets a
//! Fetch response carries are referenced, not copied, so the bytes read from remote storage go to the socket from
//! where they were read (one `writev` for the whole response), and the bytes of a local log are not read by the
//! broker at all: a part names their file region, which the connection hands to `sendfile` (Kafka's
//! `FileRecords.writeTo`).
//!
//! A record set left in its file is held in the response by a *placeholder*: a `Bytes` of the right length over a
//! read-only mapping of zeros, each at its own address (slot). The codec only takes its length and address; the
//! encoder swaps the file region in for it, and a placeholder it cannot swap fails the encoding, so the zeros never
//! reach a client.

use std::ops::Range;
use std::sync::OnceLock;

use bytes::buf::UninitSlice;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::protocol::buf::ByteBufMut;
use strata_storage::FileRegion;

/// Record sets smaller than this are copied: a part of their own would cost more (an iovec, a reference count)
/// than copying them.
pub(crate) const MIN_REFERENCED: usize = 4096;

/// The longest record set a placeholder stands for (longer ones are read into memory).
const PLACEHOLDER_MAX_LEN: usize = 256 << 20;
/// Placeholders in one response (one per partition left in its file; more are read into memory).
const PLACEHOLDER_SLOTS: usize = 1 << 20;

/// The zeros placeholders point into: address space only (never written, `MAP_NORESERVE`), mapped on first use.
fn zeros() -> Option<&'static [u8]> {
    static ZEROS: OnceLock<Option<memmap2::Mmap>> = OnceLock::new();
    ZEROS
        .get_or_init(|| {
            memmap2::MmapOptions::new()
                .len(PLACEHOLDER_MAX_LEN + PLACEHOLDER_SLOTS)
                .no_reserve_swap()
                .map_anon()
                .and_then(|m| m.make_read_only())
                .inspect_err(|e| tracing::warn!(error = %e, "no placeholder mapping: fetches read local logs into memory"))
                .ok()
        })
        .as_deref()
}

/// The placeholder of slot `slot` for a record set of `len` bytes; None when there is no such slot or mapping.
pub(crate) fn placeholder(slot: usize, len: usize) -> Option<Bytes> {
    if slot >= PLACEHOLDER_SLOTS || len > PLACEHOLDER_MAX_LEN {
        return None;
    }
    zeros().map(|z| Bytes::from_static(&z[slot..slot + len]))
}

/// Whether `b` points into the placeholders' mapping.
pub(crate) fn is_placeholder(b: &[u8]) -> bool {
    zeros().is_some_and(|z| z.as_ptr_range().contains(&b.as_ptr()))
}

/// A part of an encoded response.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// Bytes in memory.
    Mem(Bytes),
    /// Whole batches left in a log file.
    File(FileRegion),
}

impl Part {
    pub(crate) fn len(&self) -> usize {
        match self {
            Part::Mem(b) => b.len(),
            Part::File(r) => r.len(),
        }
    }
}

/// One framed response: its parts, written in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Encoded {
    parts: Vec<Part>,
}

impl Encoded {
    /// The response's bytes in total.
    pub(crate) fn len(&self) -> usize {
        self.parts.iter().map(Part::len).sum()
    }

    /// The parts, in order.
    pub(crate) fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The response as one buffer (copied when it is in more than one part; file regions read).
    pub(crate) fn into_bytes(self) -> strata_storage::Result<Bytes> {
        if let [Part::Mem(b)] = &self.parts[..] {
            return Ok(b.clone());
        }
        let mut out = BytesMut::with_capacity(self.len());
        for p in &self.parts {
            match p {
                Part::Mem(b) => out.extend_from_slice(b),
                Part::File(r) => out.extend_from_slice(&r.read()?),
            }
        }
        Ok(out.freeze())
    }
}

impl From<Bytes> for Encoded {
    fn from(b: Bytes) -> Self {
        Encoded {
            parts: vec![Part::Mem(b)],
        }
    }
}

/// A record set a response holds, and the file region it stands for when it is a placeholder.
pub(crate) type Ref = (Bytes, Option<FileRegion>);

/// The buffer a response is encoded into: `put_slice` of a slice that is one of `refs` (the same memory, the
/// same length) ends the current part and adds that `Bytes` (or the file region its placeholder stands for) as a
/// part of its own; everything else is copied into the current part.
pub(crate) struct PartsBuf<'a> {
    done: Vec<Part>,
    cur: BytesMut,
    /// Sorted by address.
    refs: &'a [Ref],
    /// Why the parts cannot be sent: a placeholder not among `refs` was written (a bug), or a file region could
    /// not be read while flattening; the encoding fails rather than send zeros.
    failure: Option<&'static str>,
}

impl<'a> PartsBuf<'a> {
    /// `refs` sorted by address (see [`sort_refs`]); `capacity` is what the copied fields are expected to take.
    pub(crate) fn new(refs: &'a [Ref], capacity: usize) -> Self {
        PartsBuf {
            done: Vec::with_capacity(2 * refs.len() + 1),
            cur: BytesMut::with_capacity(capacity),
            refs,
            failure: None,
        }
    }

    /// The bytes written in total.
    pub(crate) fn len(&self) -> usize {
        self.done_len() + self.cur.len()
    }

    /// Bytes in the finished parts.
    fn done_len(&self) -> usize {
        self.done.iter().map(Part::len).sum()
    }

    /// The parts; Err when a placeholder was written that stands for no file region.
    pub(crate) fn finish(mut self) -> Result<Encoded, &'static str> {
        if let Some(why) = self.failure {
            return Err(why);
        }
        if !self.cur.is_empty() || self.done.is_empty() {
            self.done.push(Part::Mem(self.cur.freeze()));
        }
        Ok(Encoded { parts: self.done })
    }

    fn referenced(&self, src: &[u8]) -> Option<&Ref> {
        let at = src.as_ptr() as usize;
        let i = self
            .refs
            .binary_search_by_key(&at, |(b, _)| b.as_ptr() as usize)
            .ok()?;
        let r = &self.refs[i];
        (r.0.len() == src.len()).then_some(r)
    }

    /// Copies every part into `cur` (only for a write before the current part, which no response makes).
    fn flatten(&mut self) {
        let mut all = BytesMut::with_capacity(self.len());
        for p in self.done.drain(..) {
            match p {
                Part::Mem(b) => all.extend_from_slice(&b),
                Part::File(r) => match r.read() {
                    Ok(b) => all.extend_from_slice(&b),
                    Err(_) => {
                        self.failure = Some("a file region could not be read");
                        all.resize(all.len() + r.len(), 0);
                    }
                },
            }
        }
        all.extend_from_slice(&self.cur);
        self.cur = all;
    }
}

/// Sorts record sets by address for [`PartsBuf`], keeping only those worth a part of their own (and every
/// placeholder, which must be swapped whatever its length).
pub(crate) fn sort_refs(mut refs: Vec<Ref>) -> Vec<Ref> {
    refs.retain(|(b, file)| b.len() >= MIN_REFERENCED || file.is_some());
    refs.sort_by_key(|(b, _)| b.as_ptr() as usize);
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
        if !src.is_empty() {
            if let Some((b, file)) = self.referenced(src).cloned() {
                if !self.cur.is_empty() {
                    let head = self.cur.split().freeze();
                    self.done.push(Part::Mem(head));
                }
                self.done.push(match file {
                    Some(region) => Part::File(region),
                    None => Part::Mem(b),
                });
                return;
            }
            if is_placeholder(src) {
                self.failure = Some("a record set placeholder without its file region");
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
pub(crate) mod tests {
    use super::*;

    fn joined(e: &Encoded) -> Vec<u8> {
        e.clone().into_bytes().unwrap().to_vec()
    }

    fn mem(e: &Encoded, i: usize) -> &Bytes {
        match &e.parts()[i] {
            Part::Mem(b) => b,
            Part::File(_) => panic!("part {i} is a file region"),
        }
    }

    #[test]
    fn listed_record_sets_are_parts_of_their_own_and_the_rest_is_copied() {
        let big = Bytes::from(vec![7u8; 10_000]);
        let small = Bytes::from(vec![9u8; 100]);
        let unlisted = vec![5u8; 8_000];
        let refs = sort_refs(vec![(big.clone(), None), (small.clone(), None)]);
        assert_eq!(refs.len(), 1, "a small record set is copied");
        let mut b = PartsBuf::new(&refs, 64);
        b.put_i32(1);
        b.put_slice(&big);
        b.put_slice(&small);
        b.put_slice(&unlisted);
        b.put_slice(&big[..5000]); // the same memory, another length: copied
        b.put_u8(3);
        let total = b.len();
        let e = b.finish().unwrap();
        assert_eq!(e.parts().len(), 3);
        assert_eq!(mem(&e, 1).as_ptr(), big.as_ptr(), "referenced, not copied");
        assert_eq!(e.len(), total);
        let mut want = 1i32.to_be_bytes().to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(&small);
        want.extend_from_slice(&unlisted);
        want.extend_from_slice(&big[..5000]);
        want.push(3);
        assert_eq!(joined(&e), want);
        assert_eq!(e.into_bytes().unwrap().as_ref(), &want[..]);
    }

    #[test]
    fn a_write_before_the_current_part_flattens_and_stays_right() {
        let big = Bytes::from(vec![1u8; 5_000]);
        let refs = sort_refs(vec![(big.clone(), None)]);
        let mut b = PartsBuf::new(&refs, 16);
        b.put_u32(0);
        b.put_slice(&big);
        b.put_u8(2);
        b.range(0..4).copy_from_slice(&[0, 0, 0, 8]);
        b.seek(b.offset());
        let e = b.finish().unwrap();
        let mut want = vec![0, 0, 0, 8];
        want.extend_from_slice(&big);
        want.push(2);
        assert_eq!(joined(&e), want);
    }

    /// A log of `n` records of 100 bytes (batches of 1,000), and all of them left in their file.
    pub(crate) fn region(dir: &std::path::Path, n: usize) -> (Bytes, FileRegion) {
        let m = strata_storage::LogManager::open(strata_storage::LogManagerConfig::new(vec![
            dir.to_path_buf()
        ]))
        .unwrap();
        let log = m
            .get_or_create_log(
                &strata_storage::TopicPartition::new("t", 0),
                uuid::Uuid::nil(),
                Default::default(),
            )
            .unwrap();
        for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
            let mut b = strata_storage::RecordBatchBuilder::new();
            for i in chunk {
                b.append(*i as i64, None, Some(&[b'a' + (i % 26) as u8; 100]), &[]);
            }
            log.append_as_leader(b.build(), 0).unwrap();
        }
        let bytes = log.read(0, 16 << 20, true, None).unwrap().records;
        match log.read_slice(0, 16 << 20, true, None, 0).unwrap() {
            strata_storage::LogSlice::File { region, .. } => (bytes, region),
            other => panic!("not left in the file: {other:?}"),
        }
    }

    #[test]
    fn a_placeholder_is_swapped_for_its_file_region_and_a_stray_one_fails_the_encoding() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, file) = region(dir.path(), 10);
        assert_eq!(file.len(), bytes.len());
        let ph = placeholder(0, file.len()).unwrap();
        let other = placeholder(1, file.len()).unwrap();
        assert_ne!(ph.as_ptr(), other.as_ptr(), "each slot at its own address");
        assert!(is_placeholder(&ph) && !is_placeholder(&bytes));
        let refs = sort_refs(vec![(ph.clone(), Some(file.clone()))]);
        let mut b = PartsBuf::new(&refs, 16);
        b.put_u16(7);
        b.put_slice(&ph);
        b.put_u16(9);
        let e = b.finish().unwrap();
        assert!(matches!(e.parts()[1], Part::File(_)), "{:?}", e.parts());
        let mut want = 7u16.to_be_bytes().to_vec();
        want.extend_from_slice(&bytes);
        want.extend_from_slice(&9u16.to_be_bytes());
        assert_eq!(
            joined(&e),
            want,
            "the region's bytes, not the placeholder's zeros"
        );
        // A placeholder the encoder was not told about is an error, never zeros on the wire.
        let mut b = PartsBuf::new(&refs, 16);
        b.put_slice(&other);
        assert!(b.finish().is_err());
    }
}
