//! Wire-level behaviour of the admin and offset APIs, checked with a raw client: committed offsets of a deleted
//! topic, offset metadata limits and group id checks, replica assignments of CreateTopics / CreatePartitions, and
//! DescribeConfigs sources.

use crate::common;

use common::raw::{connect, request};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

/// OffsetCommit of one partition by a simple (generation-less) committer; the partition's error code.
async fn commit_offset(
    s: &mut tokio::net::TcpStream,
    group: &str,
    topic: &str,
    offset: i64,
    metadata: &str,
) -> i16 {
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    let req = OffsetCommitRequest::default()
        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(name(topic))
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(offset)
                .with_committed_metadata(Some(StrBytes::from_string(
                    metadata.to_string(),
                )))])]);
    let r: OffsetCommitResponse = request(s, ApiKey::OffsetCommit, 8, &req).await.unwrap();
    r.topics[0].partitions[0].error_code
}

/// OffsetFetch of partition 0 of `topic`: (error code, committed offset, metadata).
async fn fetch_offset(
    s: &mut tokio::net::TcpStream,
    group: &str,
    topic: &str,
) -> (i16, i64, String) {
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
    let req = OffsetFetchRequest::default()
        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
        .with_topics(Some(vec![OffsetFetchRequestTopic::default()
            .with_name(name(topic))
            .with_partition_indexes(vec![0])]));
    let r: OffsetFetchResponse = request(s, ApiKey::OffsetFetch, 7, &req).await.unwrap();
    assert_eq!(r.error_code, 0);
    let p = &r.topics[0].partitions[0];
    (
        p.error_code,
        p.committed_offset,
        p.metadata.as_deref().unwrap_or_default().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_topic_removes_its_committed_offsets_also_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "delre", 1).await;
    common::create_topic(&addr.to_string(), "kept", 1).await;
    let mut s = connect(addr).await;
    assert_eq!(commit_offset(&mut s, "g", "delre", 5, "m").await, 0);
    assert_eq!(commit_offset(&mut s, "g", "kept", 7, "").await, 0);
    assert_eq!(fetch_offset(&mut s, "g", "delre").await.1, 5);

    let r: DeleteTopicsResponse = request(
        &mut s,
        ApiKey::DeleteTopics,
        4,
        &DeleteTopicsRequest::default()
            .with_topic_names(vec![name("delre")])
            .with_timeout_ms(5000),
    )
    .await
    .unwrap();
    assert_eq!(r.responses[0].error_code, 0);
    common::create_topic(&addr.to_string(), "delre", 1).await;
    assert_eq!(
        fetch_offset(&mut s, "g", "delre").await.1,
        -1,
        "the recreated topic kept the deleted topic's committed offset"
    );
    assert_eq!(fetch_offset(&mut s, "g", "kept").await.1, 7);
    drop(s);
    broker.shutdown().await.unwrap();

    // The tombstones replay: the stale offset does not come back after a restart.
    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;
    assert_eq!(fetch_offset(&mut s, "g", "delre").await.1, -1);
    assert_eq!(fetch_offset(&mut s, "g", "kept").await.1, 7);
    drop(s);
    broker.shutdown().await.unwrap();
}

