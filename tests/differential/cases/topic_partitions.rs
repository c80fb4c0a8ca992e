//! DescribeTopicPartitions (KIP-966): named topics, every topic, unknown and invalid names, the cursor and the
//! partition limit that pages the answer with `next_cursor`.

use kafka_protocol::messages::describe_topic_partitions_request::{Cursor, TopicRequest};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::differential::case::{step, Case, Ctx};

/// A topic name the case's topics do not start with: its own suffix, or a literal name (starting with `=`).
fn name(c: &Ctx, t: &str) -> TopicName {
    match t.strip_prefix('=') {
        Some(literal) => TopicName(StrBytes::from_string(literal.to_string())),
        None => c.name(t),
    }
}

/// A request naming `topics` (every topic when empty), with `limit` and a cursor (topic, partition).
fn request(
    c: &Ctx,
    topics: &[&str],
    limit: i32,
    cursor: Option<(&str, i32)>,
) -> DescribeTopicPartitionsRequest {
    DescribeTopicPartitionsRequest::default()
        .with_topics(
            topics
                .iter()
                .map(|t| TopicRequest::default().with_name(name(c, t)))
                .collect(),
        )
        .with_response_partition_limit(limit)
        .with_cursor(cursor.map(|(t, p)| {
            Cursor::default()
                .with_topic_name(name(c, t))
                .with_partition_index(p)
        }))
}

/// A case on topics `a` (3 partitions) and `b` (2): one request.
fn case(
    label: &str,
    topics: &'static [&'static str],
    limit: i32,
    cursor: Option<(&'static str, i32)>,
) -> Case {
    Case::new(format!("describe-topic-partitions/{label}"))
        .topic("a", 3, &[])
        .topic("b", 2, &[])
        .then(step(ApiKey::DescribeTopicPartitions, 0, move |c| {
            request(c, topics, limit, cursor)
        }))
}

pub fn cases() -> Vec<Case> {
    vec![
        case("named", &["b", "a"], 2000, None),
        case("named-twice", &["a", "b", "a"], 2000, None),
        case("unknown", &["a", "nope", "=bad/name"], 2000, None),
        // An empty name without a cursor: Kafka 4.4 fails the request (allow.txt).
        case("empty-name", &["a", "="], 2000, None),
        case(
            "internal",
            &["=__consumer_offsets", "=__transaction_state"],
            2000,
            None,
        ),
        case("cursor", &["a", "b"], 2000, Some(("a", 1))),
        case("cursor-second-topic", &["a", "b"], 2000, Some(("b", 1))),
        case(
            "cursor-past-last-partition",
            &["a", "b"],
            2000,
            Some(("a", 7)),
        ),
        case(
            "cursor-negative-partition",
            &["a", "b"],
            2000,
            Some(("a", -2)),
        ),
        case(
            "cursor-near-int-max",
            &["a", "b"],
            2000,
            Some(("a", i32::MAX - 1)),
        ),
        case(
            "cursor-unknown-topic",
            &["a", "nope"],
            2000,
            Some(("nope", 0)),
        ),
        case("limit-inside-topic", &["a", "b"], 2, None),
        case("limit-at-topic-end", &["a", "b"], 3, None),
        case("limit-into-next-topic", &["a", "b"], 4, None),
        case("limit-with-cursor", &["a", "b"], 2, Some(("a", 2))),
        case("limit-zero", &["a", "b"], 0, None),
        case("limit-negative", &["a", "b"], -1, None),
        case("limit-over-kafkas-cap", &["a", "b"], 1_000_000, None),
        case("invalid-cursor-not-named", &["b"], 2000, Some(("a", 0))),
        case(
            "invalid-cursor-unknown",
            &["a", "b"],
            2000,
            Some(("nope", 0)),
        ),
        // Every topic, from this case's first one (earlier cases' topics sort before or after it: the limit keeps
        // the answer to this case's own topics).
        case("all-from-cursor", &[], 4, Some(("a", 0))),
        case("all-from-cursor-partition", &[], 3, Some(("a", 2))),
        case(
            "all-cursor-before-topic",
            &[],
            2,
            Some(("=describe-topic-partitions-all-cursor-before-topic-", 0)),
        ),
        case("all-limit-zero", &[], 0, Some(("a", 0))),
        case("all-cursor-negative-partition", &[], 2000, Some(("a", -1))),
    ]
}
