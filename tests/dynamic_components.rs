//! Dynamic broker configs applied to running components (Kafka's `BrokerReconfigurable`s): the connection limits
//! (`SocketServer.ReconfigurableConfigs`: `max.connections`, `max.connections.per.ip`,
//! `max.connections.per.ip.overrides`) and the log cleaner's keys (`LogCleaner.ReconfigurableConfigs`:
//! `log.cleaner.threads`, `.io.max.bytes.per.second`, `.backoff.ms`, `.dedupe.buffer.size`, …) take effect without
//! a restart and survive one; keys Kafka changes at run time that strata reads only at start are INVALID_CONFIG
//! with the reason, those that change nothing on strata are kept and described with no effect; DescribeConfigs of the cluster default resource (`""`) lists only the dynamic defaults set, as Kafka's
//! `ConfigHelper`.

use crate::common;

use std::time::{Duration, Instant};

use common::raw::{connect, read_frame, request, send_frame};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};
use tokio::net::TcpStream;

const SET: i8 = 0;
const DELETE: i8 = 1;
const INVALID_CONFIG: i16 = 40;
const DYNAMIC_BROKER: i8 = 2;
const DYNAMIC_DEFAULT_BROKER: i8 = 3;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// IncrementalAlterConfigs v1 of the BROKER resource `name`: (key, operation, value). Returns (code, message).
async fn alter(s: &mut TcpStream, name: &str, ops: &[(&str, i8, &str)]) -> (i16, String) {
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(sb(name))
            .with_configs(
                ops.iter()
                    .map(|(k, op, v)| {
                        AlterableConfig::default()
                            .with_name(sb(k))
                            .with_config_operation(*op)
                            .with_value(Some(sb(v)))
                    })
                    .collect(),
            ),
    ]);
    let r: IncrementalAlterConfigsResponse = request(s, ApiKey::IncrementalAlterConfigs, 1, &req)
        .await
        .unwrap();
    let r = &r.responses[0];
    (
        r.error_code,
        r.error_message.as_deref().unwrap_or_default().to_string(),
    )
}

/// DescribeConfigs v4 of the BROKER resource `name` (all keys): (name, value, source, read_only).
async fn describe(s: &mut TcpStream, name: &str) -> Vec<(String, Option<String>, i8, bool)> {
    let req =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(sb(name))]);
    let r: DescribeConfigsResponse = request(s, ApiKey::DescribeConfigs, 4, &req).await.unwrap();
    assert_eq!(r.results[0].error_code, 0);
    r.results[0]
        .configs
        .iter()
        .map(|c| {
            (
                c.name.to_string(),
                c.value.as_ref().map(|v| v.to_string()),
                c.config_source,
                c.read_only,
            )
        })
        .collect()
}

/// Whether a new connection is served (answers ApiVersions) rather than closed at once.
async fn served(addr: std::net::SocketAddr) -> (bool, TcpStream) {
    let mut s = connect(addr).await;
    let mut frame = bytes::BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(ApiKey::ApiVersions as i16)
        .with_request_api_version(3)
        .with_correlation_id(1)
        .with_client_id(Some(sb("limits")))
        .encode(&mut frame, ApiKey::ApiVersions.request_header_version(3))
        .unwrap();
    common::raw::api_versions_request()
        .encode(&mut frame, 3)
        .unwrap();
    send_frame(&mut s, &frame).await;
    (read_frame(&mut s).await.is_some(), s)
}

