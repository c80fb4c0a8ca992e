//! Faults on demand, exercised with real clients through the public builder (`strata::Broker`) and
//! `/api/v1/faults`: a retriable Produce error (NOT_LEADER_OR_FOLLOWER x3) is retried to success by librdkafka
//! and confluent-kafka; a non-retriable one (TOPIC_AUTHORIZATION_FAILED) reaches the application with its code; a
//! connection closed after a produce is retried without a duplicate (idempotent producer); latency delays
//! requests; a remote copy outage holds back local deletion of segments not yet uploaded (KIP-405: a segment is
//! deleted locally only once copied) and a remote fetch outage holds a consumer of tiered data until cleared; bad
//! fault requests get HTTP 400 naming the bad value; `strata --ephemeral` leaves no directory behind after SIGTERM.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::FutureRecord;
use rdkafka::Message;
use strata::faults::{ApiKey, Fault, RemoteOp, ResponseError};

/// (status line, body) of one HTTP/1.1 request.
fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect http.listener");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read http response");
    let (head, body) = out.split_once("\r\n\r\n").expect("http response");
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

/// The value of `strata_faults_injected_total{api,kind}` on `/metrics` (0 when absent).
fn injected(addr: SocketAddr, api: &str, kind: &str) -> u64 {
    let (_, text) = http(addr, "GET", "/metrics", "");
    let series = format!("strata_faults_injected_total{{api=\"{api}\",kind=\"{kind}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0, |v| v.trim().parse().expect("counter value"))
}

fn faults_listed(addr: SocketAddr) -> Vec<serde_json::Value> {
    let (status, body) = http(addr, "GET", "/api/v1/faults", "");
    assert!(status.contains(" 200 "), "{status} {body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["faults"].as_array().unwrap().clone()
}

async fn embedded(props: &[(&str, &str)]) -> strata::Broker {
    let mut b = strata::Broker::builder();
    for (k, v) in props {
        b = b.property(*k, *v);
    }
    b.start().await.expect("embedded broker starts")
}

/// Kafka: NOT_LEADER_OR_FOLLOWER is retriable; the producer refreshes metadata and retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_leader_or_follower_three_times_on_produce_is_retried_to_success_by_librdkafka() {
    let broker = embedded(&[]).await;
    let bs = broker.bootstrap_servers();
    let http_addr = broker.http_addr().expect("http listener");
    create_topic(&bs, "retried", 1).await;
    broker
        .faults()
        .add(
            Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower)
                .times(3)
                .topic("retried"),
        )
        .expect("fault set");
    assert_eq!(faults_listed(http_addr)[0]["count"], 3);
    let p = producer(&bs, &[("retry.backoff.ms", "50")]);
    let delivery = p
        .send(
            FutureRecord::<(), _>::to("retried").payload("v"),
            Duration::from_secs(30),
        )
        .await
        .expect("delivered after the retries");
    assert_eq!(
        (delivery.partition, delivery.offset),
        (0, 0),
        "faulted attempts appended nothing"
    );
    assert_eq!(injected(http_addr, "Produce", "error"), 3);
    assert!(
        faults_listed(http_addr).is_empty(),
        "a fault is gone once its count is used"
    );
    broker.shutdown().await.unwrap();
}

/// confluent-kafka (Python, librdkafka inside) retries the same way. Runs when the interop venv
/// (tests/interop/install.sh, `STRATA_INTEROP_PREFIX`) has confluent_kafka; says so and passes otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_leader_or_follower_three_times_on_produce_is_retried_to_success_by_confluent_kafka() {
    let prefix = std::env::var("STRATA_INTEROP_PREFIX").unwrap_or_else(|_| {
        format!(
            "{}/.cache/strata-interop",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let python = std::path::Path::new(&prefix).join("venv/bin/python");
    let importable = Command::new(&python)
        .args(["-c", "import confluent_kafka"])
        .status()
        .is_ok_and(|s| s.success());
    if !importable {
        eprintln!(
            "SKIPPED: no confluent_kafka in {} (run tests/interop/install.sh)",
            python.display()
        );
        return;
    }
    let broker = embedded(&[]).await;
    let bs = broker.bootstrap_servers();
    create_topic(&bs, "retried-py", 1).await;
    broker
        .faults()
        .add(Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower).times(3))
        .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/faults.py");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .args([script, &bs, "retried-py"])
            .output()
            .expect("run python")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("delivered at offset 0"), "{stdout}");
    assert_eq!(injected(broker.http_addr().unwrap(), "Produce", "error"), 3);
}

