//! Helpers shared by the end-to-end tests: an in-process broker on 127.0.0.1:0, the `strata` binary as a child
//! process, and rdkafka clients.
#![allow(dead_code)]

pub mod raw;
pub mod tiered;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::FutureProducer;
use strata_broker::Server;

/// Starts an in-process broker on 127.0.0.1:0 with its data in `dir`, tiered storage off.
pub async fn start_broker(dir: &Path) -> Server {
    start_broker_with(dir, &[]).await
}

/// Same, with extra properties. Started from the properties exactly as the `strata` binary starts.
pub async fn start_broker_with(dir: &Path, extra: &[(&str, &str)]) -> Server {
    Server::start_from_properties(&local_props(dir, extra))
        .await
        .expect("broker starts")
}

/// The properties of [`start_broker_with`]: one listener on 127.0.0.1:0, `log.dirs` = `dir`, tiered storage off
/// (unless `extra` says otherwise), then `extra`.
pub fn local_props(dir: &Path, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut props = BTreeMap::new();
    props.insert(
        "listeners".to_string(),
        "PLAINTEXT://127.0.0.1:0".to_string(),
    );
    props.insert("log.dirs".to_string(), dir.display().to_string());
    props.insert(
        "remote.log.storage.system.enable".to_string(),
        "false".to_string(),
    );
    // As Kafka's test harnesses: no wait before a group's first rebalance (the broker default is Kafka's 3000).
    props.insert(
        "group.initial.rebalance.delay.ms".to_string(),
        "0".to_string(),
    );
    for (k, v) in extra {
        props.insert(k.to_string(), v.to_string());
    }
    props
}

/// A two-worker multi-thread runtime, as the broker runs on this machine.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// `host:port` of an in-process broker.
pub fn bootstrap(h: &Server) -> String {
    h.local_addr().to_string()
}

/// A client config pointing at `bootstrap`, with quiet logs.
pub fn client_config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap).set("log_level", "3");
    c
}

/// A producer with `acks=all` plus `extra` settings.
pub fn producer(bootstrap: &str, extra: &[(&str, &str)]) -> FutureProducer {
    let mut c = client_config(bootstrap);
    c.set("acks", "all").set("message.timeout.ms", "30000");
    for (k, v) in extra {
        c.set(*k, *v);
    }
    c.create().expect("producer")
}

/// A consumer in `group` starting from the earliest offset, with manual commits.
pub fn consumer(bootstrap: &str, group: &str, extra: &[(&str, &str)]) -> BaseConsumer {
    let mut c = client_config(bootstrap);
    c.set("group.id", group)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "500");
    for (k, v) in extra {
        c.set(*k, *v);
    }
    c.create().expect("consumer")
}

/// An admin client.
pub fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    client_config(bootstrap).create().expect("admin client")
}

/// Creates a topic and asserts success.
pub async fn create_topic(bootstrap: &str, name: &str, partitions: i32) {
    let admin = admin(bootstrap);
    let res = admin
        .create_topics(
            &[NewTopic::new(name, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .expect("create_topics request");
    assert!(
        matches!(res.as_slice(), [Ok(n)] if n == name),
        "create {name}: {res:?}"
    );
}

/// Waits until `f` returns true, polling every 20 ms, panicking after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The built `strata` binary (`<target>/<profile>/strata`), building it with cargo if it is missing.
/// `STRATA_BIN` overrides it (a target dir shared by several checkouts holds only one `strata`).
pub fn strata_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("STRATA_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // <target>/<profile>/deps/<test>-<hash>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile dir")
        .to_path_buf();
    let bin = profile_dir.join("strata");
    if !bin.exists() {
        let target_dir = profile_dir.parent().expect("target dir");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "strata-broker", "--bin", "strata"])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build for the strata binary");
        assert!(status.success(), "building the strata binary failed");
    }
    assert!(bin.exists(), "strata binary not found at {}", bin.display());
    bin
}

/// The `strata` binary running as a child process.
pub struct ChildBroker {
    child: Child,
    /// `host:port` from the ready line.
    pub bootstrap: String,
    /// stderr lines after the ready line.
    pub logs: mpsc::Receiver<String>,
}

impl ChildBroker {
    /// Starts `strata` on 127.0.0.1:`port` (0 = any) with data in `dir`; waits for the ready line.
    pub fn spawn(dir: &Path, port: u16) -> ChildBroker {
        Self::spawn_with(dir, port, &[])
    }

    /// Same, with `--override key=value` for each of `overrides`.
    pub fn spawn_with(dir: &Path, port: u16, overrides: &[(&str, &str)]) -> ChildBroker {
        let mut cmd = Command::new(strata_bin());
        // As Kafka's test harnesses: no wait before a group's first rebalance (a later override wins).
        cmd.args(["--override", "group.initial.rebalance.delay.ms=0"]);
        for (k, v) in overrides {
            cmd.args(["--override", &format!("{k}={v}")]);
        }
        let mut child = cmd
            .args([
                "--override",
                &format!("listeners=PLAINTEXT://127.0.0.1:{port}"),
            ])
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
        let deadline = Instant::now() + Duration::from_secs(30);
        let bootstrap = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .expect("strata printed its ready line within 30 s");
            if let Some(rest) = line.split("bootstrap.servers=").nth(1) {
                break rest
                    .split_whitespace()
                    .next()
                    .expect("address after bootstrap.servers=")
                    .to_string();
            }
        };
        ChildBroker {
            child,
            bootstrap,
            logs: rx,
        }
    }

    /// The port the child listens on.
    pub fn port(&self) -> u16 {
        self.bootstrap
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port in bootstrap")
    }

    /// The child's process id (for /proc/<pid>/status).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then reap.
    pub fn kill9(mut self) {
        self.child.kill().expect("SIGKILL strata");
        self.child.wait().expect("reap strata");
    }

    /// SIGTERM and wait (bounded) for a clean exit; returns whether it exited with status 0.
    pub fn terminate(mut self) -> bool {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s.success();
            }
            assert!(
                Instant::now() < deadline,
                "strata did not exit within 20 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ChildBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One consumed message: (partition, offset, key, value).
pub type Consumed = (i32, i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// Polls `consumer` until `want` messages arrived (or the deadline), returning (partition, offset, key, value).
pub fn consume_n(consumer: &BaseConsumer, want: usize, limit: Duration) -> Vec<Consumed> {
    use rdkafka::Message;
    let deadline = Instant::now() + limit;
    let mut out = Vec::with_capacity(want);
    while out.len() < want {
        assert!(
            Instant::now() < deadline,
            "timed out with {} of {want} messages",
            out.len()
        );
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => out.push((
                m.partition(),
                m.offset(),
                m.key().map(<[u8]>::to_vec),
                m.payload().map(<[u8]>::to_vec),
            )),
            Some(Err(e)) => panic!("consumer error: {e}"),
            None => {}
        }
    }
    out
}

/// Assigns partitions 0..n of `topic` from the beginning (no group).
pub fn assign_from_beginning(consumer: &BaseConsumer, topic: &str, partitions: i32) {
    let mut tpl = rdkafka::TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, rdkafka::Offset::Beginning)
            .expect("add partition");
    }
    consumer.assign(&tpl).expect("assign");
}
