//! Transaction APIs (`KafkaApis`): InitProducerId WRITE on the transactional id (without one, IDEMPOTENT_WRITE on
//! the cluster or WRITE on some topic); AddPartitionsToTxn v0-3 WRITE on the transactional id and each topic (one
//! denied topic fails the whole request: the others OPERATION_NOT_ATTEMPTED), v4+ (brokers') CLUSTER_ACTION;
//! AddOffsetsToTxn WRITE on the transactional id and READ on the group; EndTxn WRITE on the transactional id;
//! TxnOffsetCommit WRITE on the transactional id, READ on the group and each topic; DescribeTransactions and
//! ListTransactions DESCRIBE per transactional id; WriteTxnMarkers CLUSTER_ACTION.

use kafka_protocol::messages::*;

use super::{cluster_denied, group_denied, split, topic_denied, txn_denied, Check, Guard, Guarded};
use crate::authz::acl::AclOperation::*;
use crate::authz::acl::ResourceType;
use crate::error_code;

impl Guarded for InitProducerIdRequest {
    type Response = InitProducerIdResponse;
    fn guard(self, cx: &Check) -> Guard<Self, InitProducerIdResponse> {
        let code = match self.transactional_id.as_ref() {
            Some(id) if !cx.txn_id(Write, id) => txn_denied(),
            Some(_) => return Guard::run(self),
            None if cx.cluster(IdempotentWrite) || cx.any_of(Write, ResourceType::Topic) => {
                return Guard::run(self)
            }
            None => cluster_denied(),
        };
        Guard::Answer(
            InitProducerIdResponse::default()
                .with_error_code(code)
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
        )
    }
}

impl Guarded for AddPartitionsToTxnRequest {
    type Response = AddPartitionsToTxnResponse;
    fn guard(self, cx: &Check) -> Guard<Self, AddPartitionsToTxnResponse> {
        use add_partitions_to_txn_response::{
            AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
        };
        if cx.version >= 4 {
            if cx.cluster(ClusterAction) {
                return Guard::run(self);
            }
            return Guard::Answer(
                AddPartitionsToTxnResponse::default().with_error_code(cluster_denied()),
            );
        }
        let txn_ok = cx.txn_id(Write, &self.v3_and_below_transactional_id);
        let topic_ok =
            |t: &add_partitions_to_txn_request::AddPartitionsToTxnTopic| cx.topic(Write, &t.name);
        if txn_ok && self.v3_and_below_topics.iter().all(topic_ok) {
            return Guard::run(self);
        }
        let results = self
            .v3_and_below_topics
            .iter()
            .map(|t| {
                let code = match (txn_ok, topic_ok(t)) {
                    (false, _) => txn_denied(),
                    (true, false) => topic_denied(),
                    (true, true) if cx.broker.registry().get(&t.name).is_none() => {
                        error_code::code(&crate::error::Error::UnknownTopic(t.name.to_string()))
                    }
                    (true, true) => error_code::code(&crate::error::Error::OperationNotAttempted),
                };
                AddPartitionsToTxnTopicResult::default()
                    .with_name(t.name.clone())
                    .with_results_by_partition(
                        t.partitions
                            .iter()
                            .map(|p| {
                                AddPartitionsToTxnPartitionResult::default()
                                    .with_partition_index(*p)
                                    .with_partition_error_code(code)
                            })
                            .collect(),
                    )
            })
            .collect();
        Guard::Answer(
            AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(results),
        )
    }
}

impl Guarded for AddOffsetsToTxnRequest {
    type Response = AddOffsetsToTxnResponse;
    fn guard(self, cx: &Check) -> Guard<Self, AddOffsetsToTxnResponse> {
        let code = if !cx.txn_id(Write, &self.transactional_id) {
            txn_denied()
        } else if !cx.group(Read, &self.group_id) {
            group_denied()
        } else {
            return Guard::run(self);
        };
        Guard::Answer(AddOffsetsToTxnResponse::default().with_error_code(code))
    }
}

