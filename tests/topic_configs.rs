//! Topic configs over the wire, all derived from the one topic table (storage's `TOPIC_CONFIG`): Kafka's keys
//! with no effect on a single node are accepted, unknown keys and bad compaction values are INVALID_CONFIG naming the
//! key (with Kafka's "did you mean"), and DescribeConfigs reports each key's type, synonyms and documentation as
//! Kafka's `ConfigHelper` does.

use crate::common;

use common::raw::{connect, create_topic_request, request};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::DescribeConfigsResourceResult;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

/// Kafka's INVALID_CONFIG.
const INVALID_CONFIG: i16 = 40;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// CreateTopics v7 of one topic: (error code, message).
async fn create_one(
    s: &mut tokio::net::TcpStream,
    topic: &str,
    configs: &[(&str, &str)],
) -> (i16, String) {
    let r: CreateTopicsResponse = request(
        s,
        ApiKey::CreateTopics,
        7,
        &create_topic_request(topic, configs),
    )
    .await
    .unwrap();
    let t = &r.topics[0];
    (
        t.error_code,
        t.error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

/// Kafka rejects an unknown topic key with InvalidConfigurationException (INVALID_CONFIG) naming it, and so
/// does strata, adding the closest known key; compaction keys are accepted with Kafka's validators
/// (`min.cleanable.dirty.ratio` in [0, 1]); keys with no meaning on one node (replication throttles, unclean
/// leader election) are accepted. Nothing is created by a refused request, and the connection keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_keys_and_bad_compaction_values_are_invalid_config_and_single_node_keys_are_accepted(
) {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut s = connect(broker.local_addr()).await;

    let (code, msg) = create_one(&mut s, "typo", &[("retention.mss", "1000")]).await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(
        msg.contains("retention.mss") && msg.contains("did you mean retention.ms"),
        "{msg}"
    );
    let (code, msg) = create_one(&mut s, "typo", &[("retention.ms", "soon")]).await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(
        msg.contains("retention.ms") && msg.contains("soon"),
        "{msg}"
    );
    let (code, msg) = create_one(&mut s, "typo", &[("min.cleanable.dirty.ratio", "2")]).await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(
        msg.contains("min.cleanable.dirty.ratio") && msg.contains('2'),
        "{msg}"
    );
    let (code, msg) = create_one(
        &mut s,
        "typo",
        &[
            ("cleanup.policy", "compact"),
            ("min.compaction.lag.ms", "-5"),
        ],
    )
    .await;
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(msg.contains("min.compaction.lag.ms"), "{msg}");
    assert!(
        broker.broker().registry().get("typo").is_none(),
        "nothing created"
    );
    let (code, msg) = create_one(
        &mut s,
        "compacted",
        &[
            ("cleanup.policy", "compact,delete"),
            ("min.cleanable.dirty.ratio", "0.01"),
            ("min.compaction.lag.ms", "5"),
            ("max.compaction.lag.ms", "60000"),
            ("delete.retention.ms", "100"),
        ],
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    assert!(broker.broker().registry().get("compacted").is_some());

    let (code, msg) = create_one(
        &mut s,
        "single",
        &[
            ("unclean.leader.election.enable", "true"),
            ("leader.replication.throttled.replicas", "*"),
            ("preallocate", "true"),
        ],
    )
    .await;
    assert_eq!(code, 0, "{msg}");
    assert!(broker.broker().registry().get("single").is_some());
    drop(s);
    broker.shutdown().await.unwrap();
}

fn entry<'a>(r: &'a DescribeConfigsResponse, k: &str) -> &'a DescribeConfigsResourceResult {
    r.results[0]
        .configs
        .iter()
        .find(|e| e.name.as_str() == k)
        .unwrap_or_else(|| panic!("{k} not listed"))
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

/// DescribeConfigs v4 of a topic, as Kafka's `ConfigHelper.createTopicConfigEntry`: every topic key (33 in
/// Kafka 4.x); synonyms ordered topic override (TOPIC_CONFIG=1), the broker property that set the default
/// (STATIC_BROKER_CONFIG=4, in its own unit: `log.retention.hours`), the default (DEFAULT_CONFIG=5); the
/// entry's source is the first synonym's; `config_type` is Kafka's ConfigType (LONG=5, INT=3, LIST=7,
/// BOOLEAN=1); documentation is set; topic keys are not read-only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_configs_reports_types_synonyms_and_documentation_from_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("log.retention.hours", "2")]).await;
    let mut s = connect(broker.local_addr()).await;
    let (code, msg) = create_one(&mut s, "syn", &[("segment.bytes", "1048576")]).await;
    assert_eq!(code, 0, "{msg}");
    let req = DescribeConfigsRequest::default()
        .with_include_synonyms(true)
        .with_include_documentation(true)
        .with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(sb("syn"))
            .with_configuration_keys(None)]);
    let r: DescribeConfigsResponse = request(&mut s, ApiKey::DescribeConfigs, 4, &req)
        .await
        .unwrap();
    assert_eq!(r.results[0].error_code, 0);
    // Kafka 4.x's 33 topic keys and the three Kafka 3.x keys older tools send (message.downconversion.enable,
    // message.format.version, message.timestamp.difference.max.ms).
    assert_eq!(r.results[0].configs.len(), 36, "every Kafka 4.x topic key");
    assert!(r.results[0]
        .configs
        .iter()
        .any(|c| c.name.as_str() == "message.timestamp.difference.max.ms"));

    let retention = entry(&r, "retention.ms");
    assert_eq!(retention.value.as_deref(), Some("7200000"));
    assert_eq!((retention.config_source, retention.config_type), (4, 5));
    assert_eq!(
        synonyms(retention),
        [
            ("log.retention.hours".into(), Some("2".into()), 4),
            ("log.retention.ms".into(), Some("604800000".into()), 5),
        ]
    );
    assert!(retention
        .documentation
        .as_ref()
        .is_some_and(|d| !d.is_empty()));

    let segment = entry(&r, "segment.bytes");
    assert_eq!(segment.value.as_deref(), Some("1048576"));
    assert_eq!((segment.config_source, segment.config_type), (1, 3));
    assert_eq!(
        synonyms(segment),
        [
            ("segment.bytes".into(), Some("1048576".into()), 1),
            ("log.segment.bytes".into(), Some("1073741824".into()), 5),
        ]
    );

    let policy = entry(&r, "cleanup.policy");
    assert_eq!(
        (
            policy.value.as_deref(),
            policy.config_source,
            policy.config_type
        ),
        (Some("delete"), 5, 7)
    );
    // A key strata does not use is still described, at its default.
    let preallocate = entry(&r, "preallocate");
    assert_eq!(
        (preallocate.value.as_deref(), preallocate.config_type),
        (Some("false"), 1)
    );
    // Kafka has no broker default for remote.log.copy.disable: no synonyms, DEFAULT_CONFIG.
    let copy = entry(&r, "remote.log.copy.disable");
    assert!(copy.synonyms.is_empty());
    assert_eq!((copy.config_source, copy.read_only), (5, false));
    drop(s);
    broker.shutdown().await.unwrap();
}

