//! Issue 11 item 2: producer ids are never issued twice, also across a SIGKILL. Kafka allocates producer ids in
//! durable blocks (`ProducerIdManager`, `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE` = 1000) so that an id handed out
//! before a crash is never handed out again; strata records each block in `producer-id-block` before handing out
//! any of its ids. Without that, a new idempotent producer given a reused id has its first batch answered as a
//! duplicate of the old producer's (error 0, the old offset) and never stored.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::raw::{connect, idempotent_batch, request};
use common::*;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use tokio::net::TcpStream;

const TOPIC: &str = "idem";

async fn init_producer_id(s: &mut TcpStream, pid: i64, epoch: i16) -> (i16, i64, i16) {
    let r: InitProducerIdResponse = request(
        s,
        ApiKey::InitProducerId,
        4,
        &InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch),
    )
    .await
    .expect("InitProducerId response");
    (r.error_code, r.producer_id.0, r.producer_epoch)
}

async fn new_producer_id(s: &mut TcpStream) -> i64 {
    let (code, pid, epoch) = init_producer_id(s, -1, -1).await;
    assert_eq!((code, epoch), (0, 0), "InitProducerId answered an error");
    assert!(pid >= 0);
    pid
}

/// Produces one idempotent batch (sequence 0) holding `value`: (error code, base offset).
async fn produce_first_batch(s: &mut TcpStream, pid: i64, value: &[u8]) -> (i16, i64) {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(idempotent_batch(&[value], pid, 0, 0)))])]);
    let r: ProduceResponse = request(s, ApiKey::Produce, 9, &req)
        .await
        .expect("Produce response");
    let p = &r.responses[0].partition_responses[0];
    (p.error_code, p.base_offset)
}

fn addr(b: &ChildBroker) -> std::net::SocketAddr {
    b.bootstrap.parse().expect("socket address")
}

#[test]
fn producer_ids_handed_out_before_a_sigkill_are_never_handed_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let broker = ChildBroker::spawn(dir.path(), 0);
    rt.block_on(create_topic(&broker.bootstrap, TOPIC, 1));
    let mut issued = BTreeSet::new();
    rt.block_on(async {
        let mut s = connect(addr(&broker)).await;
        // An old producer uses its id; more ids are handed out and never used before the crash.
        let old = new_producer_id(&mut s).await;
        assert_eq!(produce_first_batch(&mut s, old, b"old").await, (0, 0));
        issued.insert(old);
        for _ in 0..5 {
            assert!(
                issued.insert(new_producer_id(&mut s).await),
                "an id repeated"
            );
        }
    });
    broker.kill9();

    let broker = ChildBroker::spawn(dir.path(), 0);
    let fresh = rt.block_on(async {
        let mut s = connect(addr(&broker)).await;
        let fresh = new_producer_id(&mut s).await;
        assert!(
            !issued.contains(&fresh),
            "producer id {fresh} was handed out again after the restart (issued before: {issued:?})"
        );
        assert!(fresh > *issued.last().unwrap());
        // The new producer's first batch is stored at a new offset, not answered as a duplicate.
        assert_eq!(produce_first_batch(&mut s, fresh, b"new").await, (0, 1));
        // KIP-360 epoch bump without a transactional id: Kafka answers a new id with epoch 0, never a bumped
        // epoch of the id the request names.
        let (code, bumped, epoch) = init_producer_id(&mut s, fresh, 0).await;
        assert_eq!((code, epoch), (0, 0));
        assert!(bumped != fresh && !issued.contains(&bumped));
        fresh
    });

    // Both batches read back, in order.
    let consumer = consumer(&broker.bootstrap, "ids-check", &[]);
    assign_from_beginning(&consumer, TOPIC, 1);
    let got = consume_n(&consumer, 2, Duration::from_secs(20));
    let values: Vec<_> = got.iter().map(|m| (m.1, m.3.clone().unwrap())).collect();
    assert_eq!(
        values,
        vec![(0, b"old".to_vec()), (1, b"new".to_vec())],
        "pid {fresh}"
    );

    // The block is recorded where the registry lives.
    assert!(dir.path().join("producer-id-block").exists());
}

#[test]
fn producer_ids_survive_a_clean_restart_and_many_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let broker = ChildBroker::spawn(dir.path(), 0);
    let mut issued = BTreeSet::new();
    rt.block_on(async {
        let mut s = connect(addr(&broker)).await;
        // More than two blocks' worth: each new block is recorded before its first id goes out.
        for _ in 0..2_100 {
            assert!(
                issued.insert(new_producer_id(&mut s).await),
                "an id repeated"
            );
        }
    });
    assert!(
        broker.terminate(),
        "strata exited with an error after SIGTERM"
    );
    let broker = ChildBroker::spawn(dir.path(), 0);
    rt.block_on(async {
        let mut s = connect(addr(&broker)).await;
        for _ in 0..10 {
            let pid = new_producer_id(&mut s).await;
            assert!(
                !issued.contains(&pid),
                "producer id {pid} repeated after a clean restart"
            );
        }
    });
}
