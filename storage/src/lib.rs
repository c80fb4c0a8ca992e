//! Kafka's local log: record batches, segments, indexes, recovery and retention (synchronous: no async runtime,
//! no object store). Kafka's names throughout: [`RecordBatch`], [`FileRecords`], [`OffsetIndex`], [`TimeIndex`],
//! [`LogSegment`], [`UnifiedLog`], [`LogManager`], and Kafka's log compaction: [`LogCleaner`].
//!
//! On disk, per log dir (`log.dirs` entry): `<topic>-<partition>/` directories, `recovery-point-offset-checkpoint`,
//! `log-start-offset-checkpoint`, `cleaner-offset-checkpoint` (the log cleaner's first dirty offsets, see [`cleaner`]),
//! `meta.properties` (cluster id, node id, directory id), `.lock` (locked while a
//! `LogManager` owns the dir) and, after a clean shutdown, `.kafka_cleanshutdown`. Per partition:
//! `{base_offset:020}.log|.index|.timeindex`, producer snapshots `{offset:020}.snapshot`,
//! `leader-epoch-checkpoint`, `partition.metadata`. Formats are documented as byte tables on each type.
//!
//! ```
//! use std::sync::Arc;
//! use strata_storage::{LogConfig, LogManager, LogManagerConfig, RecordBatch, RecordBatchBuilder, TopicPartition};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let manager = LogManager::open(LogManagerConfig::new(vec![dir.path().to_path_buf()]))?;
//! manager.add_roll_listener(Arc::new(|tp, segment| println!("{tp} rolled at {}", segment.next_offset)));
//! let tp = TopicPartition::new("orders", 0);
//! let log = manager.get_or_create_log(&tp, uuid::Uuid::new_v4(), LogConfig::default())?;
//!
//! let mut batch = RecordBatchBuilder::new();
//! batch.append(1_700_000_000_000, Some(b"key"), Some(b"value"), &[]);
//! let info = log.append_as_leader(batch.build(), 0)?; // leader epoch 0
//! assert_eq!((info.first_offset, info.last_offset), (0, 0));
//!
//! let fetched = log.read(0, 1 << 20, true, Some(log.high_watermark()))?;
//! for batch in RecordBatch::iter(&fetched.records) {
//!     let batch = batch?;
//!     for record in batch.records()? {
//!         assert_eq!(record?.value.as_deref(), Some(&b"value"[..]));
//!     }
//! }
//! manager.shutdown()?; // flush, checkpoints, clean-shutdown marker
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod buffers;
mod checkpoint;
pub mod cleaner;
mod config;
pub mod config_def;
mod error;
pub mod failpoint;
mod file_records;
mod fsio;
mod handles;
pub mod index;
mod log;
mod manager;
mod meta_properties;
pub mod names;
mod partition;
mod producer;
pub mod progress;
pub mod record;
mod segment;
pub mod time;

pub use checkpoint::{kafka_uuid_string, parse_kafka_uuid};
pub use cleaner::{CleanStats, CleanerConfig, CleanerMetrics, LogCleaner};
pub use config::topic_keys;
pub use config::{
    compression_from_name, compression_name, config_error, default_max_open_files,
    server_default_log_config, topic_log_config, topic_value, topic_values, CleanupPolicy,
    LogConfig, LogManagerConfig, TimestampType, TopicConfigProvider, TOPIC_CONFIG, TOPIC_KEYS,
};
pub use error::{Error, RecordError, Result};
pub use failpoint::crash_point;
pub use file_records::{BatchScanError, FileBatchIter, FileRecords, FileRegion};
pub use fsio::atomic_write;
pub use index::{OffsetIndex, TimeIndex};
pub use log::{FetchDataInfo, LogAppendInfo, LogSlice, RollListener, RolledSegment, UnifiedLog};
pub use manager::{LogManager, NewLogs};
pub use partition::{TopicIdPartition, TopicPartition};
pub use producer::ActiveProducer;
pub use record::{RecordBatch, RecordBatchBuilder, MAX_DECOMPRESSED_RECORDS_BYTES};
pub use segment::LogSegment;
