//! DescribeGroups (key 15).

use std::sync::Arc;

use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse, RequestHeader};

use super::sb;
use crate::broker::Broker;
use crate::error::GroupError;
use crate::error_code;

/// Answers DescribeGroups; unknown groups are reported as "Dead", from v6 with GROUP_ID_NOT_FOUND (KIP-1043),
/// as Kafka does. Authorized operations (v3+, when asked) are every operation Kafka supports on a group, given to
/// each group answered without an error, as Kafka without an authorizer does (see describe_cluster).
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: DescribeGroupsRequest,
) -> DescribeGroupsResponse {
    let version = h.request_api_version;
    let with_ops = version >= 3 && req.include_authorized_operations;
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
            let missing = (version >= 6 && d.state == "Dead").then(|| {
                let e = GroupError::GroupIdNotFound {
                    group: id.0.to_string(),
                };
                (error_code::group_code(&e), e.to_string())
            });
            let (code, message) =
                missing.map_or((error_code::NONE, None), |(c, m)| (c, Some(sb(m))));
            let ops = if with_ops && code == error_code::NONE {
                super::describe_cluster::GROUP_OPERATIONS
            } else {
                i32::MIN
            };
            DescribedGroup::default()
                .with_authorized_operations(ops)
                .with_error_code(code)
                .with_error_message(message)
                .with_group_id(id)
                .with_group_state(sb(d.state))
                .with_protocol_type(sb(d.protocol_type))
                .with_protocol_data(sb(d.protocol))
                .with_members(members)
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(groups)
}
