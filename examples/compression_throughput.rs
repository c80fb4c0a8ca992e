//! Produce throughput into a topic with `compression.type=zstd` (the broker re-encodes every batch) against the
//! same into `compression.type=producer` (batches stored as sent), from uncompressed librdkafka producers, on one
//! in-process broker: `cargo run --release --example compression_throughput [-- MESSAGES [BYTES]]` (default
//! 200000 messages of 1024 bytes of log-like text). Prints MB/s and the bytes stored per topic. Not a test.

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};

fn client(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap).set("log_level", "3");
    c
}

/// A compressible payload, like a log line with a counter and some varying fields.
fn payload(i: usize, size: usize) -> Vec<u8> {
    let line = format!(
        "{i:>10} 2026-12-03T16:{:02}:{:02}.{:03}Z INFO  request handled path=/api/v1/items/{} status=200 bytes={} ",
        (i / 60) % 60,
        i % 60,
        i % 1000,
        i.wrapping_mul(2654435761) % 100_000,
        i % 4096
    );
    line.bytes().cycle().take(size).collect()
}

/// Produce MB/s of `n` messages of `size` bytes into `topic` (acks=1, uncompressed batches up to 1 MB).
fn produce(bootstrap: &str, topic: &str, n: usize, size: usize) -> f64 {
    let payloads: Vec<Vec<u8>> = (0..1024).map(|i| payload(i, size)).collect();
    let mut pc = client(bootstrap);
    pc.set("acks", "1")
        .set("linger.ms", "5")
        .set("batch.size", "1000000")
        .set("queue.buffering.max.messages", "1000000")
        .set("compression.type", "none");
    let p: ThreadedProducer<DefaultProducerContext> = pc.create().expect("producer");
    let started = Instant::now();
    for i in 0..n {
        let mut rec = BaseRecord::<(), [u8]>::to(topic).payload(&payloads[i % payloads.len()][..]);
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
    p.flush(Duration::from_secs(300)).expect("flush");
    (n * size) as f64 / 1e6 / started.elapsed().as_secs_f64()
}

fn dir_size(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) if e.file_name().to_string_lossy().ends_with(".log") => m.len(),
                    _ => 0,
                })
                .sum()
        })
        .unwrap_or(0)
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
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert(
        "remote.log.storage.system.enable".to_string(),
        "false".to_string(),
    );
    props.insert("log.dirs".into(), dir.path().display().to_string());
    let server = rt
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect("broker starts");
    let bootstrap = server.local_addrs()[0].to_string();
    let admin: AdminClient<DefaultClientContext> = client(&bootstrap).create().expect("admin");
    // TOPICS=producer,zstd picks the codecs (default: producer, zstd, lz4, gzip).
    let list = std::env::var("TOPICS").unwrap_or_else(|_| "producer,zstd,lz4,gzip".into());
    let topics: Vec<&str> = list.split(',').collect();
    let new: Vec<NewTopic<'_>> = topics
        .iter()
        .map(|t| NewTopic::new(t, 1, TopicReplication::Fixed(1)).set("compression.type", t))
        .collect();
    let created = rt
        .block_on(admin.create_topics(&new, &AdminOptions::new()))
        .expect("create topics");
    assert!(created.iter().all(|r| r.is_ok()), "{created:?}");
    println!("{n} uncompressed messages of {size} bytes, acks=1, one partition per topic");
    let mut base = 0.0;
    for t in topics.iter().copied() {
        let mbs = produce(&bootstrap, t, n, size);
        if base == 0.0 {
            base = mbs;
        }
        let stored = dir_size(&dir.path().join(format!("{t}-0")));
        println!(
            "compression.type={t:<9} produce {mbs:8.1} MB/s ({:3.0} % of the first)  stored {:8.1} MB",
            100.0 * mbs / base,
            stored as f64 / 1e6
        );
    }
    rt.block_on(server.shutdown()).expect("shutdown");
}
