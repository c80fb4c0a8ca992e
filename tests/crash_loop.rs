//! The crash loop (issue 30 item 4): the `strata` binary is stopped again and again, at a crash point between
//! the writes of a durable step (a `--features failpoints` build, `FAILPOINTS=<point>=<n>*off->return`) or by
//! SIGKILL at a random moment, under load: idempotent producers on a tiered topic, a tiered topic whose remote
//! segments expire and a compacted topic, a transactional consume-transform-produce application (offsets sent to
//! each transaction), a consumer group committing offsets, and topic / dynamic-config / SCRAM changes. After each
//! restart it checks that
//! - every acknowledged record is there exactly once, at the offset it was acknowledged with (read back through
//!   the broker, from the remote tier too), and no record is there twice;
//! - the compacted topic holds, per key, a value at least as new as the newest acknowledged one;
//! - committed offsets never go back (the group's and the transactional application's);
//! - under read_committed every transaction is all or nothing, every input below the application's committed
//!   offset is in the output exactly once;
//! - the topics whose creation was acknowledged exist;
//! - `strata remote verify` is clean (after a clean stop).
//!
//! `crash_loop_smoke` (in `cargo test`): a few SIGKILLs with the plain binary. `crash_loop` (ignored; run by
//! `tests/crash_loop.sh`, which builds the failpoints binary): `CRASH_LOOP_KILLS` kills (default 100), crash
//! points round-robin interleaved with SIGKILLs; it prints the kills per crash point and the losses.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminOptions, AlterConfig, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, BaseRecord, FutureProducer, FutureRecord, Producer};
use rdkafka::{Message, Offset, TopicPartitionList};

const PLAIN: &str = "plain";
const PLAIN_PARTITIONS: i32 = 3;
const EXPIRING: &str = "expiring";
const COMPACTED: &str = "compacted";
const OUT: &str = "out";
const TXN_ID: &str = "crash-ctp";
const CTP_GROUP: &str = "crash-ctp";
const WATCH_GROUP: &str = "crash-watch";
const T: Duration = Duration::from_secs(20);
/// Timeout of the application's transactional calls (the broker may be gone).
const CT: Duration = Duration::from_secs(8);

/// What the clients were told was written (kept across kills).
#[derive(Default)]
struct Acked {
    /// plain value → (partition, offset).
    plain: HashMap<String, (i32, i64)>,
    /// compacted key → newest acknowledged sequence number.
    compacted: HashMap<String, u64>,
    /// Transactions whose commit was acknowledged: tag → record count.
    txns: HashMap<String, usize>,
    /// Highest acknowledged commit of the watching group, per partition.
    watch: BTreeMap<i32, i64>,
    /// Highest acknowledged offsets sent to a committed transaction, per partition of `plain`.
    ctp: BTreeMap<i32, i64>,
    /// Topics whose creation was acknowledged.
    topics: BTreeSet<String>,
}

/// Broker properties of the loop: tiering on the filesystem default, fast remote/cleaner/checkpoint tasks,
/// small internal segments so the offsets and transaction logs roll and get compacted.
fn overrides(dir: &Path, port: u16) -> Vec<String> {
    [
        format!("listeners=PLAINTEXT://127.0.0.1:{port}"),
        format!("log.dirs={}", dir.join("data").display()),
        "http.listener=".into(),
        "group.initial.rebalance.delay.ms=0".into(),
        "remote.log.manager.task.interval.ms=200".into(),
        "remote.log.manager.task.retry.backoff.ms=50".into(),
        "rlmm.config.remote.log.metadata.topic.num.partitions=2".into(),
        "log.retention.check.interval.ms=200".into(),
        "log.cleaner.backoff.ms=200".into(),
        "log.cleaner.min.cleanable.ratio=0.01".into(),
        "log.flush.offset.checkpoint.interval.ms=300".into(),
        "offsets.topic.num.partitions=2".into(),
        "offsets.topic.segment.bytes=32768".into(),
        "transaction.state.log.num.partitions=2".into(),
        "transaction.state.log.segment.bytes=32768".into(),
        "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000".into(),
    ]
    .into()
}

