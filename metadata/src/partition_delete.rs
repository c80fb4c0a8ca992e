//! `RemotePartitionDeleteMetadata`: the remote side of deleting a partition (topic deletion).
use serde::{Deserialize, Serialize};
use strata_storage::TopicIdPartition;

use crate::RemotePartitionDeleteState;

/// One step of a partition's remote deletion, Kafka's `RemotePartitionDeleteMetadata`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemotePartitionDeleteMetadata {
    /// The user partition being deleted.
    #[serde(with = "crate::segment::topic_id_partition_serde")]
    pub topic_id_partition: TopicIdPartition,
    /// The step reached.
    pub state: RemotePartitionDeleteState,
    /// When the step was recorded (epoch millis).
    pub event_timestamp_ms: i64,
    /// The broker recording it.
    pub broker_id: i32,
}

impl RemotePartitionDeleteMetadata {
    /// Joins the fields.
    pub fn new(
        topic_id_partition: TopicIdPartition,
        state: RemotePartitionDeleteState,
        event_timestamp_ms: i64,
        broker_id: i32,
    ) -> Self {
        Self {
            topic_id_partition,
            state,
            event_timestamp_ms,
            broker_id,
        }
    }
}
