//! The crate's one public error type. The broker maps each variant to a Kafka error code in one place.
use std::io;
use std::path::PathBuf;

use crate::TopicPartition;

/// Everything that can go wrong in the local log.
///
/// Not `#[non_exhaustive]` (an exception to the house rule for library errors): the crate is internal to the
/// workspace (`publish = false`), and the broker maps every variant to a Kafka code in one exhaustive `match`
/// (`broker/src/error_code.rs`), so a new variant does not compile until it is given its code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A read or offset lookup outside `[log_start, log_end]`. Kafka: OFFSET_OUT_OF_RANGE.
    #[error("offset {offset} is out of range for {tp}: log start offset {log_start}, log end offset {log_end}")]
    OffsetOutOfRange {
        /// The partition.
        tp: TopicPartition,
        /// The requested offset.
        offset: i64,
        /// The log start offset (the local log start offset for local reads).
        log_start: i64,
        /// The log end offset.
        log_end: i64,
    },
    /// A batch whose CRC does not match or that is cut short. Kafka: CORRUPT_MESSAGE.
    #[error("corrupt record batch: {reason}")]
    CorruptRecord {
        /// What was wrong, with the values involved.
        reason: String,
    },
    /// A batch that is well formed on the wire but not acceptable (magic 0/1, bad counts). Kafka: INVALID_RECORD.
    #[error("invalid record batch: {reason}")]
    InvalidRecord {
        /// What was wrong, with the values involved.
        reason: String,
    },
    /// Records of a batch refused one by one (KIP-467; Kafka's `RecordValidationException`): keyless records on a
    /// compacted topic, CreateTime timestamps out of range, LogAppendTime set by the producer. Nothing of the
    /// request is appended. Kafka: INVALID_TIMESTAMP when any record's timestamp is refused, else INVALID_RECORD;
    /// the Produce response names each record (`record_errors`) and carries `message` as its `error_message`.
    #[error("{message}")]
    RecordValidation {
        /// Whether a timestamp was refused (INVALID_TIMESTAMP) rather than only keys (INVALID_RECORD).
        timestamp: bool,
        /// Kafka's partition-level message.
        message: String,
        /// Each refused record, in batch order.
        record_errors: Vec<RecordError>,
    },
    /// A batch larger than `max.message.bytes`. Kafka: MESSAGE_TOO_LARGE.
    #[error("record batch of {size} bytes exceeds max.message.bytes {max}")]
    RecordTooLarge {
        /// The batch size in bytes.
        size: usize,
        /// The configured limit.
        max: u32,
    },
    /// A compressed batch whose records decompress to more than the decompression bound
    /// ([`crate::MAX_DECOMPRESSED_RECORDS_BYTES`] per append). Kafka: MESSAGE_TOO_LARGE.
    #[error("the records of the compressed batch at offset {base_offset} decompress to more than the {limit} bytes allowed")]
    DecompressedTooLarge {
        /// The batch's base offset (as sent by the client on append).
        base_offset: i64,
        /// The bound in bytes that was left for this batch.
        limit: usize,
    },
    /// A sequence gap for an idempotent producer. Kafka: OUT_OF_ORDER_SEQUENCE_NUMBER.
    #[error("out of order sequence number for producer {producer_id} at epoch {epoch}: expected {expected}, received {received}")]
    OutOfOrderSequence {
        /// The producer id.
        producer_id: i64,
        /// The producer epoch of the batch.
        epoch: i16,
        /// The sequence the log expected next.
        expected: i32,
        /// The batch's base sequence.
        received: i32,
    },
    /// A batch from a fenced (older) producer epoch. Kafka: INVALID_PRODUCER_EPOCH.
    #[error(
        "producer {producer_id} epoch {epoch} is older than the current epoch {current_epoch}"
    )]
    InvalidProducerEpoch {
        /// The producer id.
        producer_id: i64,
        /// The batch's epoch.
        epoch: i16,
        /// The latest epoch the log has seen for this producer.
        current_epoch: i16,
    },
    /// A bad configuration value. Kafka: INVALID_CONFIG.
    #[error("invalid value {value} for config {key}: {reason}")]
    InvalidConfig {
        /// The Kafka property name.
        key: String,
        /// The rejected value.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The log dir failed (a failed fsync poisons it) or the log is closed. Kafka: KAFKA_STORAGE_ERROR.
    #[error("storage error in {dir}: {reason}")]
    Storage {
        /// The log dir or partition dir.
        dir: PathBuf,
        /// What failed.
        reason: String,
    },
    /// A file-system call failed.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A checkpoint, metadata or index file that cannot be parsed.
    #[error("corrupt file {path}: {reason}")]
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The partition already exists with another topic id. Kafka: INCONSISTENT_TOPIC_ID.
    #[error("{tp} exists with topic id {existing}, not {requested}")]
    InconsistentTopicId {
        /// The partition.
        tp: TopicPartition,
        /// The topic id on disk.
        existing: uuid::Uuid,
        /// The topic id asked for.
        requested: uuid::Uuid,
    },
    /// No log for the partition. Kafka: UNKNOWN_TOPIC_OR_PARTITION.
    #[error("no log for {tp}")]
    UnknownTopicOrPartition {
        /// The partition.
        tp: TopicPartition,
    },
}

/// One record of a batch refused by validation (Kafka's `ProduceResponse.RecordError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    /// The record's index in its batch.
    pub batch_index: i32,
    /// Why, in Kafka's words.
    pub message: String,
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an [`Error::Io`] for `path`.
pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
