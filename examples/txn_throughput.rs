//! Transactional produce (a commit every 1,000 messages) against plain idempotent produce on the same in-process
//! broker, with librdkafka producers, and read_committed consumption of each:
//! `cargo run --release --example txn_throughput [-- MESSAGES [BYTES [ROUNDS [LINGER_MS]]]]` (default 200000
//! messages of 512 bytes, 3 rounds alternating the two, `linger.ms=5` for both producers). Prints MB/s per round
//! and the median ratio. Not a test.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::Message;

const PER_TXN: usize = 1000;
const T: Duration = Duration::from_secs(120);

fn client(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap).set("log_level", "3");
    c
}

fn send_all(p: &BaseProducer, topic: &str, payload: &[u8], n: usize) {
    for _ in 0..n {
        let mut rec = BaseRecord::<(), [u8]>::to(topic).payload(payload);
        loop {
            match p.send(rec) {
                Ok(()) => break,
                Err((_, r)) => {
                    rec = r;
                    p.poll(Duration::from_millis(1));
                }
            }
        }
        p.poll(Duration::ZERO);
    }
}

/// Polls until every message sent was delivered.
fn drain(p: &BaseProducer) {
    let started = Instant::now();
    while p.in_flight_count() > 0 {
        assert!(started.elapsed() < T, "deliveries stalled");
        p.poll(Duration::from_millis(1));
    }
}

/// Produce MB/s of `n` messages to `topic`; transactional (commit every PER_TXN) when `txn_id` is given.
fn produce(
    bootstrap: &str,
    topic: &str,
    n: usize,
    size: usize,
    linger_ms: usize,
    txn_id: Option<&str>,
) -> f64 {
    let payload = vec![b'x'; size];
    let mut c = client(bootstrap);
    c.set("enable.idempotence", "true")
        .set("linger.ms", linger_ms.to_string())
        .set("batch.size", "1000000")
        .set("queue.buffering.max.messages", "1000000")
        .set("compression.type", "none");
    if let Some(id) = txn_id {
        c.set("transactional.id", id);
    }
    let p: BaseProducer = c.create().expect("producer");
    if txn_id.is_some() {
        p.init_transactions(T).expect("init_transactions");
    }
    let started = Instant::now();
    if txn_id.is_some() {
        let mut left = n;
        while left > 0 {
            let k = left.min(PER_TXN);
            let t0 = Instant::now();
            p.begin_transaction().expect("begin");
            send_all(&p, topic, &payload, k);
            let t1 = Instant::now();
            // Delivery reports are served by polling (rust-rdkafka uses librdkafka's event API), and
            // rust-rdkafka's flush polls in 100 ms steps: wait for the deliveries with short polls instead, so the
            // figure is the broker's, not the client's polling interval.
            drain(&p);
            let t2 = Instant::now();
            p.commit_transaction(T).expect("commit");
            if std::env::var_os("TXN_TRACE").is_some() && left > n - 5 * PER_TXN {
                eprintln!(
                    "send {:?} flush {:?} commit {:?}",
                    t1 - t0,
                    t2 - t1,
                    t2.elapsed()
                );
            }
            left -= k;
        }
    } else {
        send_all(&p, topic, &payload, n);
        drain(&p);
    }
    (n * size) as f64 / 1e6 / started.elapsed().as_secs_f64()
}

/// read_committed consume MB/s of `n` messages of `topic`.
fn consume(bootstrap: &str, topic: &str, n: usize, size: usize) -> f64 {
    let mut cc = client(bootstrap);
    cc.set("group.id", format!("bench-{topic}"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("fetch.max.bytes", "52428800");
    let c: BaseConsumer = cc.create().expect("consumer");
    c.subscribe(&[topic]).expect("subscribe");
    let started = Instant::now();
    let mut got = 0;
    while got < n {
        match c.poll(Duration::from_millis(500)) {
            Some(Ok(m)) => {
                assert_eq!(m.payload().map(<[u8]>::len), Some(size));
                got += 1;
            }
            Some(Err(e)) => panic!("consume: {e}"),
            None => assert!(started.elapsed() < T, "consume stalled at {got}"),
        }
    }
    (n * size) as f64 / 1e6 / started.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(200_000);
    let size = args.get(1).copied().unwrap_or(512);
    let rounds = args.get(2).copied().unwrap_or(3);
    let linger_ms = args.get(3).copied().unwrap_or(5);
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut props = std::collections::BTreeMap::new();
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert("remote.log.storage.system.enable".into(), "false".into());
    props.insert("log.dirs".into(), dir.path().display().to_string());
    let server = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect("broker starts");
    let bs = server.local_addr().to_string();
    println!(
        "{n} messages of {size} bytes per run, one partition, acks=all, linger.ms={linger_ms}; transactions commit \
         every {PER_TXN}"
    );
    let (mut ratios_p, mut ratios_c) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let plain = format!("idem-{round}");
        let txn = format!("txn-{round}");
        let ip = produce(&bs, &plain, n, size, linger_ms, None);
        let tp = produce(
            &bs,
            &txn,
            n,
            size,
            linger_ms,
            Some(&format!("bench-{round}")),
        );
        let ic = consume(&bs, &plain, n, size);
        let tc = consume(&bs, &txn, n, size);
        println!(
            "round {round}: idempotent produce {ip:7.1} MB/s consume {ic:7.1} MB/s | transactional produce {tp:7.1} MB/s consume {tc:7.1} MB/s"
        );
        ratios_p.push(tp / ip);
        ratios_c.push(tc / ic);
    }
    println!(
        "transactional / idempotent (median of {rounds}): produce {:.0} %, read_committed consume {:.0} %",
        100.0 * median(ratios_p),
        100.0 * median(ratios_c)
    );
    rt.block_on(server.shutdown()).expect("shutdown");
}
