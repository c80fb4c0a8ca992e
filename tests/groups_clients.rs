//! Classic consumer groups with real clients (librdkafka through the rdkafka crate): cooperative-sticky
//! rebalancing, members stalled past `max.poll.interval.ms`, static members coming and going, and a broker
//! restart under running consumers.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::producer::FutureRecord;
use rdkafka::Message;

use common::{bootstrap, client_config, create_topic, producer, start_broker_with};

/// (topic, partition)
type Tp = (String, i32);

/// Rebalance callbacks in order: ("assign" | "revoke", partitions).
type Events<T> = Arc<Mutex<Vec<(&'static str, BTreeSet<T>)>>>;

/// Records every rebalance callback of one consumer: ("assign" | "revoke", partitions).
#[derive(Clone, Default)]
struct Recorder {
    events: Events<Tp>,
}

impl ClientContext for Recorder {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        // GROUPS_DEBUG=1 (with `debug=cgrp` set below) prints librdkafka's group logs.
        if std::env::var_os("GROUPS_DEBUG").is_some() {
            eprintln!("rdkafka {level:?} {fac}: {log_message}");
        }
    }
}

impl ConsumerContext for Recorder {
    fn pre_rebalance(&self, _c: &BaseConsumer<Self>, r: &Rebalance<'_>) {
        let (kind, tpl) = match r {
            Rebalance::Assign(t) => ("assign", *t),
            Rebalance::Revoke(t) => ("revoke", *t),
            Rebalance::Error(_) => return,
        };
        let tps = tpl
            .elements()
            .iter()
            .map(|e| (e.topic().to_string(), e.partition()))
            .collect();
        self.events.lock().unwrap().push((kind, tps));
    }
}

impl Recorder {
    fn count(&self) -> usize {
        self.events.lock().unwrap().len()
    }
    fn since(&self, n: usize) -> Vec<(&'static str, BTreeSet<Tp>)> {
        self.events.lock().unwrap()[n..].to_vec()
    }
}

type Member = BaseConsumer<Recorder>;

/// Group properties for the tests' brokers: sessions may be short.
const BROKER: &[(&str, &str)] = &[("group.min.session.timeout.ms", "500")];

fn member(bs: &str, group: &str, topic: &str, extra: &[(&str, &str)]) -> (Member, Recorder) {
    let rec = Recorder::default();
    let mut c = client_config(bs);
    c.set("group.id", group)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "300");
    if std::env::var_os("GROUPS_DEBUG").is_some() {
        c.set("debug", "cgrp").set("log_level", "7");
    }
    for (k, v) in extra {
        c.set(*k, *v);
    }
    let m: Member = c.create_with_context(rec.clone()).expect("consumer");
    m.subscribe(&[topic]).expect("subscribe");
    (m, rec)
}

fn owned(m: &Member) -> BTreeSet<Tp> {
    m.assignment()
        .map(|t| {
            t.elements()
                .iter()
                .map(|e| (e.topic().to_string(), e.partition()))
                .collect()
        })
        .unwrap_or_default()
}

/// Closes a (dynamic) member as an application closing its consumer would, without the close racing a rebalance:
/// rust-rdkafka's `Drop` closes through librdkafka's close queue and serves a rebalance that lands meanwhile by
/// calling `rd_kafka_assign`, which never returns once the group handler is terminating (the churn test hung there
/// in CI, stack in `BaseConsumer::drop` -> `rd_kafka_assign`; a client-side race, as likely against Kafka). So the
/// member first unsubscribes (revoke + LeaveGroup) and is polled until it owns nothing, and the drop runs on a
/// thread of its own so that the members still polled here never wait on it.
fn leave(m: Member) {
    m.unsubscribe();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !owned(&m).is_empty() {
        assert!(
            Instant::now() < deadline,
            "a leaving member still owns {:?} after 10 s",
            owned(&m)
        );
        let _ = m.poll(Duration::from_millis(20));
    }
    std::thread::spawn(move || drop(m));
}

/// Polls every member until `done` holds (panics after `limit`); returns the records each consumed.
fn poll_until(
    members: &[&Member],
    what: &str,
    limit: Duration,
    mut done: impl FnMut(&[Vec<(i32, i64)>]) -> bool,
) -> Vec<Vec<(i32, i64)>> {
    let deadline = Instant::now() + limit;
    let mut got = vec![Vec::new(); members.len()];
    loop {
        for (i, m) in members.iter().enumerate() {
            while let Some(r) = m.poll(Duration::from_millis(20)) {
                if let Ok(msg) = r {
                    got[i].push((msg.partition(), msg.offset()));
                }
            }
        }
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
    }
}

