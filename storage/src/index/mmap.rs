//! The crate's only `unsafe` code: memory-mapping index files (`memmap2`).

use std::fs::File;
use std::io;

use memmap2::MmapMut;

/// Maps the whole of `file` read-write.
///
/// Callers must uphold what the `SAFETY` comment below relies on: the file belongs to this process's log and is
/// only resized after the mapping is dropped. The mapping stays valid after `file` is closed (POSIX `mmap`).
pub(crate) fn map_mut(file: &File) -> io::Result<MmapMut> {
    // SAFETY: memmap2 requires that the mapped file is not truncated or modified outside this mapping while it is
    // alive (that would make reads through the slice undefined). Index files live inside a partition directory
    // owned exclusively by this broker process (one broker per log dir, as in Kafka), every write to them goes
    // through this mapping, and `IndexFile` drops the mapping before any `set_len` (resize, trim, reset: all take
    // `&mut self`, so no reader holds a slice of it). Closing the descriptor after mapping does not end the
    // mapping; a second mapping made by a racing reader is only read, then dropped, while no resize can run.
    let map = unsafe { MmapMut::map_mut(file) }?;
    // Random access: no read-ahead on a page fault. An index is preallocated sparse (`segment.index.bytes`, 10 MiB
    // by default) and its first entries fault in its first page; with the default advice each such fault read
    // ahead a whole window of the file's holes, zero-filling it in the kernel: loading 10,000 partitions after an
    // unclean stop (their indexes rebuilt) spent 72 % of its CPU there (perf, 2026-12-05). Lookups are binary
    // searches and appends touch each page once, so read-ahead never helps. Only a hint: a kernel that refuses it
    // still maps the file.
    if let Err(e) = map.advise(memmap2::Advice::Random) {
        tracing::debug!(error = %e, "madvise(MADV_RANDOM) of an index mapping refused");
    }
    Ok(map)
}
