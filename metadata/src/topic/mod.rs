//! The topic-based RLMM: metadata records in the internal topic `__remote_log_metadata`, replayed on start
//! from a snapshot plus the tail.
mod config;
mod manager;
mod partitioner;
mod snapshot;

pub use config::{
    TopicBasedRemoteLogMetadataManagerConfig, DEFAULT_REMOTE_LOG_METADATA_SNAPSHOT_INTERVAL_MS,
    DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS, DEFAULT_REMOTE_LOG_METADATA_TOPIC_RETENTION_MS,
    NUM_PARTITIONS_KEY, REMOTE_LOG_METADATA_TOPIC_NAME, REPLICATION_FACTOR_KEY, RETENTION_MS_KEY,
    RLMM_CONFIG, RLMM_CONFIG_PREFIX, RLMM_KEYS, SNAPSHOT_INTERVAL_MS_KEY,
};
pub use manager::{ReplayStats, TopicBasedRemoteLogMetadataManager};
pub use partitioner::metadata_partition;
pub use snapshot::SNAPSHOT_FILE_NAME;

#[cfg(test)]
mod tests;
