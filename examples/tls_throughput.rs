//! Produce and consume throughput over SASL_SSL (PLAIN, TLS 1.3) against PLAINTEXT on the same in-process
//! broker, with librdkafka clients: `cargo run --release --example tls_throughput [-- MESSAGES [BYTES]]`
//! (default 200000 messages of 1024 bytes). Prints MB/s per protocol and the SASL_SSL/PLAINTEXT ratio, and (on
//! Linux) the CPU seconds each group of threads used in each phase: the benchmark's own thread, librdkafka's
//! threads (`rdk:*`) and the broker's runtime (`tokio-*`, workers and blocking pool).
//! `TLS_THROUGHPUT_ONLY=PLAINTEXT` or `SASL_SSL` runs one protocol alone and `TLS_THROUGHPUT_PRODUCE_ONLY=1`
//! skips the consumers (for `perf record`). Not a test.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::Message;

fn client(bootstrap: &str, extra: &[(&str, String)]) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap).set("log_level", "3");
    for (k, v) in extra {
        c.set(*k, v);
    }
    if let Ok(more) = std::env::var("TLS_THROUGHPUT_CLIENT") {
        for kv in more.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').expect("k=v");
            c.set(k, v);
        }
    }
    c
}

/// CPU clock ticks used so far by each live thread of this process: thread id -> (name, ticks). Empty where
/// /proc is not there.
fn thread_ticks() -> BTreeMap<u64, (String, u64)> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in dir.flatten() {
        let Ok(tid) = t.file_name().to_string_lossy().parse::<u64>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ... utime(14) stime(15): fields after the closing parenthesis.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        out.insert(
            tid,
            (stat[open + 1..close].to_string(), ticks(11) + ticks(12)),
        );
    }
    out
}

/// CPU seconds per thread group between two [`thread_ticks`] snapshots (ticks at 100 Hz).
fn cpu_since(before: &BTreeMap<u64, (String, u64)>) -> String {
    let mut groups: BTreeMap<String, u64> = BTreeMap::new();
    for (tid, (name, ticks)) in thread_ticks() {
        let was = before.get(&tid).map_or(0, |(_, t)| *t);
        let group = if name.starts_with("rdk:") {
            name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
                .to_string()
        } else if name.starts_with("tokio") {
            "broker".to_string()
        } else {
            "bench".to_string()
        };
        *groups.entry(group).or_default() += ticks.saturating_sub(was);
    }
    groups
        .iter()
        .map(|(g, t)| format!("{g} {:.2}", *t as f64 / 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// (produce MB/s, consume MB/s) of `n` messages of `size` bytes to a new topic.
fn run(
    bootstrap: &str,
    topic: &str,
    n: usize,
    size: usize,
    extra: &[(&str, String)],
) -> (f64, f64) {
    let payload = vec![b'x'; size];
    let mut pc = client(bootstrap, extra);
    pc.set("acks", "1")
        .set("linger.ms", "5")
        .set("batch.size", "1000000")
        .set("queue.buffering.max.messages", "1000000")
        .set("compression.type", "none");
    let p: ThreadedProducer<DefaultProducerContext> = pc.create().expect("producer");
    let cpu = thread_ticks();
    let started = Instant::now();
    for _ in 0..n {
        let mut rec = BaseRecord::<(), [u8]>::to(topic).payload(&payload);
        loop {
            match p.send(rec) {
                Ok(()) => break,
                Err((_, r)) => {
                    rec = r;
                    p.poll(Duration::from_millis(1));
                }
            }
        }
    }
    p.flush(Duration::from_secs(120)).expect("flush");
    let produce = started.elapsed();
    println!(
        "  produce {:.2} s, CPU s: {}",
        produce.as_secs_f64(),
        cpu_since(&cpu)
    );
    let mb = (n * size) as f64 / 1e6;
    if std::env::var_os("TLS_THROUGHPUT_PRODUCE_ONLY").is_some() {
        return (mb / produce.as_secs_f64(), 0.0);
    }

    let mut cc = client(bootstrap, extra);
    cc.set("group.id", format!("bench-{topic}"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("fetch.max.bytes", "52428800");
    let c: BaseConsumer = cc.create().expect("consumer");
    c.subscribe(&[topic]).expect("subscribe");
    let cpu = thread_ticks();
    let started = Instant::now();
    let mut got = 0;
    while got < n {
        match c.poll(Duration::from_millis(500)) {
            Some(Ok(m)) => {
                assert_eq!(m.payload().map(<[u8]>::len), Some(size));
                got += 1;
            }
            Some(Err(e)) => panic!("consume: {e}"),
            None => assert!(
                started.elapsed() < Duration::from_secs(300),
                "consume stalled at {got}"
            ),
        }
    }
    let consume = started.elapsed();
    println!(
        "  consume {:.2} s, CPU s: {}",
        consume.as_secs_f64(),
        cpu_since(&cpu)
    );
    (mb / produce.as_secs_f64(), mb / consume.as_secs_f64())
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(200_000);
    let size = args.get(1).copied().unwrap_or(1024);
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut props = std::collections::BTreeMap::new();
    for (k, v) in [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        ),
        ("remote.log.storage.system.enable", "false"),
        ("ssl.self.signed.enable", "true"),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_bench="bench-secret";"#,
        ),
    ] {
        props.insert(k.to_string(), v.to_string());
    }
    props.insert("log.dirs".into(), dir.path().display().to_string());
    let server = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect("broker starts");
    let addrs = server.local_addrs().to_vec();
    let ca = dir.path().join("ssl").join("ca.pem").display().to_string();
    let secure = [
        ("security.protocol", "sasl_ssl".to_string()),
        ("ssl.ca.location", ca),
        ("sasl.mechanism", "PLAIN".to_string()),
        ("sasl.username", "bench".to_string()),
        ("sasl.password", "bench-secret".to_string()),
    ];
    println!("{n} messages of {size} bytes, acks=1, one partition");
    // TLS_THROUGHPUT_ONLY=PLAINTEXT|SASL_SSL runs one protocol (to profile it alone).
    let only = std::env::var("TLS_THROUGHPUT_ONLY").unwrap_or_default();
    if only.eq_ignore_ascii_case("SASL_SSL") {
        let (sp, sc) = run(&addrs[1].to_string(), "secure", n, size, &secure);
        println!("SASL_SSL   produce {sp:8.1} MB/s  consume {sc:8.1} MB/s");
        return;
    }
    let (pp, pc) = run(&addrs[0].to_string(), "plain", n, size, &[]);
    println!("PLAINTEXT  produce {pp:8.1} MB/s  consume {pc:8.1} MB/s");
    if only.eq_ignore_ascii_case("PLAINTEXT") {
        return;
    }
    let (sp, sc) = run(&addrs[1].to_string(), "secure", n, size, &secure);
    println!("SASL_SSL   produce {sp:8.1} MB/s  consume {sc:8.1} MB/s");
    println!(
        "SASL_SSL / PLAINTEXT: produce {:.0} %, consume {:.0} %",
        100.0 * sp / pp,
        100.0 * sc / pc
    );
    rt.block_on(server.shutdown()).expect("shutdown");
}
