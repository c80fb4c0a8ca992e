//! Kafka's local log: record batches, segments, indexes, recovery and retention (synchronous).
#![warn(missing_docs)]

mod partition;
pub use partition::{TopicIdPartition, TopicPartition};
