//! Consumer groups (classic protocol) and transactions: coordinator lookup, join/sync/heartbeat/leave sequences,
//! offsets, and the errors of unknown groups, members and generations; producer ids, fenced epochs and transaction
//! states.

use bytes::Bytes;
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::differential::case::{step, Body, Case, Ctx, Step};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn group(c: &Ctx) -> GroupId {
    GroupId(s(&c.topic("g")))
}

fn txn(c: &Ctx) -> TransactionalId {
    TransactionalId(s(&c.topic("tx")))
}

fn join(c: &Ctx, session_ms: i32) -> JoinGroupRequest {
    JoinGroupRequest::default()
        .with_group_id(group(c))
        .with_session_timeout_ms(session_ms)
        .with_rebalance_timeout_ms(10_000)
        .with_member_id(c.member())
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(s("range"))
            .with_metadata(Bytes::from_static(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0]))])
}

fn sync(c: &Ctx) -> SyncGroupRequest {
    SyncGroupRequest::default()
        .with_group_id(group(c))
        .with_generation_id(c.num("generation_id", -1) as i32)
        .with_member_id(c.member())
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_assignments(vec![SyncGroupRequestAssignment::default()
            .with_member_id(c.member())
            .with_assignment(Bytes::from_static(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0]))])
}

fn heartbeat(c: &Ctx, generation_delta: i32) -> HeartbeatRequest {
    HeartbeatRequest::default()
        .with_group_id(group(c))
        .with_generation_id(c.num("generation_id", -1) as i32 + generation_delta)
        .with_member_id(c.member())
}

fn commit(c: &Ctx, topic: &str, offset: i64, generation: i32) -> OffsetCommitRequest {
    OffsetCommitRequest::default()
        .with_group_id(group(c))
        .with_generation_id_or_member_epoch(generation)
        .with_member_id(if generation < 0 { s("") } else { c.member() })
        .with_retention_time_ms(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(c.name(topic))
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(-1)])])
}

fn fetch_offsets(c: &Ctx, topic: &str) -> OffsetFetchRequest {
    OffsetFetchRequest::default()
        .with_group_id(group(c))
        .with_topics(Some(vec![OffsetFetchRequestTopic::default()
            .with_name(c.name(topic))
            .with_partition_indexes(vec![0, 1])]))
}

/// A joined member: JoinGroup (v5 answers MEMBER_ID_REQUIRED and a member id), JoinGroup again with it, SyncGroup.
fn joined(name: &str) -> Case {
    Case::new(name)
        .topic("t", 1, &[])
        .then(step(ApiKey::JoinGroup, 5, |c| join(c, 10_000)))
        .then(step(ApiKey::JoinGroup, 5, |c| join(c, 10_000)))
        .then(step(ApiKey::SyncGroup, 3, sync))
}

fn init_pid(transactional: bool, timeout: i32) -> impl Fn(&Ctx) -> InitProducerIdRequest {
    move |c| {
        InitProducerIdRequest::default()
            .with_transactional_id(transactional.then(|| txn(c)))
            .with_transaction_timeout_ms(timeout)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1)
    }
}

fn add_partitions(c: &Ctx, topic: &str, epoch_delta: i16) -> AddPartitionsToTxnRequest {
    AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(txn(c))
        .with_v3_and_below_producer_id(ProducerId(c.num("producer_id", -1)))
        .with_v3_and_below_producer_epoch(c.num("producer_epoch", -1) as i16 + epoch_delta)
        .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
            .with_name(c.name(topic))
            .with_partitions(vec![0])])
}

fn end_txn(c: &Ctx, commit: bool, epoch_delta: i16) -> EndTxnRequest {
    EndTxnRequest::default()
        .with_transactional_id(txn(c))
        .with_producer_id(ProducerId(c.num("producer_id", -1)))
        .with_producer_epoch(c.num("producer_epoch", -1) as i16 + epoch_delta)
        .with_committed(commit)
}

/// A frame sent as it is (header included).
fn frame(api: ApiKey, bytes: &[u8]) -> Step {
    Step {
        api,
        version: 0,
        body: Body::Frame(bytes.to_vec()),
    }
}

pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for v in [0i16, 3, 4, 6] {
        out.push(Case::new(format!("find-coordinator/group@v{v}")).then(step(
            ApiKey::FindCoordinator,
            v,
            move |c| {
                FindCoordinatorRequest::default()
                    .with_key(s(&c.topic("g")))
                    .with_coordinator_keys(vec![s(&c.topic("g"))])
            },
        )));
    }
    for v in [1i16, 4] {
        out.push(
            Case::new(format!("find-coordinator/transaction@v{v}")).then(step(
                ApiKey::FindCoordinator,
                v,
                move |c| {
                    FindCoordinatorRequest::default()
                        .with_key(s(&c.topic("tx")))
                        .with_key_type(1)
                        .with_coordinator_keys(vec![s(&c.topic("tx"))])
                },
            )),
        );
        out.push(
            Case::new(format!("find-coordinator/bad-key-type@v{v}")).then(step(
                ApiKey::FindCoordinator,
                v,
                move |c| {
                    FindCoordinatorRequest::default()
                        .with_key(s(&c.topic("g")))
                        .with_key_type(7)
                        .with_coordinator_keys(vec![s(&c.topic("g"))])
                },
            )),
        );
    }
    out.push(joined("group/join-sync"));
    out.push(joined("group/heartbeat").then(step(ApiKey::Heartbeat, 4, |c| heartbeat(c, 0))));
    out.push(
        joined("group/heartbeat-old-generation")
            .then(step(ApiKey::Heartbeat, 4, |c| heartbeat(c, -1))),
    );
    out.push(
        joined("group/heartbeat-future-generation")
            .then(step(ApiKey::Heartbeat, 4, |c| heartbeat(c, 5))),
    );
    out.push(
        joined("group/commit-fetch")
            .then(step(ApiKey::OffsetCommit, 8, |c| {
                commit(c, "t", 2, c.num("generation_id", -1) as i32)
            }))
            .then(step(ApiKey::OffsetFetch, 7, |c| fetch_offsets(c, "t"))),
    );
    out.push(
        joined("group/commit-wrong-generation").then(step(ApiKey::OffsetCommit, 8, |c| {
            commit(c, "t", 2, c.num("generation_id", -1) as i32 + 3)
        })),
    );
    out.push(
        joined("group/leave")
            .then(step(ApiKey::LeaveGroup, 2, |c| {
                LeaveGroupRequest::default()
                    .with_group_id(group(c))
                    .with_member_id(c.member())
            }))
            .then(step(ApiKey::DescribeGroups, 5, |c| {
                DescribeGroupsRequest::default().with_groups(vec![group(c)])
            })),
    );
    out.push(
        joined("group/describe").then(step(ApiKey::DescribeGroups, 5, |c| {
            DescribeGroupsRequest::default().with_groups(vec![group(c)])
        })),
    );
    out.push(
        joined("group/delete-non-empty").then(step(ApiKey::DeleteGroups, 2, |c| {
            DeleteGroupsRequest::default().with_groups_names(vec![group(c)])
        })),
    );
    out.push(
        Case::new("group/join-bad-session-timeout")
            .then(step(ApiKey::JoinGroup, 5, |c| join(c, 10))),
    );
    out.push(
        Case::new("group/join-huge-session-timeout")
            .then(step(ApiKey::JoinGroup, 5, |c| join(c, 100_000_000))),
    );
    out.push(
        Case::new("group/join-v0-no-member-id-round")
            .then(step(ApiKey::JoinGroup, 0, |c| join(c, 10_000))),
    );
    out.push(Case::new("group/sync-unknown").then(step(ApiKey::SyncGroup, 3, sync)));
    out.push(
        Case::new("group/heartbeat-unknown").then(step(ApiKey::Heartbeat, 4, |c| heartbeat(c, 0))),
    );
    out.push(
        Case::new("group/leave-unknown").then(step(ApiKey::LeaveGroup, 2, |c| {
            LeaveGroupRequest::default()
                .with_group_id(group(c))
                .with_member_id(s("nobody"))
        })),
    );
    out.push(
        Case::new("group/describe-unknown").then(step(ApiKey::DescribeGroups, 5, |c| {
            DescribeGroupsRequest::default().with_groups(vec![group(c)])
        })),
    );
    out.push(
        Case::new("group/delete-unknown").then(step(ApiKey::DeleteGroups, 2, |c| {
            DeleteGroupsRequest::default().with_groups_names(vec![group(c)])
        })),
    );
    for v in [2i16, 8, 9] {
        out.push(
            Case::new(format!("offsets/standalone-commit@v{v}"))
                .topic("t", 2, &[])
                .then(step(ApiKey::OffsetCommit, v, |c| commit(c, "t", 1, -1)))
                .then(step(ApiKey::OffsetFetch, 7, |c| fetch_offsets(c, "t"))),
        );
    }
    out.push(
        Case::new("offsets/commit-unknown-topic")
            .then(step(ApiKey::OffsetCommit, 8, |c| commit(c, "nope", 1, -1))),
    );
    out.push(
        Case::new("offsets/fetch-unknown-group")
            .topic("t", 2, &[])
            .then(step(ApiKey::OffsetFetch, 7, |c| fetch_offsets(c, "t"))),
    );
    out.push(
        Case::new("offsets/commit-negative")
            .topic("t", 1, &[])
            .then(step(ApiKey::OffsetCommit, 8, |c| commit(c, "t", -5, -1)))
            .then(step(ApiKey::OffsetFetch, 7, |c| fetch_offsets(c, "t"))),
    );
    out.push(
        Case::new("offsets/delete")
            .topic("t", 1, &[])
            .then(step(ApiKey::OffsetCommit, 8, |c| commit(c, "t", 1, -1)))
            .then(step(ApiKey::OffsetDelete, 0, |c| {
                OffsetDeleteRequest::default()
                    .with_group_id(group(c))
                    .with_topics(vec![OffsetDeleteRequestTopic::default()
                        .with_name(c.name("t"))
                        .with_partitions(vec![
                            OffsetDeleteRequestPartition::default().with_partition_index(0)
                        ])])
            }))
            .then(step(ApiKey::OffsetFetch, 7, |c| fetch_offsets(c, "t"))),
    );
    out.push(Case::new("txn/init-idempotent").then(step(
        ApiKey::InitProducerId,
        4,
        init_pid(false, 60_000),
    )));
    out.push(Case::new("txn/init-transactional").then(step(
        ApiKey::InitProducerId,
        4,
        init_pid(true, 60_000),
    )));
    out.push(
        Case::new("txn/init-twice-bumps-epoch")
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000))),
    );
    out.push(Case::new("txn/init-timeout-too-big").then(step(
        ApiKey::InitProducerId,
        4,
        init_pid(true, 1_000_000_000),
    )));
    out.push(
        Case::new("txn/add-partitions-commit")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::AddPartitionsToTxn, 3, |c| {
                add_partitions(c, "t", 0)
            }))
            .then(step(ApiKey::EndTxn, 3, |c| end_txn(c, true, 0))),
    );
    out.push(
        Case::new("txn/add-partitions-fenced-epoch")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::AddPartitionsToTxn, 3, |c| {
                add_partitions(c, "t", -1)
            })),
    );
    out.push(
        Case::new("txn/add-partitions-future-epoch")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::AddPartitionsToTxn, 3, |c| {
                add_partitions(c, "t", 3)
            })),
    );
    out.push(
        Case::new("txn/add-partitions-unknown-topic")
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::AddPartitionsToTxn, 3, |c| {
                add_partitions(c, "nope", 0)
            })),
    );
    out.push(
        Case::new("txn/end-without-transaction")
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::EndTxn, 3, |c| end_txn(c, true, 0))),
    );
    out.push(
        Case::new("txn/end-fenced-epoch")
            .topic("t", 1, &[])
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::AddPartitionsToTxn, 3, |c| {
                add_partitions(c, "t", 0)
            }))
            .then(step(ApiKey::EndTxn, 3, |c| end_txn(c, false, -1))),
    );
    out.push(
        Case::new("txn/end-unknown-id").then(step(ApiKey::EndTxn, 3, |c| end_txn(c, true, 0))),
    );
    // EndTxn naming another transactional id than the producer id's.
    out.push(
        Case::new("txn/end-other-id")
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::EndTxn, 3, |c| {
                end_txn(c, true, 0).with_transactional_id(TransactionalId(s(&c.topic("other"))))
            })),
    );
    out.push(
        Case::new("txn/add-offsets")
            .then(step(ApiKey::InitProducerId, 4, init_pid(true, 60_000)))
            .then(step(ApiKey::AddOffsetsToTxn, 3, |c| {
                AddOffsetsToTxnRequest::default()
                    .with_transactional_id(txn(c))
                    .with_producer_id(ProducerId(c.num("producer_id", -1)))
                    .with_producer_epoch(c.num("producer_epoch", -1) as i16)
                    .with_group_id(group(c))
            })),
    );
    // Frames that are not requests: an unknown API key, a header cut short.
    out.push(Case::new("frame/unknown-api-key").then(frame(
        ApiKey::ApiVersions,
        &[0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0],
    )));
    out.push(Case::new("frame/short-header").then(frame(ApiKey::ApiVersions, &[0, 18, 0])));
    out
}