/// Every partition of `n` owned exactly once across `members`, `n / members` each.
fn balanced(members: &[&Member], topic: &str, n: i32) -> bool {
    let sets: Vec<BTreeSet<Tp>> = members.iter().map(|m| owned(m)).collect();
    let total: usize = sets.iter().map(BTreeSet::len).sum();
    let union: BTreeSet<Tp> = sets.iter().flatten().cloned().collect();
    let all: BTreeSet<Tp> = (0..n).map(|p| (topic.to_string(), p)).collect();
    total == n as usize
        && union == all
        && sets.iter().all(|s| s.len() == n as usize / members.len())
}

/// KIP-429 (cooperative-sticky): as members join and leave one at a time, a member revokes only partitions that
/// then move to another member; members that stay lose nothing when one leaves; no partition is owned twice.
#[tokio::test(flavor = "multi_thread")]
async fn cooperative_members_joining_and_leaving_revoke_only_partitions_that_move() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "coop", 6).await;
    tokio::task::spawn_blocking(move || {
        let coop = [("partition.assignment.strategy", "cooperative-sticky")];
        let mut members: Vec<(Member, Recorder)> = Vec::new();
        for n in 1..=3 {
            let before: Vec<usize> = members.iter().map(|(_, r)| r.count()).collect();
            members.push(member(&bs, "coop-g", "coop", &coop));
            let all: Vec<&Member> = members.iter().map(|(m, _)| m).collect();
            poll_until(
                &all,
                &format!("{n} balanced members"),
                Duration::from_secs(60),
                |_| balanced(&all, "coop", 6),
            );
            for (i, (m, r)) in members.iter().enumerate().take(n - 1) {
                let mine = owned(m);
                for (kind, tps) in r.since(before[i]) {
                    if kind == "revoke" {
                        assert!(
                            tps.is_disjoint(&mine),
                            "member {i} revoked {tps:?} and owns some of them again: {mine:?}"
                        );
                    }
                }
            }
        }
        while members.len() > 1 {
            let (gone, _) = members.pop().unwrap();
            leave(gone);
            let before: Vec<usize> = members.iter().map(|(_, r)| r.count()).collect();
            let all: Vec<&Member> = members.iter().map(|(m, _)| m).collect();
            let left = all.len();
            poll_until(
                &all,
                &format!("{left} balanced members"),
                Duration::from_secs(60),
                |_| balanced(&all, "coop", 6),
            );
            for (i, (_, r)) in members.iter().enumerate() {
                let revoked: Vec<_> = r
                    .since(before[i])
                    .into_iter()
                    .filter(|(k, _)| *k == "revoke")
                    .collect();
                assert!(
                    revoked.is_empty(),
                    "member {i} revoked {revoked:?} when another left"
                );
            }
        }
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

/// Kafka: a member that stops polling for longer than `max.poll.interval.ms` leaves the group (the rebalance
/// timeout bounds its rejoin); its partitions go to the others, who keep consuming.
#[tokio::test(flavor = "multi_thread")]
async fn a_member_stalled_past_max_poll_interval_loses_its_partitions_to_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "stall", 4).await;
    let prod = producer(&bs, &[]);
    tokio::task::spawn_blocking(move || {
        let cfg = [
            ("session.timeout.ms", "1000"),
            ("max.poll.interval.ms", "2000"),
        ];
        let (a, _) = member(&bs, "stall-g", "stall", &cfg);
        let (b, _) = member(&bs, "stall-g", "stall", &cfg);
        poll_until(
            &[&a, &b],
            "two members with two partitions each",
            Duration::from_secs(60),
            |_| balanced(&[&a, &b], "stall", 4),
        );
        // a stalls (is never polled again); b takes over all four partitions and consumes what is produced.
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut got: BTreeMap<i32, usize> = BTreeMap::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut round = 0;
        while owned(&b).len() < 4 || got.len() < 4 {
            assert!(
                Instant::now() < deadline,
                "b owns {:?}, consumed {got:?}",
                owned(&b)
            );
            round += 1;
            rt.block_on(async {
                for p in 0..4 {
                    let v = format!("r{round}");
                    let rec = FutureRecord::<(), _>::to("stall").payload(&v).partition(p);
                    prod.send(rec, Duration::from_secs(10))
                        .await
                        .expect("produce");
                }
            });
            let polled = poll_until(&[&b], "b polls", Duration::from_secs(5), |_| true);
            for (p, _) in &polled[0] {
                *got.entry(*p).or_default() += 1;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(a);
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

/// KIP-345: a static member restarted within its session timeout gets its partitions back with no rebalance
/// (the other member sees no callback); one away longer than its session timeout is removed, the other member
/// takes its partitions, and its return rebalances the group again.
#[tokio::test(flavor = "multi_thread")]
async fn a_static_member_restarted_in_time_keeps_its_partitions_and_one_away_longer_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "stat", 4).await;
    tokio::task::spawn_blocking(move || {
        let as_static = |i: &str| {
            let cfg = [("group.instance.id", i), ("session.timeout.ms", "3000")];
            member(&bs, "stat-g", "stat", &cfg)
        };
        let (a, _) = as_static("a");
        let (b, b_rec) = as_static("b");
        poll_until(
            &[&a, &b],
            "two static members",
            Duration::from_secs(60),
            |_| balanced(&[&a, &b], "stat", 4),
        );
        let a_owned = owned(&a);
        let b_events = b_rec.count();
        drop(a);
        let (a2, _) = as_static("a");
        poll_until(
            &[&a2, &b],
            "a back with its partitions",
            Duration::from_secs(30),
            |_| owned(&a2).len() == 2,
        );
        assert_eq!(owned(&a2), a_owned, "the same partitions");
        // A while longer: b's session goes on with no rebalance callback.
        let quiet_until = Instant::now() + Duration::from_secs(2);
        poll_until(
            &[&a2, &b],
            "a few heartbeats",
            Duration::from_secs(5),
            |_| Instant::now() >= quiet_until,
        );
        assert_eq!(
            b_rec.count(),
            b_events,
            "b saw a rebalance: {:?}",
            b_rec.since(b_events)
        );

        // Away longer than its session timeout: b takes everything.
        drop(a2);
        poll_until(
            &[&b],
            "b owns every partition",
            Duration::from_secs(30),
            |_| owned(&b).len() == 4,
        );
        let (a3, _) = as_static("a");
        poll_until(&[&a3, &b], "a rejoined", Duration::from_secs(60), |_| {
            balanced(&[&a3, &b], "stat", 4)
        });
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

/// Kafka stores each generation in `__consumer_offsets`: after a broker restart the group is known, its
/// members go on in their generation with no rebalance, and consume on from their committed offsets.
#[tokio::test(flavor = "multi_thread")]
async fn running_consumers_go_on_across_a_broker_restart_without_a_rebalance() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    let port = server.local_addr().port();
    create_topic(&bs, "rs", 2).await;
    let produce = |bs: String, tag: &'static str| async move {
        let prod = producer(&bs, &[]);
        for p in 0..2 {
            for i in 0..5 {
                let v = format!("{tag}-{i}");
                let rec = FutureRecord::<(), _>::to("rs").payload(&v).partition(p);
                prod.send(rec, Duration::from_secs(10))
                    .await
                    .expect("produce");
            }
        }
    };
    let (a, a_rec) = member(&bs, "rs-g", "rs", &[]);
    let (b, b_rec) = member(&bs, "rs-g", "rs", &[]);
    let (a, b) = tokio::task::spawn_blocking(move || {
        poll_until(
            &[&a, &b],
            "one partition each",
            Duration::from_secs(60),
            |_| balanced(&[&a, &b], "rs", 2),
        );
        (a, b)
    })
    .await
    .unwrap();
    produce(bs.clone(), "before").await;
    let (a, b) = tokio::task::spawn_blocking(move || {
        poll_until(
            &[&a, &b],
            "ten records before the restart",
            Duration::from_secs(60),
            |got| got.iter().all(|g| g.len() >= 5),
        );
        for m in [&a, &b] {
            m.commit_consumer_state(rdkafka::consumer::CommitMode::Sync)
                .expect("commit before the restart");
        }
        (a, b)
    })
    .await
    .unwrap();
    let events = (a_rec.count(), b_rec.count());
    server.shutdown().await.unwrap();

    let listener = format!("PLAINTEXT://127.0.0.1:{port}");
    let mut props: Vec<(&str, &str)> = BROKER.to_vec();
    props.push(("listeners", &listener));
    let server = start_broker_with(dir.path(), &props).await;
    produce(bs.clone(), "after").await;
    let (a, b) = tokio::task::spawn_blocking(move || {
        let got = poll_until(
            &[&a, &b],
            "the records produced after the restart",
            Duration::from_secs(60),
            |got| got.iter().all(|g| g.len() >= 5),
        );
        assert!(
            got.iter().all(|g| g.len() == 5),
            "nothing consumed twice: {got:?}"
        );
        for m in [&a, &b] {
            m.commit_consumer_state(rdkafka::consumer::CommitMode::Sync)
                .expect("a commit of the same generation after the restart");
        }
        (a, b)
    })
    .await
    .unwrap();
    assert_eq!(
        (a_rec.count(), b_rec.count()),
        events,
        "a rebalance after the restart: {:?} {:?}",
        a_rec.since(events.0),
        b_rec.since(events.1)
    );
    drop((a, b));
    server.shutdown().await.unwrap();
}

/// Members churning under produce load (one leaves and one joins every second): every produced record is
/// consumed (at least once: offsets are committed only for records seen), and at no instant do two members own the same partition.
#[tokio::test(flavor = "multi_thread")]
async fn churning_members_under_load_consume_every_record_and_never_share_a_partition() {
    churn(4, 6, Duration::from_secs(12)).await;
}

/// Issue 15's figure: 10 members churning for a minute under produce load (one leaves and one joins every
/// second), every record consumed and no partition owned by two members at once. About 61 s (7,725 records over 12
/// partitions, measured with the machine's load at 9 on 2 cores), so it stays in the normal run.
#[tokio::test(flavor = "multi_thread")]
async fn ten_members_churning_for_a_minute_consume_every_record_and_never_share_a_partition() {
    churn(10, 12, Duration::from_secs(60)).await;
}

/// `n` members of one group consume `partitions` partitions for `run` while one member leaves and a new one joins
/// every second and a producer writes all along; then every record produced must have been consumed.
async fn churn(n: usize, partitions: i32, run: Duration) {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), BROKER).await;
    let bs = bootstrap(&server);
    create_topic(&bs, "churn", partitions).await;
    let parts = partitions as u64;
    let started_all = Instant::now();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let prod = producer(&bs, &[("linger.ms", "5")]);
    let stop2 = stop.clone();
    let produced = tokio::spawn(async move {
        let mut n = 0u64;
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            let v = format!("r{n}");
            let rec = FutureRecord::<(), _>::to("churn")
                .payload(&v)
                .partition((n % parts) as i32);
            prod.send(rec, Duration::from_secs(10))
                .await
                .expect("produce");
            n += 1;
            if n.is_multiple_of(50) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        n
    });
    let bs2 = bs.clone();
    let stop3 = stop.clone();
    let consumed = tokio::task::spawn_blocking(move || {
        let cfg = [
            // Offsets are stored only for records seen here: rdkafka's drop polls (and discards) records while
            // closing, and auto commit would otherwise commit past them.
            ("enable.auto.commit", "true"),
            ("auto.commit.interval.ms", "200"),
            ("enable.auto.offset.store", "false"),
        ];
        let mut members: Vec<Member> = (0..n)
            .map(|_| member(&bs2, "churn-g", "churn", &cfg).0)
            .collect();
        let mut got: BTreeSet<(i32, i64)> = BTreeSet::new();
        let started = Instant::now();
        let mut last_churn = Instant::now();
        let poll_all = |members: &[Member], got: &mut BTreeSet<(i32, i64)>| {
            for m in members {
                while let Some(r) = m.poll(Duration::from_millis(5)) {
                    if let Ok(msg) = r {
                        got.insert((msg.partition(), msg.offset()));
                        let _ = m.store_offset_from_message(&msg);
                    }
                }
            }
            let mut seen: BTreeMap<Tp, usize> = BTreeMap::new();
            for (i, m) in members.iter().enumerate() {
                for tp in owned(m) {
                    if let Some(other) = seen.insert(tp.clone(), i) {
                        panic!("{tp:?} owned by members {other} and {i} at once");
                    }
                }
            }
        };
        while started.elapsed() < run {
            poll_all(&members, &mut got);
            if last_churn.elapsed() >= Duration::from_secs(1) {
                leave(members.remove(0));
                members.push(member(&bs2, "churn-g", "churn", &cfg).0);
                last_churn = Instant::now();
            }
        }
        stop3.store(true, std::sync::atomic::Ordering::Relaxed);
        (members, got)
    })
    .await
    .unwrap();
    let total = produced.await.unwrap();
    let (members, mut got) = consumed;
    let per_partition = move |p: u64| total / parts + u64::from(p < total % parts);
    tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            for m in &members {
                while let Some(r) = m.poll(Duration::from_millis(5)) {
                    if let Ok(msg) = r {
                        got.insert((msg.partition(), msg.offset()));
                    }
                }
            }
            let complete = (0..partitions)
                .all(|p| (0..per_partition(p as u64) as i64).all(|o| got.contains(&(p, o))));
            if complete {
                break;
            }
            let gr = &got;
            let missing: Vec<(i32, i64)> = (0..partitions)
                .flat_map(|p| {
                    (0..per_partition(p as u64) as i64)
                        .filter(move |o| !gr.contains(&(p, *o)))
                        .map(move |o| (p, o))
                        .collect::<Vec<_>>()
                })
                .collect();
            assert!(
                Instant::now() < deadline,
                "{} of {total} records never consumed: {missing:?}",
                missing.len()
            );
        }
        members.into_iter().for_each(leave);
    })
    .await
    .unwrap();
    eprintln!(
        "churn: {n} members, {partitions} partitions, {total} records produced and consumed, {:.1} s in all",
        started_all.elapsed().as_secs_f64()
    );
    server.shutdown().await.unwrap();
}
