//! One cleaning of one log (Kafka's `Cleaner.doClean`): map the dirty range, then rewrite the segments up to
//! the end of the mapped range, group by group, each swapped in as it is done.
use std::ops::ControlFlow;

use super::manager::{segments_between, LogToClean};
use super::offset_map::OffsetMap;
use super::retain::{BatchFilter, FilterTally, Scratch};
use super::throttler::Throttler;
use super::transactions::{AbortedTransactions, TxnTracker};
use super::{CleanerConfig, CrashPoint};
use crate::log::{discard_cleaned, SegmentInfo};
use crate::record::{batch_size_from_header, walk_records, RECORD_BATCH_OVERHEAD};
use crate::{RecordBatch, Result, UnifiedLog, MAX_DECOMPRESSED_RECORDS_BYTES};

/// What one cleaning did.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outcome {
    /// The new first dirty offset (the end of the mapped range).
    pub(crate) end_offset: i64,
    /// Bytes of the dirty range mapped.
    pub(crate) map_bytes_read: u64,
    /// Bytes of segments read while rewriting them.
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
    pub(crate) tally: FilterTally,
    pub(crate) buffer_utilization: f64,
    pub(crate) groups: usize,
}

/// A cleaner: its offset map and what it shares with the other threads.
pub(crate) struct Cleaner<'a> {
    pub(crate) config: &'a CleanerConfig,
    pub(crate) throttler: &'a Throttler,
    pub(crate) map: OffsetMap,
    pub(crate) is_cancelled: &'a dyn Fn() -> bool,
    pub(crate) crash: Option<CrashPoint>,
    /// The time of this cleaning: delete horizons are stamped from it and compared with it.
    pub(crate) now_ms: i64,
}

/// Calls `f` on each batch of `seg` from its start, reading `io_buffer_size` bytes at a time (a larger batch is
/// read whole). Returns the bytes read, or None if the segment is gone from the log.
fn for_each_batch(
    log: &UnifiedLog,
    seg: &SegmentInfo,
    io_buffer: usize,
    validate_crc: bool,
    throttler: &Throttler,
    mut f: impl FnMut(RecordBatch) -> Result<ControlFlow<()>>,
) -> Result<Option<u64>> {
    let mut pos = 0u64;
    let mut want = io_buffer;
    while pos < seg.size {
        let len = want.min((seg.size - pos) as usize);
        let Some(chunk) = log.read_segment_bytes(seg.base_offset, pos, len)? else {
            return Ok(None);
        };
        if chunk.len() < len {
            return Ok(None);
        }
        throttler.maybe_throttle(chunk.len() as u64);
        let mut at = 0usize;
        want = io_buffer;
        while chunk.len() - at >= RECORD_BATCH_OVERHEAD {
            let size = batch_size_from_header(&chunk[at..])?;
            if size > chunk.len() - at {
                if at == 0 {
                    want = size;
                }
                break;
            }
            let bytes = chunk.slice(at..at + size);
            let batch = if validate_crc {
                RecordBatch::new(bytes)?
            } else {
                RecordBatch::new_unchecked_crc(bytes)?
            };
            at += size;
            if f(batch)?.is_break() {
                return Ok(Some(pos + at as u64));
            }
        }
        if at == 0 && want == io_buffer {
            // Fewer bytes than a batch header left: the segment ends here.
            break;
        }
        pos += at as u64;
    }
    Ok(Some(pos))
}

/// Kafka's `groupSegmentsBySize`: consecutive segments whose logs fit `max_size` together, whose indexes fit
/// `max_index_size`, and whose offsets stay within `i32::MAX` of the group's base offset.
pub(crate) fn group_segments_by_size<'a>(
    segs: &[&'a SegmentInfo],
    max_size: u64,
    max_index_size: u64,
    first_uncleanable_offset: i64,
) -> Vec<Vec<&'a SegmentInfo>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let mut group = vec![segs[i]];
        let (mut log, mut index, mut time) = (
            segs[i].size,
            segs[i].offset_index_bytes,
            segs[i].time_index_bytes,
        );
        i += 1;
        while i < segs.len() {
            let s = segs[i];
            let last_offset = segs
                .get(i + 1)
                .map_or(first_uncleanable_offset, |n| n.base_offset)
                - 1;
            let fits = log + s.size <= max_size
                && index + s.offset_index_bytes <= max_index_size
                && time + s.time_index_bytes <= max_index_size
                && (s.size == 0 || last_offset - group[0].base_offset <= i32::MAX as i64);
            if !fits {
                break;
            }
            log += s.size;
            index += s.offset_index_bytes;
            time += s.time_index_bytes;
            group.push(s);
            i += 1;
        }
        groups.push(group);
    }
    groups
}