/// Kafka: TOPIC_AUTHORIZATION_FAILED is not retriable; the producer fails the message with that code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_retriable_error_on_produce_reaches_the_application_with_its_code() {
    let broker = embedded(&[]).await;
    let bs = broker.bootstrap_servers();
    let http_addr = broker.http_addr().unwrap();
    create_topic(&bs, "denied", 1).await;
    let (status, body) = http(
        http_addr,
        "POST",
        "/api/v1/faults",
        r#"{"api":"Produce","kind":"error","error":"TOPIC_AUTHORIZATION_FAILED","count":1,"topic":"denied","partition":0}"#,
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    let p = producer(&bs, &[]);
    let err = p
        .send(
            FutureRecord::<(), _>::to("denied").payload("x"),
            Duration::from_secs(30),
        )
        .await
        .expect_err("the injected error reaches the application");
    assert_eq!(
        err.0,
        KafkaError::MessageProduction(RDKafkaErrorCode::TopicAuthorizationFailed)
    );
    // The count is used up: the next produce succeeds (a new producer: librdkafka remembers the topic's
    // authorization error until its next metadata refresh).
    assert!(faults_listed(http_addr).is_empty());
    producer(&bs, &[])
        .send(
            FutureRecord::<(), _>::to("denied").payload("y"),
            Duration::from_secs(30),
        )
        .await
        .expect("delivered once the fault is used");
}

