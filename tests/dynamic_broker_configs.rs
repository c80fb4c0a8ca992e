//! Dynamic broker configs (Kafka's `DynamicBrokerConfig` / `DynamicLogConfig`): AlterConfigs and
//! IncrementalAlterConfigs on the BROKER resource (this node's id, or `""` for the cluster-wide default) change the
//! log defaults at run time — topics without their own override take the new default at once, topics with one
//! keep it — and the change survives a restart. DescribeConfigs reports DYNAMIC_BROKER_CONFIG (2) /
//! DYNAMIC_DEFAULT_BROKER_CONFIG (3) with Kafka's synonym order (dynamic per-broker > dynamic default > static >
//! default). Keys Kafka does not change at run time are INVALID_REQUEST ("Cannot update these configs
//! dynamically"), bad values INVALID_CONFIG naming key and value, and nothing is applied then.

use crate::common;

use std::collections::BTreeMap;

use common::raw::{connect, request};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::DescribeConfigsResourceResult;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use tokio::net::TcpStream;

const SET: i8 = 0;
const DELETE: i8 = 1;
const INVALID_REQUEST: i16 = 42;
const INVALID_CONFIG: i16 = 40;
const DYNAMIC_BROKER: i8 = 2;
const DYNAMIC_DEFAULT_BROKER: i8 = 3;
const STATIC_BROKER: i8 = 4;
const DEFAULT: i8 = 5;
const WEEK_MS: i64 = 604_800_000;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// IncrementalAlterConfigs v1 of the BROKER resource `name`: (key, operation, value). Returns (code, message).
async fn alter(
    s: &mut TcpStream,
    name: &str,
    ops: &[(&str, i8, &str)],
    validate_only: bool,
) -> (i16, String) {
    let req = IncrementalAlterConfigsRequest::default()
        .with_validate_only(validate_only)
        .with_resources(vec![AlterConfigsResource::default()
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
            )]);
    let r: IncrementalAlterConfigsResponse = request(s, ApiKey::IncrementalAlterConfigs, 1, &req)
        .await
        .unwrap();
    let r = &r.responses[0];
    (
        r.error_code,
        r.error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

/// DescribeConfigs v4 (with synonyms) of one key of a resource.
async fn describe(
    s: &mut TcpStream,
    ty: i8,
    name: &str,
    key: &str,
) -> DescribeConfigsResourceResult {
    let req = DescribeConfigsRequest::default()
        .with_include_synonyms(true)
        .with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(ty)
            .with_resource_name(sb(name))
            .with_configuration_keys(Some(vec![sb(key)]))]);
    let r: DescribeConfigsResponse = request(s, ApiKey::DescribeConfigs, 4, &req).await.unwrap();
    assert_eq!(
        r.results[0].error_code, 0,
        "{:?}",
        r.results[0].error_message
    );
    r.results[0]
        .configs
        .iter()
        .find(|c| c.name.as_str() == key)
        .unwrap_or_else(|| panic!("{key} listed"))
        .clone()
}

fn synonyms(e: &DescribeConfigsResourceResult) -> Vec<(String, Option<String>, i8)> {
    e.synonyms
        .iter()
        .map(|s| {
            (
                s.name.to_string(),
                s.value.as_ref().map(|v| v.to_string()),
                s.source,
            )
        })
        .collect()
}

fn syn(name: &str, value: &str, source: i8) -> (String, Option<String>, i8) {
    (name.to_string(), Some(value.to_string()), source)
}

fn retention_and_segment(server: &strata_broker::Server, topic: &str) -> (i64, u64) {
    let c = server.broker().topics().log(topic, 0).unwrap().config();
    (c.retention_ms, c.segment_bytes)
}

