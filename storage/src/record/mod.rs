//! Record batches: the validated [`RecordBatch`] view, a decoder for uncompressed records ([`Record`]), and
//! [`RecordBatchBuilder`] for writers that build their own uncompressed batches (internal topics, tests, benches).
mod batch;
mod builder;
mod varint;

pub(crate) use batch::{batch_size_from_header, edit, offset_delta_of_max_timestamp};
pub use batch::{Compression, RecordBatch, RecordBatchIter, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
pub use builder::{Header, Record, RecordBatchBuilder, RecordIter};
