//! The one table of supported API versions: ApiVersions reports it and dispatch enforces it.

use kafka_protocol::messages::ApiKey;

/// (API, lowest version, highest version) the broker answers. Floors are Kafka 3.9's: `kafka-protocol`'s (Kafka
/// 4.0's, KIP-896) except the older versions in [`BELOW_CODEC`], which `crate::handler::legacy` answers.
pub const SUPPORTED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Produce, 0, 13),
    (ApiKey::Fetch, 0, 18),
    (ApiKey::ListOffsets, 0, 10),
    (ApiKey::Metadata, 0, 13),
    (ApiKey::OffsetCommit, 0, 9),
    (ApiKey::OffsetFetch, 0, 9),
    (ApiKey::FindCoordinator, 0, 6),
    (ApiKey::JoinGroup, 0, 9),
    (ApiKey::Heartbeat, 0, 4),
    (ApiKey::LeaveGroup, 0, 5),
    (ApiKey::SyncGroup, 0, 5),
    (ApiKey::DescribeGroups, 0, 6),
    (ApiKey::ListGroups, 0, 5),
    (ApiKey::ApiVersions, 0, 4),
    (ApiKey::CreateTopics, 0, 7),
    (ApiKey::DeleteTopics, 0, 6),
    (ApiKey::DeleteRecords, 0, 2),
    (ApiKey::InitProducerId, 0, 5),
    (ApiKey::OffsetForLeaderEpoch, 0, 4),
    (ApiKey::DescribeConfigs, 0, 4),
    (ApiKey::AlterConfigs, 0, 2),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::DeleteGroups, 0, 2),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::DescribeCluster, 0, 2),
    // KIP-966: Kafka's Admin client describes topics by name with it (crate::handler::describe_topic_partitions).
    (ApiKey::DescribeTopicPartitions, 0, 0),
    // No client quotas are kept: every filter matches nothing (crate::handler::describe_client_quotas).
    (ApiKey::DescribeClientQuotas, 0, 1),
    (ApiKey::DescribeLogDirs, 0, 4),
    (ApiKey::OffsetDelete, 0, 0),
    (ApiKey::ConsumerGroupHeartbeat, 0, 1),
    (ApiKey::ConsumerGroupDescribe, 0, 1),
    // Transactions (crate::txn), with KIP-890's transaction version 2 (EndTxn v5 bumps the epoch, Produce v12+ and
    // TxnOffsetCommit v5 add partitions themselves; Kafka's clients use them when the broker finalizes
    // `transaction.version` 2, crate::features). TxnOffsetCommit v6 (Kafka 4.4) is past the codec.
    (ApiKey::AddPartitionsToTxn, 0, 5),
    (ApiKey::AddOffsetsToTxn, 0, 4),
    (ApiKey::EndTxn, 0, 5),
    (ApiKey::TxnOffsetCommit, 0, 5),
    (ApiKey::DescribeTransactions, 0, 0),
    (ApiKey::ListTransactions, 0, 1),
    (ApiKey::DescribeProducers, 0, 0),
    // From admin clients aborting a hanging transaction (crate::handler::write_txn_markers); Kafka 4.0's floor.
    (ApiKey::WriteTxnMarkers, 1, 1),
    // Advertised on every listener, as Kafka does; served before authentication on SASL listeners
    // (crate::security::sasl), answered ILLEGAL_SASL_STATE elsewhere and once authenticated.
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::DescribeUserScramCredentials, 0, 0),
    (ApiKey::AlterUserScramCredentials, 0, 0),
    // No authorizer: answered SECURITY_DISABLED, as Kafka without one (crate::handler::acls).
    (ApiKey::DescribeAcls, 0, 3),
    (ApiKey::CreateAcls, 0, 3),
    (ApiKey::DeleteAcls, 0, 3),
    (ApiKey::ElectLeaders, 0, 2),
    // Finalized feature levels (crate::features): transaction.version can be changed, as on Kafka.
    (ApiKey::UpdateFeatures, 0, 2),
    // One replica per partition: nothing to move (crate::handler::partition_reassignments).
    (ApiKey::AlterPartitionReassignments, 0, 1),
    (ApiKey::ListPartitionReassignments, 0, 0),
];