/// Waits until a new connection is served or refused as `want` (a closed connection frees its slot when the
/// broker notices, a moment later).
async fn wait_served(addr: std::net::SocketAddr, want: bool) -> Vec<TcpStream> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (ok, s) = served(addr).await;
        if ok == want {
            return vec![s];
        }
        drop(s);
        assert!(
            Instant::now() < deadline,
            "connection served = {ok}, want {want}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_limits_change_at_once_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let addr = server.local_addr();
    let mut s = connect(addr).await;
    // This connection and one more from 127.0.0.1.
    assert_eq!(
        alter(&mut s, "1", &[("max.connections.per.ip", SET, "2")])
            .await
            .0,
        0
    );
    let (ok, _second) = served(addr).await;
    assert!(ok, "the second connection is within the new limit");
    let _refused = wait_served(addr, false).await;
    // An override for 127.0.0.1 lifts it; deleting both goes back to the static limit.
    let (code, msg) = alter(
        &mut s,
        "1",
        &[("max.connections.per.ip.overrides", SET, "127.0.0.1:5")],
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    let _third = wait_served(addr, true).await;
    let (code, _) = alter(
        &mut s,
        "1",
        &[
            ("max.connections.per.ip", DELETE, ""),
            ("max.connections.per.ip.overrides", DELETE, ""),
        ],
    )
    .await;
    assert_eq!(code, 0);
    // A bad value changes nothing.
    let (code, msg) = alter(&mut s, "", &[("max.connections.per.ip", SET, "0")]).await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(msg.contains("max.connections.per.ip"), "{msg}");
    let _more: Vec<_> = futures::future::join_all((0..3).map(|_| served(addr))).await;

    // The cluster-wide default, kept across a restart; DescribeConfigs of "" lists only it.
    assert_eq!(
        alter(&mut s, "", &[("max.connections.per.ip", SET, "1")])
            .await
            .0,
        0
    );
    let listed = describe(&mut s, "").await;
    assert_eq!(
        listed,
        vec![(
            "max.connections.per.ip".into(),
            Some("1".into()),
            DYNAMIC_DEFAULT_BROKER,
            false
        )]
    );
    drop((s, _second, _refused, _third, _more));
    server.shutdown().await.unwrap();

    let server = common::start_broker(dir.path()).await;
    let addr = server.local_addr();
    let (ok, mut first) = served(addr).await;
    assert!(ok);
    let (ok, _) = served(addr).await;
    assert!(
        !ok,
        "max.connections.per.ip=1 from the dynamic default after the restart"
    );
    let entry = describe(&mut first, "1")
        .await
        .into_iter()
        .find(|e| e.0 == "max.connections.per.ip")
        .unwrap();
    assert_eq!(
        entry,
        (
            "max.connections.per.ip".into(),
            Some("1".into()),
            DYNAMIC_DEFAULT_BROKER,
            false
        )
    );
    drop(first);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_cleaner_keys_apply_to_the_running_cleaner() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    let cleaner = server.broker().cleaner().expect("cleaner runs").clone();
    let before = cleaner.config();
    let (code, msg) = alter(
        &mut s,
        "1",
        &[
            ("log.cleaner.threads", SET, "3"),
            ("log.cleaner.io.max.bytes.per.second", SET, "1048576"),
            ("log.cleaner.backoff.ms", SET, "250"),
            ("log.cleaner.dedupe.buffer.size", SET, "33554432"),
        ],
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    let c = cleaner.config();
    assert_eq!(
        (
            c.threads,
            c.io_max_bytes_per_second,
            c.backoff_ms,
            c.dedupe_buffer_size
        ),
        (3, 1_048_576.0, 250, 32 << 20)
    );
    let entry = describe(&mut s, "1")
        .await
        .into_iter()
        .find(|e| e.0 == "log.cleaner.threads")
        .unwrap();
    assert_eq!(
        entry,
        (
            "log.cleaner.threads".into(),
            Some("3".into()),
            DYNAMIC_BROKER,
            false
        )
    );

    // Kafka's check: at least 1 MiB of dedupe buffer per thread; refused, nothing changes.
    let (code, msg) = alter(
        &mut s,
        "1",
        &[
            ("log.cleaner.threads", SET, "64"),
            ("log.cleaner.dedupe.buffer.size", SET, "33554432"),
        ],
    )
    .await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert_eq!(cleaner.config().threads, 3);

    // AlterConfigs-style removal of every key: back to the static config.
    let (code, _) = alter(
        &mut s,
        "1",
        &[
            ("log.cleaner.threads", DELETE, ""),
            ("log.cleaner.io.max.bytes.per.second", DELETE, ""),
            ("log.cleaner.backoff.ms", DELETE, ""),
            ("log.cleaner.dedupe.buffer.size", DELETE, ""),
        ],
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(cleaner.config(), before);
    server.shutdown().await.unwrap();
}

/// `DynamicBrokerConfig.AllDynamicConfigs` holds keys strata uses but reads only at start (listeners, TLS material,
/// SASL mechanisms): AlterConfigs names the key and why, instead of accepting a change that would not happen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_kafka_changes_at_run_time_but_strata_cannot_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    for (key, value, why) in [
        (
            "advertised.listeners",
            "PLAINTEXT://127.0.0.1:9",
            "at start",
        ),
        ("ssl.keystore.location", "/tmp/k.pem", "TLS material"),
        ("sasl.enabled.mechanisms", "PLAIN", "at start"),
    ] {
        let (code, msg) = alter(&mut s, "1", &[(key, SET, value)]).await;
        assert_eq!(code, INVALID_CONFIG, "{key}: {msg}");
        assert!(
            msg.contains(key) && msg.contains("strata cannot") && msg.contains(why),
            "{msg}"
        );
    }
    assert!(describe(&mut s, "").await.is_empty(), "nothing was set");
    server.shutdown().await.unwrap();
}

/// Kafka's run-time keys that change nothing on strata (Kerberos, JVM TLS settings, thread pools, replication
/// throttles: strata accepts them with no effect at start too) are accepted as Kafka 4.4 accepts them (librdkafka's
/// 0081 sets `sasl.kerberos.min.time.before.relogin` and `background.threads`): checked by Kafka's type, kept across
/// a restart, described as DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG and removed by DELETE; per-broker
/// keys on the cluster-wide default are INVALID_REQUEST with Kafka's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_kafka_takes_at_run_time_with_no_effect_here_are_kept_and_described() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    for (key, value) in [
        ("sasl.kerberos.min.time.before.relogin", "58000"),
        ("background.threads", "9"),
        ("num.io.threads", "16"),
        ("follower.replication.throttled.rate", "1000"),
    ] {
        let (code, msg) = alter(&mut s, "1", &[(key, SET, value)]).await;
        assert_eq!(code, 0, "{key}: {msg}");
    }
    let (code, msg) = alter(&mut s, "", &[("num.io.threads", SET, "12")]).await;
    assert_eq!(code, 0, "{msg}");
    let (code, msg) = alter(
        &mut s,
        "",
        &[("sasl.kerberos.min.time.before.relogin", SET, "58000")],
    )
    .await;
    assert_eq!(
        (code, msg.as_str()),
        (
            42,
            "Cannot update these configs at default cluster level, broker id must be specified: \
             [sasl.kerberos.min.time.before.relogin]"
        )
    );
    let (code, msg) = alter(
        &mut s,
        "1",
        &[("sasl.kerberos.min.time.before.relogin", SET, "soon")],
    )
    .await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(
        msg.contains("sasl.kerberos.min.time.before.relogin") && msg.contains("soon"),
        "{msg}"
    );
    drop(s);
    server.shutdown().await.unwrap();

    let server = common::start_broker(dir.path()).await;
    let mut s = connect(server.local_addr()).await;
    let got = describe(&mut s, "1").await;
    let entry = |n: &str| got.iter().find(|(k, ..)| k == n).cloned();
    assert_eq!(
        entry("sasl.kerberos.min.time.before.relogin"),
        Some((
            "sasl.kerberos.min.time.before.relogin".into(),
            Some("58000".into()),
            DYNAMIC_BROKER,
            false
        ))
    );
    // Per-broker over the cluster default.
    assert_eq!(
        entry("num.io.threads").map(|e| (e.1, e.2)),
        Some((Some("16".into()), DYNAMIC_BROKER))
    );
    assert_eq!(
        describe(&mut s, "").await,
        vec![(
            "num.io.threads".to_string(),
            Some("12".to_string()),
            DYNAMIC_DEFAULT_BROKER,
            false
        )]
    );
    let (code, msg) = alter(
        &mut s,
        "1",
        &[("sasl.kerberos.min.time.before.relogin", DELETE, "")],
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    let got = describe(&mut s, "1").await;
    assert!(
        !got.iter()
            .any(|(k, ..)| k == "sasl.kerberos.min.time.before.relogin"),
        "{got:?}"
    );
    server.shutdown().await.unwrap();
}