/// The `strata` child: started with `FAILPOINTS` when `failpoint` is set.
struct Broker {
    child: Child,
    bootstrap: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Broker {
    fn spawn(dir: &Path, port: u16, failpoint: Option<&str>) -> Broker {
        let mut cmd = Command::new(common::strata_bin());
        for o in overrides(dir, port) {
            cmd.args(["--override", &o]);
        }
        cmd.env("RUST_LOG", "info").env_remove("FAILPOINTS");
        if let Some(fp) = failpoint {
            cmd.env("FAILPOINTS", fp);
        }
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn strata");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let keep = log.clone();
        std::thread::spawn(move || {
            let mut ready = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("bootstrap.servers=").nth(1) {
                    if let Some(tx) = ready.take() {
                        let addr = rest.split_whitespace().next().unwrap_or_default();
                        let _ = tx.send(addr.to_string());
                    }
                }
                let mut l = keep.lock().unwrap();
                l.push(line);
                if l.len() > 400 {
                    l.drain(..200);
                }
            }
        });
        let bootstrap = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(b) => b,
            // A crash point reached during start-up (a registry or checkpoint write before the ready line): the
            // cycle sees the broker exited at its point.
            Err(_)
                if failpoint.is_some()
                    && log
                        .lock()
                        .unwrap()
                        .iter()
                        .any(|l| l.contains("crash point") && l.contains("reached")) =>
            {
                format!("127.0.0.1:{port}")
            }
            Err(_) => panic!(
                "strata did not print its ready line within 60 s; last log lines:\n{}",
                log.lock().unwrap().join("\n")
            ),
        };
        Broker {
            child,
            bootstrap,
            log,
        }
    }

    fn exited(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_some()
    }

    fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn terminate(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.exited() {
            assert!(
                Instant::now() < deadline,
                "strata did not stop within 30 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn tail(&self) -> String {
        let l = self.log.lock().unwrap();
        l[l.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap)
        .set("log_level", "0")
        .set("reconnect.backoff.ms", "50")
        .set("reconnect.backoff.max.ms", "500");
    c
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn create_topics(bootstrap: &str) {
    let admin = common::admin(bootstrap);
    let tiered = [
        ("remote.storage.enable", "true"),
        ("segment.bytes", "16384"),
        ("local.retention.bytes", "32768"),
        ("retention.ms", "-1"),
    ];
    let expiring = [
        ("remote.storage.enable", "true"),
        ("segment.bytes", "8192"),
        ("local.retention.bytes", "8192"),
        ("retention.bytes", "32768"),
    ];
    let compacted = [
        ("cleanup.policy", "compact"),
        ("segment.bytes", "8192"),
        ("min.cleanable.dirty.ratio", "0.01"),
    ];
    let topics: Vec<NewTopic<'_>> = vec![
        with(
            NewTopic::new(PLAIN, PLAIN_PARTITIONS, TopicReplication::Fixed(1)),
            &tiered,
        ),
        with(NewTopic::new(OUT, 2, TopicReplication::Fixed(1)), &tiered),
        with(
            NewTopic::new(EXPIRING, 1, TopicReplication::Fixed(1)),
            &expiring,
        ),
        with(
            NewTopic::new(COMPACTED, 1, TopicReplication::Fixed(1)),
            &compacted,
        ),
    ];
    let res = rt()
        .block_on(admin.create_topics(&topics, &AdminOptions::new()))
        .expect("create topics");
    for r in res {
        r.expect("topic created");
    }
}

fn with<'a>(mut t: NewTopic<'a>, configs: &[(&'a str, &'a str)]) -> NewTopic<'a> {
    for (k, v) in configs {
        t = t.set(k, v);
    }
    t
}

/// Waits up to 20 s for the cycle's client threads; one still blocked in a client call after that (librdkafka
/// calls without a bound while the broker is down) is left to finish on its own: what it records later was
/// acknowledged by a later broker, and is checked at the next restart.
fn join_bounded(threads: Vec<JoinHandle<()>>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline && threads.iter().any(|t| !t.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for t in threads {
        if t.is_finished() {
            t.join().expect("client thread");
        } else {
            eprintln!(
                "crash loop: client thread {:?} still blocked, left running",
                t.thread().name()
            );
        }
    }
}

/// One client thread of a cycle.
fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .unwrap()
}