/// A connection closed after a produce ran (its response lost) is retried by the idempotent producer; Kafka's
/// producer-id sequence check keeps one copy. Latency delays each request it applies to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_connection_after_produce_is_retried_without_a_duplicate_and_latency_delays() {
    let broker = embedded(&[]).await;
    let bs = broker.bootstrap_servers();
    let http_addr = broker.http_addr().unwrap();
    create_topic(&bs, "closed", 1).await;
    broker
        .faults()
        .add(Fault::close_connection(ApiKey::Produce).times(1))
        .unwrap();
    let p = producer(&bs, &[("enable.idempotence", "true")]);
    p.send(
        FutureRecord::<(), _>::to("closed").payload("once"),
        Duration::from_secs(30),
    )
    .await
    .expect("delivered after the reconnect");
    assert_eq!(injected(http_addr, "Produce", "close_connection"), 1);

    broker
        .faults()
        .add(Fault::latency(ApiKey::Produce, Duration::from_millis(400)).times(1))
        .unwrap();
    let started = Instant::now();
    p.send(
        FutureRecord::<(), _>::to("closed").payload("late"),
        Duration::from_secs(30),
    )
    .await
    .expect("delivered late");
    assert!(started.elapsed() >= Duration::from_millis(400));

    let c = consumer(&bs, "g", &[]);
    assign_from_beginning(&c, "closed", 1);
    let got = tokio::task::spawn_blocking(move || {
        let got = consume_n(&c, 2, Duration::from_secs(30));
        // Nothing more arrives: no duplicate of "once".
        let extra = c.poll(Duration::from_millis(500));
        (got, extra.map(|m| m.map(|m| m.offset())))
    })
    .await
    .unwrap();
    let values: Vec<Vec<u8>> = got.0.iter().map(|m| m.3.clone().unwrap()).collect();
    assert_eq!(values, vec![b"once".to_vec(), b"late".to_vec()]);
    assert!(got.1.is_none(), "a duplicate arrived: {:?}", got.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_fault_requests_get_400_naming_the_bad_value() {
    let broker = embedded(&[]).await;
    let addr = broker.http_addr().unwrap();
    for (body, named) in [
        (
            r#"{"api":"Prodce","kind":"error","error":"NOT_LEADER_OR_FOLLOWER"}"#,
            "Prodce",
        ),
        (
            r#"{"api":"Produce","kind":"error","error":"NOT_A_KAFKA_ERROR"}"#,
            "NOT_A_KAFKA_ERROR",
        ),
        (r#"{"api":"Produce","kind":"error","error":4242}"#, "4242"),
        (r#"{"remote":"upload","kind":"outage"}"#, "upload"),
        (r#"{"api":"Produce","kind":"sulk"}"#, "sulk"),
        (r#"{"api":"Fetch","kind":"latency","latency_ms":-5}"#, "-5"),
        ("not json", "not JSON"),
    ] {
        let (status, text) = http(addr, "POST", "/api/v1/faults", body);
        assert!(status.contains(" 400 "), "{body}: {status} {text}");
        assert!(text.contains(named), "{body}: {text}");
    }
    assert!(
        faults_listed(addr).is_empty(),
        "nothing set by a bad request"
    );

    let (status, text) = http(
        addr,
        "POST",
        "/api/v1/faults",
        r#"{"api":"Fetch","kind":"throttle","throttle_ms":100}"#,
    );
    assert!(status.contains(" 200 "), "{status} {text}");
    let id = serde_json::from_str::<serde_json::Value>(&text).unwrap()["id"]
        .as_u64()
        .unwrap();
    let (status, _) = http(addr, "DELETE", &format!("/api/v1/faults/{id}"), "");
    assert!(status.contains(" 200 "), "{status}");
    let (status, text) = http(addr, "DELETE", &format!("/api/v1/faults/{id}"), "");
    assert!(
        status.contains(" 404 ") && text.contains(&id.to_string()),
        "{status} {text}"
    );
    http(
        addr,
        "POST",
        "/api/v1/faults",
        r#"{"remote":"fetch","kind":"outage"}"#,
    );
    assert_eq!(faults_listed(addr).len(), 1);
    let (status, text) = http(addr, "DELETE", "/api/v1/faults", "");
    assert!(
        status.contains(" 200 ") && text.contains("\"cleared\":1"),
        "{status} {text}"
    );
    assert!(faults_listed(addr).is_empty());
}

/// The local log start offset of `topic`-0 as `/api/v1/topics/{t}/partitions` reports it.
fn local_log_start(addr: SocketAddr, topic: &str) -> i64 {
    let (_, body) = http(
        addr,
        "GET",
        &format!("/api/v1/topics/{topic}/partitions"),
        "",
    );
    let v: serde_json::Value = serde_json::from_str(&body).expect("partitions JSON");
    v["partitions"][0]["local_log_start_offset"]
        .as_i64()
        .unwrap_or_else(|| panic!("no local_log_start_offset in {body}"))
}

/// Polls `c` until `f` holds, asserting that no record arrives meanwhile (consumer errors are expected).
fn poll_nothing_until(c: &BaseConsumer, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            panic!("a record arrived during the outage: offset {}", m.offset());
        }
    }
}

/// KIP-405: a segment is deleted locally (local.retention.*) only after it was copied to the remote tier, so a
/// copy outage holds local deletion back; a fetch outage makes a consumer of remote-only data wait, and it reads
/// everything once the outage is cleared.
#[test]
fn remote_outages_hold_back_local_deletion_and_hold_a_tiered_consumer_until_cleared() {
    let rt = tiered::runtime();
    let broker = strata::Broker::builder()
        .property("log.retention.check.interval.ms", "100")
        .property("remote.log.manager.task.interval.ms", "100")
        .property("remote.log.manager.task.retry.backoff.ms", "50")
        .property("rsm.config.chunk.size", "4096")
        .start_blocking()
        .expect("start");
    let (bs, addr) = (broker.bootstrap_servers(), broker.http_addr().unwrap());
    broker
        .faults()
        .add(Fault::remote_outage(RemoteOp::Copy))
        .unwrap();
    let n = 120;
    tiered::tiered_topic(&rt, &bs, "tiered", 1, n, &[]);
    tiered::wait_for("copy attempts failing", Duration::from_secs(30), || {
        injected(addr, "remote_copy", "outage") >= 3
    });
    assert_eq!(
        local_log_start(addr, "tiered"),
        0,
        "segments not yet uploaded stay local"
    );
    broker.faults().clear();
    tiered::wait_for(
        "uploaded segments deleted locally",
        Duration::from_secs(30),
        || local_log_start(addr, "tiered") > 0,
    );

    broker
        .faults()
        .add(Fault::remote_outage(RemoteOp::Fetch))
        .unwrap();
    let c = consumer(&bs, "tiered-reader", &[]);
    assign_from_beginning(&c, "tiered", 1);
    poll_nothing_until(&c, "remote fetches failing", || {
        injected(addr, "remote_fetch", "outage") >= 3
    });
    broker.faults().clear();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got = Vec::new();
    while got.len() < n {
        assert!(
            Instant::now() < deadline,
            "read {} of {n} after the outage",
            got.len()
        );
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            got.push(m.payload().unwrap().to_vec());
        }
    }
    let want: Vec<Vec<u8>> = (0..n).map(tiered::value_of).collect();
    assert_eq!(got, want);
    drop(c);
    broker.shutdown_blocking().unwrap();
}

/// `strata --ephemeral` prints its temporary data dir, serves, and removes the dir on SIGTERM; combined with an
/// explicit log.dirs it refuses to start, naming it.
#[test]
fn an_ephemeral_run_leaves_no_directory_behind_after_sigterm() {
    let bad = Command::new(strata_bin())
        .args([
            "--ephemeral",
            "--override",
            "log.dirs=/tmp/strata-not-ephemeral",
        ])
        .output()
        .expect("run strata");
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--ephemeral") && err.contains("log.dirs=/tmp/strata-not-ephemeral"),
        "{err}"
    );

    let mut child = Command::new(strata_bin())
        .args([
            "--ephemeral",
            "--override",
            "listeners=PLAINTEXT://127.0.0.1:0",
            "--override",
            "http.listener=127.0.0.1:0",
        ])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn strata --ephemeral");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut dir = None;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "no ready line");
        let line = lines.next().expect("stderr open").expect("stderr line");
        if let Some(rest) = line.split("all data in ").nth(1) {
            dir = Some(std::path::PathBuf::from(rest.split(" (").next().unwrap()));
        }
        if line.contains("bootstrap.servers=") {
            break;
        }
    }
    let dir = dir.expect("the ephemeral dir is printed at start");
    assert!(dir.is_dir(), "{} exists while running", dir.display());
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_some(),
        "data is kept there"
    );
    std::thread::spawn(move || lines.for_each(drop));
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "strata did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit:?}");
    assert!(!dir.exists(), "{} removed at exit", dir.display());
}

