//! The KIP-405 metadata plane: remote segment metadata, its state machines and the
//! [`RemoteLogMetadataManager`] (RLMM).
//!
//! - [`RemoteLogSegmentId`], [`RemoteLogSegmentMetadata`], [`RemoteLogSegmentMetadataUpdate`],
//!   [`RemotePartitionDeleteMetadata`]: Kafka's types, with serde.
//! - [`RemoteLogSegmentState`], [`RemotePartitionDeleteState`]: the state machines, Kafka's legal transitions only.
//! - [`RemoteLogMetadataManager`]: async durable writes, sync reads from an in-memory cache (see its `# Contract`).
#![warn(missing_docs)]

mod cache;
pub mod conformance;
mod error;
mod manager;
mod memory;
mod partition_delete;
mod record;
mod segment;
mod state;
mod store;

pub use error::{Error, Result};
pub use manager::RemoteLogMetadataManager;
pub use memory::InMemoryRemoteLogMetadataManager;
pub use partition_delete::RemotePartitionDeleteMetadata;
pub use record::{RemoteLogMetadataRecord, RECORD_FORMAT_VERSION};
pub use segment::{
    CustomMetadata, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    CUSTOM_METADATA_MAX_BYTES,
};
pub use state::{RemoteLogSegmentState, RemotePartitionDeleteState};
pub use strata_storage::{TopicIdPartition, TopicPartition};
