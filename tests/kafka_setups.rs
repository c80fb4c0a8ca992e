//! Kafka's own set-ups, unchanged, with the built `strata` binary as a child process: Apache Kafka 4.x's
//! single-node KRaft `server.properties` as shipped, the apache/kafka image's documented environment, and the
//! unknown-key / bad-value policy (Kafka starts on a key it does not know; strata warns naming the closest known
//! key, but stops on a typo in its own namespaces and on a bad value of a key it uses).

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use rdkafka::producer::FutureRecord;

/// `strata` with `args` and `env` (and no inherited `KAFKA_*` variable), stderr captured.
fn strata(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(strata_bin());
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("KAFKA_")) {
        cmd.env_remove(k);
    }
    cmd.args(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// A running child with the stderr lines it printed up to its ready line.
struct Running {
    child: Child,
    bootstrap: String,
    startup_log: Vec<String>,
    later_log: mpsc::Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            // The broker's side of a failed test.
            while let Ok(l) = self.later_log.recv_timeout(Duration::from_secs(1)) {
                eprintln!("strata: {l}");
            }
        }
    }
}

fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Starts `cmd` and waits (30 s at most) for `strata ready: bootstrap.servers=...`.
fn start(mut cmd: Command) -> Running {
    let mut child = cmd.spawn().expect("spawn strata");
    let rx = lines_of(&mut child);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut startup_log = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx.recv_timeout(left).unwrap_or_else(|_| {
            panic!(
                "strata printed no ready line within 30 s; it printed:\n{}",
                startup_log.join("\n")
            )
        });
        if let Some(rest) = line.split("bootstrap.servers=").nth(1) {
            let bootstrap = rest.split_whitespace().next().unwrap().to_string();
            return Running {
                child,
                bootstrap,
                startup_log,
                later_log: rx,
            };
        }
        startup_log.push(line);
    }
}

/// Runs `cmd`, which must exit within 30 s with a failure; returns its stderr.
fn fails(mut cmd: Command) -> String {
    let mut child = cmd.spawn().expect("spawn strata");
    let rx = lines_of(&mut child);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("strata did not stop within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = Vec::new();
    while let Ok(l) = rx.recv_timeout(Duration::from_secs(5)) {
        out.push(l);
    }
    assert!(!status.success(), "strata exited successfully: {out:?}");
    out.join("\n")
}

/// Produces three records to a new topic and reads them back, with librdkafka.
fn produce_and_consume(bootstrap: &str, topic: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        create_topic(bootstrap, topic, 1).await;
        let p = producer(bootstrap, &[]);
        for i in 0..3 {
            let v = format!("v{i}");
            p.send(
                FutureRecord::<(), _>::to(topic).payload(&v),
                Duration::from_secs(10),
            )
            .await
            .expect("produce");
        }
    });
    let c = consumer(bootstrap, "g", &[]);
    assign_from_beginning(&c, topic, 1);
    let got = consume_n(&c, 3, Duration::from_secs(30));
    let values: Vec<_> = got.iter().map(|m| m.3.clone().unwrap()).collect();
    assert_eq!(values, vec![b"v0".to_vec(), b"v1".to_vec(), b"v2".to_vec()]);
}

fn data_dir_arg(dir: &Path) -> String {
    format!("log.dirs={}", dir.display())
}

