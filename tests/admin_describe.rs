//! DescribeConfigs of the broker lists every broker key Kafka lists, including the ones strata knows only as a
//! synonym (`log.retention.hours`, `log.retention.minutes`, `log.roll.hours`): Kafka's `DynamicBrokerConfig`
//! reports `log.retention.hours=168` (DEFAULT_CONFIG) and `log.retention.minutes=null` on a broker given neither,
//! and the given value in its own unit otherwise.

use crate::common;

use common::raw::{connect, request};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

async fn broker_configs(addr: std::net::SocketAddr) -> Vec<(String, Option<String>, i8)> {
    let mut s = connect(addr).await;
    let req =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(StrBytes::from_static_str("1"))
            .with_configuration_keys(None)]);
    let r: DescribeConfigsResponse = request(&mut s, ApiKey::DescribeConfigs, 4, &req)
        .await
        .unwrap();
    assert_eq!(r.results[0].error_code, 0);
    r.results[0]
        .configs
        .iter()
        .map(|c| {
            (
                c.name.to_string(),
                c.value.as_ref().map(|v| v.to_string()),
                c.config_source,
            )
        })
        .collect()
}

fn find<'a>(
    all: &'a [(String, Option<String>, i8)],
    name: &str,
) -> &'a (String, Option<String>, i8) {
    let hits: Vec<_> = all.iter().filter(|c| c.0 == name).collect();
    assert_eq!(hits.len(), 1, "{name} listed once");
    hits[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_lists_log_retention_hours_and_minutes_as_kafka_does() {
    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker(dir.path()).await;
    let all = broker_configs(broker.local_addr()).await;
    // DEFAULT_CONFIG = 5, STATIC_BROKER_CONFIG = 4.
    assert_eq!(find(&all, "log.retention.hours").1.as_deref(), Some("168"));
    assert_eq!(find(&all, "log.retention.hours").2, 5);
    assert_eq!(find(&all, "log.retention.minutes").1, None);
    assert_eq!(find(&all, "log.roll.hours").1.as_deref(), Some("168"));
    // KRaft: broker.id is the node id when only node.id is set (Kafka answers 1, not null).
    assert_eq!(find(&all, "broker.id").1.as_deref(), Some("1"));
    assert_eq!(
        find(&all, "log.retention.ms").1.as_deref(),
        Some("604800000")
    );
    broker.shutdown().await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let broker = common::start_broker_with(dir.path(), &[("log.retention.minutes", "90")]).await;
    let all = broker_configs(broker.local_addr()).await;
    assert_eq!(find(&all, "log.retention.minutes").1.as_deref(), Some("90"));
    assert_eq!(find(&all, "log.retention.minutes").2, 4);
    assert_eq!(find(&all, "log.retention.ms").1.as_deref(), Some("5400000"));
    assert_eq!(
        find(&all, "log.retention.hours").2,
        5,
        "not given: Kafka's default"
    );
    broker.shutdown().await.unwrap();
}