fn configs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_log_default_applies_at_once_to_topics_without_an_override_and_survives_a_restart(
) {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    let b = server.broker().clone();
    b.topics()
        .create_topic("plain", 1, BTreeMap::new())
        .unwrap();
    b.topics()
        .create_topic("own", 1, configs(&[("retention.ms", "1000")]))
        .unwrap();
    let mut s = connect(server.local_addr()).await;

    let (code, msg) = alter(
        &mut s,
        "1",
        &[
            ("log.retention.ms", SET, "3600000"),
            ("log.segment.bytes", SET, "1048576"),
        ],
        false,
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    assert_eq!(
        retention_and_segment(&server, "plain"),
        (3_600_000, 1_048_576)
    );
    assert_eq!(
        retention_and_segment(&server, "own"),
        (1000, 1_048_576),
        "the topic's own retention.ms stays; it has no segment.bytes override"
    );

    let e = describe(&mut s, 4, "1", "log.retention.ms").await;
    assert_eq!(
        (e.value.as_deref(), e.config_source, e.read_only),
        (Some("3600000"), DYNAMIC_BROKER, false)
    );
    assert_eq!(
        synonyms(&e),
        vec![
            syn("log.retention.ms", "3600000", DYNAMIC_BROKER),
            syn("log.retention.ms", &WEEK_MS.to_string(), DEFAULT)
        ]
    );
    let e = describe(&mut s, 2, "plain", "retention.ms").await;
    assert_eq!(
        (e.value.as_deref(), e.config_source),
        (Some("3600000"), DYNAMIC_BROKER)
    );
    let e = describe(&mut s, 2, "own", "retention.ms").await;
    assert_eq!(e.config_source, 1, "TOPIC_CONFIG first");
    assert_eq!(
        synonyms(&e)[1],
        syn("log.retention.ms", "3600000", DYNAMIC_BROKER)
    );

    // The cluster-wide default in hours; the per-broker value still wins until deleted.
    let (code, msg) = alter(&mut s, "", &[("log.retention.hours", SET, "2")], false).await;
    assert_eq!(code, 0, "{msg}");
    assert_eq!(retention_and_segment(&server, "plain").0, 3_600_000);
    let e = describe(&mut s, 4, "1", "log.retention.ms").await;
    assert_eq!(
        synonyms(&e)[..2],
        [
            syn("log.retention.ms", "3600000", DYNAMIC_BROKER),
            syn("log.retention.hours", "2", DYNAMIC_DEFAULT_BROKER)
        ]
    );
    let (code, msg) = alter(&mut s, "1", &[("log.retention.ms", DELETE, "")], false).await;
    assert_eq!(code, 0, "{msg}");
    assert_eq!(
        retention_and_segment(&server, "plain"),
        (7_200_000, 1_048_576)
    );

    drop(s);
    server.shutdown().await.unwrap();
    let server = common::start_broker(dir.path()).await;
    assert_eq!(
        retention_and_segment(&server, "plain"),
        (7_200_000, 1_048_576),
        "the dynamic configs are applied again on start"
    );
    assert_eq!(retention_and_segment(&server, "own"), (1000, 1_048_576));
    let mut s = connect(server.local_addr()).await;
    let e = describe(&mut s, 4, "1", "log.retention.ms").await;
    assert_eq!(
        (e.value.as_deref(), e.config_source),
        (Some("7200000"), DYNAMIC_DEFAULT_BROKER)
    );

    // Deleting reverts to the static value.
    let (code, msg) = alter(&mut s, "", &[("log.retention.hours", DELETE, "")], false).await;
    assert_eq!(code, 0, "{msg}");
    let (code, msg) = alter(&mut s, "1", &[("log.segment.bytes", DELETE, "")], false).await;
    assert_eq!(code, 0, "{msg}");
    let static_log = &server.broker().config().log;
    assert_eq!(
        retention_and_segment(&server, "plain"),
        (static_log.retention_ms, static_log.segment_bytes)
    );
    drop(s);
    server.shutdown().await.unwrap();
}

/// Kafka's `DynamicBrokerConfig.validateConfigs`: "Cannot update these configs dynamically" for keys such as
/// `listeners`, `log.dirs`, `node.id`; a bad value names key and value; `validate_only` changes nothing; another
/// node's id is not this broker. Nothing is applied by a refused request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_only_keys_and_bad_values_are_refused_and_nothing_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker_with(dir.path(), &[("log.segment.bytes", "2000000")]).await;
    server
        .broker()
        .topics()
        .create_topic("t", 1, BTreeMap::new())
        .unwrap();
    let before = retention_and_segment(&server, "t");
    let mut s = connect(server.local_addr()).await;

    let (code, msg) = alter(
        &mut s,
        "1",
        &[
            ("log.retention.ms", SET, "1000"),
            ("listeners", SET, "PLAINTEXT://127.0.0.1:1"),
            ("node.id", SET, "2"),
        ],
        false,
    )
    .await;
    assert_eq!(code, INVALID_REQUEST, "{msg}");
    assert!(
        msg.contains("Cannot update these configs dynamically")
            && msg.contains("listeners")
            && msg.contains("node.id"),
        "{msg}"
    );
    let (code, msg) = alter(&mut s, "", &[("log.dirs", SET, "/elsewhere")], false).await;
    assert_eq!(code, INVALID_REQUEST, "{msg}");

    let (code, msg) = alter(
        &mut s,
        "1",
        &[
            ("log.retention.ms", SET, "1000"),
            ("log.segment.bytes", SET, "huge"),
        ],
        false,
    )
    .await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(
        msg.contains("log.segment.bytes") && msg.contains("huge"),
        "{msg}"
    );
    let (code, msg) = alter(&mut s, "1", &[("log.retention.mss", SET, "1000")], false).await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(msg.contains("log.retention.mss"), "{msg}");

    let (code, msg) = alter(&mut s, "1", &[("log.retention.ms", SET, "1000")], true).await;
    assert_eq!(code, 0, "validate_only accepts a good value: {msg}");
    let (code, _) = alter(&mut s, "7", &[("log.retention.ms", SET, "1000")], false).await;
    assert_ne!(code, 0, "node 7 is not this broker");

    assert_eq!(
        retention_and_segment(&server, "t"),
        before,
        "nothing applied"
    );
    let e = describe(&mut s, 4, "1", "log.segment.bytes").await;
    assert_eq!(
        (e.value.as_deref(), e.config_source),
        (Some("2000000"), STATIC_BROKER)
    );
    assert!(
        !dir.path()
            .join(strata_broker::topics::DYNAMIC_CONFIG_FILE)
            .exists(),
        "nothing persisted"
    );
    drop(s);
    server.shutdown().await.unwrap();
}