/// Kafka 4.x's `config/server.properties` (KRaft, combined broker+controller) with only the listener addresses changed (127.0.0.1:0: tests stay on loopback; an empty host binding every interface is unit-tested in config::listeners)
/// and `log.dirs` pointed at a temporary directory. Its controller, replication and thread keys have no meaning on
/// one node: one INFO line lists them. The CONTROLLER listener is not served.
#[test]
fn kafka_single_node_server_properties_as_shipped_starts_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = include_str!("fixtures/kafka-4.0-server.properties");
    let file = dir.path().join("server.properties");
    let data = dir.path().join("data");
    let text: String = shipped
        .lines()
        .map(|l| {
            if l.starts_with("log.dirs=") {
                data_dir_arg(&data)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&file, text).unwrap();
    // The console on a free port: the default 127.0.0.1:9464 may be taken by another broker of this run, which
    // is a WARN (asserted absent below).
    let b = start(strata(
        &[
            "--config",
            file.to_str().unwrap(),
            "--override",
            "http.listener=127.0.0.1:0",
        ],
        &[],
    ));
    assert!(b.bootstrap.starts_with("localhost:"), "{}", b.bootstrap);
    let log = b.startup_log.join("\n");
    let no_effect = b
        .startup_log
        .iter()
        .filter(|l| l.contains("no effect"))
        .collect::<Vec<_>>();
    assert_eq!(no_effect.len(), 1, "{log}");
    for key in [
        "process.roles",
        "controller.quorum.bootstrap.servers",
        "num.network.threads",
        "offsets.topic.replication.factor",
        "transaction.state.log.min.isr",
    ] {
        assert!(no_effect[0].contains(key), "{key} not listed: {log}");
    }
    assert!(!log.contains("WARN"), "{log}");
    produce_and_consume(&b.bootstrap, "kraft-file");
    assert!(data.join("kraft-file-0").is_dir(), "data not in log.dirs");
}

/// The apache/kafka image's single-node environment (docker-compose `single-node/plaintext`), listener addresses changed to 127.0.0.1:0
/// and `KAFKA_LOG_DIRS` to a temporary directory, with no file: strata serves both client listeners
/// (PLAINTEXT_HOST advertised as localhost, PLAINTEXT as broker), as Kafka does.
#[test]
fn apache_kafka_image_environment_without_a_file_starts_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let env = [
        ("KAFKA_NODE_ID", "1"),
        (
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
        ),
        (
            "KAFKA_ADVERTISED_LISTENERS",
            "PLAINTEXT_HOST://localhost:0,PLAINTEXT://broker:0",
        ),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        ("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@broker:0"),
        (
            "KAFKA_LISTENERS",
            "CONTROLLER://127.0.0.1:0,PLAINTEXT_HOST://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
        ),
        ("KAFKA_INTER_BROKER_LISTENER_NAME", "PLAINTEXT"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
        ("CLUSTER_ID", "4L6g3nShT-eMCtK--X86sw"),
        ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1"),
        ("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0"),
        ("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1"),
        ("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1"),
        (
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR",
            "1",
        ),
        ("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR", "1"),
        ("KAFKA_LOG_DIRS", data),
        ("KAFKA_HEAP_OPTS", "-Xmx1G"),
    ];
    let b = start(strata(&[], &env));
    assert!(b.bootstrap.starts_with("localhost:"), "{}", b.bootstrap);
    let log = b.startup_log.join("\n");
    assert!(
        log.contains("listener=PLAINTEXT ") && log.contains("advertised=broker:"),
        "the second listener is not served: {log}"
    );
    let from_env = b
        .startup_log
        .iter()
        .find(|l| l.contains("from KAFKA_* environment"))
        .unwrap_or_else(|| panic!("environment not listed: {log}"));
    assert!(
        from_env.contains("log.dirs") && !from_env.contains("heap"),
        "{from_env}"
    );
    produce_and_consume(&b.bootstrap, "from-env");
    assert!(Path::new(data).join("from-env-0").is_dir());
    // The image formats its storage with CLUSTER_ID; strata writes it to meta.properties (what Metadata reports).
    let meta = std::fs::read_to_string(Path::new(data).join("meta.properties")).unwrap();
    assert!(meta.contains("cluster.id=4L6g3nShT-eMCtK--X86sw"), "{meta}");
}

/// A CLUSTER_ID that is not a Kafka UUID stops start-up naming it; one that differs from the id the data dir was
/// formatted with stops it too, and the dir is left as it was.
#[test]
fn a_bad_or_different_cluster_id_stops_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--override".to_string(),
        "listeners=PLAINTEXT://127.0.0.1:0".to_string(),
        "--override".to_string(),
        data_dir_arg(dir.path()),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(strata(&args, &[("CLUSTER_ID", "my-cluster")]));
    assert!(
        err.contains("CLUSTER_ID") && err.contains("my-cluster"),
        "{err}"
    );
    let b = start(strata(&args, &[("CLUSTER_ID", "4L6g3nShT-eMCtK--X86sw")]));
    drop(b);
    let meta_path = dir.path().join("meta.properties");
    let before = std::fs::read_to_string(&meta_path).unwrap();
    let err = fails(strata(&args, &[("CLUSTER_ID", "MkU3OEVBNTcwNTJENDM2Qk")]));
    assert!(
        err.contains("cluster.id") && err.contains("MkU3OEVBNTcwNTJENDM2Qk"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&meta_path).unwrap(), before);
}

