//! The wire codec around `kafka-protocol`: a frame's request header, a request body, a framed response, and the
//! one table of supported versions ([`versions`]) that ApiVersions, dispatch and the SASL exchange read.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable};

// `unsafe impl BufMut` (forwarding to `BytesMut`); the crate's other unsafe code is network::low_water's setsockopt
// and crate::heap's malloc_trim.
#[allow(unsafe_code)]
pub mod parts;
pub mod versions;

pub(crate) use parts::{Encoded, Part};

/// The codec's error text on one line (some end in a newline, which would split a log line).
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why a connection is closed instead of answered.
pub(crate) type Close = String;

/// Decodes a request body of `api` at `version`.
pub(crate) fn decode<T: Decodable>(
    body: &mut Bytes,
    version: i16,
    api: ApiKey,
) -> Result<T, Close> {
    T::decode(body, version).map_err(|e| {
        format!(
            "cannot decode {api:?} v{version} request: {}",
            one_line(&e.to_string())
        )
    })
}

/// Frames `resp` with its response header and the 4-byte length prefix.
pub(crate) fn encode<T: Encodable>(
    header: &RequestHeader,
    api: ApiKey,
    version: i16,
    resp: &T,
) -> Result<Bytes, Close> {
    let mut out = BytesMut::with_capacity(64);
    out.put_i32(0);
    ResponseHeader::default()
        .with_correlation_id(header.correlation_id)
        .encode(&mut out, api.response_header_version(version))
        .map_err(|e| format!("cannot encode {api:?} v{version} response header: {e}"))?;
    resp.encode(&mut out, version)
        .map_err(|e| format!("cannot encode {api:?} v{version} response: {e}"))?;
    let len = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&len.to_be_bytes());
    Ok(out.freeze())
}

/// Frames `resp` as [`encode`] does, in parts: each of `refs` (a Fetch response's record sets) the response holds
/// is a part of its own instead of being copied, a placeholder's part its file region (see [`parts`]).
pub(crate) fn encode_referencing<T: Encodable>(
    header: &RequestHeader,
    api: ApiKey,
    version: i16,
    resp: &T,
    refs: Vec<parts::Ref>,
) -> Result<Encoded, Close> {
    let failed = |e: anyhow::Error| format!("cannot encode {api:?} v{version} response: {e}");
    let refs = parts::sort_refs(refs);
    let head = ResponseHeader::default().with_correlation_id(header.correlation_id);
    let head_version = api.response_header_version(version);
    let size = head.compute_size(head_version).map_err(failed)?
        + resp.compute_size(version).map_err(failed)?;
    let referenced: usize = refs.iter().map(|(b, _)| b.len()).sum();
    let mut out = parts::PartsBuf::new(&refs, (4 + size).saturating_sub(referenced));
    out.put_i32(i32::try_from(size).map_err(|_| format!("{api:?} response of {size} bytes"))?);
    head.encode(&mut out, head_version).map_err(failed)?;
    resp.encode(&mut out, version).map_err(failed)?;
    if out.len() != 4 + size {
        return Err(format!(
            "cannot encode {api:?} v{version} response: {} bytes written, {size} computed",
            out.len() - 4
        ));
    }
    out.finish()
        .map_err(|e| format!("cannot encode {api:?} v{version} response: {e}"))
}

/// Decodes a frame's request header: (api, version, header), the body left in `body`.
pub(crate) fn decode_header(body: &mut Bytes) -> Result<(ApiKey, i16, RequestHeader), Close> {
    if body.len() < 8 {
        return Err(format!(
            "request of {} bytes is shorter than a request header",
            body.len()
        ));
    }
    let raw_key = i16::from_be_bytes([body[0], body[1]]);
    let version = i16::from_be_bytes([body[2], body[3]]);
    let api = ApiKey::try_from(raw_key).map_err(|_| format!("unknown api key {raw_key}"))?;
    let header = RequestHeader::decode(body, api.request_header_version(version)).map_err(|e| {
        format!(
            "cannot decode {api:?} v{version} request header: {}",
            one_line(&e.to_string())
        )
    })?;
    Ok((api, version, header))
}
