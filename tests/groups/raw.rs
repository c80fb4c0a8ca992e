#![allow(dead_code)]
//! Raw classic-group requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, DescribeGroups) for
//! tests that check Kafka's exact error codes.

use std::net::SocketAddr;

use bytes::Bytes;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ApiKey, DescribeGroupsRequest, DescribeGroupsResponse, GroupId, HeartbeatRequest,
    HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
    OffsetCommitRequest, OffsetCommitResponse, SyncGroupRequest, SyncGroupResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::common::raw::{connect, request};

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

/// One member's view: its connection, ids and generation.
pub struct RawMember {
    conn: tokio::net::TcpStream,
    /// The group.
    pub group: String,
    /// Member id ("" before joining).
    pub member_id: String,
    /// Static instance id.
    pub instance: Option<String>,
    /// Generation of the last join.
    pub generation: i32,
    /// Session timeout sent (ms).
    pub session_ms: i32,
    /// Rebalance timeout sent (ms).
    pub rebalance_ms: i32,
    /// Protocol (assignor) name offered.
    pub protocol: String,
}

impl RawMember {
    /// A member of `group` connected to `addr` (session 6 s, rebalance 10 s, protocol "range").
    pub async fn new(addr: SocketAddr, group: &str, instance: Option<&str>) -> RawMember {
        RawMember {
            conn: connect(addr).await,
            group: group.into(),
            member_id: String::new(),
            instance: instance.map(str::to_string),
            generation: -1,
            session_ms: 6000,
            rebalance_ms: 10_000,
            protocol: "range".into(),
        }
    }

    /// One JoinGroup at `version`; remembers the member id and generation it returns.
    pub async fn join_once(&mut self, version: i16) -> JoinGroupResponse {
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(s(&self.group)))
            .with_session_timeout_ms(self.session_ms)
            .with_rebalance_timeout_ms(self.rebalance_ms)
            .with_member_id(s(&self.member_id))
            .with_group_instance_id(self.instance.as_deref().map(s))
            .with_protocol_type(s("consumer"))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(s(&self.protocol))
                .with_metadata(Bytes::from_static(b"\0\0\0\0\0\0\0\0\0\0"))]);
        let resp: JoinGroupResponse = request(&mut self.conn, ApiKey::JoinGroup, version, &req)
            .await
            .expect("join response");
        if !resp.member_id.is_empty() {
            self.member_id = resp.member_id.to_string();
        }
        if resp.error_code == 0 {
            self.generation = resp.generation_id;
        }
        resp
    }

    /// JoinGroup v5 until joined (answering MEMBER_ID_REQUIRED by joining again with the id given).
    pub async fn join(&mut self) -> JoinGroupResponse {
        let r = self.join_once(5).await;
        if r.error_code == 79 {
            return self.join_once(5).await;
        }
        r
    }

    /// SyncGroup v5 of the current generation with `assignments` (the leader's).
    pub async fn sync(&mut self, assignments: &[(&str, &[u8])]) -> SyncGroupResponse {
        self.sync_as(self.generation, Some(&self.protocol.clone()), assignments)
            .await
    }

    /// SyncGroup v5 with an explicit generation and protocol name.
    pub async fn sync_as(
        &mut self,
        generation: i32,
        protocol: Option<&str>,
        assignments: &[(&str, &[u8])],
    ) -> SyncGroupResponse {
        let req = SyncGroupRequest::default()
            .with_group_id(GroupId(s(&self.group)))
            .with_generation_id(generation)
            .with_member_id(s(&self.member_id))
            .with_group_instance_id(self.instance.as_deref().map(s))
            .with_protocol_type(Some(s("consumer")))
            .with_protocol_name(protocol.map(s))
            .with_assignments(
                assignments
                    .iter()
                    .map(|(m, a)| {
                        SyncGroupRequestAssignment::default()
                            .with_member_id(s(m))
                            .with_assignment(Bytes::copy_from_slice(a))
                    })
                    .collect(),
            );
        request(&mut self.conn, ApiKey::SyncGroup, 5, &req)
            .await
            .expect("sync response")
    }

    /// Heartbeat v4 of `generation`; its error code.
    pub async fn heartbeat_as(&mut self, generation: i32) -> i16 {
        let req = HeartbeatRequest::default()
            .with_group_id(GroupId(s(&self.group)))
            .with_generation_id(generation)
            .with_member_id(s(&self.member_id))
            .with_group_instance_id(self.instance.as_deref().map(s));
        let r: HeartbeatResponse = request(&mut self.conn, ApiKey::Heartbeat, 4, &req)
            .await
            .expect("heartbeat response");
        r.error_code
    }

    /// Heartbeat of the current generation.
    pub async fn heartbeat(&mut self) -> i16 {
        self.heartbeat_as(self.generation).await
    }

    /// LeaveGroup v5 of this member; (top-level, member) error codes.
    pub async fn leave(&mut self) -> (i16, i16) {
        self.leave_at(5).await
    }

    /// LeaveGroup at `version` of this member (v0-2: by member id); (top-level, member) error codes, -1 for no
    /// member answer.
    pub async fn leave_at(&mut self, version: i16) -> (i16, i16) {
        let req = LeaveGroupRequest::default().with_group_id(GroupId(s(&self.group)));
        let req = if version < 3 {
            req.with_member_id(s(&self.member_id))
        } else {
            req.with_members(vec![MemberIdentity::default()
                .with_member_id(s(&self.member_id))
                .with_group_instance_id(self.instance.as_deref().map(s))])
        };
        let r: LeaveGroupResponse = request(&mut self.conn, ApiKey::LeaveGroup, version, &req)
            .await
            .expect("leave response");
        (r.error_code, r.members.first().map_or(-1, |m| m.error_code))
    }

    /// OffsetCommit at `version` of `topic`-0 = `offset` as (member, generation); the partition's error code.
    pub async fn commit_as(
        &mut self,
        version: i16,
        member: &str,
        generation: i32,
        topic: &str,
        offset: i64,
    ) -> i16 {
        let req = OffsetCommitRequest::default()
            .with_group_id(GroupId(s(&self.group)))
            .with_generation_id_or_member_epoch(generation)
            .with_member_id(s(member))
            .with_group_instance_id(self.instance.as_deref().map(s))
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(TopicName(s(topic)))
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(offset)])]);
        let r: OffsetCommitResponse = request(&mut self.conn, ApiKey::OffsetCommit, version, &req)
            .await
            .expect("commit response");
        r.topics[0].partitions[0].error_code
    }

    /// OffsetCommit v8 as this member.
    pub async fn commit(&mut self, topic: &str, offset: i64) -> i16 {
        let (m, g) = (self.member_id.clone(), self.generation);
        self.commit_as(8, &m, g, topic, offset).await
    }
}

/// DescribeGroups v`version` of one group.
pub async fn describe(
    addr: SocketAddr,
    group: &str,
    version: i16,
) -> kafka_protocol::messages::describe_groups_response::DescribedGroup {
    let mut c = connect(addr).await;
    let req = DescribeGroupsRequest::default().with_groups(vec![GroupId(s(group))]);
    let r: DescribeGroupsResponse = request(&mut c, ApiKey::DescribeGroups, version, &req)
        .await
        .expect("describe response");
    r.groups.into_iter().next().expect("one group")
}
