//! DescribeProducers (key 61, KIP-664; what `kafka-transactions.sh describe-producers` sends), raw at v0 against
//! an idempotent and a transactional librdkafka producer: per partition each producer id with its epoch, last
//! sequence, last timestamp, coordinator epoch and the start offset of its open transaction (-1 when none), as
//! Kafka's `ProducerStateManager` reports them; a topic or partition the broker does not have is
//! UNKNOWN_TOPIC_OR_PARTITION (3) for that partition, as Kafka.

use crate::common;

use std::time::{Duration, Instant};

use common::raw::{connect, request};
use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::describe_producers_response::ProducerState;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use tokio::net::TcpStream;

const T: Duration = Duration::from_secs(30);
const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;

fn topic(name: &str, partitions: Vec<i32>) -> TopicRequest {
    TopicRequest::default()
        .with_name(TopicName(StrBytes::from_string(name.to_string())))
        .with_partition_indexes(partitions)
}

async fn describe(s: &mut TcpStream, topics: Vec<TopicRequest>) -> DescribeProducersResponse {
    let req = DescribeProducersRequest::default().with_topics(topics);
    request(s, ApiKey::DescribeProducers, 0, &req)
        .await
        .expect("answered")
}

/// The producers of `dp-0`.
async fn producers(s: &mut TcpStream) -> Vec<ProducerState> {
    let r = describe(s, vec![topic("dp", vec![0])]).await;
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    r.topics[0].partitions[0].active_producers.clone()
}

fn send(p: &BaseProducer, values: &[&str]) {
    for v in values {
        p.send(BaseRecord::to("dp").partition(0).key("k").payload(*v))
            .expect("enqueue");
    }
    p.flush(T).expect("flush");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_producers_lists_idempotent_and_transactional_producers_per_partition() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let bs = common::bootstrap(&server);
    common::create_topic(&bs, "dp", 2).await;
    let mut s = connect(server.local_addr()).await;

    let r: ApiVersionsResponse = request(
        &mut s,
        ApiKey::ApiVersions,
        3,
        &common::raw::api_versions_request(),
    )
    .await
    .unwrap();
    let row = r
        .api_keys
        .iter()
        .find(|k| k.api_key == 61)
        .expect("advertised");
    assert_eq!((row.min_version, row.max_version), (0, 0));
    assert!(producers(&mut s).await.is_empty(), "nobody produced yet");

    let before = strata_storage::time::now_ms();
    let bs2 = bs.clone();
    let txn = tokio::task::spawn_blocking(move || {
        let idem: BaseProducer = common::client_config(&bs2)
            .set("enable.idempotence", "true")
            .create()
            .expect("idempotent producer");
        send(&idem, &["a", "b", "c"]);
        let txn: BaseProducer = common::client_config(&bs2)
            .set("transactional.id", "dp-tx")
            .create()
            .expect("transactional producer");
        txn.init_transactions(T).expect("init_transactions");
        txn.begin_transaction().unwrap();
        send(&txn, &["x", "y"]);
        txn
    })
    .await
    .unwrap();

    let mut all = producers(&mut s).await;
    assert_eq!(all.len(), 2, "{all:?}");
    all.sort_by_key(|p| p.current_txn_start_offset);
    let (idem, open) = (&all[0], &all[1]);
    assert_ne!(idem.producer_id, open.producer_id);
    assert_eq!(
        (
            idem.producer_epoch,
            idem.last_sequence,
            idem.coordinator_epoch,
            idem.current_txn_start_offset
        ),
        (0, 2, -1, -1),
        "idempotent: three records, no transaction"
    );
    assert!(idem.last_timestamp >= before, "{idem:?}");
    assert_eq!(
        (open.last_sequence, open.current_txn_start_offset),
        (1, 3),
        "transactional: two records from offset 3, transaction open"
    );

    // Unknown partition and topic: UNKNOWN_TOPIC_OR_PARTITION for each, the known partition still answered.
    let r = describe(
        &mut s,
        vec![topic("dp", vec![1, 5]), topic("nope", vec![0])],
    )
    .await;
    let codes: Vec<(String, i32, i16)> = r
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.name.0.to_string(), p.partition_index, p.error_code))
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            ("dp".into(), 1, 0),
            ("dp".into(), 5, UNKNOWN_TOPIC_OR_PARTITION),
            ("nope".into(), 0, UNKNOWN_TOPIC_OR_PARTITION)
        ]
    );
    assert!(r.topics[0].partitions[0].active_producers.is_empty());

    // The commit's marker closes the transaction: no start offset, the marker's coordinator epoch.
    let txn_id = open.producer_id;
    tokio::task::spawn_blocking(move || txn.commit_transaction(T).expect("commit"))
        .await
        .unwrap();
    let deadline = Instant::now() + T;
    loop {
        let all = producers(&mut s).await;
        let p = all.iter().find(|p| p.producer_id == txn_id).expect("kept");
        if p.current_txn_start_offset == -1 {
            assert!(p.coordinator_epoch >= 0, "{p:?}");
            break;
        }
        assert!(Instant::now() < deadline, "transaction still open: {p:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.shutdown().await.unwrap();
}