impl Cleaner<'_> {
    /// Cleans `ltc`; None if it was cancelled or the log changed under it (nothing to checkpoint).
    pub(crate) fn clean(&mut self, ltc: &LogToClean) -> Result<Option<Outcome>> {
        let (log, view) = (&*ltc.log, &ltc.view);
        let (start, upper) = (ltc.first_dirty_offset, ltc.first_uncleanable_offset);
        let aborted = AbortedTransactions::collect(view, upper);
        let mut outcome = Outcome::default();
        // 1. The offset map over the dirty range, up to where it fills.
        self.map.clear();
        let mut scratch = Vec::new();
        let mut txns = aborted.tracker();
        for seg in segments_between(view, start, upper) {
            if (self.is_cancelled)() {
                return Ok(None);
            }
            let map = &mut self.map;
            let mut full = false;
            let read = for_each_batch(
                log,
                seg,
                self.config.io_buffer_size,
                false,
                self.throttler,
                |batch| {
                    let discard = if batch.is_control() {
                        txns.on_control_batch_read(&batch);
                        true
                    } else {
                        txns.on_batch_read(&batch)
                    };
                    if batch.last_offset() < start {
                        return Ok(ControlFlow::Continue(()));
                    }
                    if !discard {
                        let base = batch.base_offset();
                        walk_records(&batch, MAX_DECOMPRESSED_RECORDS_BYTES, &mut scratch, |r| {
                            let offset = base + r.meta.offset_delta as i64;
                            if let (Some(key), true) = (r.key, offset >= start) {
                                if map.is_full() {
                                    full = true;
                                    return ControlFlow::Break(());
                                }
                                map.put(key, offset);
                            }
                            ControlFlow::Continue(())
                        })?;
                        if full {
                            return Ok(ControlFlow::Break(()));
                        }
                    }
                    map.update_latest_offset(batch.last_offset());
                    Ok(ControlFlow::Continue(()))
                },
            )?;
            let Some(read) = read else { return Ok(None) };
            outcome.map_bytes_read += read;
            if full {
                tracing::debug!(tp = %view.tp, base_offset = seg.base_offset, keys = self.map.size(),
                    "offset map full; cleaning up to the last mapped offset");
                break;
            }
        }
        outcome.buffer_utilization = self.map.utilization();
        let end_offset = self.map.latest_offset() + 1;
        outcome.end_offset = end_offset.max(start);
        if end_offset <= start {
            return Ok(Some(outcome));
        }
        // 2. Rewrite from the log start to the end of the map's range, group by group.
        let to_clean = segments_between(view, i64::MIN, end_offset);
        let groups = group_segments_by_size(
            &to_clean,
            view.config.segment_bytes,
            view.config.segment_index_bytes as u64,
            upper,
        );
        let mut scratch = Scratch::default();
        // One walk in offset order over every group, as Kafka shares its `CleanedTransactionMetadata`.
        let mut txns = aborted.tracker();
        for group in groups {
            if (self.is_cancelled)() {
                return Ok(None);
            }
            if !self.clean_group(ltc, &group, &mut txns, &mut scratch, &mut outcome)? {
                return Ok(None);
            }
            outcome.groups += 1;
        }
        Ok(Some(outcome))
    }

    /// Kafka's `cleanSegments`: rewrites `group` into one `.cleaned` segment and swaps it in. False if the log
    /// changed (the output is discarded).
    fn clean_group(
        &self,
        ltc: &LogToClean,
        group: &[&SegmentInfo],
        txns: &mut TxnTracker<'_>,
        scratch: &mut Scratch,
        outcome: &mut Outcome,
    ) -> Result<bool> {
        let log = &*ltc.log;
        let mut cleaned = log.new_cleaned_segment(group[0].base_offset)?;
        let io_buffer = self.config.io_buffer_size;
        let written = (|| -> Result<bool> {
            let mut out = Vec::with_capacity(io_buffer + (io_buffer >> 2));
            let mut metas = Vec::new();
            let filter = BatchFilter {
                map: &self.map,
                now_ms: self.now_ms,
                delete_retention_ms: ltc.view.config.delete_retention_ms,
                last_records: &ltc.view.last_records,
                budget: MAX_DECOMPRESSED_RECORDS_BYTES,
            };
            for seg in group {
                let read = for_each_batch(log, seg, io_buffer, true, self.throttler, |batch| {
                    filter.filter(
                        &batch,
                        txns,
                        &mut out,
                        &mut metas,
                        scratch,
                        &mut outcome.tally,
                    )?;
                    if out.len() >= io_buffer {
                        cleaned.append(&out, &metas)?;
                        self.throttler.maybe_throttle(out.len() as u64);
                        outcome.bytes_written += out.len() as u64;
                        out.clear();
                        metas.clear();
                    }
                    Ok(ControlFlow::Continue(()))
                })?;
                let Some(read) = read else { return Ok(false) };
                outcome.bytes_read += read;
                if (self.is_cancelled)() {
                    return Ok(false);
                }
            }
            if !out.is_empty() {
                cleaned.append(&out, &metas)?;
                self.throttler.maybe_throttle(out.len() as u64);
                outcome.bytes_written += out.len() as u64;
            }
            cleaned.on_become_inactive()?;
            cleaned.flush()?;
            let last = group.last().expect("a group is never empty");
            cleaned.set_last_modified_ms(last.last_modified_ms)?;
            Ok(true)
        })();
        match written {
            Ok(true) => {}
            Ok(false) => {
                discard_cleaned(cleaned);
                return Ok(false);
            }
            Err(e) => {
                discard_cleaned(cleaned);
                return Err(e);
            }
        }
        let old: Vec<SegmentInfo> = group.iter().map(|s| (*s).clone()).collect();
        match log.replace_segments(cleaned, &old, self.crash)? {
            Ok(()) => Ok(true),
            Err(cleaned) => {
                tracing::info!(tp = %ltc.view.tp, base_offset = group[0].base_offset,
                    "log changed while cleaning; discarding the cleaned segment");
                discard_cleaned(cleaned);
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(base: i64, size: u64) -> SegmentInfo {
        SegmentInfo {
            base_offset: base,
            next_offset: base + 10,
            size,
            largest_timestamp: 0,
            first_batch_timestamp: None,
            last_modified_ms: 0,
            offset_index_bytes: 8,
            time_index_bytes: 12,
        }
    }

    #[test]
    fn segments_are_grouped_up_to_segment_bytes_and_the_index_size() {
        let segs = [
            seg(0, 400),
            seg(10, 400),
            seg(20, 400),
            seg(30, 100),
            seg(40, 900),
        ];
        let refs: Vec<&SegmentInfo> = segs.iter().collect();
        let bases = |g: Vec<Vec<&SegmentInfo>>| -> Vec<Vec<i64>> {
            g.iter()
                .map(|g| g.iter().map(|s| s.base_offset).collect())
                .collect()
        };
        assert_eq!(
            bases(group_segments_by_size(&refs, 1000, 1 << 20, 50)),
            vec![vec![0, 10], vec![20, 30], vec![40]]
        );
        // Offset index entries of 8 bytes: at most two segments per 16-byte index.
        assert_eq!(
            bases(group_segments_by_size(&refs, 10_000, 24, 50)),
            vec![vec![0, 10], vec![20, 30], vec![40]]
        );
        // Offsets more than i32::MAX above the group's base start a new group (Kafka's relative offsets).
        let far = [seg(0, 10), seg(i32::MAX as i64 + 5, 10)];
        let refs: Vec<&SegmentInfo> = far.iter().collect();
        assert_eq!(
            bases(group_segments_by_size(
                &refs,
                1000,
                1 << 20,
                i32::MAX as i64 + 100
            ))
            .len(),
            2
        );
    }
}
