//! Group configs (resource type GROUP = 32): DescribeConfigs answers Kafka 4.0's `GroupConfig` keys with the
//! broker's group defaults (`group.consumer.session.timeout.ms` → `consumer.session.timeout.ms`, …), source
//! DEFAULT_CONFIG (5), for any group name — Kafka describes a group's configs whether or not the group exists —
//! and INVALID_REQUEST (42) for an empty name ("Group name must not be empty"). strata keeps no per-group
//! overrides: IncrementalAlterConfigs of a group is INVALID_CONFIG (40) naming the keys.

mod common;

use common::raw::{connect, request};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altering_a_group_config_is_refused_naming_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let mut c = connect(broker.local_addr()).await;
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(32)
            .with_resource_name(s("g"))
            .with_configs(vec![AlterableConfig::default()
                .with_name(s("consumer.session.timeout.ms"))
                .with_config_operation(0)
                .with_value(Some(s("50000")))]),
    ]);
    let r: IncrementalAlterConfigsResponse =
        request(&mut c, ApiKey::IncrementalAlterConfigs, 1, &req)
            .await
            .unwrap();
    let res = &r.responses[0];
    assert_eq!(res.error_code, 40);
    let msg = res.error_message.as_deref().unwrap();
    assert!(
        msg.contains("consumer.session.timeout.ms") && msg.contains("\"g\""),
        "{msg}"
    );
    broker.shutdown().await.unwrap();
}