impl Guarded for EndTxnRequest {
    type Response = EndTxnResponse;
    fn guard(self, cx: &Check) -> Guard<Self, EndTxnResponse> {
        if cx.txn_id(Write, &self.transactional_id) {
            return Guard::run(self);
        }
        Guard::Answer(
            EndTxnResponse::default()
                .with_error_code(txn_denied())
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
        )
    }
}

impl Guarded for TxnOffsetCommitRequest {
    type Response = TxnOffsetCommitResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, TxnOffsetCommitResponse> {
        use txn_offset_commit_response::{
            TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
        };
        let whole = if !cx.txn_id(Write, &self.transactional_id) {
            Some(txn_denied())
        } else if !cx.group(Read, &self.group_id) {
            Some(group_denied())
        } else {
            None
        };
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            whole.is_none() && cx.topic(Read, &t.name)
        });
        self.topics = ok;
        let failed: Vec<_> = no
            .into_iter()
            .map(|t| {
                TxnOffsetCommitResponseTopic::default()
                    .with_name(t.name)
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                TxnOffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(whole.unwrap_or(topic_denied()))
                            })
                            .collect(),
                    )
            })
            .collect();
        if whole.is_some() {
            return Guard::Answer(TxnOffsetCommitResponse::default().with_topics(failed));
        }
        Guard::then(self, move |r: &mut TxnOffsetCommitResponse| {
            r.topics.extend(failed)
        })
    }
}

impl Guarded for DescribeTransactionsRequest {
    type Response = DescribeTransactionsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DescribeTransactionsResponse> {
        let cx = cx.clone();
        let (ok, no) = split(std::mem::take(&mut self.transactional_ids), |id| {
            cx.txn_id(Describe, id)
        });
        self.transactional_ids = ok;
        Guard::then(self, move |r: &mut DescribeTransactionsResponse| {
            // Topics of a transaction the principal may not describe are left out (Kafka does the same).
            for s in r.transaction_states.iter_mut() {
                s.topics.retain(|t| cx.topic(Describe, &t.topic));
            }
            r.transaction_states.extend(no.into_iter().map(|id| {
                describe_transactions_response::TransactionState::default()
                    .with_transactional_id(id)
                    .with_error_code(txn_denied())
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1)
                    .with_transaction_timeout_ms(-1)
                    .with_transaction_start_time_ms(-1)
            }))
        })
    }
}

impl Guarded for ListTransactionsRequest {
    type Response = ListTransactionsResponse;
    fn guard(self, cx: &Check) -> Guard<Self, ListTransactionsResponse> {
        let cx = cx.clone();
        Guard::then(self, move |r: &mut ListTransactionsResponse| {
            r.transaction_states
                .retain(|s| cx.txn_id(Describe, &s.transactional_id))
        })
    }
}

impl Guarded for WriteTxnMarkersRequest {
    type Response = WriteTxnMarkersResponse;
    fn guard(self, cx: &Check) -> Guard<Self, WriteTxnMarkersResponse> {
        use write_txn_markers_response::*;
        if cx.cluster(ClusterAction) {
            return Guard::run(self);
        }
        let markers = self
            .markers
            .iter()
            .map(|m| {
                WritableTxnMarkerResult::default()
                    .with_producer_id(m.producer_id)
                    .with_topics(
                        m.topics
                            .iter()
                            .map(|t| {
                                WritableTxnMarkerTopicResult::default()
                                    .with_name(t.name.clone())
                                    .with_partitions(
                                        t.partition_indexes
                                            .iter()
                                            .map(|p| {
                                                WritableTxnMarkerPartitionResult::default()
                                                    .with_partition_index(*p)
                                                    .with_error_code(cluster_denied())
                                            })
                                            .collect(),
                                    )
                            })
                            .collect(),
                    )
            })
            .collect();
        Guard::Answer(WriteTxnMarkersResponse::default().with_markers(markers))
    }
}