/// Idempotent producers: `plain` (every value unique, acks tracked with their offsets), a copy to `expiring`
/// (whose remote segments expire), and 40 keys on `compacted`.
fn produce(bootstrap: String, cycle: usize, stop: Arc<AtomicBool>, acked: Arc<Mutex<Acked>>) {
    let p: FutureProducer = config(&bootstrap)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "4000")
        .create()
        .unwrap();
    let mut seq = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let mut plain = Vec::new();
        let mut comp = Vec::new();
        for _ in 0..20 {
            seq += 1;
            let v = format!("c{cycle:04}-{seq:07}-{}", "x".repeat(60));
            let key = format!("k{seq}");
            let ck = format!("k{}", seq % 40);
            let cv = (cycle as u64) << 32 | seq;
            let cval = cv.to_string();
            plain.push((
                v.clone(),
                p.send_result(FutureRecord::to(PLAIN).key(&key).payload(&v))
                    .map_err(|(e, _)| e),
            ));
            let _ = p.send_result(FutureRecord::to(EXPIRING).key(&key).payload(&v));
            comp.push((
                ck.clone(),
                cv,
                p.send_result(FutureRecord::to(COMPACTED).key(&ck).payload(&cval))
                    .map_err(|(e, _)| e),
            ));
        }
        for (v, f) in plain {
            if let Ok(f) = f {
                if let Ok(Ok(d)) = futures::executor::block_on(f) {
                    acked
                        .lock()
                        .unwrap()
                        .plain
                        .insert(v, (d.partition, d.offset));
                }
            }
        }
        for (k, cv, f) in comp {
            if let Ok(f) = f {
                if let Ok(Ok(_)) = futures::executor::block_on(f) {
                    let mut a = acked.lock().unwrap();
                    let e = a.compacted.entry(k).or_default();
                    *e = (*e).max(cv);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Assigns every partition of `plain` from the group's committed offsets (a simple consumer: after a kill the
/// crashed members' sessions would hold the partitions for `session.timeout.ms`).
fn assign_stored<C: rdkafka::consumer::ConsumerContext>(c: &BaseConsumer<C>) {
    let mut tpl = TopicPartitionList::new();
    for p in 0..PLAIN_PARTITIONS {
        tpl.add_partition_offset(PLAIN, p, Offset::Stored).unwrap();
    }
    c.assign(&tpl).unwrap();
}

/// A group consuming `plain` and committing every few messages. The commits are asynchronous (a synchronous one
/// waits for a coordinator without a bound while the broker is down) and rust-rdkafka's `BaseConsumer` never
/// hands their results to `ConsumerContext::commit_callback` (it drops librdkafka's OffsetCommit events from the
/// main queue), so what the broker acknowledged is read back with a bounded OffsetFetch after each commit: an
/// offset the broker answered with must never go back.
fn watch(bootstrap: String, stop: Arc<AtomicBool>, acked: Arc<Mutex<Acked>>) {
    let c: BaseConsumer = config(&bootstrap)
        .set("group.id", WATCH_GROUP)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    assign_stored(&c);
    let mut since = 0;
    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
    while !stop.load(Ordering::SeqCst) {
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                next.insert(m.partition(), m.offset() + 1);
                since += 1;
            }
            _ => continue,
        }
        if since < 25 {
            continue;
        }
        since = 0;
        let mut tpl = TopicPartitionList::new();
        for (p, o) in &next {
            tpl.add_partition_offset(PLAIN, *p, Offset::Offset(*o))
                .unwrap();
        }
        if c.commit(&tpl, rdkafka::consumer::CommitMode::Async)
            .is_err()
        {
            continue;
        }
        let Ok(stored) = c.committed(Duration::from_secs(2)) else {
            continue;
        };
        let mut a = acked.lock().unwrap();
        for e in stored.elements() {
            if let (Offset::Offset(o), Ok(())) = (e.offset(), e.error()) {
                let w = a.watch.entry(e.partition()).or_insert(o);
                *w = (*w).max(o);
            }
        }
    }
}

/// The transactional consume-transform-produce application: reads `plain` (read_committed, group
/// `crash-ctp`), writes one `out` record per input (key = the input's partition:offset, value = the
/// transaction's tag and size) and sends its offsets to the transaction.
fn ctp(bootstrap: String, cycle: usize, stop: Arc<AtomicBool>, acked: Arc<Mutex<Acked>>) {
    let c: BaseConsumer = config(&bootstrap)
        .set("group.id", CTP_GROUP)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("session.timeout.ms", "6000")
        .create()
        .unwrap();
    let p: BaseProducer = config(&bootstrap)
        .set("transactional.id", TXN_ID)
        .set("transaction.timeout.ms", "10000")
        .set("message.timeout.ms", "5000")
        .create()
        .unwrap();
    if let Err(e) = p.init_transactions(CT) {
        if std::env::var_os("CRASH_LOOP_VERBOSE").is_some() {
            eprintln!("ctp: init_transactions failed: {e}");
        }
        return;
    }
    assign_stored(&c);
    let mut k = 0;
    while !stop.load(Ordering::SeqCst) {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(300);
        while got.len() < 30 && Instant::now() < deadline {
            if let Some(Ok(m)) = c.poll(Duration::from_millis(50)) {
                got.push((m.partition(), m.offset()));
            }
        }
        if got.is_empty() {
            continue;
        }
        k += 1;
        let tag = format!("t{cycle:04}.{k}");
        let r: Result<(), KafkaError> = (|| {
            p.begin_transaction()?;
            for (i, (sp, so)) in got.iter().enumerate() {
                let key = format!("{sp}:{so}");
                let val = format!("{tag}|{i}|{}", got.len());
                p.send(BaseRecord::to(OUT).key(&key).payload(&val))
                    .map_err(|(e, _)| e)?;
            }
            p.flush(CT)?;
            let pos = c.position()?;
            p.send_offsets_to_transaction(&pos, &c.group_metadata().unwrap(), CT)?;
            p.commit_transaction(CT)?;
            let mut a = acked.lock().unwrap();
            a.txns.insert(tag.clone(), got.len());
            for e in pos.elements() {
                if let Offset::Offset(o) = e.offset() {
                    let w = a.ctp.entry(e.partition()).or_insert(o);
                    *w = (*w).max(o);
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            // The broker is going down; the next cycle starts the application again.
            if std::env::var_os("CRASH_LOOP_VERBOSE").is_some() {
                eprintln!("ctp: transaction {tag} failed: {e}");
            }
            return;
        }
    }
}

/// Topic creations, a dynamic broker config and SCRAM credentials: the registry, dynamic-config and SCRAM
/// stores' writes.
fn churn(bootstrap: String, cycle: usize, stop: Arc<AtomicBool>, acked: Arc<Mutex<Acked>>) {
    let admin = common::admin(&bootstrap);
    let rt = rt();
    let addr: std::net::SocketAddr = bootstrap.parse().unwrap();
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) && i < 6 {
        i += 1;
        let name = format!("churn-{cycle}-{i}");
        let opts = AdminOptions::new()
            .operation_timeout(Some(Duration::from_secs(5)))
            .request_timeout(Some(Duration::from_secs(5)));
        let t = NewTopic::new(&name, 1, TopicReplication::Fixed(1));
        if let Ok(res) = rt.block_on(admin.create_topics([&t], &opts)) {
            if matches!(res.as_slice(), [Ok(_)]) {
                acked.lock().unwrap().topics.insert(name);
            }
        }
        let value = (1_048_588 + cycle * 10 + i).to_string();
        let cfg = AlterConfig::new(ResourceSpecifier::Broker(1)).set("message.max.bytes", &value);
        let _ = rt.block_on(admin.alter_configs([&cfg], &opts));
        // A new password each time: an upsertion equal to the stored credential writes nothing.
        let password = (cycle * 6 + i) as u8;
        let _ = rt.block_on(upsert_scram(addr, &format!("user{}", i % 3), password));
        std::thread::sleep(Duration::from_millis(300));
    }
}

async fn upsert_scram(addr: std::net::SocketAddr, user: &str, password: u8) -> Option<()> {
    use kafka_protocol::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion;
    use kafka_protocol::messages::{
        AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, ApiKey,
    };
    use kafka_protocol::protocol::StrBytes;
    let mut s = tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr))
        .await
        .ok()?
        .ok()?;
    let up = ScramCredentialUpsertion::default()
        .with_name(StrBytes::from_string(user.to_string()))
        .with_mechanism(1)
        .with_iterations(4096)
        .with_salt(bytes::Bytes::from_static(b"0123456789abcdef"))
        .with_salted_password(bytes::Bytes::from(vec![password; 32]));
    let req = AlterUserScramCredentialsRequest::default().with_upsertions(vec![up]);
    let _: AlterUserScramCredentialsResponse = tokio::time::timeout(
        Duration::from_secs(3),
        common::raw::request(&mut s, ApiKey::AlterUserScramCredentials, 0, &req),
    )
    .await
    .ok()??;
    Some(())
}

/// Every record of `topic` up to its end: (partition, offset, key, value).
fn read_all(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    committed: bool,
) -> Vec<common::Consumed> {
    let c: BaseConsumer = config(bootstrap)
        .set("group.id", "crash-check")
        .set("enable.partition.eof", "true")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "50")
        .set(
            "isolation.level",
            if committed {
                "read_committed"
            } else {
                "read_uncommitted"
            },
        )
        .create()
        .unwrap();
    common::assign_from_beginning(&c, topic, partitions);
    let mut eof = BTreeSet::new();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while eof.len() < partitions as usize {
        assert!(
            Instant::now() < deadline,
            "reading {topic} did not reach its end in 120 s"
        );
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                eof.remove(&m.partition());
                out.push((
                    m.partition(),
                    m.offset(),
                    m.key().map(<[u8]>::to_vec),
                    m.payload().map(<[u8]>::to_vec),
                ))
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                eof.insert(p);
            }
            Some(Err(e)) => panic!("reading {topic}: {e}"),
            None => {}
        }
    }
    out
}

