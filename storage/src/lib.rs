//! Kafka's local log: record batches, segments, indexes, recovery and retention (synchronous: no async runtime,
//! no object store). Kafka's names throughout: [`RecordBatch`], [`FileRecords`], [`OffsetIndex`], [`TimeIndex`],
//! [`LogSegment`], [`UnifiedLog`], [`LogManager`].
//!
//! On disk, per log dir (`log.dirs` entry): `<topic>-<partition>/` directories, `recovery-point-offset-checkpoint`,
//! `log-start-offset-checkpoint` and, after a clean shutdown, `.kafka_cleanshutdown`. Per partition:
//! `{base_offset:020}.log|.index|.timeindex`, producer snapshots `{offset:020}.snapshot`,
//! `leader-epoch-checkpoint`, `partition.metadata`. Formats are documented as byte tables on each type.
#![warn(missing_docs)]

mod checkpoint;
mod config;
mod error;
mod file_records;
mod fsio;
pub mod index;
mod log;
mod manager;
pub mod names;
mod partition;
mod producer;
pub mod record;
mod segment;

pub use checkpoint::{kafka_uuid_string, parse_kafka_uuid};
pub use config::{LogConfig, LogManagerConfig, TimestampType};
pub use error::{Error, Result};
pub use file_records::{BatchScanError, FileBatchIter, FileRecords};
pub use index::{OffsetIndex, TimeIndex};
pub use log::{FetchDataInfo, LogAppendInfo, RollListener, RolledSegment, UnifiedLog};
pub use manager::LogManager;
pub use partition::{TopicIdPartition, TopicPartition};
pub use record::{RecordBatch, RecordBatchBuilder};
pub use segment::LogSegment;
