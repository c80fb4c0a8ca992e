//! Request dispatch: header, version check against [`crate::codec::versions`], the one `match` over API keys, and
//! response framing. An `Err` closes the connection (Kafka closes on undecodable or unsupported requests).

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;
use tracing::Instrument;

mod inject;

use crate::broker::Broker;
use crate::codec::{decode, decode_header, encode, encode_referencing, versions, Close, Encoded};
use crate::handler;
use inject::{Adjust, Injected};

/// Handles one request frame; `Ok(None)` when Kafka sends no response (Produce with acks=0), `Err` (close the
/// connection) for a bad frame or an acks=0 produce that failed.
pub(crate) async fn handle(
    broker: &Arc<Broker>,
    mut body: Bytes,
) -> Result<Option<Encoded>, Close> {
    let (api, version, header) = decode_header(&mut body)?;

    if !versions::is_supported(api, version) {
        if api == ApiKey::ApiVersions {
            // KIP-511: answer in v0 with UNSUPPORTED_VERSION and our table so the client retries lower.
            let unsupported = crate::error::Error::UnsupportedVersion {
                api: format!("{api:?}"),
                version,
            };
            let resp = handler::api_versions::response(Some(&unsupported));
            return encode(&header, api, 0, &resp).map(|b| Some(b.into()));
        }
        return Err(format!("unsupported {api:?} version {version}"));
    }

    let span = tracing::debug_span!("request", api = ?api, version, correlation_id = header.correlation_id);
    let timer = broker.metrics().request_started(api);
    // Faults on demand (`crate::faults`): the one injection point of the request path, one relaxed load when
    // no fault is set.
    let mut fault = if broker.faults().armed() {
        inject::before(broker, api, version, &header, &body).await
    } else {
        None
    };
    let result = match fault.as_mut().and_then(|f| f.response.take()) {
        Some(injected) => injected.map(|r| r.map(Encoded::from)),
        // Kafka 3.9's oldest versions, below the codec's floor.
        None if versions::below_codec(api, version) => {
            handler::legacy::handle(broker, api, version, header, body)
                .instrument(span)
                .await
                .map(|r| r.map(Encoded::from))
        }
        None => {
            dispatch(broker, api, version, header, body, fault.as_ref())
                .instrument(span)
                .await
        }
    };
    let result = match fault {
        Some(f) if f.close => result.and_then(|_| Err(inject::close_reason(api))),
        _ => result,
    };
    broker.metrics().request_done(timer, result.is_err());
    result
}

/// Applies what a fault changes in a served response (throttle time, an error on read-only APIs).
fn adjust<R: Adjust>(broker: &Broker, resp: &mut R, fault: Option<&Injected>) {
    let Some(f) = fault else { return };
    if let Some(ms) = f.throttle_ms {
        resp.set_throttle_ms(ms);
    }
    if let Some((code, topic, partition)) = &f.error_after {
        resp.set_error(broker, *code, topic.as_deref(), *partition);
    }
}