fn committed_offsets(
    bootstrap: &str,
    group: &str,
    topic: &str,
    partitions: i32,
) -> BTreeMap<i32, i64> {
    let c: BaseConsumer = config(bootstrap).set("group.id", group).create().unwrap();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    let got = c.committed_offsets(tpl, T).expect("committed offsets");
    got.elements()
        .iter()
        .filter_map(|e| match e.offset() {
            Offset::Offset(o) => Some((e.partition(), o)),
            _ => None,
        })
        .collect()
}

/// Fences and aborts the application's transaction left open by the kill, as the restarted application would.
fn fence_open_transaction(bootstrap: &str) {
    let p: BaseProducer = config(bootstrap)
        .set("transactional.id", TXN_ID)
        .create()
        .unwrap();
    p.init_transactions(Duration::from_secs(60))
        .expect("init_transactions after the restart");
}

/// Checks after a restart; returns the problems found (empty: none). `seen` holds the committed offsets last
/// observed, to check they never go back.
fn check(
    bootstrap: &str,
    acked: &Acked,
    seen: &mut BTreeMap<String, BTreeMap<i32, i64>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    // Every acknowledged record exactly once, at its offset; nothing twice.
    let plain = read_all(bootstrap, PLAIN, PLAIN_PARTITIONS, false);
    let mut at: HashMap<String, Vec<(i32, i64)>> = HashMap::new();
    for (p, o, _, v) in &plain {
        let v = String::from_utf8_lossy(v.as_deref().unwrap_or_default()).into_owned();
        at.entry(v).or_default().push((*p, *o));
    }
    for (v, places) in &at {
        if places.len() > 1 {
            problems.push(format!(
                "plain record {v} is there {} times: {places:?}",
                places.len()
            ));
        }
    }
    for (v, place) in &acked.plain {
        match at.get(v) {
            None => problems.push(format!(
                "acknowledged plain record {v} at {place:?} is lost"
            )),
            Some(places) if !places.contains(place) => problems.push(format!(
                "acknowledged plain record {v} at {place:?} is at {places:?}"
            )),
            _ => {}
        }
    }
    // Compacted: per key, a value at least as new as the newest acknowledged one; no value twice.
    let comp = read_all(bootstrap, COMPACTED, 1, false);
    let mut newest: HashMap<String, u64> = HashMap::new();
    let mut values = BTreeSet::new();
    for (_, o, k, v) in &comp {
        let k = String::from_utf8_lossy(k.as_deref().unwrap_or_default()).into_owned();
        let v: u64 = String::from_utf8_lossy(v.as_deref().unwrap_or_default())
            .parse()
            .unwrap_or(0);
        if !values.insert(v) {
            problems.push(format!("compacted value {v} (key {k}) twice, again at {o}"));
        }
        let e = newest.entry(k).or_default();
        *e = (*e).max(v);
    }
    for (k, v) in &acked.compacted {
        if newest.get(k).copied().unwrap_or(0) < *v {
            problems.push(format!(
                "compacted key {k}: acknowledged {v}, newest there {:?}",
                newest.get(k)
            ));
        }
    }
    // Committed offsets never go back.
    let ctp = committed_offsets(bootstrap, CTP_GROUP, PLAIN, PLAIN_PARTITIONS);
    let watch = committed_offsets(bootstrap, WATCH_GROUP, PLAIN, PLAIN_PARTITIONS);
    for (name, now, acks) in [("ctp", &ctp, &acked.ctp), ("watch", &watch, &acked.watch)] {
        for (p, o) in acks {
            if now.get(p).copied().unwrap_or(-1) < *o {
                problems.push(format!(
                    "{name} committed offset of partition {p}: acknowledged {o}, now {:?}",
                    now.get(p)
                ));
            }
        }
        let before = seen.entry(name.to_string()).or_default();
        for (p, o) in before.iter() {
            if now.get(p).copied().unwrap_or(-1) < *o {
                problems.push(format!(
                    "{name} committed offset of partition {p} went back from {o} to {:?}",
                    now.get(p)
                ));
            }
        }
        *before = now.clone();
    }
    // Transactions: all or nothing; each input below the committed offset in the output exactly once.
    fence_open_transaction(bootstrap);
    let out = read_all(bootstrap, OUT, 2, true);
    let mut per_txn: HashMap<String, (usize, usize)> = HashMap::new();
    let mut inputs: HashMap<String, usize> = HashMap::new();
    for (_, _, k, v) in &out {
        let v = String::from_utf8_lossy(v.as_deref().unwrap_or_default()).into_owned();
        let mut parts = v.split('|');
        let tag = parts.next().unwrap_or_default().to_string();
        let n: usize = parts.nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
        let e = per_txn.entry(tag).or_insert((0, n));
        e.0 += 1;
        *inputs
            .entry(String::from_utf8_lossy(k.as_deref().unwrap_or_default()).into_owned())
            .or_default() += 1;
    }
    for (tag, (got, n)) in &per_txn {
        if got != n {
            problems.push(format!(
                "transaction {tag}: {got} of its {n} records are visible"
            ));
        }
    }
    for (tag, n) in &acked.txns {
        if per_txn.get(tag).map(|e| e.0) != Some(*n) {
            problems.push(format!(
                "committed transaction {tag} of {n} records: {:?} visible",
                per_txn.get(tag)
            ));
        }
    }
    for (input, count) in &inputs {
        if *count > 1 {
            problems.push(format!("input {input} transformed {count} times"));
        }
    }
    let mut plain_offsets: BTreeMap<i32, BTreeSet<i64>> = BTreeMap::new();
    for (p, o, _, _) in &plain {
        plain_offsets.entry(*p).or_default().insert(*o);
    }
    for (p, upto) in &ctp {
        for o in plain_offsets
            .get(p)
            .into_iter()
            .flatten()
            .filter(|o| **o < *upto)
        {
            if !inputs.contains_key(&format!("{p}:{o}")) {
                problems.push(format!(
                    "input {p}:{o} is below the committed offset {upto} but not in the output"
                ));
            }
        }
    }
    // Acknowledged topic creations.
    let md = common::admin(bootstrap);
    let meta = md.inner().fetch_metadata(None, T).expect("metadata");
    let names: BTreeSet<&str> = meta.topics().iter().map(|t| t.name()).collect();
    for t in &acked.topics {
        if !names.contains(t.as_str()) {
            problems.push(format!("acknowledged topic {t} is gone"));
        }
    }
    problems
}