/// `__consumer_offsets` is compacted as in Kafka: time retention that empties an ordinary topic leaves a quiet
/// group's last commit alone (also across a restart), DescribeConfigs says `cleanup.policy=compact`, and the log
/// cleaner compacts many commits of one key (the latest values survive).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_offsets_outlive_time_retention_and_the_offsets_log_is_compacted() {
    use std::time::{Duration, Instant};
    use strata_storage::TopicPartition;
    let dir = tempfile::tempdir().unwrap();
    let props = [
        ("log.retention.ms", "300"),
        ("log.roll.ms", "100"),
        ("log.retention.check.interval.ms", "100"),
        ("log.cleaner.backoff.ms", "100"),
    ];
    let broker = common::start_broker_with(dir.path(), &props).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "quiet", 1).await;
    let mut s = connect(addr).await;
    assert_eq!(
        commit_offset(&mut s, "g-quiet", "quiet", 1234, "m").await,
        0
    );
    let logs = broker.broker().log_manager().clone();
    let offsets_log = logs
        .get_log(&TopicPartition::new("__consumer_offsets", 0))
        .unwrap();
    let quiet = logs.get_log(&TopicPartition::new("quiet", 0)).unwrap();
    quiet
        .append_as_leader(common::raw::batch(&[b"old"]), 0)
        .unwrap();
    // Later writes roll both logs (log.roll.ms); retention then empties the ordinary topic.
    let deadline = Instant::now() + Duration::from_secs(20);
    // Several segments of 'quiet' expire, each younger than the first commit.
    while quiet.log_start_offset() < 5 {
        assert!(Instant::now() < deadline, "retention never ran on 'quiet'");
        tokio::time::sleep(Duration::from_millis(150)).await;
        quiet
            .append_as_leader(common::raw::batch(&[b"new"]), 0)
            .unwrap();
        assert_eq!(commit_offset(&mut s, "g-other", "quiet", 1, "").await, 0);
    }
    assert_eq!(
        offsets_log.log_start_offset(),
        0,
        "retention removed commits"
    );
    let r: DescribeConfigsResponse = request(
        &mut s,
        ApiKey::DescribeConfigs,
        4,
        &DescribeConfigsRequest::default().with_resources(vec![
            describe_configs_request::DescribeConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name(StrBytes::from_static_str("__consumer_offsets"))
                .with_configuration_keys(Some(vec![StrBytes::from_static_str("cleanup.policy")])),
        ]),
    )
    .await
    .unwrap();
    let c = &r.results[0].configs[0];
    assert_eq!(c.value.as_deref(), Some("compact"));

    // 2500 more commits of one key: the log cleaner compacts them (log.roll.ms rolls the segments).
    for i in 0..2500 {
        assert_eq!(commit_offset(&mut s, "g-busy", "quiet", i, "").await, 0);
    }
    let records = |log: &strata_storage::UnifiedLog| {
        let (mut offset, mut n) = (0, 0i64);
        while offset < log.log_end_offset() {
            let data = log.read(offset, 1 << 24, true, None).unwrap().records;
            let Some(last) = strata_storage::RecordBatch::iter(&data)
                .map(Result::unwrap)
                .inspect(|b| n += b.records_count() as i64)
                .last()
            else {
                break;
            };
            offset = last.next_offset();
        }
        n
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while records(&offsets_log) >= 2000 {
        assert!(Instant::now() < deadline, "never compacted");
        // Keeps the active segment rolling (log.roll.ms) so the last commits become cleanable too.
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(commit_offset(&mut s, "g-busy", "quiet", 2499, "").await, 0);
    }
    drop(s);
    broker.shutdown().await.unwrap();

    let broker = common::start_broker_with(dir.path(), &props).await;
    let mut s = connect(broker.local_addr()).await;
    assert_eq!(
        fetch_offset(&mut s, "g-quiet", "quiet").await,
        (0, 1234, "m".to_string())
    );
    assert_eq!(fetch_offset(&mut s, "g-busy", "quiet").await.1, 2499);
    assert_eq!(fetch_offset(&mut s, "g-other", "quiet").await.1, 1);
    drop(s);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_metadata_over_the_limit_is_refused_and_long_group_ids_are_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "meta", 1).await;
    let mut s = connect(addr).await;
    // offset.metadata.max.bytes defaults to 4096, as in Kafka.
    let at_limit = "m".repeat(4096);
    assert_eq!(commit_offset(&mut s, "g", "meta", 3, &at_limit).await, 0);
    assert_eq!(
        commit_offset(&mut s, "g", "meta", 5, &"m".repeat(4097)).await,
        12,
        "OFFSET_METADATA_TOO_LARGE"
    );
    // 40000 bytes used to wrap the i16 length in __consumer_offsets and come back empty after a restart.
    assert_eq!(
        commit_offset(&mut s, "g", "meta", 7, &"m".repeat(40_000)).await,
        12
    );
    assert_eq!(
        fetch_offset(&mut s, "g", "meta").await,
        (0, 3, at_limit.clone()),
        "a refused commit changed the stored offset"
    );
    // A group id too long for the __consumer_offsets key (flexible versions allow it on the wire).
    let long_group = "g".repeat(i16::MAX as usize + 1);
    assert_eq!(commit_offset(&mut s, &long_group, "meta", 1, "").await, 24);
    drop(s);
    broker.shutdown().await.unwrap();

    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;
    assert_eq!(fetch_offset(&mut s, "g", "meta").await, (0, 3, at_limit));
    drop(s);
    broker.shutdown().await.unwrap();

    // A smaller limit is honoured; one that the record format cannot hold is refused at start-up.
    let dir = tempfile::tempdir().unwrap();
    let broker =
        common::start_broker_with(dir.path(), &[("offset.metadata.max.bytes", "10")]).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "meta", 1).await;
    let mut s = connect(addr).await;
    assert_eq!(commit_offset(&mut s, "g", "meta", 1, "0123456789").await, 0);
    assert_eq!(
        commit_offset(&mut s, "g", "meta", 2, "0123456789a").await,
        12
    );
    drop(s);
    broker.shutdown().await.unwrap();
    let mut props = std::collections::BTreeMap::new();
    props.insert("offset.metadata.max.bytes".to_string(), "40000".to_string());
    let err = strata_broker::config::BrokerConfig::from_properties(&props).unwrap_err();
    assert!(
        err.to_string().contains("offset.metadata.max.bytes"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_assignments_must_name_this_broker_once_per_new_partition() {
    use kafka_protocol::messages::create_partitions_request::{
        CreatePartitionsAssignment, CreatePartitionsTopic,
    };
    use kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment;
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    let mut s = connect(addr).await;
    let node = broker.broker().config().node_id;

    let create = |assign: &[i32], partitions: i32| {
        CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(name("ra"))
                .with_num_partitions(partitions)
                .with_replication_factor(-1)
                .with_assignments(
                    assign
                        .iter()
                        .enumerate()
                        .map(|(i, b)| {
                            CreatableReplicaAssignment::default()
                                .with_partition_index(i as i32)
                                .with_broker_ids(vec![BrokerId(*b)])
                        })
                        .collect(),
                )])
    };
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create(&[9, 9], -1))
        .await
        .unwrap();
    assert_eq!(
        r.topics[0].error_code, 39,
        "unknown broker: INVALID_REPLICA_ASSIGNMENT"
    );
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create(&[node], 3))
        .await
        .unwrap();
    assert_eq!(
        r.topics[0].error_code, 42,
        "assignments and a count: INVALID_REQUEST"
    );
    // Partitions 0 and 2: Kafka wants a consecutive 0-based sequence (INVALID_REPLICA_ASSIGNMENT).
    let mut gap = create(&[node, node], -1);
    gap.topics[0].assignments[1].partition_index = 2;
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &gap)
        .await
        .unwrap();
    assert_eq!(
        r.topics[0].error_code, 39,
        "a gap: INVALID_REPLICA_ASSIGNMENT"
    );
    assert!(
        r.topics[0]
            .error_message
            .as_ref()
            .is_some_and(|m| m.contains("[0, 2]")),
        "{:?}",
        r.topics[0].error_message
    );
    assert!(broker.broker().registry().get("ra").is_none());
    let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &create(&[node], -1))
        .await
        .unwrap();
    assert_eq!(r.topics[0].error_code, 0);

    let grow = |count: i32, assign: &[i32], validate_only: bool| {
        CreatePartitionsRequest::default()
            .with_timeout_ms(5000)
            .with_validate_only(validate_only)
            .with_topics(vec![CreatePartitionsTopic::default()
                .with_name(name("ra"))
                .with_count(count)
                .with_assignments(Some(
                    assign
                        .iter()
                        .map(|b| {
                            CreatePartitionsAssignment::default()
                                .with_broker_ids(vec![BrokerId(*b)])
                        })
                        .collect(),
                ))])
    };
    // rust-rdkafka's test_topics: 1 → 2 partitions with two assignments.
    for validate_only in [true, false] {
        let r: CreatePartitionsResponse = request(
            &mut s,
            ApiKey::CreatePartitions,
            3,
            &grow(2, &[node, node], validate_only),
        )
        .await
        .unwrap();
        assert_eq!(r.results[0].error_code, 39);
        assert!(
            r.results[0]
                .error_message
                .as_deref()
                .unwrap_or_default()
                .contains("by 1 but 2 assignments"),
            "{:?}",
            r.results[0].error_message
        );
    }
    let r: CreatePartitionsResponse = request(
        &mut s,
        ApiKey::CreatePartitions,
        3,
        &grow(3, &[node, node + 7], false),
    )
    .await
    .unwrap();
    assert_eq!(r.results[0].error_code, 39, "unknown broker");
    assert_eq!(broker.broker().registry().get("ra").unwrap().partitions, 1);
    let r: CreatePartitionsResponse = request(
        &mut s,
        ApiKey::CreatePartitions,
        3,
        &grow(3, &[node, node], false),
    )
    .await
    .unwrap();
    assert_eq!(r.results[0].error_code, 0);
    assert_eq!(broker.broker().registry().get("ra").unwrap().partitions, 3);
    drop(s);
    broker.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_configs_reports_broker_defaults_as_default_and_given_properties_as_static() {
    use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("log.retention.ms", "3600000")]).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "dc", 1).await;
    let mut s = connect(addr).await;
    let describe = |resource_type: i8, name: &str| {
        DescribeConfigsRequest::default()
            .with_include_synonyms(true)
            .with_resources(vec![DescribeConfigsResource::default()
                .with_resource_type(resource_type)
                .with_resource_name(StrBytes::from_string(name.to_string()))
                .with_configuration_keys(None)])
    };
    let r: DescribeConfigsResponse = request(&mut s, ApiKey::DescribeConfigs, 4, &describe(4, "1"))
        .await
        .unwrap();
    assert_eq!(r.results[0].error_code, 0);
    let get = |r: &DescribeConfigsResponse, k: &str| {
        let e = r.results[0]
            .configs
            .iter()
            .find(|e| e.name.as_str() == k)
            .unwrap_or_else(|| panic!("{k} not listed"))
            .clone();
        (e.config_source, e.value.map(|v| v.to_string()))
    };
    // Given in the properties: STATIC_BROKER_CONFIG (4).
    assert_eq!(get(&r, "log.retention.ms"), (4, Some("3600000".into())));
    assert_eq!(get(&r, "log.dirs").0, 4);
    // Left at the default: DEFAULT_CONFIG (5); log.flush.interval.ms defaults to null as in Kafka.
    assert_eq!(get(&r, "num.partitions"), (5, Some("1".into())));
    assert_eq!(
        get(&r, "offset.metadata.max.bytes"),
        (5, Some("4096".into()))
    );
    assert_eq!(get(&r, "log.flush.interval.ms"), (5, None));
    // A topic without an override inherits the broker's static value, and says so.
    let r: DescribeConfigsResponse =
        request(&mut s, ApiKey::DescribeConfigs, 4, &describe(2, "dc"))
            .await
            .unwrap();
    assert_eq!(get(&r, "retention.ms"), (4, Some("3600000".into())));
    assert_eq!(get(&r, "segment.bytes").0, 5);
    drop(s);
    broker.shutdown().await.unwrap();
}

