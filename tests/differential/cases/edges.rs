//! Version edges of every API strata advertises: the default (empty) request at strata's oldest version, Kafka's
//! oldest, the newest both serve, each side's newest and the one before strata's newest, and one past strata's
//! newest.

use std::collections::BTreeSet;

use bytes::BytesMut;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Encodable;

use crate::differential::case::{raw, Case, Step};

/// The default request of `api` at `version` as kafka-protocol encodes it (`None` when it has no encoding), or a
/// hand-written empty request for the versions below its floor (KIP-896's removed versions).
pub fn default_body(api: ApiKey, version: i16) -> Option<Vec<u8>> {
    if version < api.valid_versions().min {
        return legacy_empty(api, version);
    }
    macro_rules! bodies {
        ($($key:ident => $ty:ty),* $(,)?) => {
            match api {
                // acks=0 gets no answer: ask for acks=1.
                ApiKey::Produce => enc(&ProduceRequest::default().with_acks(1), version),
                $(ApiKey::$key => enc(&<$ty>::default(), version),)*
                _ => None,
            }
        };
    }
    bodies!(
        Fetch => FetchRequest,
        ListOffsets => ListOffsetsRequest,
        Metadata => MetadataRequest,
        OffsetCommit => OffsetCommitRequest,
        OffsetFetch => OffsetFetchRequest,
        FindCoordinator => FindCoordinatorRequest,
        JoinGroup => JoinGroupRequest,
        Heartbeat => HeartbeatRequest,
        LeaveGroup => LeaveGroupRequest,
        SyncGroup => SyncGroupRequest,
        DescribeGroups => DescribeGroupsRequest,
        ListGroups => ListGroupsRequest,
        ApiVersions => ApiVersionsRequest,
        CreateTopics => CreateTopicsRequest,
        DeleteTopics => DeleteTopicsRequest,
        DeleteRecords => DeleteRecordsRequest,
        InitProducerId => InitProducerIdRequest,
        OffsetForLeaderEpoch => OffsetForLeaderEpochRequest,
        DescribeConfigs => DescribeConfigsRequest,
        AlterConfigs => AlterConfigsRequest,
        CreatePartitions => CreatePartitionsRequest,
        DeleteGroups => DeleteGroupsRequest,
        IncrementalAlterConfigs => IncrementalAlterConfigsRequest,
        DescribeCluster => DescribeClusterRequest,
        DescribeTopicPartitions => DescribeTopicPartitionsRequest,
        DescribeLogDirs => DescribeLogDirsRequest,
        OffsetDelete => OffsetDeleteRequest,
        ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest,
        ConsumerGroupDescribe => ConsumerGroupDescribeRequest,
        AddPartitionsToTxn => AddPartitionsToTxnRequest,
        AddOffsetsToTxn => AddOffsetsToTxnRequest,
        EndTxn => EndTxnRequest,
        TxnOffsetCommit => TxnOffsetCommitRequest,
        DescribeTransactions => DescribeTransactionsRequest,
        ListTransactions => ListTransactionsRequest,
        DescribeProducers => DescribeProducersRequest,
        SaslHandshake => SaslHandshakeRequest,
        SaslAuthenticate => SaslAuthenticateRequest,
        DescribeUserScramCredentials => DescribeUserScramCredentialsRequest,
        AlterUserScramCredentials => AlterUserScramCredentialsRequest,
        DescribeAcls => DescribeAclsRequest,
        CreateAcls => CreateAclsRequest,
        DeleteAcls => DeleteAclsRequest,
        ElectLeaders => ElectLeadersRequest,
    )
}

fn enc<R: Encodable>(r: &R, version: i16) -> Option<Vec<u8>> {
    let mut b = BytesMut::new();
    r.encode(&mut b, version).ok().map(|_| b.to_vec())
}

/// Empty requests of the v0 encodings below kafka-protocol's floor, from the protocol definitions.
fn legacy_empty(api: ApiKey, version: i16) -> Option<Vec<u8>> {
    if version != 0 {
        return None;
    }
    let b: &[u8] = match api {
        // acks=1, timeout_ms 5000, topic_data []
        ApiKey::Produce => &[0, 1, 0, 0, 0x13, 0x88, 0, 0, 0, 0],
        // replica_id -1, max_wait_ms 0, min_bytes 0, topics []
        ApiKey::Fetch => &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        // replica_id -1, topics []
        ApiKey::ListOffsets => &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
        ApiKey::DescribeConfigs | ApiKey::OffsetForLeaderEpoch => &[0, 0, 0, 0],
        ApiKey::OffsetCommit | ApiKey::OffsetFetch => &[0, 0, 0, 0, 0, 0],
        ApiKey::CreateTopics | ApiKey::DeleteTopics => &[0, 0, 0, 0, 0, 0, 0x13, 0x88],
        ApiKey::DescribeLogDirs => &[0xff, 0xff, 0xff, 0xff],
        _ => return None,
    };
    Some(b.to_vec())
}

/// Cases `edge/<Api>@v<N>` for every API strata advertises.
pub fn cases(strata: &[(ApiKey, i16, i16)], kafka: &[(ApiKey, i16, i16)]) -> Vec<Case> {
    let mut out = Vec::new();
    for (api, smin, smax) in strata {
        let codec_max = api.valid_versions().max;
        let mut versions = BTreeSet::from([*smin, *smax, (*smax - 1).max(*smin)]);
        if let Some((_, kmin, kmax)) = kafka.iter().find(|(k, _, _)| k == api) {
            versions.insert(*kmin);
            versions.insert((*kmax).min(codec_max));
            versions.insert((*kmax).min(*smax));
        }
        for v in versions {
            if let Some(body) = default_body(*api, v) {
                out.push(Case::new(format!("edge/{api:?}@v{v}")).then(raw(*api, v, &body)));
            }
        }
        // One past strata's newest, with the newest encoding's body.
        if let Some(body) = default_body(*api, *smax) {
            let past = *smax + 1;
            let step = Step {
                api: *api,
                version: past,
                body: crate::differential::case::Body::Raw(body),
            };
            out.push(Case::new(format!("edge/{api:?}@v{past}-unsupported")).then(step));
        }
    }
    out
}
