//! One request on the wire and what came back: a decoded response as a [`Node`] tree, or the connection closed.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafka_protocol::records::RecordBatchDecoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::tree::Node;

/// What a broker did with one request.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A response, decoded with kafka-protocol at the request's version.
    Answer(Node),
    /// The broker closed the connection instead of answering (Kafka's answer to an unsupported version or an
    /// undecodable request).
    Closed,
    /// A response that did not decode (the text says why).
    Undecodable(String),
    /// No answer within the deadline.
    Silent,
}

/// A connection that reconnects after the broker closed it.
pub struct Conn {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    correlation: i32,
}

const DEADLINE: Duration = Duration::from_secs(5);

impl Conn {
    pub fn new(addr: SocketAddr) -> Self {
        Conn {
            addr,
            stream: None,
            correlation: 0,
        }
    }

    /// Sends `body` as `api` v`version` with a standard header and reads the answer.
    pub async fn exchange(&mut self, api: ApiKey, version: i16, body: &[u8]) -> Outcome {
        self.correlation += 1;
        let mut frame = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str("differential")))
            .encode(&mut frame, header_version(api, version))
            .expect("request header encodes");
        frame.put_slice(body);
        let no_answer = api == ApiKey::Produce && acks_zero(version, body);
        match self.round_trip(&frame, no_answer).await {
            Err(o) => o,
            Ok(None) => Outcome::Answer(Node::Leaf("<no response: acks=0>".into())),
            Ok(Some(mut resp)) => {
                let hv = if api == ApiKey::ApiVersions {
                    0
                } else {
                    api.response_header_version(version)
                };
                match ResponseHeader::decode(&mut resp, hv) {
                    Ok(h) if h.correlation_id == self.correlation => decode(api, version, resp),
                    Ok(h) => Outcome::Undecodable(format!("correlation id {}", h.correlation_id)),
                    Err(e) => Outcome::Undecodable(format!("response header: {e}")),
                }
            }
        }
    }

    /// Sends an encoded request and decodes the answer as `Resp`; `None` if there was none.
    pub async fn request_typed<Resp: Decodable>(
        &mut self,
        api: ApiKey,
        version: i16,
        body: &[u8],
    ) -> Option<Resp> {
        self.correlation += 1;
        let mut frame = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str("differential-setup")))
            .encode(&mut frame, api.request_header_version(version))
            .ok()?;
        frame.put_slice(body);
        let mut resp = self.round_trip(&frame, false).await.ok()??;
        ResponseHeader::decode(&mut resp, api.response_header_version(version)).ok()?;
        Resp::decode(&mut resp, version).ok()
    }

    /// Sends a whole frame (header included) as it is.
    pub async fn exchange_raw(&mut self, frame: &[u8]) -> Outcome {
        match self.round_trip(frame, false).await {
            Err(o) => o,
            Ok(None) => Outcome::Silent,
            Ok(Some(b)) => Outcome::Answer(Node::Leaf(format!("{} bytes", b.len()))),
        }
    }

    async fn round_trip(
        &mut self,
        frame: &[u8],
        no_answer: bool,
    ) -> Result<Option<Bytes>, Outcome> {
        if self.stream.is_none() {
            let s = TcpStream::connect(self.addr).await.expect("connect");
            s.set_nodelay(true).ok();
            self.stream = Some(s);
        }
        let s = self.stream.as_mut().unwrap();
        let mut out = BytesMut::with_capacity(frame.len() + 4);
        out.put_i32(frame.len() as i32);
        out.put_slice(frame);
        if s.write_all(&out).await.is_err() {
            self.stream = None;
            return Err(Outcome::Closed);
        }
        if no_answer {
            return Ok(None);
        }
        let read = async {
            let mut len = [0u8; 4];
            s.read_exact(&mut len).await?;
            let mut buf = vec![0u8; i32::from_be_bytes(len).max(0) as usize];
            s.read_exact(&mut buf).await?;
            Ok::<_, std::io::Error>(Bytes::from(buf))
        };
        match tokio::time::timeout(DEADLINE, read).await {
            Ok(Ok(b)) => Ok(Some(b)),
            Ok(Err(_)) => {
                self.stream = None;
                Err(Outcome::Closed)
            }
            Err(_) => {
                self.stream = None;
                Err(Outcome::Silent)
            }
        }
    }
}

/// The request header version: kafka-protocol's, or v1 for versions below its floor (the legacy versions).
fn header_version(api: ApiKey, version: i16) -> i16 {
    if version < api.valid_versions().min {
        1
    } else {
        api.request_header_version(version)
    }
}

/// Whether a Produce body asks for acks=0 (no response comes back).
fn acks_zero(version: i16, body: &[u8]) -> bool {
    let mut b = body;
    if version >= 3 {
        // transactional_id: nullable (compact) string first
        if version >= 9 {
            let (len, n) = uvarint(b);
            b = &b[n.min(b.len())..];
            let skip = (len as usize).saturating_sub(1);
            b = &b[skip.min(b.len())..];
        } else if b.len() >= 2 {
            let len = i16::from_be_bytes([b[0], b[1]]);
            b = &b[2 + len.max(0) as usize..];
        }
    }
    b.len() >= 2 && i16::from_be_bytes([b[0], b[1]]) == 0
}