/// DescribeLogDirs: the data dir with every partition's local size (all partitions, or only those asked for;
/// unknown ones left out) and, from v4, the volume's total and usable bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_log_dirs_reports_partition_sizes_and_volume_bytes() {
    use kafka_protocol::messages::describe_log_dirs_request::DescribableLogDirTopic;
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "sized", 2).await;
    let mut s = connect(addr).await;
    let values: Vec<Vec<u8>> = (0..50).map(|i| vec![b'x'; 100 + i]).collect();
    let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
    let records = common::raw::batch(&refs);
    let produce = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name("sized"))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records.clone()))])]);
    let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &produce).await.unwrap();
    assert_eq!(r.responses[0].partition_responses[0].error_code, 0);

    let all: DescribeLogDirsResponse = request(
        &mut s,
        ApiKey::DescribeLogDirs,
        4,
        &DescribeLogDirsRequest::default().with_topics(None),
    )
    .await
    .unwrap();
    assert_eq!(all.error_code, 0);
    assert_eq!(all.results.len(), 1, "{all:?}");
    let result = &all.results[0];
    assert_eq!(result.error_code, 0);
    assert_eq!(
        result.log_dir.as_str(),
        broker.broker().config().log_dirs[0].display().to_string()
    );
    assert!(result.total_bytes > 0 && result.usable_bytes > 0);
    assert!(result.usable_bytes <= result.total_bytes);
    let sized = result
        .topics
        .iter()
        .find(|t| t.name.0.as_str() == "sized")
        .expect("topic listed");
    let sizes: Vec<(i32, i64)> = sized
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.partition_size))
        .collect();
    assert_eq!(sizes, [(0, records.len() as i64), (1, 0)]);
    assert!(
        result
            .topics
            .iter()
            .any(|t| t.name.0.as_str() == "__consumer_offsets"),
        "internal topics are listed too"
    );

    // Only what is asked for; an unknown partition and topic are left out.
    let some: DescribeLogDirsResponse = request(
        &mut s,
        ApiKey::DescribeLogDirs,
        1,
        &DescribeLogDirsRequest::default().with_topics(Some(vec![
            DescribableLogDirTopic::default()
                .with_topic(name("sized"))
                .with_partitions(vec![1, 7]),
            DescribableLogDirTopic::default()
                .with_topic(name("nosuch"))
                .with_partitions(vec![0]),
        ])),
    )
    .await
    .unwrap();
    let topics: Vec<(String, Vec<i32>)> = some.results[0]
        .topics
        .iter()
        .map(|t| {
            (
                t.name.0.to_string(),
                t.partitions.iter().map(|p| p.partition_index).collect(),
            )
        })
        .collect();
    assert_eq!(topics, [("sized".to_string(), vec![1])]);
    drop(s);
    broker.shutdown().await.unwrap();
}