/// APIs whose Kafka 3.9 versions below the codec's floor (the version given here) strata answers itself
/// (`crate::handler::legacy`): every version KIP-896 removed in Kafka 4.0 of an API strata serves — Produce v0-2,
/// Fetch v0-3, ListOffsets v0, OffsetCommit v0-1, OffsetFetch v0, CreateTopics v0-1, DeleteTopics v0,
/// OffsetForLeaderEpoch v0-1, DescribeConfigs v0, DescribeLogDirs v0, DescribeAcls / CreateAcls / DeleteAcls v0.
/// (KIP-896's other removals — delegation tokens, AlterReplicaLogDirs — are of APIs strata does not serve at all.)
pub const BELOW_CODEC: &[(ApiKey, i16)] = &[
    (ApiKey::Produce, 3),
    (ApiKey::Fetch, 4),
    (ApiKey::ListOffsets, 1),
    (ApiKey::OffsetCommit, 2),
    (ApiKey::OffsetFetch, 1),
    (ApiKey::CreateTopics, 2),
    (ApiKey::DeleteTopics, 1),
    (ApiKey::OffsetForLeaderEpoch, 2),
    (ApiKey::DescribeConfigs, 1),
    (ApiKey::DescribeLogDirs, 1),
    (ApiKey::DescribeAcls, 1),
    (ApiKey::CreateAcls, 1),
    (ApiKey::DeleteAcls, 1),
];

/// Whether `version` of `key` is below the codec's floor and answered by `crate::handler::legacy`.
pub fn below_codec(key: ApiKey, version: i16) -> bool {
    BELOW_CODEC
        .iter()
        .any(|(k, floor)| *k == key && (0..*floor).contains(&version))
}

/// The supported range of `key`, if the broker answers it at all.
pub fn supported(key: ApiKey) -> Option<(i16, i16)> {
    SUPPORTED
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, lo, hi)| (*lo, *hi))
}

/// Whether `version` of `key` is answered.
pub fn is_supported(key: ApiKey, version: i16) -> bool {
    supported(key).is_some_and(|(lo, hi)| (lo..=hi).contains(&version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_within_the_codec_ranges() {
        for (key, lo, hi) in SUPPORTED {
            let range = key.valid_versions();
            let floor = match BELOW_CODEC.iter().find(|(k, _)| k == key) {
                Some((_, f)) if *f == range.min => 0,
                _ => range.min,
            };
            assert!(
                *lo >= floor && *hi <= range.max && lo <= hi,
                "{key:?} {lo}..{hi} vs {range}"
            );
        }
    }

    /// Kafka 3.9's oldest version of every API strata serves (its `<Api>Request.json` `validVersions`): 0 for
    /// all of them, so every one must be answered from v0 — except WriteTxnMarkers, an inter-broker API served
    /// only for admin clients, which have sent v1 since they could (abortTransaction came in Kafka 3.0, v1 in
    /// 2.8); Kafka 4.0 dropped its v0 (KIP-896).
    #[test]
    fn every_api_starts_at_kafka_3_9s_oldest_version() {
        for (key, lo, _) in SUPPORTED {
            if *key == ApiKey::WriteTxnMarkers {
                assert_eq!(*lo, 1);
                continue;
            }
            assert_eq!(*lo, 0, "{key:?} refuses Kafka 3.9's v0");
            let codec = key.valid_versions().min;
            assert!(
                codec == 0 || BELOW_CODEC.contains(&(*key, codec)),
                "{key:?} v0..{codec} is below the codec and not in BELOW_CODEC"
            );
        }
    }

    #[test]
    fn no_api_is_listed_twice() {
        for (i, (a, _, _)) in SUPPORTED.iter().enumerate() {
            assert!(
                SUPPORTED[i + 1..].iter().all(|(b, _, _)| a != b),
                "{a:?} listed twice"
            );
        }
    }
}
