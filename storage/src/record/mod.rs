//! Record batches: the validated [`RecordBatch`] view, a decoder for uncompressed records ([`Record`]), and
//! [`RecordBatchBuilder`] for writers that build their own uncompressed batches (internal topics, tests, benches).
//!
//! Every batch is opened on append and its records walked (`walker.rs`, decompressing through `compression.rs`),
//! bounded in memory by the batch's real size, never by what it declares.
mod batch;
mod builder;
mod compression;
mod control;
pub mod legacy;
mod recompress;
pub(crate) mod varint;
mod walker;

pub(crate) use batch::{batch_size_from_header, edit};
pub use batch::{
    BatchHeader, RecordBatch, RecordBatchIter, DELETE_HORIZON_FLAG, LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
};
pub use builder::{Header, Record, RecordBatchBuilder, RecordIter};
pub(crate) use compression::compress;
pub use compression::{Compression, SNAPPY_MAX_EXPANSION, ZSTD_WINDOW_LOG_MAX};
pub use control::{ControlRecordKey, ControlRecordType};
pub use recompress::{recompress_batch, recompress_records, TargetCodec};
pub(crate) use walker::{walk_records, RecordsMaxTimestamp};

/// The most decompressed record bytes one append (one partition's records in a produce request) may carry: 100 MiB,
/// Kafka's default `socket.request.max.bytes`, i.e. the most record data a client could have sent in one request
/// had it not compressed it. Compressed batches that inflate beyond it are refused with MESSAGE_TOO_LARGE (a Java
/// producer then splits the batch). Timestamp lookups read at most this much of one batch. The bound keeps the CPU
/// a request can cost proportional to what a request could carry; memory is bounded separately by the streaming
/// decoders (see `compression.rs`).
pub const MAX_DECOMPRESSED_RECORDS_BYTES: usize = 100 << 20;
