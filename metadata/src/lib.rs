//! The KIP-405 metadata plane: remote segment metadata, its state machines and the
//! [`RemoteLogMetadataManager`] (RLMM).
//!
//! - [`RemoteLogSegmentId`], [`RemoteLogSegmentMetadata`], [`RemoteLogSegmentMetadataUpdate`],
//!   [`RemotePartitionDeleteMetadata`]: Kafka's types, with serde (the JSON rendering) and Kafka's own byte
//!   format (`RemoteLogMetadataSerde`, [`RemoteLogMetadataRecord::to_bytes`]).
//! - [`RemoteLogSegmentState`], [`RemotePartitionDeleteState`]: the state machines, Kafka's legal transitions only.
//! - [`RemoteLogMetadataManager`]: async durable writes, sync reads from an in-memory cache (see its `# Contract`).
//! - `InMemoryRemoteLogMetadataManager` (tests) and [`TopicBasedRemoteLogMetadataManager`] (the
//!   broker's: records in Kafka's own serialization in the internal topic [`REMOTE_LOG_METADATA_TOPIC_NAME`],
//!   replayed on start from a snapshot plus the tail; JSON records of earlier versions still read). Both pass
//!   `conformance::rlmm_conformance`. The in-memory manager and the conformance suite are test support behind
//!   the `testing` feature (never in the broker's binary).
//!
//! The copy path of the tiering layer, in short:
//!
//! ```
//! # use std::collections::BTreeMap;
//! # use strata_metadata::*;
//! # async fn copy(rlmm: &dyn RemoteLogMetadataManager) -> Result<()> {
//! let tp = TopicIdPartition::new(uuid::Uuid::new_v4(), TopicPartition::new("orders", 0));
//! let id = RemoteLogSegmentId::generate_new(tp.clone());
//! let epochs = BTreeMap::from([(0, 0)]); // leader epoch -> its first offset in the segment
//! let m = RemoteLogSegmentMetadata::new(id.clone(), 0, 999, 1_700_000_000_000, 1, 1_700_000_000_000, 4096, epochs)?;
//! rlmm.add_remote_log_segment_metadata(m).await?; // durable before any byte is uploaded
//! // ... upload the segment through the RemoteStorageManager ...
//! let done = RemoteLogSegmentMetadataUpdate::new(id, 1_700_000_000_100, RemoteLogSegmentState::CopySegmentFinished, 1);
//! rlmm.update_remote_log_segment_metadata(done).await?;
//! assert_eq!(rlmm.highest_offset_for_epoch(&tp, 0)?, Some(999));
//! assert!(rlmm.remote_log_segment_metadata(&tp, 0, 500)?.is_some());
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(copy(&InMemoryRemoteLogMetadataManager::new())).unwrap();
//! ```
#![warn(missing_docs)]

mod cache;
#[cfg(any(test, feature = "testing"))]
pub mod conformance;
mod error;
mod manager;
#[cfg(any(test, feature = "testing"))]
mod memory;
mod partition_delete;
mod record;
mod segment;
mod state;
mod store;
mod topic;

pub use error::{Error, Result};
pub use manager::RemoteLogMetadataManager;
#[cfg(any(test, feature = "testing"))]
pub use memory::InMemoryRemoteLogMetadataManager;
pub use partition_delete::RemotePartitionDeleteMetadata;
pub use record::kafka::{KafkaRemoteLogMetadata, RemoteLogSegmentMetadataSnapshot};
pub use record::{RemoteLogMetadataRecord, ValueFormat, RECORD_FORMAT_VERSION};
pub use segment::{
    CustomMetadata, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    CUSTOM_METADATA_MAX_BYTES,
};
pub use state::{RemoteLogSegmentState, RemotePartitionDeleteState};
pub use strata_storage::{TopicIdPartition, TopicPartition};
pub use topic::{
    metadata_partition, ReplayStats, TopicBasedRemoteLogMetadataManager,
    TopicBasedRemoteLogMetadataManagerConfig, DEFAULT_REMOTE_LOG_METADATA_SNAPSHOT_INTERVAL_MS,
    DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS, DEFAULT_REMOTE_LOG_METADATA_TOPIC_RETENTION_MS,
    NUM_PARTITIONS_KEY, REMOTE_LOG_METADATA_TOPIC_NAME, REPLICATION_FACTOR_KEY, RETENTION_MS_KEY,
    RLMM_CONFIG, RLMM_CONFIG_PREFIX, RLMM_KEYS, SNAPSHOT_FILE_NAME, SNAPSHOT_INTERVAL_MS_KEY,
};
