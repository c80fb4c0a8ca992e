//! Group configs (resource type GROUP = 32): DescribeConfigs answers Kafka 4.0's `GroupConfig` keys with the
//! broker's group defaults (`group.consumer.session.timeout.ms` → `consumer.session.timeout.ms`, …), source
//! DEFAULT_CONFIG (5), for any group name — Kafka describes a group's configs whether or not the group exists —
//! and INVALID_REQUEST (42) for an empty name ("Group name must not be empty"). IncrementalAlterConfigs of a
//! group sets its overrides as Kafka 4.4 does (checked, kept across restarts, described as GROUP_CONFIG), and the
//! consumer keys take effect for the group's KIP-848 members.

use crate::common;
use crate::groups::cgh;

use common::raw::{connect, request};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use std::time::{Duration, Instant};

use cgh::{describe, Cgh};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn describe_group(name: &str) -> DescribeConfigsRequest {
    DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
        .with_resource_type(32)
        .with_resource_name(s(name))
        .with_configuration_keys(None)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_configs_are_described_with_the_broker_group_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(
        dir.path(),
        &[("group.consumer.session.timeout.ms", "30000")],
    )
    .await;
    let mut c = connect(broker.local_addr()).await;
    for v in [1, 4] {
        let r: DescribeConfigsResponse = request(
            &mut c,
            ApiKey::DescribeConfigs,
            v,
            &describe_group("any-group"),
        )
        .await
        .unwrap();
        let res = &r.results[0];
        assert_eq!(res.error_code, 0, "v{v}: {:?}", res.error_message);
        let got: Vec<(String, Option<String>, i8)> = res
            .configs
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.value.as_ref().map(|v| v.to_string()),
                    c.config_source,
                )
            })
            .collect();
        let entry = |n: &str| got.iter().find(|(k, ..)| k == n).cloned();
        assert_eq!(
            entry("consumer.session.timeout.ms"),
            Some((
                "consumer.session.timeout.ms".into(),
                Some("30000".into()),
                5
            )),
            "v{v}"
        );
        assert_eq!(
            entry("consumer.heartbeat.interval.ms"),
            Some((
                "consumer.heartbeat.interval.ms".into(),
                Some("5000".into()),
                5
            )),
            "v{v}"
        );
        assert!(entry("share.session.timeout.ms").is_some(), "{got:?}");
        assert!(res.configs.iter().all(|c| !c.read_only && !c.is_sensitive));
    }
    // Only the keys asked for.
    let mut req = describe_group("g");
    req.resources[0].configuration_keys = Some(vec![s("consumer.heartbeat.interval.ms")]);
    let r: DescribeConfigsResponse = request(&mut c, ApiKey::DescribeConfigs, 4, &req)
        .await
        .unwrap();
    assert_eq!(r.results[0].configs.len(), 1);

    let r: DescribeConfigsResponse =
        request(&mut c, ApiKey::DescribeConfigs, 4, &describe_group(""))
            .await
            .unwrap();
    assert_eq!(r.results[0].error_code, 42);
    broker.shutdown().await.unwrap();
}

/// IncrementalAlterConfigs v1 of GROUP `group`: (key, operation, value). Returns (code, message).
async fn alter(
    c: &mut tokio::net::TcpStream,
    group: &str,
    ops: &[(&str, i8, Option<&str>)],
) -> (i16, String) {
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(32)
            .with_resource_name(s(group))
            .with_configs(
                ops.iter()
                    .map(|(k, op, v)| {
                        AlterableConfig::default()
                            .with_name(s(k))
                            .with_config_operation(*op)
                            .with_value(v.map(s))
                    })
                    .collect(),
            ),
    ]);
    let r: IncrementalAlterConfigsResponse = request(c, ApiKey::IncrementalAlterConfigs, 1, &req)
        .await
        .unwrap();
    let res = &r.responses[0];
    (
        res.error_code,
        res.error_message.as_deref().unwrap_or("").to_string(),
    )
}

/// (value, source, synonyms as (name, value, source)) of `key` in group `group`'s description.
async fn described(
    c: &mut tokio::net::TcpStream,
    group: &str,
    key: &str,
) -> (String, i8, Vec<(String, String, i8)>) {
    let mut req = describe_group(group);
    req.include_synonyms = true;
    let r: DescribeConfigsResponse = request(c, ApiKey::DescribeConfigs, 4, &req).await.unwrap();
    let e = r.results[0]
        .configs
        .iter()
        .find(|e| e.name.as_str() == key)
        .expect("described");
    let syn = e
        .synonyms
        .iter()
        .map(|s| {
            (
                s.name.to_string(),
                s.value.as_deref().unwrap_or("").to_string(),
                s.source,
            )
        })
        .collect();
    (
        e.value.as_deref().unwrap_or("").to_string(),
        e.config_source,
        syn,
    )
}