/// `strata remote verify` on the stopped broker's dirs.
fn remote_verify(dir: &Path) -> Result<(), String> {
    let mut cmd = Command::new(common::strata_bin());
    cmd.args(["remote", "verify"]).env_remove("FAILPOINTS");
    for o in overrides(dir, 0) {
        cmd.args(["--override", &o]);
    }
    let out = cmd.output().expect("run strata remote verify");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// How a cycle stops the broker.
#[derive(Clone, Debug)]
enum Kill {
    /// SIGKILL after this many milliseconds of load.
    Sigkill(u64),
    /// The crash point, passed this many times first.
    Point(&'static str, u32),
}

/// Crash points hit only a few times per cycle (a small count reaches them).
fn rare(point: &str) -> bool {
    point.starts_with("registry.")
        || point.starts_with("scram.")
        || point.starts_with("dynamic_config.")
        || point.starts_with("leader_epoch.")
        || point.starts_with("cleaner.")
        || point.starts_with("rlm.delete")
        || point.starts_with("rsm.delete")
        || point == "log.retention.after_rename_deleted"
}

/// Crash points hit on every append or flush.
fn frequent(point: &str) -> bool {
    point.starts_with("segment.") || point.starts_with("fsio.")
}

fn plan(kills: usize, failpoints: bool, seed: u64) -> Vec<Kill> {
    let mut rng = seed;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    // CRASH_LOOP_ONLY=prefix[,prefix...]: only the crash points named so (e.g. `scram.,registry.`).
    let only = std::env::var("CRASH_LOOP_ONLY").unwrap_or_default();
    let points: Vec<&'static str> = strata_storage::failpoint::CRASH_POINTS
        .iter()
        .copied()
        .filter(|p| only.is_empty() || only.split(',').any(|o| p.starts_with(o)))
        .collect();
    assert!(
        !points.is_empty(),
        "CRASH_LOOP_ONLY={only} names no crash point"
    );
    let mut fp = 0;
    (0..kills)
        .map(|i| {
            if failpoints && i % 4 != 3 {
                let p = points[fp % points.len()];
                fp += 1;
                let n = if rare(p) {
                    next(3)
                } else if frequent(p) {
                    10 + next(200)
                } else {
                    next(15)
                };
                Kill::Point(p, n as u32)
            } else {
                Kill::Sigkill(500 + next(5000))
            }
        })
        .collect()
}

/// Per kill kind: (kills, crash point reached, problems).
type Tally = BTreeMap<String, (usize, usize, usize)>;

fn run_loop(kills: usize, failpoints: bool, seed: u64) -> (Tally, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let b = Broker::spawn(dir.path(), port, None);
    create_topics(&b.bootstrap);
    b.terminate();
    let acked = Arc::new(Mutex::new(Acked::default()));
    let mut seen = BTreeMap::new();
    let mut tally = Tally::new();
    let mut all_problems = Vec::new();
    for (cycle, kill) in plan(kills, failpoints, seed).into_iter().enumerate() {
        let started = Instant::now();
        let fp = match &kill {
            Kill::Point(p, n) => Some(format!("{p}={n}*off->return")),
            Kill::Sigkill(_) => None,
        };
        let mut b = Broker::spawn(dir.path(), port, fp.as_deref());
        let stop = Arc::new(AtomicBool::new(false));
        let bs = b.bootstrap.clone();
        let threads = vec![
            spawn("produce", {
                let (bs, stop, acked) = (bs.clone(), stop.clone(), acked.clone());
                move || produce(bs, cycle, stop, acked)
            }),
            spawn("watch", {
                let (bs, stop, acked) = (bs.clone(), stop.clone(), acked.clone());
                move || watch(bs, stop, acked)
            }),
            spawn("ctp", {
                let (bs, stop, acked) = (bs.clone(), stop.clone(), acked.clone());
                move || ctp(bs, cycle, stop, acked)
            }),
            spawn("churn", {
                let (bs, stop, acked) = (bs.clone(), stop.clone(), acked.clone());
                move || churn(bs, cycle, stop, acked)
            }),
        ];
        let (name, reached) = match kill {
            Kill::Sigkill(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                b.kill9();
                ("SIGKILL".to_string(), true)
            }
            Kill::Point(p, _) => {
                let deadline = Instant::now() + Duration::from_secs(20);
                while !b.exited() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let reached = b.exited();
                if reached {
                    let log = b.tail();
                    assert!(
                        log.contains(&format!("crash point {p} reached")),
                        "strata exited at {p} without reaching it:\n{log}"
                    );
                }
                b.kill9();
                (p.to_string(), reached)
            }
        };
        stop.store(true, Ordering::SeqCst);
        join_bounded(threads);
        let b = Broker::spawn(dir.path(), port, None);
        let problems = {
            let acked = acked.lock().unwrap();
            check(&b.bootstrap, &acked, &mut seen)
        };
        b.terminate();
        let mut problems = problems;
        if let Err(e) = remote_verify(dir.path()) {
            problems.push(format!("strata remote verify: {e}"));
        }
        let e = tally.entry(name.clone()).or_default();
        e.0 += 1;
        e.1 += reached as usize;
        e.2 += problems.len();
        let a = acked.lock().unwrap();
        eprintln!(
            "crash loop: kill {}/{kills} {name}{} in {:.1} s: {} problems (acked: {} records, {} transactions, {} topics, group offsets {:?}, transactional offsets {:?})",
            cycle + 1,
            if reached { "" } else { " (not reached: SIGKILL)" },
            started.elapsed().as_secs_f64(),
            problems.len(),
            a.plain.len(),
            a.txns.len(),
            a.topics.len(),
            a.watch,
            a.ctp
        );
        for p in &problems {
            eprintln!("  PROBLEM after kill {} ({name}): {p}", cycle + 1);
        }
        all_problems.extend(
            problems
                .into_iter()
                .map(|p| format!("kill {} ({name}): {p}", cycle + 1)),
        );
    }
    (tally, all_problems)
}

fn report(tally: &Tally, problems: &[String]) {
    eprintln!("crash loop summary: kind, kills, crash point reached, problems");
    for (name, (kills, reached, bad)) in tally {
        eprintln!("  {name:40} {kills:4} {reached:4} {bad:4}");
    }
    let kills: usize = tally.values().map(|t| t.0).sum();
    eprintln!("  total kills {kills}, losses/problems {}", problems.len());
}

/// A few SIGKILLs under the full load (the plain binary has no crash points), in `cargo test`.
#[test]
fn crash_loop_smoke() {
    let (tally, problems) = run_loop(3, false, 0x9e37_79b9_7f4a_7c15);
    report(&tally, &problems);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The long loop (tests/crash_loop.sh): `CRASH_LOOP_KILLS` kills (default 100), crash points round-robin
/// (`CRASH_LOOP_FAILPOINTS=1`: the binary is a failpoints build) interleaved with SIGKILLs.
#[test]
#[ignore = "minutes long: tests/crash_loop.sh"]
fn crash_loop() {
    let kills = std::env::var("CRASH_LOOP_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(100);
    let failpoints = std::env::var("CRASH_LOOP_FAILPOINTS").is_ok_and(|v| v == "1");
    let seed = std::env::var("CRASH_LOOP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x2545_f491_4f6c_dd1d);
    let (tally, problems) = run_loop(kills, failpoints, seed);
    report(&tally, &problems);
    assert!(problems.is_empty(), "{problems:#?}");
}
