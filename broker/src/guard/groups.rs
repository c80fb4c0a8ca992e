//! Group APIs (`KafkaApis`): FindCoordinator DESCRIBE on the group or transactional id; JoinGroup, SyncGroup,
//! Heartbeat, LeaveGroup and ConsumerGroupHeartbeat READ on the group (ConsumerGroupHeartbeat also DESCRIBE on
//! every subscribed topic; its regex resolves to describable topics only: [`super::regex_topics`]); OffsetCommit READ
//! on the group and each topic; OffsetFetch DESCRIBE on the group and each
//! topic (a fetch of every committed topic shows only those); OffsetDelete DELETE on the group and READ on each
//! topic; DescribeGroups and ConsumerGroupDescribe DESCRIBE per group (with authorized operations; a consumer group
//! whose members' assignments name a topic the principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED with no
//! members); ListGroups lists only groups the principal may DESCRIBE (all with DESCRIBE on the cluster);
//! DeleteGroups DELETE per group.

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::{denied, group_denied, split, topic_denied, txn_denied, Check, Guard, Guarded};
use crate::authz::acl::AclOperation::*;
use crate::authz::acl::ResourceType;
use crate::error::Error;

impl Guarded for FindCoordinatorRequest {
    type Response = FindCoordinatorResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, FindCoordinatorResponse> {
        let (rt, code) = match self.key_type {
            0 => (ResourceType::Group, group_denied()),
            1 => (ResourceType::TransactionalId, txn_denied()),
            _ => return Guard::run(self),
        };
        let failed = move |key: StrBytes| {
            find_coordinator_response::Coordinator::default()
                .with_key(key)
                .with_node_id(BrokerId(-1))
                .with_port(-1)
                .with_error_code(code)
        };
        if cx.version < 4 {
            if cx.allowed(Describe, rt, &self.key) {
                return Guard::run(self);
            }
            return Guard::Answer(
                FindCoordinatorResponse::default()
                    .with_error_code(code)
                    .with_node_id(BrokerId(-1))
                    .with_port(-1),
            );
        }
        let (ok, no) = split(std::mem::take(&mut self.coordinator_keys), |k| {
            cx.allowed(Describe, rt, k)
        });
        self.coordinator_keys = ok;
        Guard::then(self, move |r: &mut FindCoordinatorResponse| {
            r.coordinators.extend(no.into_iter().map(failed))
        })
    }
}

/// A request answered GROUP_AUTHORIZATION_FAILED as a whole unless the principal may READ its group.
macro_rules! group_read {
    ($req:ty => $resp:ty, |$r:ident| $answer:expr) => {
        impl Guarded for $req {
            type Response = $resp;
            fn guard(self, cx: &Check) -> Guard<Self, $resp> {
                if cx.group(Read, &self.group_id) {
                    return Guard::run(self);
                }
                let $r = self;
                Guard::Answer($answer)
            }
        }
    };
}

group_read!(JoinGroupRequest => JoinGroupResponse, |r| JoinGroupResponse::default()
    .with_error_code(group_denied())
    .with_generation_id(-1)
    .with_member_id(r.member_id));
group_read!(SyncGroupRequest => SyncGroupResponse, |_r| SyncGroupResponse::default()
    .with_error_code(group_denied()));
group_read!(HeartbeatRequest => HeartbeatResponse, |_r| HeartbeatResponse::default()
    .with_error_code(group_denied()));
group_read!(LeaveGroupRequest => LeaveGroupResponse, |_r| LeaveGroupResponse::default()
    .with_error_code(group_denied()));

impl Guarded for ConsumerGroupHeartbeatRequest {
    type Response = ConsumerGroupHeartbeatResponse;
    fn guard(self, cx: &Check) -> Guard<Self, ConsumerGroupHeartbeatResponse> {
        let (code, message) = if !cx.group(Read, &self.group_id) {
            denied(Error::GroupAuthorizationFailed(self.group_id.to_string()))
        } else {
            let names = self.subscribed_topic_names.as_deref().unwrap_or_default();
            let refused: Vec<&str> = names
                .iter()
                .filter(|t| !cx.topic(Describe, t))
                .map(|t| t.as_str())
                .collect();
            if refused.is_empty() {
                return Guard::run(self);
            }
            denied(Error::TopicAuthorizationFailed(refused.join(", ")))
        };
        Guard::Answer(
            ConsumerGroupHeartbeatResponse::default()
                .with_error_code(code)
                .with_error_message(message)
                .with_member_epoch(-1),
        )
    }
}

impl Guarded for OffsetCommitRequest {
    type Response = OffsetCommitResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, OffsetCommitResponse> {
        use offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
        let group_ok = cx.group(Read, &self.group_id);
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            group_ok && cx.topic(Read, &t.name)
        });
        self.topics = ok;
        let code = if group_ok {
            topic_denied()
        } else {
            group_denied()
        };
        let failed = no
            .into_iter()
            .map(|t| {
                OffsetCommitResponseTopic::default()
                    .with_name(t.name)
                    .with_topic_id(t.topic_id)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                OffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(code)
                            })
                            .collect(),
                    )
            })
            .collect::<Vec<_>>();
        if !group_ok {
            return Guard::Answer(OffsetCommitResponse::default().with_topics(failed));
        }
        Guard::then(self, move |r: &mut OffsetCommitResponse| {
            r.topics.extend(failed)
        })
    }
}

