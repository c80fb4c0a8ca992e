//! Partition names shared by every crate: `TopicPartition` (name + index) and `TopicIdPartition` (adds the
//! topic's UUID, which KIP-405 keys remote segments by).
use std::fmt;

/// A topic name and partition index, Kafka's `TopicPartition`. Displays as `topic-partition`, the name of the
/// partition's directory under a log dir.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// The topic's name.
    pub topic: String,
    /// The partition index.
    pub partition: i32,
}

impl TopicPartition {
    /// A partition of `topic`.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
    /// The topic name (same as the `topic` field).
    pub fn topic(&self) -> &str {
        &self.topic
    }
    /// The partition index (same as the `partition` field).
    pub fn partition(&self) -> i32 {
        self.partition
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// A partition together with its topic's id, Kafka's `TopicIdPartition`. Displays as
/// `topicId:topic-partition`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicIdPartition {
    /// The topic's UUID (Kafka's topic id).
    pub topic_id: uuid::Uuid,
    /// The topic name and partition index.
    pub topic_partition: TopicPartition,
}

impl TopicIdPartition {
    /// Joins a topic id with a partition.
    pub fn new(topic_id: uuid::Uuid, topic_partition: TopicPartition) -> Self {
        Self {
            topic_id,
            topic_partition,
        }
    }
    /// The topic name.
    pub fn topic(&self) -> &str {
        &self.topic_partition.topic
    }
    /// The partition index.
    pub fn partition(&self) -> i32 {
        self.topic_partition.partition
    }
}

impl fmt::Display for TopicIdPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.topic_id, self.topic_partition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_kafka_directory_and_id_forms() {
        let tp = TopicPartition::new("orders", 3);
        assert_eq!(tp.to_string(), "orders-3");
        let id = uuid::Uuid::nil();
        let tip = TopicIdPartition::new(id, tp);
        assert_eq!(
            tip.to_string(),
            "00000000-0000-0000-0000-000000000000:orders-3"
        );
        assert_eq!(tip.topic(), "orders");
        assert_eq!(tip.partition(), 3);
    }
}
