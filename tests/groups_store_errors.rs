//! Group records that cannot be written to `__consumer_offsets`, answered as Kafka's coordinator answers a failed
//! append (`appendGroupMetadataErrorToResponseError`: a batch over the partition's `max.message.bytes` is
//! MESSAGE_TOO_LARGE, answered UNKNOWN_SERVER_ERROR) with the group left as it was stored: Kafka's coordinator
//! reverts to its last written state. The write failure is real: `__consumer_offsets`' `max.message.bytes` is
//! lowered below the size of any group record, then restored.

use crate::common;
use crate::groups::cgh;
use crate::groups::raw as group_raw;

use std::collections::BTreeMap;

use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    ApiKey, IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
};
use kafka_protocol::protocol::StrBytes;

use cgh::{describe, Cgh};
use common::raw::{connect, request};
use common::{bootstrap, create_topic, start_broker_with};
use group_raw::RawMember;

const NONE: i16 = 0;
const UNKNOWN_SERVER_ERROR: i16 = -1;
const REBALANCE_IN_PROGRESS: i16 = 27;

/// Sets (`Some`) or removes (`None`) `__consumer_offsets`' `max.message.bytes` override.
async fn offsets_max_message_bytes(addr: std::net::SocketAddr, value: Option<&str>) {
    let mut c = connect(addr).await;
    let config = AlterableConfig::default()
        .with_name(StrBytes::from_static_str("max.message.bytes"))
        .with_config_operation(if value.is_some() { 0 } else { 1 })
        .with_value(value.map(|v| StrBytes::from_string(v.to_string())));
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(StrBytes::from_static_str("__consumer_offsets"))
            .with_configs(vec![config]),
    ]);
    let r: IncrementalAlterConfigsResponse =
        request(&mut c, ApiKey::IncrementalAlterConfigs, 1, &req)
            .await
            .unwrap();
    assert_eq!(
        r.responses[0].error_code, NONE,
        "{:?}",
        r.responses[0].error_message
    );
}

/// (member id, epoch) of every member ConsumerGroupDescribe lists, and the group epoch.
async fn members(addr: std::net::SocketAddr, group: &str) -> (i32, BTreeMap<String, i32>) {
    let d = describe(addr, group).await.groups.remove(0);
    let m = d
        .members
        .iter()
        .map(|m| (m.member_id.to_string(), m.member_epoch))
        .collect();
    (d.group_epoch, m)
}

/// KIP-848: a heartbeat whose records cannot be written is answered with the mapped append error and changes
/// nothing — a joining member is not in the group, a leaving one is still in it — in memory as on disk (the
/// same group after a restart); once writes succeed again the join goes through.
#[tokio::test]
async fn a_consumer_heartbeat_whose_records_cannot_be_written_is_refused_and_undone() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    create_topic(&bootstrap(&server), "ks", 2).await;
    let addr = server.local_addr();
    let mut a = Cgh::new(addr, "g-store").await;
    assert_eq!(a.join(&["ks"], None, None).await.error_code, NONE);
    let stored = members(addr, "g-store").await;

    offsets_max_message_bytes(addr, Some("64")).await;
    let mut b = Cgh::new(addr, "g-store").await;
    let refused = b.join(&["ks"], None, None).await;
    assert_eq!(
        (refused.error_code, refused.member_epoch),
        (UNKNOWN_SERVER_ERROR, 0),
        "an error answer leaves member_epoch at its default, as Kafka's does"
    );
    assert_eq!(
        members(addr, "g-store").await,
        stored,
        "the refused join left no trace"
    );
    // A heartbeat that changes nothing writes nothing, so it is answered.
    assert_eq!(a.beat().await.error_code, NONE);
    let leave = a.send(a.base().with_member_epoch(-1)).await;
    assert_eq!(leave.error_code, UNKNOWN_SERVER_ERROR);
    assert_eq!(
        members(addr, "g-store").await,
        stored,
        "a is still a member"
    );
    server.shutdown().await.unwrap();

    let server = start_broker_with(dir.path(), &[]).await;
    let addr = server.local_addr();
    assert_eq!(
        members(addr, "g-store").await,
        stored,
        "what was answered is what was stored"
    );
    offsets_max_message_bytes(addr, None).await;
    b.conn = connect(addr).await;
    b.epoch = 0;
    let joined = b.join(&["ks"], None, None).await;
    assert_eq!(joined.error_code, NONE);
    assert_eq!(members(addr, "g-store").await.1.len(), 2);
    server.shutdown().await.unwrap();
}

/// Classic: the leader's SyncGroup is answered once the group is stored with its assignment; if that write
/// fails, Kafka answers it with the mapped append error, hands no assignment out and rebalances the group
/// (heartbeats get REBALANCE_IN_PROGRESS); the members rejoin and sync once writes succeed.
#[tokio::test]
async fn a_sync_whose_assignment_cannot_be_written_is_refused_and_the_group_rebalances() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_broker_with(dir.path(), &[]).await;
    let addr = server.local_addr();
    let mut a = RawMember::new(addr, "g-sync-store", None).await;
    assert_eq!(a.join().await.error_code, NONE);
    offsets_max_message_bytes(addr, Some("64")).await;
    let me = a.member_id.clone();
    let refused = a.sync(&[(&me, b"p0")]).await;
    assert_eq!(
        (refused.error_code, refused.assignment.len()),
        (UNKNOWN_SERVER_ERROR, 0)
    );
    assert_eq!(a.heartbeat().await, REBALANCE_IN_PROGRESS);

    offsets_max_message_bytes(addr, None).await;
    let rejoined = a.join().await;
    assert_eq!(
        (rejoined.error_code, rejoined.generation_id),
        (NONE, 2),
        "a new generation"
    );
    let synced = a.sync(&[(&me, b"p0")]).await;
    assert_eq!(
        (synced.error_code, &synced.assignment[..]),
        (NONE, &b"p0"[..])
    );
    assert_eq!(a.heartbeat().await, NONE);
    server.shutdown().await.unwrap();
}