/// DescribeConfigs v4 of the broker, as Kafka's `ConfigHelper` reports static broker configs: every key from the
/// broker table; a given key is STATIC_BROKER_CONFIG (4) with synonyms the name it was given under (in its own
/// unit) then the default (DEFAULT_CONFIG=5); the rest DEFAULT_CONFIG; read-only unless Kafka changes the key
/// at run time (its `ConfigHelper`: `readOnly = !DynamicBrokerConfig.AllDynamicConfigs.contains(name)`); `config_type` from the table (INT=3, LIST=7, BOOLEAN=1); documentation
/// only when asked for; a Kafka key with no effect in strata is listed when given, its documentation saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_configs_of_the_broker_reports_table_types_synonyms_and_documentation() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(
        dir.path(),
        &[
            ("log.retention.hours", "2"),
            ("num.partitions", "3"),
            ("process.roles", "broker,controller"),
        ],
    )
    .await;
    let mut s = connect(broker.local_addr()).await;
    let describe = |documentation: bool| {
        DescribeConfigsRequest::default()
            .with_include_synonyms(true)
            .with_include_documentation(documentation)
            .with_resources(vec![DescribeConfigsResource::default()
                .with_resource_type(4)
                .with_resource_name(sb("1"))
                .with_configuration_keys(None)])
    };
    let r: DescribeConfigsResponse = request(&mut s, ApiKey::DescribeConfigs, 4, &describe(true))
        .await
        .unwrap();
    assert_eq!(r.results[0].error_code, 0);
    for k in strata_broker::config::BROKER_KEYS {
        let e = entry(&r, k.name);
        let dynamic = strata_broker::topics::dynamic::is_dynamic(k.name);
        assert_eq!(
            e.read_only, !dynamic,
            "{}: read-only unless dynamic",
            k.name
        );
        assert_eq!(e.config_type, k.ty.kafka_id(), "{}", k.name);
        assert!(e.documentation.as_ref().is_some_and(|d| !d.is_empty()));
    }
    let retention = entry(&r, "log.retention.ms");
    assert_eq!(
        (retention.value.as_deref(), retention.config_source),
        (Some("7200000"), 4)
    );
    assert_eq!(
        synonyms(retention),
        [
            ("log.retention.hours".into(), Some("2".into()), 4),
            ("log.retention.ms".into(), Some("604800000".into()), 5),
        ]
    );
    let partitions = entry(&r, "num.partitions");
    assert_eq!((partitions.config_source, partitions.config_type), (4, 3));
    assert_eq!(
        synonyms(partitions),
        [
            ("num.partitions".into(), Some("3".into()), 4),
            ("num.partitions".into(), Some("1".into()), 5),
        ]
    );
    let auto = entry(&r, "auto.create.topics.enable");
    assert_eq!(
        (auto.value.as_deref(), auto.config_source, auto.config_type),
        (Some("true"), 5, 1)
    );
    assert_eq!(entry(&r, "log.dirs").config_type, 7);
    let roles = entry(&r, "process.roles");
    assert_eq!(
        (roles.value.as_deref(), roles.config_source),
        (Some("broker,controller"), 4)
    );
    assert!(roles
        .documentation
        .as_ref()
        .is_some_and(|d| d.contains("no effect in strata")));
    assert!(
        r.results[0]
            .configs
            .iter()
            .all(|e| e.name.as_str() != "broker.heartbeat.interval.ms"),
        "Kafka keys not given are not listed"
    );

    let r: DescribeConfigsResponse = request(&mut s, ApiKey::DescribeConfigs, 4, &describe(false))
        .await
        .unwrap();
    assert!(r.results[0]
        .configs
        .iter()
        .all(|e| e.documentation.is_none()));
    drop(s);
    broker.shutdown().await.unwrap();
}