/// The one `match` over API keys. Each arm names its handler; the request type it decodes is the one the
/// handler takes.
async fn dispatch(
    broker: &Arc<Broker>,
    api: ApiKey,
    version: i16,
    header: RequestHeader,
    mut body: Bytes,
    fault: Option<&Injected>,
) -> Result<Option<Encoded>, Close> {
    use handler::*;
    // `call!(handler)` answers with the response encoded in one buffer; `call!(handler, encoder)` with what
    // `encoder(&response)` makes of it (Fetch: its record sets referenced, see `crate::codec::parts`).
    macro_rules! call {
        ($handler:path) => {
            call!($handler, |resp| encode(&header, api, version, resp)
                .map(Encoded::from))
        };
        ($handler:expr, $encoder:expr) => {{
            let req = decode(&mut body, version, api)?;
            let mut resp =
                crate::guard::guarded(broker, version, req, |req| ($handler)(broker, &header, req))
                    .await;
            adjust(broker, &mut resp, fault);
            ($encoder)(&resp).map(Some)
        }};
    }

    match api {
        ApiKey::ApiVersions => call!(api_versions::handle),
        ApiKey::Metadata => call!(metadata::handle),
        ApiKey::Produce => {
            let (header, req) = decode_produce(header, body, version)?;
            produce(broker, &header, version, req, fault)
                .await
                .map(|r| r.map(Encoded::from))
        }
        ApiKey::Fetch => {
            let regions = fetch::Regions::default();
            call!(
                |b, h, req| fetch::handle_into(b, h, req, Some(&regions)),
                |resp| {
                    let refs = fetch::record_sets(resp, &regions);
                    encode_referencing(&header, api, version, resp, refs)
                }
            )
        }
        ApiKey::ListOffsets => call!(list_offsets::handle),
        ApiKey::InitProducerId => call!(init_producer_id::handle),
        ApiKey::FindCoordinator => call!(find_coordinator::handle),
        // Groups.
        ApiKey::JoinGroup => call!(join_group::handle),
        ApiKey::SyncGroup => call!(sync_group::handle),
        ApiKey::Heartbeat => call!(heartbeat::handle),
        ApiKey::LeaveGroup => call!(leave_group::handle),
        ApiKey::OffsetCommit => call!(offset_commit::handle),
        ApiKey::OffsetFetch => call!(offset_fetch::handle),
        ApiKey::OffsetDelete => call!(offset_delete::handle),
        ApiKey::DescribeGroups => call!(describe_groups::handle),
        ApiKey::ListGroups => call!(list_groups::handle),
        ApiKey::DeleteGroups => call!(delete_groups::handle),
        ApiKey::ConsumerGroupHeartbeat => call!(consumer_group_heartbeat::handle),
        ApiKey::ConsumerGroupDescribe => call!(consumer_group_describe::handle),
        // Topics, configs and the cluster.
        ApiKey::CreateTopics => call!(create_topics::handle),
        ApiKey::DeleteTopics => call!(delete_topics::handle),
        ApiKey::CreatePartitions => call!(create_partitions::handle),
        ApiKey::DescribeConfigs => call!(describe_configs::handle),
        ApiKey::AlterConfigs => call!(alter_configs::handle),
        ApiKey::IncrementalAlterConfigs => call!(incremental_alter_configs::handle),
        ApiKey::DeleteRecords => call!(delete_records::handle),
        ApiKey::OffsetForLeaderEpoch => call!(offset_for_leader_epoch::handle),
        ApiKey::DescribeCluster => call!(describe_cluster::handle),
        ApiKey::DescribeTopicPartitions => call!(describe_topic_partitions::handle),
        ApiKey::DescribeClientQuotas => call!(describe_client_quotas::handle),
        ApiKey::DescribeLogDirs => call!(describe_log_dirs::handle),
        ApiKey::ElectLeaders => call!(elect_leaders::handle),
        ApiKey::UpdateFeatures => call!(update_features::handle),
        ApiKey::AlterPartitionReassignments => call!(partition_reassignments::alter),
        ApiKey::ListPartitionReassignments => call!(partition_reassignments::list),
        // Security.
        ApiKey::SaslHandshake => call!(sasl::handshake),
        ApiKey::SaslAuthenticate => call!(sasl::authenticate),
        ApiKey::DescribeUserScramCredentials => call!(user_scram_credentials::describe),
        ApiKey::AlterUserScramCredentials => call!(user_scram_credentials::alter),
        ApiKey::DescribeAcls => call!(acls::describe),
        ApiKey::CreateAcls => call!(acls::create),
        ApiKey::DeleteAcls => call!(acls::delete),
        // Transactions.
        ApiKey::AddPartitionsToTxn => call!(add_partitions_to_txn::handle),
        ApiKey::AddOffsetsToTxn => call!(add_offsets_to_txn::handle),
        ApiKey::EndTxn => call!(end_txn::handle),
        ApiKey::TxnOffsetCommit => call!(txn_offset_commit::handle),
        ApiKey::DescribeTransactions => call!(describe_transactions::describe),
        ApiKey::ListTransactions => call!(describe_transactions::list),
        ApiKey::WriteTxnMarkers => call!(write_txn_markers::handle),
        ApiKey::DescribeProducers => call!(describe_producers::handle),
        other => Err(format!(
            "{other:?} is listed as supported but has no handler"
        )),
    }
}

/// Decodes a Produce request so that nothing but a partition's records views their bytes of the frame (see
/// [`handler::produce::detach`]).
fn decode_produce(
    header: RequestHeader,
    mut body: Bytes,
    version: i16,
) -> Result<(RequestHeader, ProduceRequest), Close> {
    let req = decode(&mut body, version, ApiKey::Produce)?;
    drop(body);
    Ok(handler::produce::detach(header, req))
}

