//! ConsumerGroupDescribe (key 69, KIP-848): consumer groups with their epochs, members, assignments and target
//! assignments; a group that is not a consumer group is GROUP_ID_NOT_FOUND, as Kafka answers.

use std::sync::Arc;

use kafka_protocol::messages::consumer_group_describe_response::{
    Assignment, DescribedGroup, Member, TopicPartitions,
};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, RequestHeader, TopicName,
};

use super::sb;
use crate::broker::Broker;
use crate::error::GroupError;
use crate::error_code;
use crate::group::consumer::Assignment as Owned;

/// Answers ConsumerGroupDescribe; authorized operations, when asked, as DescribeGroups gives them.
pub async fn handle(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: ConsumerGroupDescribeRequest,
) -> ConsumerGroupDescribeResponse {
    let ops = if req.include_authorized_operations {
        super::describe_cluster::GROUP_OPERATIONS
    } else {
        i32::MIN
    };
    let topics = broker.registry();
    let all = topics.all();
    let convert = |a: &Owned| {
        Assignment::default().with_topic_partitions(
            a.iter()
                .filter_map(|(t, ps)| {
                    let id = all.iter().find(|(n, _)| n == t)?.1.id;
                    Some(
                        TopicPartitions::default()
                            .with_topic_id(id)
                            .with_topic_name(TopicName(sb(t.clone())))
                            .with_partitions(ps.iter().copied().collect()),
                    )
                })
                .collect(),
        )
    };
    let groups = req
        .group_ids
        .into_iter()
        .map(|id| {
            let described = broker.groups().with_consumer_group(&id.0, |g| {
                let members = g
                    .members
                    .values()
                    .map(|m| {
                        Member::default()
                            .with_member_id(sb(m.id.clone()))
                            .with_instance_id(m.instance_id.clone().map(sb))
                            .with_rack_id(m.rack_id.clone().map(sb))
                            .with_member_epoch(m.epoch)
                            .with_client_id(sb(m.client_id.clone()))
                            .with_client_host(sb(m.client_host.clone()))
                            .with_subscribed_topic_names(
                                m.topics.iter().map(|t| TopicName(sb(t.clone()))).collect(),
                            )
                            .with_subscribed_topic_regex(m.regex.clone().map(sb))
                            .with_assignment(convert(&m.assigned))
                            .with_target_assignment(convert(
                                &g.target.get(&m.id).cloned().unwrap_or_default(),
                            ))
                            .with_member_type(1)
                    })
                    .collect();
                DescribedGroup::default()
                    .with_group_state(sb(g.state()))
                    .with_group_epoch(g.epoch)
                    .with_assignment_epoch(g.assignment_epoch)
                    .with_assignor_name(sb(g.assignor.clone()))
                    .with_members(members)
            });
            match described {
                Some(d) => d.with_group_id(id).with_authorized_operations(ops),
                None => {
                    let e = GroupError::GroupIdNotFound {
                        group: id.0.to_string(),
                    };
                    DescribedGroup::default()
                        .with_group_id(id)
                        .with_error_code(error_code::group_code(&e))
                        .with_error_message(Some(sb(e.to_string())))
                        .with_group_state(sb("Dead"))
                }
            }
        })
        .collect();
    ConsumerGroupDescribeResponse::default().with_groups(groups)
}
