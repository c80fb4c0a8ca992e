//! Topic administration: CreateTopics, DeleteTopics, CreatePartitions, Metadata, DescribeConfigs with good and bad
//! input.

use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::differential::case::{step, Case, Ctx};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn create(name: String, partitions: i32, rf: i16, configs: &[(&str, &str)]) -> CreatableTopic {
    CreatableTopic::default()
        .with_name(TopicName(s(&name)))
        .with_num_partitions(partitions)
        .with_replication_factor(rf)
        .with_configs(
            configs
                .iter()
                .map(|(k, v)| {
                    CreatableTopicConfig::default()
                        .with_name(s(k))
                        .with_value(Some(s(v)))
                })
                .collect(),
        )
}

/// A CreateTopics case: one topic named `suffix` (or a literal name when `literal`), at v7 and v`version`.
fn create_case(
    name: &str,
    version: i16,
    topic: impl Fn(&Ctx) -> CreatableTopic + 'static,
    validate_only: bool,
) -> Case {
    Case::new(format!("create/{name}@v{version}")).then(step(
        ApiKey::CreateTopics,
        version,
        move |c| {
            CreateTopicsRequest::default()
                .with_topics(vec![topic(c)])
                .with_timeout_ms(10_000)
                .with_validate_only(validate_only)
        },
    ))
}

fn metadata(topics: Vec<TopicName>) -> MetadataRequest {
    MetadataRequest::default().with_topics(Some(
        topics
            .into_iter()
            .map(|t| MetadataRequestTopic::default().with_name(Some(t)))
            .collect(),
    ))
}

pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for v in [2i16, 5, 7] {
        out.push(create_case(
            "ok",
            v,
            |c| create(c.topic("t"), 3, 1, &[]),
            false,
        ));
        out.push(create_case(
            "validate-only",
            v,
            |c| create(c.topic("t"), 3, 1, &[]),
            true,
        ));
        out.push(create_case(
            "rf-too-big",
            v,
            |c| create(c.topic("t"), 1, 3, &[]),
            false,
        ));
        out.push(create_case(
            "zero-partitions",
            v,
            |c| create(c.topic("t"), 0, 1, &[]),
            false,
        ));
        out.push(create_case(
            "bad-config-key",
            v,
            |c| create(c.topic("t"), 1, 1, &[("no.such.config", "1")]),
            false,
        ));
        out.push(create_case(
            "bad-config-value",
            v,
            |c| create(c.topic("t"), 1, 1, &[("retention.ms", "abc")]),
            false,
        ));
        out.push(create_case(
            "bad-cleanup-policy",
            v,
            |c| create(c.topic("t"), 1, 1, &[("cleanup.policy", "sometimes")]),
            false,
        ));
        out.push(create_case(
            "invalid-name-char",
            v,
            |_| create("bad/name".into(), 1, 1, &[]),
            false,
        ));
        out.push(create_case(
            "invalid-name-dot",
            v,
            |_| create(".".into(), 1, 1, &[]),
            false,
        ));
        out.push(create_case(
            "invalid-name-empty",
            v,
            |_| create(String::new(), 1, 1, &[]),
            false,
        ));
        out.push(create_case(
            "name-too-long",
            v,
            |_| create("x".repeat(250), 1, 1, &[]),
            false,
        ));
        out.push(create_case(
            "defaults",
            v,
            |c| create(c.topic("t"), -1, -1, &[]),
            false,
        ));
    }
    // Config ranges at their edges: Kafka 4.4 takes any long for retention.bytes and max.message.bytes from 0,
    // and refuses retention.ms below -1 and local.retention.bytes below -2.
    for (name, configs) in [
        ("retention-bytes-minus-2", &[("retention.bytes", "-2")][..]),
        (
            "retention-bytes-min-long",
            &[("retention.bytes", "-9223372036854775808")],
        ),
        (
            "retention-bytes-minus-2-local-100",
            &[("retention.bytes", "-2"), ("local.retention.bytes", "100")],
        ),
        ("max-message-bytes-zero", &[("max.message.bytes", "0")]),
        ("max-message-bytes-minus-1", &[("max.message.bytes", "-1")]),
        ("retention-ms-minus-2", &[("retention.ms", "-2")]),
        (
            "local-retention-bytes-minus-3",
            &[("local.retention.bytes", "-3")],
        ),
    ] {
        out.push(create_case(
            &format!("range/{name}"),
            7,
            move |c| create(c.topic("t"), 1, 1, configs),
            false,
        ));
    }
    out.push(Case::new("create/exists").topic("t", 1, &[]).then(step(
        ApiKey::CreateTopics,
        7,
        |c| {
            CreateTopicsRequest::default()
                .with_topics(vec![create(c.topic("t"), 1, 1, &[])])
                .with_timeout_ms(10_000)
        },
    )));
    out.push(
        Case::new("create/duplicate-in-request").then(step(ApiKey::CreateTopics, 7, |c| {
            CreateTopicsRequest::default()
                .with_topics(vec![
                    create(c.topic("t"), 1, 1, &[]),
                    create(c.topic("t"), 2, 1, &[]),
                ])
                .with_timeout_ms(10_000)
        })),
    );
    out.push(
        Case::new("create/internal-name").then(step(ApiKey::CreateTopics, 7, |_| {
            CreateTopicsRequest::default()
                .with_topics(vec![create("__consumer_offsets".into(), 1, 1, &[])])
                .with_timeout_ms(10_000)
        })),
    );
    for v in [1i16, 12, 13] {
        out.push(Case::new(format!("metadata/unknown@v{v}")).then(step(
            ApiKey::Metadata,
            v,
            |c| metadata(vec![c.name("nope")]),
        )));
        out.push(
            Case::new(format!("metadata/known@v{v}"))
                .topic("t", 2, &[])
                .then(step(ApiKey::Metadata, v, |c| metadata(vec![c.name("t")]))),
        );
        out.push(Case::new(format!("metadata/invalid-name@v{v}")).then(step(
            ApiKey::Metadata,
            v,
            |_| metadata(vec![TopicName(s("bad/name"))]),
        )));
    }
    out.push(
        Case::new("metadata/by-unknown-id@v12").then(step(ApiKey::Metadata, 12, |_| {
            MetadataRequest::default().with_topics(Some(vec![MetadataRequestTopic::default()
                .with_topic_id(uuid::Uuid::from_u128(0x1234))
                .with_name(None)]))
        })),
    );
    for v in [1i16, 5, 6] {
        out.push(Case::new(format!("delete/unknown@v{v}")).then(step(
            ApiKey::DeleteTopics,
            v,
            |c| {
                DeleteTopicsRequest::default()
                    .with_topic_names(vec![c.name("nope")])
                    .with_topics(vec![
                        DeleteTopicState::default().with_name(Some(c.name("nope")))
                    ])
                    .with_timeout_ms(10_000)
            },
        )));
    }
    out.push(
        Case::new("delete/unknown-id@v6").then(step(ApiKey::DeleteTopics, 6, |_| {
            DeleteTopicsRequest::default()
                .with_topics(vec![
                    DeleteTopicState::default().with_topic_id(uuid::Uuid::from_u128(0x5678))
                ])
                .with_timeout_ms(10_000)
        })),
    );
    for (name, count) in [("grow", 4), ("same", 2), ("shrink", 1), ("huge", 100_000)] {
        out.push(
            Case::new(format!("partitions/{name}"))
                .topic("t", 2, &[])
                .then(step(ApiKey::CreatePartitions, 3, move |c| {
                    CreatePartitionsRequest::default()
                        .with_topics(vec![CreatePartitionsTopic::default()
                            .with_name(c.name("t"))
                            .with_count(count)])
                        .with_timeout_ms(10_000)
                })),
        );
    }
    out.push(
        Case::new("partitions/unknown").then(step(ApiKey::CreatePartitions, 3, |c| {
            CreatePartitionsRequest::default()
                .with_topics(vec![CreatePartitionsTopic::default()
                    .with_name(c.name("nope"))
                    .with_count(3)])
                .with_timeout_ms(10_000)
        })),
    );
    for (name, keys) in [
        ("one-key", Some(vec!["retention.ms"])),
        ("set-key", Some(vec!["cleanup.policy"])),
        ("unknown-key", Some(vec!["no.such.config"])),
    ] {
        let keys2 = keys.clone();
        out.push(
            Case::new(format!("describe-configs/{name}"))
                .topic("t", 1, &[("cleanup.policy", "compact")])
                .then(step(ApiKey::DescribeConfigs, 4, move |c| {
                    DescribeConfigsRequest::default().with_resources(vec![
                        DescribeConfigsResource::default()
                            .with_resource_type(2)
                            .with_resource_name(s(&c.topic("t")))
                            .with_configuration_keys(
                                keys2.clone().map(|k| k.into_iter().map(s).collect()),
                            ),
                    ])
                })),
        );
    }
    out.push(Case::new("describe-configs/unknown-topic").then(step(
        ApiKey::DescribeConfigs,
        4,
        |c| {
            DescribeConfigsRequest::default().with_resources(vec![
                DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s(&c.topic("nope")))
                    .with_configuration_keys(Some(vec![s("retention.ms")])),
            ])
        },
    )));
    out.push(Case::new("describe-configs/bad-resource-type").then(step(
        ApiKey::DescribeConfigs,
        4,
        |_| {
            DescribeConfigsRequest::default().with_resources(vec![
                DescribeConfigsResource::default()
                    .with_resource_type(42)
                    .with_resource_name(s("x")),
            ])
        },
    )));
    out.push(Case::new("describe-configs/wrong-broker").then(step(
        ApiKey::DescribeConfigs,
        4,
        |_| {
            DescribeConfigsRequest::default().with_resources(vec![
                DescribeConfigsResource::default()
                    .with_resource_type(4)
                    .with_resource_name(s("7"))
                    .with_configuration_keys(Some(vec![s("log.retention.ms")])),
            ])
        },
    )));
    out
}
