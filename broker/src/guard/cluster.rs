//! Cluster-wide APIs (`KafkaApis`, `AclApis`, `ControllerApis`): DescribeCluster answers the cluster's authorized
//! operations; DescribeClientQuotas needs DESCRIBE_CONFIGS on the cluster; DescribeLogDirs, ListPartitionReassignments,
//! DescribeUserScramCredentials and DescribeAcls DESCRIBE; ElectLeaders, AlterPartitionReassignments,
//! AlterUserScramCredentials, CreateAcls, DeleteAcls and UpdateFeatures ALTER. Denied: CLUSTER_AUTHORIZATION_FAILED
//! where each API puts its error. ApiVersions and the SASL exchange are not checked.

use kafka_protocol::messages::*;

use super::{denied, unchecked, Check, Guard, Guarded};
use crate::authz::acl::AclOperation::{self, *};
use crate::authz::acl::{ResourceType, CLUSTER_NAME};
use crate::error::Error;

unchecked!(
    ApiVersionsRequest => ApiVersionsResponse,
    SaslHandshakeRequest => SaslHandshakeResponse,
    SaslAuthenticateRequest => SaslAuthenticateResponse,
);

impl Guarded for DescribeClusterRequest {
    type Response = DescribeClusterResponse;
    fn guard(self, cx: &Check) -> Guard<Self, DescribeClusterResponse> {
        if !self.include_cluster_authorized_operations {
            return Guard::run(self);
        }
        let ops = cx.operations(ResourceType::Cluster, CLUSTER_NAME);
        Guard::then(self, move |r: &mut DescribeClusterResponse| {
            r.cluster_authorized_operations = ops
        })
    }
}

/// A request answered `$answer` (built from the code and message) unless the principal may do `$op` on the cluster.
macro_rules! cluster_op {
    ($req:ty => $resp:ty, $op:expr, |$r:ident, $cx:ident, $code:ident, $msg:ident| $answer:expr) => {
        impl Guarded for $req {
            type Response = $resp;
            fn guard(self, $cx: &Check) -> Guard<Self, $resp> {
                let op: AclOperation = $op;
                if $cx.cluster(op) {
                    return Guard::run(self);
                }
                let ($code, $msg) = denied(Error::ClusterAuthorizationFailed(op.to_string()));
                let $r = self;
                Guard::Answer($answer)
            }
        }
    };
}

cluster_op!(DescribeClientQuotasRequest => DescribeClientQuotasResponse, DescribeConfigs, |_r, _cx, code, msg| {
    DescribeClientQuotasResponse::default().with_error_code(code).with_error_message(msg)
});
cluster_op!(DescribeLogDirsRequest => DescribeLogDirsResponse, Describe, |_r, cx, code, _msg| {
    // Before v3 (no top-level error) the answer is just empty, as Kafka's.
    DescribeLogDirsResponse::default().with_error_code(if cx.version >= 3 { code } else { 0 })
});
cluster_op!(ListPartitionReassignmentsRequest => ListPartitionReassignmentsResponse, Describe, |_r, _cx, code, msg| {
    ListPartitionReassignmentsResponse::default().with_error_code(code).with_error_message(msg)
});
cluster_op!(AlterPartitionReassignmentsRequest => AlterPartitionReassignmentsResponse, Alter, |_r, _cx, code, msg| {
    AlterPartitionReassignmentsResponse::default().with_error_code(code).with_error_message(msg)
});
cluster_op!(DescribeUserScramCredentialsRequest => DescribeUserScramCredentialsResponse, Describe, |_r, _cx, code, msg| {
    DescribeUserScramCredentialsResponse::default().with_error_code(code).with_error_message(msg)
});
cluster_op!(DescribeAclsRequest => DescribeAclsResponse, Describe, |_r, _cx, code, msg| {
    DescribeAclsResponse::default().with_error_code(code).with_error_message(msg)
});
cluster_op!(AlterUserScramCredentialsRequest => AlterUserScramCredentialsResponse, Alter, |r, _cx, code, msg| {
    use alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
    let mut users: Vec<_> = r.deletions.iter().map(|d| d.name.clone()).collect();
    users.extend(r.upsertions.iter().map(|u| u.name.clone()));
    users.dedup();
    AlterUserScramCredentialsResponse::default().with_results(
        users
            .into_iter()
            .map(|u| {
                AlterUserScramCredentialsResult::default()
                    .with_user(u)
                    .with_error_code(code)
                    .with_error_message(msg.clone())
            })
            .collect(),
    )
});
cluster_op!(CreateAclsRequest => CreateAclsResponse, Alter, |r, _cx, code, msg| {
    CreateAclsResponse::default().with_results(
        r.creations
            .iter()
            .map(|_| {
                create_acls_response::AclCreationResult::default()
                    .with_error_code(code)
                    .with_error_message(msg.clone())
            })
            .collect(),
    )
});
cluster_op!(DeleteAclsRequest => DeleteAclsResponse, Alter, |r, _cx, code, msg| {
    DeleteAclsResponse::default().with_filter_results(
        r.filters
            .iter()
            .map(|_| {
                delete_acls_response::DeleteAclsFilterResult::default()
                    .with_error_code(code)
                    .with_error_message(msg.clone())
            })
            .collect(),
    )
});
cluster_op!(ElectLeadersRequest => ElectLeadersResponse, Alter, |r, cx, code, msg| {
    use elect_leaders_response::{PartitionResult, ReplicaElectionResult};
    // The top-level error came in v1.
    let top = if cx.version >= 1 { code } else { 0 };
    ElectLeadersResponse::default().with_error_code(top).with_replica_election_results(
        r.topic_partitions
            .unwrap_or_default()
            .into_iter()
            .map(|t| {
                ReplicaElectionResult::default().with_topic(t.topic).with_partition_result(
                    t.partitions
                        .iter()
                        .map(|p| {
                            PartitionResult::default()
                                .with_partition_id(*p)
                                .with_error_code(code)
                                .with_error_message(msg.clone())
                        })
                        .collect(),
                )
            })
            .collect(),
    )
});
cluster_op!(UpdateFeaturesRequest => UpdateFeaturesResponse, Alter, |r, cx, code, msg| {
    use update_features_response::UpdatableFeatureResult;
    // Below v2 every feature repeats the top-level error, as Kafka's `createWithErrors`.
    let results = if cx.version < 2 {
        r.feature_updates
            .iter()
            .map(|u| {
                UpdatableFeatureResult::default()
                    .with_feature(u.feature.clone())
                    .with_error_code(code)
                    .with_error_message(msg.clone())
            })
            .collect()
    } else {
        Vec::new()
    };
    UpdateFeaturesResponse::default().with_error_code(code).with_error_message(msg).with_results(results)
});