/// DeleteRecords is durable when answered: the log-start-offset checkpoint already holds the new start (a
/// crash before the periodic checkpoint would otherwise bring the deleted records back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_records_is_checkpointed_before_the_answer() {
    use kafka_protocol::messages::delete_records_request::{
        DeleteRecordsPartition, DeleteRecordsTopic,
    };
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "trimmed", 1).await;
    let mut s = connect(addr).await;
    for _ in 0..10 {
        let produce = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(5000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(name("trimmed"))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(common::raw::batch(&[b"v"])))])]);
        let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &produce).await.unwrap();
        assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
    }
    let r: DeleteRecordsResponse = request(
        &mut s,
        ApiKey::DeleteRecords,
        2,
        &DeleteRecordsRequest::default()
            .with_timeout_ms(5000)
            .with_topics(vec![DeleteRecordsTopic::default()
                .with_name(name("trimmed"))
                .with_partitions(vec![DeleteRecordsPartition::default()
                    .with_partition_index(0)
                    .with_offset(7)])]),
    )
    .await
    .unwrap();
    let p = &r.topics[0].partitions[0];
    assert_eq!((p.error_code, p.low_watermark), (0, 7));
    let log_dir = &broker.broker().config().log_dirs[0];
    let text = std::fs::read_to_string(log_dir.join("log-start-offset-checkpoint")).unwrap();
    assert!(
        text.lines().any(|l| l == "trimmed 0 7"),
        "checkpoint without the new start:\n{text}"
    );
    drop(s);
    broker.shutdown().await.unwrap();
}

