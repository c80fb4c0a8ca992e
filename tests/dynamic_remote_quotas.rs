//! The remote storage quotas are dynamic broker configs, as Kafka's `DynamicRemoteLogConfig` makes them:
//! `remote.log.manager.copy.max.bytes.per.second` / `remote.log.manager.fetch.max.bytes.per.second` set by
//! IncrementalAlterConfigs on BROKER (this node or the cluster default) apply to the running RemoteLogManager at
//! once (a copy waiting on the quota is released when it is lifted), are listed by DescribeConfigs with sources
//! DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG and not read-only, and are applied again after a restart.

use crate::common;

use std::time::Duration;

use common::raw::{connect, request};
use common::tiered::*;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use strata_broker::Server;

const SET: i8 = 0;
const DELETE: i8 = 1;
const INVALID_CONFIG: i16 = 40;
const DYNAMIC_BROKER: i8 = 2;
const DYNAMIC_DEFAULT_BROKER: i8 = 3;
const COPY: &str = "remote.log.manager.copy.max.bytes.per.second";
const FETCH: &str = "remote.log.manager.fetch.max.bytes.per.second";
const NONE: u64 = i64::MAX as u64;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// IncrementalAlterConfigs v1 of the BROKER resource `name`: (code, message).
async fn alter(server: &Server, name: &str, ops: &[(&str, i8, &str)]) -> (i16, String) {
    let mut s = connect(server.local_addr()).await;
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
    let r: IncrementalAlterConfigsResponse =
        request(&mut s, ApiKey::IncrementalAlterConfigs, 1, &req)
            .await
            .unwrap();
    let r = &r.responses[0];
    (
        r.error_code,
        r.error_message.as_deref().unwrap_or_default().to_string(),
    )
}

/// DescribeConfigs v4 of broker "1", key `key`: (value, source, read_only, synonym sources).
async fn describe(server: &Server, key: &str) -> (Option<String>, i8, bool, Vec<i8>) {
    let mut s = connect(server.local_addr()).await;
    let req = DescribeConfigsRequest::default()
        .with_include_synonyms(true)
        .with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(sb("1"))
            .with_configuration_keys(Some(vec![sb(key)]))]);
    let r: DescribeConfigsResponse = request(&mut s, ApiKey::DescribeConfigs, 4, &req)
        .await
        .unwrap();
    assert_eq!(r.results[0].error_code, 0);
    let c = r.results[0]
        .configs
        .iter()
        .find(|c| c.name.as_str() == key)
        .unwrap_or_else(|| panic!("{key} not listed"));
    (
        c.value.as_ref().map(|v| v.to_string()),
        c.config_source,
        c.read_only,
        c.synonyms.iter().map(|s| s.source).collect(),
    )
}

fn quotas(server: &Server) -> (u64, u64) {
    server.tiering().expect("tiering runs").rlm().quotas()
}

#[test]
fn remote_quotas_change_at_run_time_release_a_held_copy_and_survive_a_restart() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote");
    let server = rt.block_on(start(dir.path()));
    assert_eq!(quotas(&server), (NONE, NONE));

    // A bad value names the key; nothing changes.
    let (code, msg) = rt.block_on(alter(&server, "1", &[(COPY, SET, "0")]));
    assert_eq!(code, INVALID_CONFIG, "{msg}");
    assert!(msg.contains(COPY) && msg.contains('0'), "{msg}");

    // 1 byte/s for copies on this node, 5000 for remote reads as the cluster default: applied at once.
    assert_eq!(rt.block_on(alter(&server, "1", &[(COPY, SET, "1")])).0, 0);
    assert_eq!(
        rt.block_on(alter(&server, "", &[(FETCH, SET, "5000")])).0,
        0
    );
    assert_eq!(quotas(&server), (1, 5000));
    let (value, source, read_only, synonyms) = rt.block_on(describe(&server, COPY));
    assert_eq!(
        (value.as_deref(), source, read_only),
        (Some("1"), DYNAMIC_BROKER, false)
    );
    assert_eq!(synonyms.first(), Some(&DYNAMIC_BROKER));
    let (value, source, _, _) = rt.block_on(describe(&server, FETCH));
    assert_eq!(
        (value.as_deref(), source),
        (Some("5000"), DYNAMIC_DEFAULT_BROKER)
    );

    // At 1 byte/s the first 4 KiB segment waits for over an hour: rolled segments pile up, none is copied.
    tiered_topic(&rt, &server.local_addr().to_string(), "held", 1, 300, &[]);
    let log = log_of(&server, "held", 0);
    wait_for("segments rolled", Duration::from_secs(15), || {
        log.number_of_segments() >= 3
    });
    assert_eq!(remote_files(&remote, "held"), 0, "copied despite the quota");

    // Lifting the quota (DELETE: back to the static "no quota") releases the waiting copy at once.
    assert_eq!(rt.block_on(alter(&server, "1", &[(COPY, DELETE, "")])).0, 0);
    assert_eq!(quotas(&server), (NONE, 5000));
    wait_for("the held copy released", Duration::from_secs(20), || {
        remote_files(&remote, "held") > 0
    });

    // Set again, then a restart: applied at start from the kept dynamic configs.
    assert_eq!(
        rt.block_on(alter(&server, "1", &[(COPY, SET, "2048")])).0,
        0
    );
    rt.block_on(server.shutdown()).unwrap();
    let server = rt.block_on(start(dir.path()));
    assert_eq!(quotas(&server), (2048, 5000));
    let (value, source, _, _) = rt.block_on(describe(&server, COPY));
    assert_eq!((value.as_deref(), source), (Some("2048"), DYNAMIC_BROKER));
    rt.block_on(server.shutdown()).unwrap();
}
