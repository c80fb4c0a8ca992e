//! DeleteTopics answers once the topic is marked deleted, as Kafka (KRaft) does: the topic is gone from Metadata
//! and Produce gets UNKNOWN_TOPIC_OR_PARTITION at once, its partition dirs are renamed
//! `<topic>-<p>.<uuid>-delete` and removed by a background task (Kafka's `LogManager.asyncDelete`), and a topic
//! re-created with the same name right away starts empty.

use crate::common;

use std::time::{Duration, Instant};

use common::raw::{batch, connect, request};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

fn partition_dirs(dir: &std::path::Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

async fn produce(s: &mut tokio::net::TcpStream, topic: &str, value: &[u8]) -> (i16, i64) {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name(topic))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(batch(&[value])))])]);
    let r: ProduceResponse = request(s, ApiKey::Produce, 9, &req).await.unwrap();
    let p = &r.responses[0].partition_responses[0];
    (p.error_code, p.base_offset)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_topic_is_gone_at_once_and_its_dirs_are_removed_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let addr = broker.local_addr();
    common::create_topic(&addr.to_string(), "doomed", 200).await;
    let mut s = connect(addr).await;
    assert_eq!(produce(&mut s, "doomed", b"old").await, (0, 0));

    let req = DeleteTopicsRequest::default()
        .with_timeout_ms(30_000)
        .with_topic_names(vec![name("doomed")]);
    let r: DeleteTopicsResponse = request(&mut s, ApiKey::DeleteTopics, 5, &req)
        .await
        .unwrap();
    assert_eq!(r.responses[0].error_code, 0);
    // Gone from Metadata and refused to producers at once.
    let md = MetadataRequest::default()
        .with_allow_auto_topic_creation(false)
        .with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some(name("doomed")))
        ]));
    let m: MetadataResponse = request(&mut s, ApiKey::Metadata, 12, &md).await.unwrap();
    assert_eq!(m.topics[0].error_code, 3);
    assert_eq!(produce(&mut s, "doomed", b"late").await.0, 3);
    // No partition dir of the topic is left under its own name.
    assert!(
        partition_dirs(dir.path(), "doomed-")
            .iter()
            .all(|n| n.ends_with("-delete")),
        "{:?}",
        partition_dirs(dir.path(), "doomed-")
    );

    // The same name again, at once: a new, empty topic.
    common::create_topic(&addr.to_string(), "doomed", 1).await;
    assert_eq!(produce(&mut s, "doomed", b"new").await, (0, 0));

    // The renamed dirs are removed in the background.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left: Vec<String> = partition_dirs(dir.path(), "doomed-")
            .into_iter()
            .filter(|n| n.ends_with("-delete"))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} -delete dirs left",
            left.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(partition_dirs(dir.path(), "doomed-"), vec!["doomed-0"]);
    assert_eq!(
        broker
            .broker()
            .topics()
            .log("doomed", 0)
            .unwrap()
            .log_end_offset(),
        1
    );
    broker.shutdown().await.unwrap();
}

/// Partition dirs of a topic the registry does not know: empty ones (a CreateTopics killed before the topic was
/// registered) are removed at start-up — nothing in them to keep — while ones holding records (a topic deleted
/// while the broker was down) are set aside `-stray` and kept, as Kafka keeps stray logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_partition_dirs_of_an_unknown_topic_are_removed_at_start_and_data_is_kept_aside() {
    let dir = tempfile::tempdir().unwrap();
    {
        let broker = common::start_broker(dir.path()).await;
        let bs = broker.local_addr().to_string();
        common::create_topic(&bs, "halfmade", 10).await;
        common::create_topic(&bs, "withdata", 1).await;
        let mut s = connect(broker.local_addr()).await;
        assert_eq!(produce(&mut s, "withdata", b"keep me").await, (0, 0));
        broker.shutdown().await.unwrap();
    }
    // The registry without both topics: as after a CreateTopics killed before its registry write.
    let registry = dir.path().join("strata-topics.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&registry).unwrap()).unwrap();
    let topics = json["topics"].as_object_mut().unwrap();
    assert!(topics.remove("halfmade").is_some() && topics.remove("withdata").is_some());
    std::fs::write(&registry, serde_json::to_vec_pretty(&json).unwrap()).unwrap();

    let broker = common::start_broker(dir.path()).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !partition_dirs(dir.path(), "halfmade-").is_empty() {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            partition_dirs(dir.path(), "halfmade-")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let kept = partition_dirs(dir.path(), "withdata-");
    assert!(
        matches!(kept.as_slice(), [n] if n.starts_with("withdata-0.") && n.ends_with("-stray")),
        "{kept:?}"
    );
    assert!(broker.broker().registry().get("halfmade").is_none());
    broker.shutdown().await.unwrap();
}