fn uvarint(b: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    (v, b.len())
}

macro_rules! responses {
    ($api:expr, $version:expr, $buf:expr, $($key:ident => $ty:ty),* $(,)?) => {
        match $api {
            ApiKey::Fetch => fetch($buf, $version),
            $(ApiKey::$key => match <$ty>::decode(&mut $buf, $version) {
                Ok(r) => Outcome::Answer(Node::parse(&format!("{r:#?}"))),
                Err(e) => Outcome::Undecodable(format!("{e}")),
            },)*
            other => Outcome::Undecodable(format!("no decoder for {other:?}")),
        }
    };
}

fn decode(api: ApiKey, version: i16, mut buf: Bytes) -> Outcome {
    if version < api.valid_versions().min {
        // A legacy version kafka-protocol has no codec for: compare the raw body.
        return Outcome::Answer(Node::Leaf(format!("{buf:?}")));
    }
    responses!(api, version, buf,
        Produce => ProduceResponse,
        ListOffsets => ListOffsetsResponse,
        Metadata => MetadataResponse,
        OffsetCommit => OffsetCommitResponse,
        OffsetFetch => OffsetFetchResponse,
        FindCoordinator => FindCoordinatorResponse,
        JoinGroup => JoinGroupResponse,
        Heartbeat => HeartbeatResponse,
        LeaveGroup => LeaveGroupResponse,
        SyncGroup => SyncGroupResponse,
        DescribeGroups => DescribeGroupsResponse,
        ListGroups => ListGroupsResponse,
        ApiVersions => ApiVersionsResponse,
        CreateTopics => CreateTopicsResponse,
        DeleteTopics => DeleteTopicsResponse,
        DeleteRecords => DeleteRecordsResponse,
        InitProducerId => InitProducerIdResponse,
        OffsetForLeaderEpoch => OffsetForLeaderEpochResponse,
        DescribeConfigs => DescribeConfigsResponse,
        AlterConfigs => AlterConfigsResponse,
        CreatePartitions => CreatePartitionsResponse,
        DeleteGroups => DeleteGroupsResponse,
        IncrementalAlterConfigs => IncrementalAlterConfigsResponse,
        DescribeCluster => DescribeClusterResponse,
        DescribeTopicPartitions => DescribeTopicPartitionsResponse,
        DescribeLogDirs => DescribeLogDirsResponse,
        OffsetDelete => OffsetDeleteResponse,
        ConsumerGroupHeartbeat => ConsumerGroupHeartbeatResponse,
        ConsumerGroupDescribe => ConsumerGroupDescribeResponse,
        AddPartitionsToTxn => AddPartitionsToTxnResponse,
        AddOffsetsToTxn => AddOffsetsToTxnResponse,
        EndTxn => EndTxnResponse,
        TxnOffsetCommit => TxnOffsetCommitResponse,
        DescribeTransactions => DescribeTransactionsResponse,
        ListTransactions => ListTransactionsResponse,
        DescribeProducers => DescribeProducersResponse,
        SaslHandshake => SaslHandshakeResponse,
        SaslAuthenticate => SaslAuthenticateResponse,
        DescribeUserScramCredentials => DescribeUserScramCredentialsResponse,
        AlterUserScramCredentials => AlterUserScramCredentialsResponse,
        DescribeAcls => DescribeAclsResponse,
        CreateAcls => CreateAclsResponse,
        DeleteAcls => DeleteAclsResponse,
        ElectLeaders => ElectLeadersResponse,
    )
}

/// A Fetch response with each partition's records decoded (batches hold broker-assigned offsets and epochs that
/// are compared as records, not bytes).
fn fetch(mut buf: Bytes, version: i16) -> Outcome {
    let mut r = match FetchResponse::decode(&mut buf, version) {
        Ok(r) => r,
        Err(e) => return Outcome::Undecodable(format!("{e}")),
    };
    let mut decoded = Vec::new();
    for t in &mut r.responses {
        for p in &mut t.partitions {
            if let Some(mut bytes) = p.records.take() {
                let mut sets = Vec::new();
                while bytes.has_remaining() {
                    match RecordBatchDecoder::decode(&mut bytes) {
                        Ok(set) => sets.push(set),
                        Err(e) => {
                            sets.clear();
                            decoded.push(format!("undecodable records: {e}"));
                            break;
                        }
                    }
                }
                decoded.push(format!("{sets:#?}"));
            }
        }
    }
    let mut node = Node::parse(&format!("{r:#?}"));
    if let Node::Rec(fields) = &mut node {
        let sets = decoded.iter().map(|s| Node::parse(s)).collect();
        fields.push(("records(decoded)".into(), Node::Seq(sets)));
    }
    Outcome::Answer(node)
}
