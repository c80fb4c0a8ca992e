//! The one table of supported API versions: ApiVersions reports it and dispatch enforces it.

use kafka_protocol::messages::ApiKey;

/// (API, lowest version, highest version) the broker answers. Floors are `kafka-protocol`'s (KIP-896).
pub const SUPPORTED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Produce, 3, 11),
    (ApiKey::Fetch, 4, 12),
    (ApiKey::ListOffsets, 1, 9),
    (ApiKey::Metadata, 0, 12),
    (ApiKey::OffsetCommit, 2, 9),
    (ApiKey::OffsetFetch, 1, 9),
    (ApiKey::FindCoordinator, 0, 6),
    (ApiKey::JoinGroup, 0, 9),
    (ApiKey::Heartbeat, 0, 4),
    (ApiKey::LeaveGroup, 0, 5),
    (ApiKey::SyncGroup, 0, 5),
    (ApiKey::DescribeGroups, 0, 6),
    (ApiKey::ListGroups, 0, 5),
    (ApiKey::ApiVersions, 0, 4),
    (ApiKey::CreateTopics, 2, 7),
    (ApiKey::DeleteTopics, 1, 5),
    (ApiKey::DeleteRecords, 0, 2),
    (ApiKey::InitProducerId, 0, 5),
    (ApiKey::OffsetForLeaderEpoch, 2, 4),
    (ApiKey::DescribeConfigs, 1, 4),
    (ApiKey::AlterConfigs, 0, 2),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::DeleteGroups, 0, 2),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::DescribeCluster, 0, 1),
    (ApiKey::DescribeLogDirs, 1, 4),
    (ApiKey::OffsetDelete, 0, 0),
    (ApiKey::ConsumerGroupHeartbeat, 0, 1),
    (ApiKey::ConsumerGroupDescribe, 0, 1),
    // Advertised on every listener, as Kafka does; served before authentication on SASL listeners
    // (crate::security::sasl), answered ILLEGAL_SASL_STATE elsewhere and once authenticated.
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::DescribeUserScramCredentials, 0, 0),
    (ApiKey::AlterUserScramCredentials, 0, 0),
];

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
            assert!(
                *lo >= range.min && *hi <= range.max && lo <= hi,
                "{key:?} {lo}..{hi} vs {range}"
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