/// Error faults answer in each API's own response shape: Produce per partition (the chosen partition fails and
/// appends nothing, the other partition of the same request is appended), ListOffsets per partition, JoinGroup in
/// its top-level code; a throttle fault sets `throttle_time_ms` in the served response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_faults_use_each_apis_response_shape_and_throttle_sets_throttle_time() {
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;

    let broker = embedded(&[]).await;
    let bs = broker.bootstrap_servers();
    create_topic(&bs, "shapes", 2).await;
    let name = || TopicName(StrBytes::from_static_str("shapes"));
    let mut s = raw::connect(bs.parse().unwrap()).await;

    broker
        .faults()
        .add(
            Fault::error(ApiKey::Produce, ResponseError::NotLeaderOrFollower)
                .times(1)
                .topic("shapes")
                .partition(1),
        )
        .unwrap();
    let produce = ProduceRequest::default()
        .with_acks(1)
        .with_timeout_ms(5000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(name())
            .with_partition_data(
                (0..2)
                    .map(|p| {
                        PartitionProduceData::default()
                            .with_index(p)
                            .with_records(Some(raw::batch(&[b"v"])))
                    })
                    .collect(),
            )]);
    let resp: ProduceResponse = raw::request(&mut s, ApiKey::Produce, 9, &produce)
        .await
        .expect("answered");
    let mut codes: Vec<(i32, i16, i64)> = resp.responses[0]
        .partition_responses
        .iter()
        .map(|p| (p.index, p.error_code, p.base_offset))
        .collect();
    codes.sort();
    assert_eq!(codes, vec![(0, 0, 0), (1, 6, -1)]);

    broker
        .faults()
        .add(
            Fault::error(ApiKey::ListOffsets, ResponseError::NotLeaderOrFollower)
                .times(1)
                .topic("shapes")
                .partition(0),
        )
        .unwrap();
    let list = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(name())
            .with_partitions(
                (0..2)
                    .map(|p| {
                        ListOffsetsPartition::default()
                            .with_partition_index(p)
                            .with_timestamp(-1)
                    })
                    .collect(),
            )]);
    let resp: ListOffsetsResponse = raw::request(&mut s, ApiKey::ListOffsets, 5, &list)
        .await
        .expect("answered");
    let got: Vec<(i32, i16, i64)> = resp.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.error_code, p.offset))
        .collect();
    assert_eq!(
        got,
        vec![(0, 6, -1), (1, 0, 0)],
        "partition 1 still has no record"
    );

    broker
        .faults()
        .add(Fault::error(ApiKey::JoinGroup, ResponseError::CoordinatorLoadInProgress).times(1))
        .unwrap();
    let join = JoinGroupRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("g")))
        .with_session_timeout_ms(6000)
        .with_rebalance_timeout_ms(6000)
        .with_protocol_type(StrBytes::from_static_str("consumer"));
    let resp: JoinGroupResponse = raw::request(&mut s, ApiKey::JoinGroup, 5, &join)
        .await
        .expect("answered");
    assert_eq!(resp.error_code, 14);

    broker
        .faults()
        .add(Fault::throttle(ApiKey::Metadata, Duration::from_millis(250)).times(1))
        .unwrap();
    let resp: MetadataResponse =
        raw::request(&mut s, ApiKey::Metadata, 12, &MetadataRequest::default())
            .await
            .expect("answered");
    assert_eq!(resp.throttle_time_ms, 250);
    let resp: MetadataResponse =
        raw::request(&mut s, ApiKey::Metadata, 12, &MetadataRequest::default())
            .await
            .expect("answered");
    assert_eq!(resp.throttle_time_ms, 0, "the count is used");
}
