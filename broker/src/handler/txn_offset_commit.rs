//! TxnOffsetCommit (key 28): a consumer's position committed inside the producer's transaction (the
//! consume-transform-produce loop). The offsets are written to the group's `__consumer_offsets` partition as a
//! transactional batch of the producer and become visible when EndTxn commits (dropped when it aborts). The group's
//! partition must have joined the transaction (AddOffsetsToTxn; v5, transaction version 2, adds it itself), and the
//! producer's epoch must be current; a request naming a member (v3+) is checked against the group's generation as
//! OffsetCommit is.

use std::sync::Arc;

use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{RequestHeader, TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use strata_storage::time::now_ms;

use super::blocking;
use crate::broker::Broker;
use crate::error::{GroupError, Result};
use crate::error_code;
use crate::group::offsets::{OffsetEntry, Tp};
use crate::topics::CONSUMER_OFFSETS;

/// Checks the request and writes its offsets in the transaction. Blocking.
fn commit(
    broker: &Broker,
    req: &TxnOffsetCommitRequest,
    entries: Vec<(Tp, OffsetEntry)>,
    implicit_add: bool,
) -> Result<()> {
    let group = req.group_id.0.as_str();
    if !crate::group::valid_group_id(group) {
        return Err(GroupError::InvalidGroupId(group.to_string()).into());
    }
    // Kafka checks the member only when the request names one (TxnOffsetCommit v3+).
    if !req.member_id.is_empty() || req.generation_id >= 0 {
        broker.groups().check_commit(
            group,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
        )?;
    }
    broker.txn().ensure_ready()?;
    let partition = (
        CONSUMER_OFFSETS.to_string(),
        broker.offsets_partition(group),
    );
    let (pid, epoch) = (req.producer_id.0, req.producer_epoch);
    let id = &req.transactional_id.0;
    broker
        .txn()
        .write_in_transaction(id, (pid, epoch), &partition, implicit_add, || {
            broker
                .groups()
                .offset_store()
                .commit_transactional(group, pid, epoch, entries)
                .map(|_| ())
        })
}

/// Answers TxnOffsetCommit.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: TxnOffsetCommitRequest,
) -> TxnOffsetCommitResponse {
    let now = now_ms();
    // Per partition: its own error code, or None when it is written with the others.
    let mut per_partition: Vec<(usize, i32, Option<i16>)> = Vec::new();
    let mut entries = Vec::new();
    for (ti, t) in req.topics.iter().enumerate() {
        for p in &t.partitions {
            let checked = super::offset_commit::checked_entry(
                broker,
                &t.name.0,
                (
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                ),
                p.committed_metadata.as_deref(),
                now,
            );
            let own = match checked {
                Ok(entry) => {
                    entries.push(entry);
                    None
                }
                Err(e) => Some(error_code::code(&e)),
            };
            per_partition.push((ti, p.partition_index, own));
        }
    }
    let version = h.request_api_version;
    let b = broker.clone();
    let names: Vec<_> = req.topics.iter().map(|t| t.name.clone()).collect();
    // v5 is transaction version 2 (KIP-890 part 2): the group's partition joins the transaction here, the
    // producer sends no AddOffsetsToTxn.
    let r = blocking(move || commit(&b, &req, entries, version >= 5)).await;
    let shared = match &r {
        Ok(()) => error_code::NONE,
        Err(e) => {
            tracing::debug!(error = %e, "TxnOffsetCommit refused");
            error_code::verified_write_code(e, version >= 3, version >= 4)
        }
    };
    let mut topics: Vec<TxnOffsetCommitResponseTopic> = names
        .into_iter()
        .map(|n| TxnOffsetCommitResponseTopic::default().with_name(n))
        .collect();
    for (ti, p, own) in per_partition {
        topics[ti].partitions.push(
            TxnOffsetCommitResponsePartition::default()
                .with_partition_index(p)
                .with_error_code(own.unwrap_or(shared)),
        );
    }
    TxnOffsetCommitResponse::default().with_topics(topics)
}
