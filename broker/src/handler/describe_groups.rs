//! DescribeGroups (key 15).

use std::sync::Arc;

use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;

/// Answers DescribeGroups; unknown groups are reported as "Dead", as Kafka does before v6.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: DescribeGroupsRequest,
) -> DescribeGroupsResponse {
    let version = h.request_api_version;
    let groups = req
        .groups
        .into_iter()
        .map(|id| {
            let d = broker.groups().describe(&id.0);
            let members = d
                .members
                .into_iter()
                .map(|(mid, inst, client, host, meta, assign)| {
                    let m = DescribedGroupMember::default()
                        .with_member_id(sb(mid))
                        .with_client_id(sb(client))
                        .with_client_host(sb(host))
                        .with_member_metadata(meta)
                        .with_member_assignment(assign);
                    if version >= 4 {
                        m.with_group_instance_id(inst.map(sb))
                    } else {
                        m
                    }
                })
                .collect();
            DescribedGroup::default()
                .with_group_id(id)
                .with_group_state(sb(d.state))
                .with_protocol_type(sb(d.protocol_type))
                .with_protocol_data(sb(d.protocol))
                .with_members(members)
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(groups)
}
