//! [`LogSegments`]: a partition's local segments ordered by base offset (Kafka's `LogSegments`).
use std::collections::BTreeMap;

use crate::segment::LogSegment;

/// The local segments of one partition, by base offset. The last one is the active segment.
#[derive(Debug, Default)]
pub(crate) struct LogSegments {
    segments: BTreeMap<i64, LogSegment>,
}

impl LogSegments {
    pub(crate) fn new() -> Self {
        Self::default()
    }
    pub(crate) fn len(&self) -> usize {
        self.segments.len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
    /// Adds (or replaces) the segment with its base offset.
    pub(crate) fn add(&mut self, segment: LogSegment) {
        self.segments.insert(segment.base_offset(), segment);
    }
    pub(crate) fn remove(&mut self, base_offset: i64) -> Option<LogSegment> {
        self.segments.remove(&base_offset)
    }
    pub(crate) fn get(&self, base_offset: i64) -> Option<&LogSegment> {
        self.segments.get(&base_offset)
    }
    pub(crate) fn contains(&self, base_offset: i64) -> bool {
        self.segments.contains_key(&base_offset)
    }
    /// The active (last) segment, if any.
    pub(crate) fn last_segment(&self) -> Option<&LogSegment> {
        self.segments.values().next_back()
    }
    pub(crate) fn last_segment_mut(&mut self) -> Option<&mut LogSegment> {
        self.segments.values_mut().next_back()
    }
    /// The base offset of the first segment.
    pub(crate) fn first_base_offset(&self) -> Option<i64> {
        self.segments.keys().next().copied()
    }
    /// Base offsets in order.
    pub(crate) fn base_offsets(&self) -> Vec<i64> {
        self.segments.keys().copied().collect()
    }
    /// The segment that may contain `offset`: the one with the greatest base offset <= `offset`
    /// (Kafka's `floorSegment`).
    pub(crate) fn floor_segment(&self, offset: i64) -> Option<&LogSegment> {
        self.segments.range(..=offset).next_back().map(|(_, s)| s)
    }
    /// Segments from the one holding `offset` (or the first, if `offset` is below it) onwards.
    pub(crate) fn starting_at(&self, offset: i64) -> impl Iterator<Item = &LogSegment> {
        let start = self
            .floor_segment(offset)
            .map_or(i64::MIN, LogSegment::base_offset);
        self.segments.range(start..).map(|(_, s)| s)
    }
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &LogSegment> + ExactSizeIterator {
        self.segments.values()
    }
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut LogSegment> {
        self.segments.values_mut()
    }
    /// Bytes of all segments.
    pub(crate) fn size_in_bytes(&self) -> u64 {
        self.segments.values().map(LogSegment::size_in_bytes).sum()
    }
}
