//! The corpus: generated version edges plus hand-written sequences by area.

mod data;
mod edges;
mod groups;
mod topic_partitions;
mod topics;
mod txn_v2;

use kafka_protocol::messages::ApiKey;

use super::case::Case;

/// Every case, given the versions each broker advertises.
pub fn all(strata: &[(ApiKey, i16, i16)], kafka: &[(ApiKey, i16, i16)]) -> Vec<Case> {
    let mut out = edges::cases(strata, kafka);
    out.extend(topics::cases());
    out.extend(topic_partitions::cases());
    out.extend(data::cases());
    out.extend(groups::cases());
    out.extend(txn_v2::cases());
    out
}