/// Produce: answered like every API, except that with acks=0 nothing is sent back and, like Kafka, a partition
/// error closes the connection so the client notices (it logs the disconnect and refreshes metadata) instead of
/// losing records silently.
async fn produce(
    broker: &Arc<Broker>,
    header: &RequestHeader,
    version: i16,
    req: ProduceRequest,
    fault: Option<&Injected>,
) -> Result<Option<Bytes>, Close> {
    let acks = req.acks;
    let mut resp = crate::guard::guarded(broker, version, req, |req| {
        handler::produce::handle(broker, header, req)
    })
    .await;
    adjust(broker, &mut resp, fault);
    if acks != 0 {
        return encode(header, ApiKey::Produce, version, &resp).map(Some);
    }
    let failed = resp.responses.iter().find_map(|t| {
        t.partition_responses
            .iter()
            .find(|p| p.error_code != 0)
            .map(|p| (t, p))
    });
    match failed {
        Some((t, p)) => Err(format!(
            "acks=0 produce failed: {}-{}: error {} {}",
            t.name.0.as_str(),
            p.index,
            p.error_code,
            p.error_message.as_deref().unwrap_or_default()
        )),
        None => Ok(None),
    }
}

/// Decodes header and body of a frame as [`handle`] would, without running a handler (fuzzing).
pub(crate) fn decode_only(mut body: Bytes) -> bool {
    if body.len() < 8 {
        return false;
    }
    let raw_key = i16::from_be_bytes([body[0], body[1]]);
    let version = i16::from_be_bytes([body[2], body[3]]);
    let Ok(api) = ApiKey::try_from(raw_key) else {
        return false;
    };
    if RequestHeader::decode(&mut body, api.request_header_version(version)).is_err() {
        return false;
    }
    if !versions::is_supported(api, version) {
        return false;
    }
    macro_rules! dec {
        ($t:ty) => {
            <$t>::decode(&mut body, version).is_ok()
        };
    }
    match api {
        ApiKey::ApiVersions => dec!(ApiVersionsRequest),
        ApiKey::Metadata => dec!(MetadataRequest),
        ApiKey::Produce => dec!(ProduceRequest),
        ApiKey::Fetch => dec!(FetchRequest),
        ApiKey::ListOffsets => dec!(ListOffsetsRequest),
        ApiKey::InitProducerId => dec!(InitProducerIdRequest),
        ApiKey::FindCoordinator => dec!(FindCoordinatorRequest),
        ApiKey::JoinGroup => dec!(JoinGroupRequest),
        ApiKey::SyncGroup => dec!(SyncGroupRequest),
        ApiKey::Heartbeat => dec!(HeartbeatRequest),
        ApiKey::LeaveGroup => dec!(LeaveGroupRequest),
        ApiKey::OffsetCommit => dec!(OffsetCommitRequest),
        ApiKey::OffsetFetch => dec!(OffsetFetchRequest),
        ApiKey::OffsetDelete => dec!(OffsetDeleteRequest),
        ApiKey::DescribeGroups => dec!(DescribeGroupsRequest),
        ApiKey::ListGroups => dec!(ListGroupsRequest),
        ApiKey::DeleteGroups => dec!(DeleteGroupsRequest),
        ApiKey::ConsumerGroupHeartbeat => dec!(ConsumerGroupHeartbeatRequest),
        ApiKey::ConsumerGroupDescribe => dec!(ConsumerGroupDescribeRequest),
        ApiKey::CreateTopics => dec!(CreateTopicsRequest),
        ApiKey::DeleteTopics => dec!(DeleteTopicsRequest),
        ApiKey::CreatePartitions => dec!(CreatePartitionsRequest),
        ApiKey::DescribeConfigs => dec!(DescribeConfigsRequest),
        ApiKey::AlterConfigs => dec!(AlterConfigsRequest),
        ApiKey::IncrementalAlterConfigs => dec!(IncrementalAlterConfigsRequest),
        ApiKey::DeleteRecords => dec!(DeleteRecordsRequest),
        ApiKey::OffsetForLeaderEpoch => dec!(OffsetForLeaderEpochRequest),
        ApiKey::DescribeCluster => dec!(DescribeClusterRequest),
        ApiKey::DescribeTopicPartitions => dec!(DescribeTopicPartitionsRequest),
        ApiKey::DescribeClientQuotas => dec!(DescribeClientQuotasRequest),
        ApiKey::SaslHandshake => dec!(SaslHandshakeRequest),
        ApiKey::SaslAuthenticate => dec!(SaslAuthenticateRequest),
        ApiKey::DescribeUserScramCredentials => dec!(DescribeUserScramCredentialsRequest),
        ApiKey::AlterUserScramCredentials => dec!(AlterUserScramCredentialsRequest),
        ApiKey::DescribeLogDirs => dec!(DescribeLogDirsRequest),
        ApiKey::AddPartitionsToTxn => dec!(AddPartitionsToTxnRequest),
        ApiKey::AddOffsetsToTxn => dec!(AddOffsetsToTxnRequest),
        ApiKey::EndTxn => dec!(EndTxnRequest),
        ApiKey::TxnOffsetCommit => dec!(TxnOffsetCommitRequest),
        ApiKey::DescribeTransactions => dec!(DescribeTransactionsRequest),
        ApiKey::ListTransactions => dec!(ListTransactionsRequest),
        ApiKey::DescribeProducers => dec!(DescribeProducersRequest),
        ApiKey::WriteTxnMarkers => dec!(WriteTxnMarkersRequest),
        ApiKey::DescribeAcls => dec!(DescribeAclsRequest),
        ApiKey::CreateAcls => dec!(CreateAclsRequest),
        ApiKey::DeleteAcls => dec!(DeleteAclsRequest),
        ApiKey::ElectLeaders => dec!(ElectLeadersRequest),
        ApiKey::UpdateFeatures => dec!(UpdateFeaturesRequest),
        ApiKey::AlterPartitionReassignments => dec!(AlterPartitionReassignmentsRequest),
        ApiKey::ListPartitionReassignments => dec!(ListPartitionReassignmentsRequest),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::one_line;
    use bytes::{BufMut, BytesMut};

    /// A one-partition produce request's records are the only view of their bytes once decoded, while the header
    /// and the request are still held (as they are during the append): the log edits them in place, no copy.
    #[test]
    fn a_decoded_produce_requests_records_are_not_shared() {
        use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
        use kafka_protocol::messages::{TopicName, TransactionalId};
        use kafka_protocol::protocol::{Encodable, StrBytes};
        let version = 9;
        let header = RequestHeader::default()
            .with_request_api_key(ApiKey::Produce as i16)
            .with_request_api_version(version)
            .with_correlation_id(7)
            .with_client_id(Some(StrBytes::from_static_str("client-1")));
        let req = ProduceRequest::default()
            .with_acks(1)
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("tx"))))
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(Bytes::from_static(&[5; 100])))])]);
        let mut frame = BytesMut::new();
        header
            .encode(&mut frame, ApiKey::Produce.request_header_version(version))
            .unwrap();
        req.encode(&mut frame, version).unwrap();
        let mut body = frame.freeze();
        let (_, v, header) = decode_header(&mut body).unwrap();
        let (header, mut req) = decode_produce(header, body, v).unwrap();
        let records = req.topic_data[0].partition_data[0].records.take().unwrap();
        assert_eq!(&records[..], &[5; 100]);
        assert!(
            records.is_unique(),
            "the frame is still viewed by another part of the request"
        );
        assert_eq!(header.client_id.as_deref(), Some("client-1"));
        assert_eq!(req.topic_data[0].name.0.as_str(), "t");
        assert_eq!(req.transactional_id.unwrap().0.as_str(), "tx");
    }

    #[test]
    fn decode_errors_are_one_line() {
        // An ApiVersions v3 request cut short after the header's client id length.
        let mut body = Bytes::from_static(&[0, 18, 0, 3, 0, 0, 0, 1]);
        let h = RequestHeader::decode(&mut body, ApiKey::ApiVersions.request_header_version(3));
        let direct = h.expect_err("truncated header").to_string();
        let ours = format!("reason: {}", one_line(&direct));
        assert!(!ours.contains('\n') && !ours.ends_with(' '), "{ours:?}");
        assert_eq!(one_line("a\n b  c\n"), "a b c");
    }

    /// A deterministic xorshift generator (no dependency for a smoke test; `fuzz/` does the real fuzzing).
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn random_bodies_behind_every_supported_header_never_panic() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for (api, lo, hi) in versions::SUPPORTED {
            for version in *lo..=*hi {
                for len in [0usize, 1, 3, 8, 17, 64, 300] {
                    for _ in 0..20 {
                        let mut frame = BytesMut::new();
                        frame.put_i16(*api as i16);
                        frame.put_i16(version);
                        frame.put_i32(1);
                        frame.put_i16(-1); // null client id
                        for _ in 0..len {
                            frame.put_u8(next(&mut rng) as u8);
                        }
                        let _ = decode_only(frame.freeze());
                    }
                }
            }
        }
    }

    #[test]
    fn short_and_unknown_frames_are_not_decoded() {
        assert!(!decode_only(Bytes::from_static(&[0, 18])));
        assert!(!decode_only(Bytes::from_static(&[
            0x7f, 0x7f, 0, 0, 0, 0, 0, 1, 0xff, 0xff
        ])));
        // ApiVersions v3 with an empty client id and empty tagged fields + body decodes.
        let ok = [0u8, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0, 1, 1, 0];
        assert!(decode_only(Bytes::copy_from_slice(&ok)));
    }
}
