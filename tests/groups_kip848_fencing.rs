//! librdkafka with `group.protocol=consumer` against the coordinator's rebalance timeout: a member whose
//! application does not give up the partitions it is asked to revoke is fenced once its rebalance timeout
//! (`max.poll.interval.ms`) passes, and the other member takes over and consumes every record.

use crate::common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::producer::FutureRecord;
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Message, TopicPartitionList};

use common::{bootstrap, client_config, create_topic, producer, start_broker_with};

const TOPIC: &str = "kt";
const PARTITIONS: i32 = 4;

/// What one member's thread shares with the test.
#[derive(Clone, Default)]
struct Shared {
    /// (partition, offset) of every record consumed.
    consumed: Arc<Mutex<BTreeSet<(i32, i64)>>>,
    /// The partitions assigned now.
    owned: Arc<Mutex<BTreeSet<i32>>>,
    /// Stop polling.
    stop: Arc<AtomicBool>,
}

/// A rebalance callback that, when `stall` is set, does not return from the first revocation until released:
/// the application holds on to its partitions (librdkafka keeps heartbeating and reporting them as owned).
#[derive(Clone, Default)]
struct Stalling {
    stall: Arc<AtomicBool>,
    stalled: Arc<AtomicBool>,
    release: Arc<(Mutex<bool>, Condvar)>,
}

impl Stalling {
    fn release(&self) {
        let (lock, cv) = &*self.release;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }
}

impl ClientContext for Stalling {}

impl ConsumerContext for Stalling {
    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                consumer
                    .incremental_assign(tpl)
                    .expect("incremental assign");
            }
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => {
                if self.stall.swap(false, Ordering::SeqCst) {
                    self.stalled.store(true, Ordering::SeqCst);
                    let (lock, cv) = &*self.release;
                    let released = lock.lock().unwrap();
                    let (_released, waited) = cv
                        .wait_timeout_while(released, Duration::from_secs(60), |r| !*r)
                        .unwrap();
                    assert!(!waited.timed_out(), "never released");
                }
                let _ = consumer.incremental_unassign(tpl);
            }
            _ => {
                let _ = consumer.unassign();
            }
        }
    }
}

/// A member polling on its own thread (blocking polls, so librdkafka's own max.poll.interval.ms check never
/// fires while the application sits in its rebalance callback) until `shared.stop`.
fn member(bs: &str, ctx: Stalling, shared: Shared, max_poll_ms: &str) -> JoinHandle<()> {
    let mut c = client_config(bs);
    c.set("group.id", "g-stall")
        .set("group.protocol", "consumer")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("max.poll.interval.ms", max_poll_ms);
    let consumer: BaseConsumer<Stalling> = c.create_with_context(ctx).expect("consumer");
    consumer.subscribe(&[TOPIC]).expect("subscribe");
    std::thread::spawn(move || {
        while !shared.stop.load(Ordering::SeqCst) {
            if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                shared
                    .consumed
                    .lock()
                    .unwrap()
                    .insert((m.partition(), m.offset()));
            }
            let owned = consumer
                .assignment()
                .map(|t| t.elements().iter().map(|e| e.partition()).collect())
                .unwrap_or_default();
            *shared.owned.lock().unwrap() = owned;
        }
    })
}

async fn produce(bs: &str, from: usize, to: usize) {
    let prod = producer(bs, &[]);
    for i in from..to {
        let v = format!("r{i}");
        let p = i as i32 % PARTITIONS;
        let rec = FutureRecord::<(), _>::to(TOPIC).payload(&v).partition(p);
        prod.send(rec, Duration::from_secs(10))
            .await
            .expect("produce");
    }
}

async fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Kafka's `scheduleConsumerGroupRebalanceTimeout`: member a is asked to revoke two of its four partitions when
/// b joins, and its application does not let go (stuck in the rebalance callback, librdkafka heartbeating on).
/// After a's rebalance timeout (max.poll.interval.ms = 2 s) the coordinator fences a and b gets all four
/// partitions while a still has not revoked anything; b consumes every record, including those produced while
/// a was stuck (a committed nothing, so b starts from the beginning).
#[tokio::test(flavor = "multi_thread")]
async fn rdkafka_member_not_revoking_within_its_rebalance_timeout_is_fenced_and_the_other_consumes_all(
) {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(
        dir.path(),
        &[("group.consumer.heartbeat.interval.ms", "200")],
    )
    .await;
    let bs = bootstrap(&server);
    create_topic(&bs, TOPIC, PARTITIONS).await;
    produce(&bs, 0, 40).await;

    let a_ctx = Stalling::default();
    a_ctx.stall.store(true, Ordering::SeqCst);
    let a = Shared::default();
    let a_thread = member(&bs, a_ctx.clone(), a.clone(), "2000");
    wait_for("a owning every partition", Duration::from_secs(30), || {
        a.owned.lock().unwrap().len() == PARTITIONS as usize
    })
    .await;

    let b = Shared::default();
    let b_thread = member(&bs, Stalling::default(), b.clone(), "30000");
    wait_for("a asked to revoke", Duration::from_secs(30), || {
        a_ctx.stalled.load(Ordering::SeqCst)
    })
    .await;
    let stalled_at = Instant::now();
    produce(&bs, 40, 80).await;
    wait_for(
        "b owning every partition and every record consumed",
        Duration::from_secs(30),
        || {
            b.owned.lock().unwrap().len() == PARTITIONS as usize
                && b.consumed.lock().unwrap().len() == 80
        },
    )
    .await;
    assert!(
        a_ctx.stalled.load(Ordering::SeqCst) && !*a_ctx.release.0.lock().unwrap(),
        "a is still inside its revocation: it was fenced, it did not give the partitions up"
    );
    assert!(
        stalled_at.elapsed() >= Duration::from_millis(1_500),
        "b took a's partitions before a's rebalance timeout ({:?})",
        stalled_at.elapsed()
    );
    let all: BTreeSet<(i32, i64)> = (0..PARTITIONS)
        .flat_map(|p| (0..20).map(move |o| (p, o)))
        .collect();
    assert_eq!(*b.consumed.lock().unwrap(), all, "every record, once each");

    a_ctx.release();
    for s in [&a, &b] {
        s.stop.store(true, Ordering::SeqCst);
    }
    a_thread.join().unwrap();
    b_thread.join().unwrap();
    server.shutdown().await.unwrap();
}
