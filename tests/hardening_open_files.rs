//! Issue 11 item 3 (storage half): the `strata` binary, run with a soft and hard `RLIMIT_NOFILE` of 256, holds
//! more partitions than it could keep files open for (400 partitions: 1200 segment files and indexes), serves
//! produce and fetch on every one of them, and starts again — after a clean shutdown and after SIGKILL — with
//! every record readable. Before, each partition kept its `.log`, `.index` and `.timeindex` open, the broker hit
//! "Too many open files" while creating them, and then refused to start.
//!
//! Kafka keeps segment descriptors open and relies on a large `ulimit -n`; strata bounds them with
//! `log.max.open.files` (default: half the soft limit), closing idle segment files and unmapping idle indexes.
use crate::common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::raw::{batch, connect, request};
use common::strata_bin;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::RecordBatchDecoder;

const NOFILE: u32 = 256;
const TOPICS: usize = 4;
const PARTITIONS: i32 = 100;

/// `strata` under `ulimit -n 256` (soft and hard), its stderr collected.
struct LimitedBroker {
    child: Child,
    addr: SocketAddr,
    logs: mpsc::Receiver<String>,
}

impl LimitedBroker {
    fn spawn(dir: &Path) -> LimitedBroker {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -n {NOFILE} && exec \"$0\" \"$@\""))
            // STRATA_BIN names another build to run (default: the workspace's `strata`).
            .arg(std::env::var_os("STRATA_BIN").map_or_else(strata_bin, Into::into))
            .args(["--override", "listeners=PLAINTEXT://127.0.0.1:0"])
            .args(["--override", &format!("log.dirs={}", dir.display())])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn strata");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        let addr = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                panic!(
                    "strata did not print its ready line within 60 s under ulimit -n {NOFILE}; stderr:\n{}",
                    seen.join("\n")
                );
            };
            if let Some(rest) = line.split("bootstrap.servers=").nth(1) {
                let addr = rest.split_whitespace().next().expect("address");
                break addr.parse().expect("bootstrap address");
            }
            seen.push(line);
        };
        LimitedBroker {
            child,
            addr,
            logs: rx,
        }
    }

    /// The child's open descriptors now (`/proc/<pid>/fd`).
    fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// Fails if the broker logged running out of descriptors.
    fn assert_no_emfile(&self) {
        for line in self.logs.try_iter() {
            assert!(
                !line.contains("Too many open files"),
                "strata ran out of file descriptors: {line}"
            );
        }
    }

    fn terminate(mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                assert!(s.success(), "strata exited with {s} after SIGTERM");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "strata did not exit within 30 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill9(mut self) {
        self.child.kill().expect("SIGKILL strata");
        self.child.wait().expect("reap strata");
    }
}

impl Drop for LimitedBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn name(s: &str) -> TopicName {
    TopicName(StrBytes::from_string(s.to_string()))
}

fn topic(t: usize) -> String {
    format!("many-files-{t}")
}

fn value(t: usize, p: i32, n: usize) -> Vec<u8> {
    format!("{}/{p}/{n}", topic(t)).into_bytes()
}

async fn create_topics(addr: SocketAddr) {
    let mut s = connect(addr).await;
    // One request per topic: a few requests create all the partitions.
    for t in 0..TOPICS {
        let req = CreateTopicsRequest::default()
            .with_timeout_ms(30_000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(name(&topic(t)))
                .with_num_partitions(PARTITIONS)
                .with_replication_factor(1)]);
        let r: CreateTopicsResponse = request(&mut s, ApiKey::CreateTopics, 7, &req)
            .await
            .expect("CreateTopics answered");
        assert_eq!(
            r.topics[0].error_code,
            0,
            "create {}: {:?}",
            topic(t),
            r.topics[0].error_message
        );
    }
}

/// Produces record `n` to every partition (one request per topic, acks=all).
async fn produce_all(addr: SocketAddr, n: usize) {
    let mut s = connect(addr).await;
    for t in 0..TOPICS {
        let partitions = (0..PARTITIONS)
            .map(|p| {
                PartitionProduceData::default()
                    .with_index(p)
                    .with_records(Some(batch(&[&value(t, p, n)])))
            })
            .collect();
        let req = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(30_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(name(&topic(t)))
                .with_partition_data(partitions)]);
        let r: ProduceResponse = request(&mut s, ApiKey::Produce, 9, &req)
            .await
            .expect("Produce answered");
        let parts = &r.responses[0].partition_responses;
        assert_eq!(parts.len(), PARTITIONS as usize);
        for p in parts {
            assert_eq!(
                p.error_code,
                0,
                "produce {} partition {}",
                topic(t),
                p.index
            );
            assert_eq!(
                p.base_offset,
                n as i64,
                "{} partition {}",
                topic(t),
                p.index
            );
        }
    }
}

/// Fetches every partition from offset 0 and checks it holds exactly records `0..count`.
async fn read_back_all(addr: SocketAddr, count: usize) {
    let mut s = connect(addr).await;
    for t in 0..TOPICS {
        let partitions = (0..PARTITIONS)
            .map(|p| {
                FetchPartition::default()
                    .with_partition(p)
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 16)
            })
            .collect();
        let req = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(0)
            .with_max_bytes(64 << 20)
            .with_topics(vec![FetchTopic::default()
                .with_topic(name(&topic(t)))
                .with_partitions(partitions)]);
        let r: FetchResponse = request(&mut s, ApiKey::Fetch, 12, &req)
            .await
            .expect("Fetch answered");
        let parts = &r.responses[0].partitions;
        assert_eq!(parts.len(), PARTITIONS as usize);
        for p in parts {
            assert_eq!(
                p.error_code,
                0,
                "fetch {} partition {}",
                topic(t),
                p.partition_index
            );
            assert_eq!(p.high_watermark, count as i64);
            let mut records = p.records.clone().unwrap_or_default();
            let got: Vec<Vec<u8>> = RecordBatchDecoder::decode_all(&mut records)
                .expect("decodable records")
                .into_iter()
                .flat_map(|set| set.records)
                .map(|r| r.value.expect("value").to_vec())
                .collect();
            let want: Vec<Vec<u8>> = (0..count).map(|n| value(t, p.partition_index, n)).collect();
            assert_eq!(got, want, "{} partition {}", topic(t), p.partition_index);
        }
    }
}

#[test]
fn broker_under_a_low_open_files_limit_serves_and_restarts_with_more_partitions_than_it_can_open() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();

    let broker = LimitedBroker::spawn(dir.path());
    rt.block_on(create_topics(broker.addr));
    rt.block_on(produce_all(broker.addr, 0));
    rt.block_on(read_back_all(broker.addr, 1));
    assert!(
        broker.open_fds() < NOFILE as usize,
        "{} descriptors open",
        broker.open_fds()
    );
    broker.assert_no_emfile();
    broker.terminate();

    // Clean restart: every partition loads, serves reads and takes more records.
    let broker = LimitedBroker::spawn(dir.path());
    rt.block_on(read_back_all(broker.addr, 1));
    rt.block_on(produce_all(broker.addr, 1));
    rt.block_on(read_back_all(broker.addr, 2));
    broker.assert_no_emfile();
    broker.kill9();

    // After SIGKILL every partition's active segment is recovered, still within the limit.
    let broker = LimitedBroker::spawn(dir.path());
    rt.block_on(read_back_all(broker.addr, 2));
    rt.block_on(produce_all(broker.addr, 2));
    rt.block_on(read_back_all(broker.addr, 3));
    broker.assert_no_emfile();
    broker.terminate();
}