/// Precedence: file < environment < `--override`.
#[test]
fn environment_overrides_the_file_and_override_wins_over_both() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("server.properties");
    let from_file = dir.path().join("from-file");
    std::fs::write(
        &file,
        format!(
            "listeners=PLAINTEXT://127.0.0.1:1\nlog.dirs={}\n",
            from_file.display()
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let b = start(strata(
        &[
            "--config",
            file.to_str().unwrap(),
            "--override",
            "listeners=PLAINTEXT://127.0.0.1:0",
        ],
        &[
            ("KAFKA_LOG_DIRS", data.to_str().unwrap()),
            ("KAFKA_LISTENERS", "PLAINTEXT://127.0.0.1:2"),
        ],
    ));
    assert!(!b.bootstrap.ends_with(":1") && !b.bootstrap.ends_with(":2"));
    assert!(
        data.is_dir() && !from_file.exists(),
        "KAFKA_LOG_DIRS did not win over the file"
    );
}

/// Kafka starts on a key it does not know; strata does too, with a WARN naming the closest known key.
#[test]
fn unknown_key_warns_with_a_suggestion_and_start_up_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let b = start(strata(
        &[
            "--override",
            "listeners=PLAINTEXT://127.0.0.1:0",
            "--override",
            &data_dir_arg(dir.path()),
            "--override",
            "num.partitons=3",
        ],
        &[],
    ));
    let warn = b
        .startup_log
        .iter()
        .find(|l| l.contains("WARN") && l.contains("num.partitons"))
        .unwrap_or_else(|| panic!("no warning: {:?}", b.startup_log));
    assert!(warn.contains("did you mean num.partitions"), "{warn}");
}

/// Under `rsm.config.` a typo would send data to the wrong place: start-up stops naming the key.
#[test]
fn typo_under_rsm_config_stops_start_up_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for key in ["rsm.config.storage.backnd", "rsm.confg.storage.backend"] {
        let err = fails(strata(
            &[
                "--override",
                "listeners=PLAINTEXT://127.0.0.1:0",
                "--override",
                &data_dir_arg(dir.path()),
                "--override",
                &format!("{key}=filesystem"),
            ],
            &[],
        ));
        assert!(err.contains(key), "{key} not named: {err}");
    }
}

/// A bad value for a key strata uses stops start-up naming key and value, from any source.
#[test]
fn bad_value_stops_start_up_naming_key_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "--override".to_string(),
        "listeners=PLAINTEXT://127.0.0.1:0".to_string(),
        "--override".to_string(),
        data_dir_arg(dir.path()),
    ];
    let args: Vec<&str> = base.iter().map(String::as_str).collect();
    let mut with = args.clone();
    with.extend(["--override", "num.partitions=many"]);
    let err = fails(strata(&with, &[]));
    assert!(
        err.contains("num.partitions") && err.contains("many"),
        "{err}"
    );
    let err = fails(strata(&args, &[("KAFKA_LOG_RETENTION_MS", "soon")]));
    assert!(
        err.contains("log.retention.ms") && err.contains("soon"),
        "{err}"
    );
    // An SSL listener with no key or certificate stops start-up naming the keystore key it needs.
    let mut ssl = args.clone();
    ssl.extend(["--override", "listeners=SSL://127.0.0.1:0"]);
    let err = fails(strata(&ssl, &[]));
    assert!(
        err.contains("ssl.keystore.location") && err.contains("SSL"),
        "{err}"
    );
}

/// Kafka reports every static broker config as STATIC_BROKER_CONFIG whether it came from the file, the
/// environment or an override (the apache/kafka image writes its environment into the file); keys left alone are
/// DEFAULT_CONFIG. Checked with librdkafka's AdminClient `describe_configs` against the binary.
#[test]
fn describe_configs_reports_file_environment_and_override_as_static_broker_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("server.properties");
    std::fs::write(
        &file,
        format!(
            "listeners=PLAINTEXT://127.0.0.1:0\nnum.partitions=2\n{}\n",
            data_dir_arg(&dir.path().join("data"))
        ),
    )
    .unwrap();
    let b = start(strata(
        &[
            "--config",
            file.to_str().unwrap(),
            "--override",
            "message.max.bytes=2000000",
        ],
        &[("KAFKA_LOG_RETENTION_HOURS", "2")],
    ));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let desc = rt
        .block_on(admin(&b.bootstrap).describe_configs(
            &[rdkafka::admin::ResourceSpecifier::Broker(1)],
            &rdkafka::admin::AdminOptions::new(),
        ))
        .expect("describe_configs");
    let r = desc[0].as_ref().expect("broker configs");
    let get = |k: &str| {
        let e = r.get(k).unwrap_or_else(|| panic!("{k} not listed"));
        (e.value.clone(), format!("{:?}", e.source), e.is_read_only)
    };
    let (static_broker, default) = (
        format!("{:?}", rdkafka::admin::ConfigSource::StaticBroker),
        format!("{:?}", rdkafka::admin::ConfigSource::Default),
    );
    assert_eq!(
        get("num.partitions"),
        (Some("2".into()), static_broker.clone(), true)
    );
    assert_eq!(
        get("log.retention.ms"),
        // Not read-only: a dynamic broker config (Kafka's DynamicLogConfig).
        (Some("7200000".into()), static_broker.clone(), false)
    );
    assert_eq!(
        get("message.max.bytes"),
        (Some("2000000".into()), static_broker, false)
    );
    assert_eq!(
        get("auto.create.topics.enable"),
        (Some("true".into()), default, true)
    );
}
