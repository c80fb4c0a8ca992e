//! The differential harness: the same requests to strata and to Apache Kafka 4.4 (bench/kafka/kafka.sh), the
//! answers compared field by field after a normaliser. See README.md here.

pub mod case;
pub mod cases;
pub mod run;
pub mod tree;
pub mod wire;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse};

/// Broker properties both brokers get (beyond their defaults), so that a difference is one of behaviour.
pub const SHARED_PROPS: &[(&str, &str)] = &[("auto.create.topics.enable", "false")];

/// A Kafka broker started with the launcher; stopped when dropped.
pub struct Kafka {
    script: PathBuf,
    dir: tempfile::TempDir,
    pub addr: SocketAddr,
    pub start_ms: u64,
}

impl Kafka {
    /// Installs (once, into the cache) and starts Kafka on a free loopback port. Panics naming the step that failed.
    pub fn start(root: &Path) -> Kafka {
        let script = root.join("bench/kafka/kafka.sh");
        let st = Command::new(&script)
            .arg("install")
            .status()
            .expect("run bench/kafka/kafka.sh install");
        assert!(
            st.success(),
            "bench/kafka/kafka.sh install failed: Apache Kafka could not be fetched from Maven Central, so the \
             differential tests cannot run (STRATA_DIFFERENTIAL=off skips them on purpose)"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let mut cmd = Command::new(&script);
        cmd.arg("start")
            .arg(dir.path().join("k"))
            .arg(port.to_string());
        for (k, v) in SHARED_PROPS {
            cmd.arg(format!("{k}={v}"));
        }
        let out = cmd.output().expect("run kafka.sh start");
        assert!(
            out.status.success(),
            "kafka.sh start failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout).to_string();
        let start_ms = line
            .split_whitespace()
            .nth(2)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Kafka {
            script,
            dir,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            start_ms,
        }
    }
}

impl Drop for Kafka {
    fn drop(&mut self) {
        // Kafka's log survives the temp dir, for the report's reader.
        let log = self.dir.path().join("k/kafka.log");
        let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-kafka.log");
        let _ = std::fs::copy(log, keep);
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(self.dir.path().join("k"))
            .status();
    }
}

/// The versions a broker advertises, by API key.
pub async fn advertised(addr: SocketAddr) -> Vec<(ApiKey, i16, i16)> {
    let mut conn = wire::Conn::new(addr);
    let body = {
        let mut b = bytes::BytesMut::new();
        kafka_protocol::protocol::Encodable::encode(&ApiVersionsRequest::default(), &mut b, 3)
            .unwrap();
        b
    };
    let r: ApiVersionsResponse = conn
        .request_typed(ApiKey::ApiVersions, 3, &body)
        .await
        .expect("ApiVersions answered");
    r.api_keys
        .iter()
        .filter_map(|k| {
            ApiKey::try_from(k.api_key)
                .ok()
                .map(|a| (a, k.min_version, k.max_version))
        })
        .collect()
}

/// Makes the broker create its internal topics (`__consumer_offsets`, `__transaction_state`) and fetch its first
/// block of producer ids before the cases run: Kafka does both on first use and answers COORDINATOR_NOT_AVAILABLE /
/// COORDINATOR_LOAD_IN_PROGRESS meanwhile, which would make the first group or transaction case depend on the
/// order of cases.
pub async fn warm_up(addr: SocketAddr) {
    use kafka_protocol::messages::{
        FindCoordinatorRequest, FindCoordinatorResponse, InitProducerIdRequest,
        InitProducerIdResponse, ProducerId,
    };
    use kafka_protocol::protocol::StrBytes;
    let mut conn = wire::Conn::new(addr);
    for key_type in [0i8, 1] {
        let req = FindCoordinatorRequest::default()
            .with_key(StrBytes::from_static_str("differential-warm-up"))
            .with_key_type(key_type);
        let mut body = bytes::BytesMut::new();
        kafka_protocol::protocol::Encodable::encode(&req, &mut body, 3).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let r: Option<FindCoordinatorResponse> =
                conn.request_typed(ApiKey::FindCoordinator, 3, &body).await;
            if r.as_ref().is_some_and(|r| r.error_code == 0) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{addr}: no coordinator (key type {key_type}) within 60 s: {r:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    let req = InitProducerIdRequest::default()
        .with_transactional_id(None)
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    let mut body = bytes::BytesMut::new();
    kafka_protocol::protocol::Encodable::encode(&req, &mut body, 4).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let r: Option<InitProducerIdResponse> =
            conn.request_typed(ApiKey::InitProducerId, 4, &body).await;
        if r.as_ref().is_some_and(|r| r.error_code == 0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{addr}: no producer id within 60 s: {r:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
