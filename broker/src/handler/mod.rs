//! One file per Kafka API. Each `handle(broker, header, request)` returns the response; errors are mapped to
//! Kafka codes through [`crate::error_code`].

pub mod acls;
pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod alter_configs;
pub mod api_versions;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_client_quotas;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_topic_partitions;
pub mod describe_transactions;
pub mod elect_leaders;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub(crate) mod group_configs;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub(crate) mod legacy;
pub mod list_groups;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod partition_reassignments;
pub mod produce;
pub(crate) mod records;
pub mod sasl;
pub mod sync_group;
pub mod txn_offset_commit;
pub mod update_features;
pub mod user_scram_credentials;
pub mod write_txn_markers;

use crate::error::{Error, Result};

/// Runs blocking log work (which may fsync) on the blocking pool.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T>
where
    F: FnOnce() -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::io("a blocking log task", std::io::Error::other(e.to_string())))?
}

/// `StrBytes` from a `String`.
pub(crate) fn sb(s: impl Into<String>) -> kafka_protocol::protocol::StrBytes {
    kafka_protocol::protocol::StrBytes::from_string(s.into())
}

/// Kafka's check on a transactional id before its coordinator looks it up: an empty one is INVALID_REQUEST
/// (InitProducerId, AddOffsetsToTxn, EndTxn).
pub(crate) fn require_transactional_id(api: &str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::Protocol {
            api: api.into(),
            message: "the transactional id is empty".into(),
        });
    }
    Ok(())
}
