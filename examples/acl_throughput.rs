//! What the authorizer costs (issue 31): produce and consume throughput with librdkafka clients against two
//! in-process brokers, one without an authorizer and one with Kafka's StandardAuthorizer and 1,000 ACLs (the
//! client's own grants are prefixed ones among them, so every check walks literal, prefix and wildcard lookups; no
//! super user short-cuts it). Runs alternate off / on, `ROUNDS` times (default 3), each with a fresh topic, in two
//! shapes: 1 KiB messages in large batches (bytes) and 100-byte messages with `linger.ms=0` (requests).
//! `cargo run --release --example acl_throughput [-- MESSAGES]` (default 100000). Prints each run and the median
//! on/off ratio per shape and direction. Not a test.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use strata_broker::authz::acl::*;

/// (produce, consume) messages per second of `n` messages of `size` bytes to `topic`.
fn run(bootstrap: &str, topic: &str, n: usize, size: usize, linger: &str) -> (f64, f64) {
    let payload = vec![b'x'; size];
    let mut pc = ClientConfig::new();
    pc.set("bootstrap.servers", bootstrap)
        .set("acks", "1")
        .set("linger.ms", linger)
        .set("queue.buffering.max.messages", "1000000")
        .set("log_level", "3");
    let p: ThreadedProducer<DefaultProducerContext> = pc.create().expect("producer");
    let started = Instant::now();
    for _ in 0..n {
        let mut rec = BaseRecord::<(), [u8]>::to(topic).payload(&payload);
        while let Err((_, r)) = p.send(rec) {
            rec = r;
            p.poll(Duration::from_millis(1));
        }
    }
    p.flush(Duration::from_secs(300)).expect("flush");
    let produce = started.elapsed();
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("bench-{topic}"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("log_level", "3")
        .create()
        .expect("consumer");
    c.subscribe(&[topic]).expect("subscribe");
    let started = Instant::now();
    let mut got = 0;
    while got < n {
        match c.poll(Duration::from_millis(500)) {
            Some(Ok(_)) => got += 1,
            Some(Err(e)) => panic!("consume: {e}"),
            None => assert!(
                started.elapsed() < Duration::from_secs(300),
                "consume stalled at {got}"
            ),
        }
    }
    let consume = started.elapsed();
    (
        n as f64 / produce.as_secs_f64(),
        n as f64 / consume.as_secs_f64(),
    )
}

/// 1,000 bindings: 996 for other principals and resources (literal and prefixed topics, groups), and the
/// benchmark client's (User:ANONYMOUS) four prefixed grants: WRITE and READ on topics `bench-`, READ on groups
/// `bench-`, IDEMPOTENT_WRITE on the cluster.
fn bindings() -> Vec<AclBinding> {
    let b = |rt, name: String, pt, who: &str, op| AclBinding {
        resource_type: rt,
        resource_name: name,
        pattern_type: pt,
        principal: who.to_string(),
        host: "*".into(),
        operation: op,
        permission: Permission::Allow,
    };
    let mut out = Vec::new();
    for i in 0..996 {
        let who = format!("User:svc-{}", i % 50);
        out.push(match i % 3 {
            0 => b(
                ResourceType::Topic,
                format!("orders-{i}"),
                PatternType::Literal,
                &who,
                AclOperation::Read,
            ),
            1 => b(
                ResourceType::Topic,
                format!("be{i}-"),
                PatternType::Prefixed,
                &who,
                AclOperation::Write,
            ),
            _ => b(
                ResourceType::Group,
                format!("group-{i}"),
                PatternType::Literal,
                &who,
                AclOperation::Read,
            ),
        });
    }
    let me = "User:ANONYMOUS";
    out.push(b(
        ResourceType::Topic,
        "bench-".into(),
        PatternType::Prefixed,
        me,
        AclOperation::Write,
    ));
    out.push(b(
        ResourceType::Topic,
        "bench-".into(),
        PatternType::Prefixed,
        me,
        AclOperation::Read,
    ));
    out.push(b(
        ResourceType::Group,
        "bench-".into(),
        PatternType::Prefixed,
        me,
        AclOperation::Read,
    ));
    out.push(b(
        ResourceType::Cluster,
        CLUSTER_NAME.into(),
        PatternType::Literal,
        me,
        AclOperation::IdempotentWrite,
    ));
    out
}

fn start(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    authorizer: bool,
) -> strata_broker::Server {
    let mut props = BTreeMap::new();
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert("remote.log.storage.system.enable".into(), "false".into());
    props.insert("http.listener".into(), String::new());
    props.insert("log.dirs".into(), dir.display().to_string());
    if authorizer {
        props.insert(
            "authorizer.class.name".into(),
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer".into(),
        );
    }
    let server = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect("broker starts");
    if let Some(a) = server.broker().authorizer() {
        a.store().add(&bindings()).expect("ACLs stored");
        assert_eq!(a.store().len(), 1000);
    }
    server
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (d_off, d_on) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let off = start(&rt, d_off.path(), false);
    let on = start(&rt, d_on.path(), true);
    let (b_off, b_on) = (off.local_addr().to_string(), on.local_addr().to_string());
    println!("{n} messages per run, acks=1, one partition, {rounds} rounds alternating off/on");
    for (shape, size, linger) in [("1 KiB batched", 1024, "5"), ("100 B linger 0", 100, "0")] {
        let mut ratio_p = Vec::new();
        let mut ratio_c = Vec::new();
        for round in 0..rounds {
            let (po, co) = run(
                &b_off,
                &format!("bench-off-{shape}-{round}").replace(' ', "_"),
                n,
                size,
                linger,
            );
            let (pn, cn) = run(
                &b_on,
                &format!("bench-on-{shape}-{round}").replace(' ', "_"),
                n,
                size,
                linger,
            );
            println!(
                "{shape}: round {round}: off produce {po:9.0}/s consume {co:9.0}/s | on produce {pn:9.0}/s consume {cn:9.0}/s"
            );
            ratio_p.push(pn / po);
            ratio_c.push(cn / co);
        }
        println!(
            "{shape}: median on/off: produce {:.1} %, consume {:.1} %",
            100.0 * median(ratio_p),
            100.0 * median(ratio_c)
        );
    }
    rt.block_on(off.shutdown()).expect("shutdown");
    rt.block_on(on.shutdown()).expect("shutdown");
}
