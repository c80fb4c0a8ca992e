//! Benchmark (not a test) of the console and its JSON API with 1,000 partitions: a tiered broker in a temp dir,
//! a topic of 1,000 partitions plus a small tiered topic that rolls and uploads, a consumer group; then every
//! endpoint the console polls is timed (median and worst of 20). The target: each answers within 200 ms.
//!
//! `cargo run --release --example console_bench [-- --serve SECONDS]` (`--serve` keeps the broker up that long
//! after the figures, printing the console's address, e.g. to look at it or take a screenshot).
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use strata_broker::Server;

const PARTITIONS: i32 = 1000;

fn get(addr: SocketAddr, path: &str) -> (Duration, usize) {
    let started = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read");
    assert!(
        out.starts_with(b"HTTP/1.1 200"),
        "GET {path}: {}",
        String::from_utf8_lossy(&out[..out.len().min(200)])
    );
    (started.elapsed(), out.len())
}

fn client(bs: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bs).set("log_level", "3");
    c
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let serve: u64 = std::env::args()
        .skip_while(|a| a != "--serve")
        .nth(1)
        .map_or(Ok(0), |s| s.parse())?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let props: BTreeMap<String, String> = [
        ("listeners", "PLAINTEXT://127.0.0.1:0".to_string()),
        ("log.dirs", data.display().to_string()),
        ("log.retention.check.interval.ms", "500".into()),
        ("remote.log.manager.task.interval.ms", "300".into()),
        (
            "rlmm.config.remote.log.metadata.topic.num.partitions",
            "2".into(),
        ),
        (
            "http.listener",
            std::env::var("HTTP_LISTENER").unwrap_or("127.0.0.1:0".into()),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let server = rt.block_on(Server::start_from_properties(&props))?;
    let bs = server.local_addr().to_string();
    let addr = server.http_addr().expect("http.listener bound");
    println!("console on http://{addr}/");

    let admin: AdminClient<DefaultClientContext> = client(&bs).create()?;
    let wide = NewTopic::new("wide", PARTITIONS, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true");
    let orders = NewTopic::new("orders", 2, TopicReplication::Fixed(1))
        .set("remote.storage.enable", "true")
        .set("segment.bytes", "8192")
        .set("local.retention.bytes", "20000");
    let created = rt.block_on(admin.create_topics(&[wide, orders], &AdminOptions::new()))?;
    println!("created {created:?}");

    let p: FutureProducer = client(&bs)
        .set("linger.ms", "5")
        .set("batch.size", "2048")
        .create()?;
    rt.block_on(async {
        let mut pending = Vec::new();
        for i in 0..4000u32 {
            let v = format!("order {i} {}", "x".repeat(80));
            let k = format!("customer-{}", i % 97);
            pending.push(
                p.send_result(
                    FutureRecord::to("orders")
                        .key(&k)
                        .payload(&v)
                        .partition((i % 2) as i32),
                )
                .map_err(|(e, _)| e)?,
            );
            let part = (i % PARTITIONS as u32) as i32;
            pending.push(
                p.send_result(FutureRecord::to("wide").key(&k).payload(&v).partition(part))
                    .map_err(|(e, _)| e)?,
            );
        }
        for f in pending {
            f.await?.map_err(|(e, _)| e)?;
        }
        anyhow::Ok(())
    })?;
    let c: BaseConsumer = client(&bs)
        .set("group.id", "billing")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()?;
    c.subscribe(&["orders"])?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut n = 0;
    while n < 3000 && Instant::now() < deadline {
        if let Some(Ok(_)) = c.poll(Duration::from_millis(100)) {
            n += 1;
        }
    }
    c.commit_consumer_state(CommitMode::Sync)?;
    std::thread::sleep(Duration::from_secs(2));

    let paths = [
        "/",
        "/api/v1/overview",
        "/api/v1/topics?offset=0&limit=50",
        "/api/v1/topics/wide/partitions?offset=0&limit=50",
        "/api/v1/topics/wide/partitions?offset=0&limit=1000",
        "/api/v1/topics/wide/partitions/999/segments",
        "/api/v1/topics/orders/partitions/0/segments",
        "/api/v1/rlmm?topic=orders&partition=0&limit=100",
        "/api/v1/rlmm?limit=40",
        "/api/v1/groups",
        "/api/v1/topics/orders/partitions/0/records?limit=20",
        "/metrics",
    ];
    println!(
        "{:<58} {:>9} {:>9} {:>9}",
        "GET (20 times)", "median", "worst", "bytes"
    );
    let mut worst_all = Duration::ZERO;
    for path in paths {
        let mut times: Vec<Duration> = Vec::new();
        let mut size = 0;
        for _ in 0..20 {
            let (t, n) = get(addr, path);
            times.push(t);
            size = n;
        }
        times.sort();
        worst_all = worst_all.max(times[19]);
        println!(
            "{:<58} {:>7.1}ms {:>7.1}ms {:>9}",
            path,
            times[10].as_secs_f64() * 1000.0,
            times[19].as_secs_f64() * 1000.0,
            size
        );
    }
    println!(
        "worst of all: {:.1} ms (target 200 ms, {} partitions)",
        worst_all.as_secs_f64() * 1000.0,
        server.broker().log_manager().all_logs().len()
    );
    if serve > 0 {
        println!("serving for {serve} s on http://{addr}/");
        std::thread::sleep(Duration::from_secs(serve));
    }
    drop(c);
    rt.block_on(server.shutdown())?;
    Ok(())
}