/// Kafka 4.x's group configs: SET / DELETE of the consumer and share keys are checked as Kafka 4.4 checks them
/// (unknown key, type, the broker's group.consumer.min/max bounds, APPEND on a non-list, the empty name), the
/// override is described as GROUP_CONFIG (8) with the broker default as a DEFAULT_CONFIG synonym, and it is kept
/// across a restart; DELETE reverts to the broker default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_configs_are_checked_kept_and_described_as_kafka_does() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut c = connect(broker.local_addr()).await;
    for (key, value) in [
        ("consumer.session.timeout.ms", "50000"),
        ("consumer.heartbeat.interval.ms", "6000"),
        ("share.record.lock.duration.ms", "20000"),
        ("share.auto.offset.reset", "earliest"),
    ] {
        assert_eq!(
            alter(&mut c, "g1", &[(key, 0, Some(value))]).await,
            (0, String::new()),
            "{key}"
        );
    }
    for (ops, code, msg) in [
        (
            vec![("consumer.session.timeout.ms", 0, Some("1000"))],
            40,
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            vec![("consumer.heartbeat.interval.ms", 0, Some("50000"))],
            40,
            "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
        (
            vec![("no.such", 0, Some("1"))],
            40,
            "Unknown group config name: no.such",
        ),
        (
            vec![("consumer.session.timeout.ms", 0, Some("abc"))],
            40,
            "abc",
        ),
        (
            vec![("share.auto.offset.reset", 0, Some("nope"))],
            40,
            "nope",
        ),
        (
            vec![("consumer.session.timeout.ms", 2, Some("50000"))],
            40,
            "APPEND",
        ),
    ] {
        let (got_code, got_msg) = alter(&mut c, "g1", &ops).await;
        assert_eq!(got_code, code, "{ops:?}: {got_msg}");
        assert!(got_msg.contains(msg), "{ops:?}: {got_msg}");
    }
    assert_eq!(
        alter(
            &mut c,
            "",
            &[("consumer.session.timeout.ms", 0, Some("50000"))]
        )
        .await,
        (42, "Default group resources are not allowed.".to_string())
    );
    drop(c);
    broker.shutdown().await.unwrap();

    let broker = common::start_broker(dir.path()).await;
    let mut c = connect(broker.local_addr()).await;
    assert_eq!(
        described(&mut c, "g1", "consumer.session.timeout.ms").await,
        (
            "50000".into(),
            8,
            vec![
                ("consumer.session.timeout.ms".into(), "50000".into(), 8),
                (
                    "group.consumer.session.timeout.ms".into(),
                    "45000".into(),
                    5
                )
            ]
        )
    );
    assert_eq!(
        described(&mut c, "g1", "share.auto.offset.reset").await.0,
        "earliest"
    );
    assert_eq!(
        alter(&mut c, "g1", &[("consumer.session.timeout.ms", 1, None)]).await,
        (0, String::new())
    );
    assert_eq!(
        described(&mut c, "g1", "consumer.session.timeout.ms").await,
        (
            "45000".into(),
            5,
            vec![(
                "group.consumer.session.timeout.ms".into(),
                "45000".into(),
                5
            )]
        )
    );
    assert_eq!(
        described(&mut c, "g1", "consumer.heartbeat.interval.ms")
            .await
            .0,
        "6000",
        "the other override stays"
    );
    broker.shutdown().await.unwrap();
}

/// A group's consumer.heartbeat.interval.ms is the interval its KIP-848 members are given, and its
/// consumer.session.timeout.ms the session after which a silent member is removed (the broker's bounds lowered
/// so the test is short); a group without overrides keeps the broker's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_groups_session_and_heartbeat_configs_take_effect_for_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(
        dir.path(),
        &[
            ("group.consumer.min.session.timeout.ms", "1000"),
            ("group.consumer.min.heartbeat.interval.ms", "100"),
        ],
    )
    .await;
    common::create_topic(&common::bootstrap(&broker), "t", 2).await;
    let mut c = connect(broker.local_addr()).await;
    let ops = [
        ("consumer.session.timeout.ms", 0, Some("1500")),
        ("consumer.heartbeat.interval.ms", 0, Some("700")),
    ];
    assert_eq!(alter(&mut c, "short", &ops).await, (0, String::new()));
    let addr = broker.local_addr();
    let mut short = Cgh::new(addr, "short").await;
    let r = short.join(&["t"], None, None).await;
    assert_eq!((r.error_code, r.heartbeat_interval_ms), (0, 700));
    let mut plain = Cgh::new(addr, "plain").await;
    let r = plain.join(&["t"], None, None).await;
    assert_eq!((r.error_code, r.heartbeat_interval_ms), (0, 5000));
    // Neither heartbeats again: the short group's member goes after 1.5 s, the other stays (45 s).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !describe(addr, "short").await.groups[0].members.is_empty() {
        assert!(Instant::now() < deadline, "member of 'short' not removed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(describe(addr, "plain").await.groups[0].members.len(), 1);
    broker.shutdown().await.unwrap();
}