impl Guarded for OffsetDeleteRequest {
    type Response = OffsetDeleteResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, OffsetDeleteResponse> {
        use offset_delete_response::{OffsetDeleteResponsePartition, OffsetDeleteResponseTopic};
        if !cx.group(Delete, &self.group_id) {
            return Guard::Answer(OffsetDeleteResponse::default().with_error_code(group_denied()));
        }
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cx.topic(Read, &t.name)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut OffsetDeleteResponse| {
            r.topics.extend(no.into_iter().map(|t| {
                OffsetDeleteResponseTopic::default()
                    .with_name(t.name)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                OffsetDeleteResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(topic_denied())
                            })
                            .collect(),
                    )
            }))
        })
    }
}

impl Guarded for DescribeGroupsRequest {
    type Response = DescribeGroupsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DescribeGroupsResponse> {
        let cx = cx.clone();
        let ops = self.include_authorized_operations;
        let (ok, no) = split(std::mem::take(&mut self.groups), |g| cx.group(Describe, g));
        self.groups = ok;
        Guard::then(self, move |r: &mut DescribeGroupsResponse| {
            for g in r.groups.iter_mut().filter(|_| ops) {
                g.authorized_operations = cx.operations(ResourceType::Group, &g.group_id);
            }
            r.groups.extend(no.into_iter().map(|g| {
                let (code, message) = denied(Error::GroupAuthorizationFailed(g.to_string()));
                describe_groups_response::DescribedGroup::default()
                    .with_group_id(g)
                    .with_error_code(code)
                    // The message field came in v6.
                    .with_error_message(message.filter(|_| cx.version >= 6))
                    .with_authorized_operations(i32::MIN)
            }))
        })
    }
}

impl Guarded for ConsumerGroupDescribeRequest {
    type Response = ConsumerGroupDescribeResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, ConsumerGroupDescribeResponse> {
        let cx = cx.clone();
        let ops = self.include_authorized_operations;
        let (ok, no) = split(std::mem::take(&mut self.group_ids), |g| {
            cx.group(Describe, g)
        });
        self.group_ids = ok;
        Guard::then(self, move |r: &mut ConsumerGroupDescribeResponse| {
            for g in r.groups.iter_mut() {
                if !describable_assignments(&cx, g) {
                    *g = consumer_group_describe_response::DescribedGroup::default()
                        .with_group_id(std::mem::take(&mut g.group_id))
                        .with_error_code(topic_denied())
                        .with_error_message(Some(StrBytes::from_static_str(HIDDEN_TOPICS)))
                        .with_authorized_operations(i32::MIN);
                } else if ops {
                    g.authorized_operations = cx.operations(ResourceType::Group, &g.group_id);
                }
            }
            r.groups.extend(no.into_iter().map(|g| {
                let (code, message) = denied(Error::GroupAuthorizationFailed(g.to_string()));
                consumer_group_describe_response::DescribedGroup::default()
                    .with_group_id(g)
                    .with_error_code(code)
                    .with_error_message(message)
                    .with_authorized_operations(i32::MIN)
            }))
        })
    }
}

/// Kafka's message for a described group whose members' assignments name a topic the principal may not DESCRIBE.
const HIDDEN_TOPICS: &str =
    "The group has described topic(s) that the client is not authorized to describe.";

/// Whether the principal may DESCRIBE every topic in the group's members' assignments and target assignments
/// (Kafka's `handleConsumerGroupDescribe`: otherwise the group is answered TOPIC_AUTHORIZATION_FAILED, no members).
fn describable_assignments(
    cx: &Check,
    g: &consumer_group_describe_response::DescribedGroup,
) -> bool {
    g.members
        .iter()
        .flat_map(|m| {
            m.assignment
                .topic_partitions
                .iter()
                .chain(&m.target_assignment.topic_partitions)
        })
        .all(|tp| cx.topic(Describe, &tp.topic_name))
}

impl Guarded for ListGroupsRequest {
    type Response = ListGroupsResponse;
    fn guard(self, cx: &Check) -> Guard<Self, ListGroupsResponse> {
        if cx.cluster(Describe) {
            return Guard::run(self);
        }
        let cx = cx.clone();
        Guard::then(self, move |r: &mut ListGroupsResponse| {
            r.groups.retain(|g| cx.group(Describe, &g.group_id))
        })
    }
}

impl Guarded for DeleteGroupsRequest {
    type Response = DeleteGroupsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DeleteGroupsResponse> {
        let (ok, no) = split(std::mem::take(&mut self.groups_names), |g| {
            cx.group(Delete, g)
        });
        self.groups_names = ok;
        Guard::then(self, move |r: &mut DeleteGroupsResponse| {
            r.results.extend(no.into_iter().map(|g| {
                delete_groups_response::DeletableGroupResult::default()
                    .with_group_id(g)
                    .with_error_code(group_denied())
            }))
        })
    }
}

impl Guarded for OffsetFetchRequest {
    type Response = OffsetFetchResponse;
    fn guard(self, cx: &Check) -> Guard<Self, OffsetFetchResponse> {
        if cx.version >= 8 {
            super::offset_fetch::batched(self, cx)
        } else {
            super::offset_fetch::single(self, cx)
        }
    }
}