/// OffsetDelete (KIP-496): an empty group's offsets of the named partitions go (also after a restart), others
/// stay; a topic a live member subscribes to is refused per partition (GROUP_SUBSCRIBED_TO_TOPIC) while an
/// unsubscribed one is deleted; unknown partitions and groups get their Kafka errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_delete_removes_unsubscribed_partitions_only() {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::offset_delete_request::{
        OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
    };
    use kafka_protocol::protocol::Encodable;
    async fn offset_delete(
        s: &mut tokio::net::TcpStream,
        group: &str,
        topic: &str,
        partitions: &[i32],
    ) -> OffsetDeleteResponse {
        let req = OffsetDeleteRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_topics(vec![OffsetDeleteRequestTopic::default()
                .with_name(name(topic))
                .with_partitions(
                    partitions
                        .iter()
                        .map(|p| OffsetDeleteRequestPartition::default().with_partition_index(*p))
                        .collect(),
                )]);
        request(s, ApiKey::OffsetDelete, 0, &req).await.unwrap()
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "od-a", 1).await;
    common::create_topic(&addr.to_string(), "od-b", 1).await;
    let mut s = connect(addr).await;
    assert_eq!(commit_offset(&mut s, "g-od", "od-a", 5, "").await, 0);
    assert_eq!(commit_offset(&mut s, "g-od", "od-b", 6, "").await, 0);

    // Empty group: od-a's offset goes, od-b's stays; partition 3 of od-a does not exist.
    let r = offset_delete(&mut s, "g-od", "od-a", &[0, 3]).await;
    assert_eq!(r.error_code, 0);
    let codes: Vec<i16> = r.topics[0]
        .partitions
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, vec![0, 3], "NONE, UNKNOWN_TOPIC_OR_PARTITION");
    assert_eq!(fetch_offset(&mut s, "g-od", "od-a").await.1, -1);
    assert_eq!(fetch_offset(&mut s, "g-od", "od-b").await.1, 6);
    let r = offset_delete(&mut s, "no-such-group", "od-a", &[0]).await;
    assert_eq!(r.error_code, 69, "GROUP_ID_NOT_FOUND");

    // A live member subscribed to od-b: od-b is refused, od-a (re-committed) is deleted.
    assert_eq!(commit_offset(&mut s, "g-od", "od-a", 7, "").await, 0);
    let mut subscription = bytes::BytesMut::new();
    subscription.extend_from_slice(&1i16.to_be_bytes());
    ConsumerProtocolSubscription::default()
        .with_topics(vec![StrBytes::from_static_str("od-b")])
        .encode(&mut subscription, 1)
        .unwrap();
    let join = JoinGroupRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("g-od")))
        .with_session_timeout_ms(30_000)
        .with_rebalance_timeout_ms(30_000)
        .with_protocol_type(StrBytes::from_static_str("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(StrBytes::from_static_str("range"))
            .with_metadata(subscription.freeze())]);
    let mut member = connect(addr).await;
    let joined: JoinGroupResponse = request(&mut member, ApiKey::JoinGroup, 5, &join)
        .await
        .unwrap();
    // KIP-394: from JoinGroup v4 a new member joins again with the member id it is given.
    assert_eq!(joined.error_code, 79, "MEMBER_ID_REQUIRED");
    let join = join.with_member_id(joined.member_id);
    let joined: JoinGroupResponse = request(&mut member, ApiKey::JoinGroup, 5, &join)
        .await
        .unwrap();
    assert_eq!(joined.error_code, 0);
    let r = offset_delete(&mut s, "g-od", "od-b", &[0]).await;
    assert_eq!(r.error_code, 0);
    assert_eq!(
        r.topics[0].partitions[0].error_code, 86,
        "GROUP_SUBSCRIBED_TO_TOPIC"
    );
    let r = offset_delete(&mut s, "g-od", "od-a", &[0]).await;
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    drop((s, member));
    broker.shutdown().await.unwrap();

    // The deletions replay: after a restart od-a has no offset, od-b keeps 6.
    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;
    assert_eq!(fetch_offset(&mut s, "g-od", "od-a").await.1, -1);
    assert_eq!(fetch_offset(&mut s, "g-od", "od-b").await.1, 6);
    drop(s);
    broker.shutdown().await.unwrap();
}
