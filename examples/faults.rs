//! Faults on demand against an embedded broker, using only the public builder and librdkafka:
//! `cargo run --example faults`. Each step sets a fault, shows what the client sees, and the broker's count on
//! `/metrics`. Not a test (`tests/faults.rs` checks the same with assertions).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};
use strata::faults::{ApiKey, Fault, ResponseError};

/// The `strata_faults_injected_total` lines of `/metrics`.
fn injected(addr: std::net::SocketAddr) -> Vec<String> {
    let mut s = std::net::TcpStream::connect(addr).expect("connect http.listener");
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read /metrics");
    out.lines()
        .filter(|l| l.starts_with("strata_faults_injected_total"))
        .map(str::to_string)
        .collect()
}

async fn send(p: &FutureProducer, value: &str) -> String {
    let started = Instant::now();
    let r = p
        .send(
            FutureRecord::<(), _>::to("demo").payload(value),
            Duration::from_secs(30),
        )
        .await;
    let took = started.elapsed().as_millis();
    match r {
        Ok(d) => format!("delivered at offset {} after {took} ms", d.offset),
        Err((e, _)) => format!("failed after {took} ms: {e}"),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let broker = strata::Broker::builder().start().await?;
    let bootstrap = broker.bootstrap_servers();
    let http = broker.http_addr().expect("http listener on 127.0.0.1:0");
    println!("broker at {bootstrap}, /api/v1/faults and /metrics on http://{http}");

    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", &bootstrap)
        .set("log_level", "3");
    let admin: AdminClient<DefaultClientContext> = config.create()?;
    admin
        .create_topics(
            &[NewTopic::new("demo", 1, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await?;
    let producer: FutureProducer = config
        .clone()
        .set("retry.backoff.ms", "50")
        .set("enable.idempotence", "true")
        .create()?;

    broker.faults().add(
        Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower)
            .times(3)
            .topic("demo"),
    )?;
    println!(
        "NOT_LEADER_OR_FOLLOWER x3 (retriable): {}",
        send(&producer, "a").await
    );

    broker
        .faults()
        .add(Fault::latency(ApiKey::Produce, Duration::from_millis(300)).times(1))?;
    println!("300 ms latency: {}", send(&producer, "b").await);

    broker
        .faults()
        .add(Fault::close_connection(ApiKey::Produce).times(1))?;
    println!(
        "connection closed after the produce (idempotent retry, no duplicate): {}",
        send(&producer, "c").await
    );

    broker
        .faults()
        .add(Fault::error(ApiKey::Produce, ResponseError::TopicAuthorizationFailed).times(1))?;
    println!(
        "TOPIC_AUTHORIZATION_FAILED (not retriable): {}",
        send(&producer, "d").await
    );

    println!("faults left: {:?}", broker.faults().list());
    for line in injected(http) {
        println!("{line}");
    }
    drop(producer);
    broker.shutdown().await?;
    Ok(())
}