/// librdkafka's AdminClient `alter_configs` (AlterConfigs, which replaces the resource's dynamic set) on
/// `ResourceSpecifier::Broker(1)`, then `describe_configs` sees it as DYNAMIC_BROKER_CONFIG.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rdkafka_alter_configs_on_the_broker_changes_the_default_of_existing_topics() {
    use rdkafka::admin::{AdminOptions, AlterConfig, ConfigSource, ResourceSpecifier};
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_broker(dir.path()).await;
    server
        .broker()
        .topics()
        .create_topic("t", 1, BTreeMap::new())
        .unwrap();
    let admin = common::admin(&common::bootstrap(&server));
    let change = AlterConfig::new(ResourceSpecifier::Broker(1))
        .set("log.retention.ms", "120000")
        .set("log.cleaner.delete.retention.ms", "5000");
    let r = admin
        .alter_configs(&[change], &AdminOptions::new())
        .await
        .unwrap();
    assert!(r[0].is_ok(), "{r:?}");
    let cfg = server.broker().topics().log("t", 0).unwrap().config();
    assert_eq!((cfg.retention_ms, cfg.delete_retention_ms), (120_000, 5000));

    let desc = admin
        .describe_configs(&[ResourceSpecifier::Broker(1)], &AdminOptions::new())
        .await
        .unwrap();
    let r = desc[0].as_ref().unwrap();
    let e = r.get("log.retention.ms").unwrap();
    assert_eq!(e.value.as_deref(), Some("120000"));
    assert_eq!(
        format!("{:?}", e.source),
        format!("{:?}", ConfigSource::DynamicBroker)
    );
    assert!(!e.is_read_only);

    // AlterConfigs replaces the set: without log.retention.ms it reverts to the static value.
    let change = AlterConfig::new(ResourceSpecifier::Broker(1))
        .set("log.cleaner.delete.retention.ms", "5000");
    let r = admin
        .alter_configs(&[change], &AdminOptions::new())
        .await
        .unwrap();
    assert!(r[0].is_ok(), "{r:?}");
    let cfg = server.broker().topics().log("t", 0).unwrap().config();
    assert_eq!((cfg.retention_ms, cfg.delete_retention_ms), (WEEK_MS, 5000));
    drop(admin);
    server.shutdown().await.unwrap();
}
