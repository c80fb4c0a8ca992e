//! DescribeAcls (key 29), CreateAcls (30), DeleteAcls (31): strata has no authorizer, and a Kafka broker without
//! one (`authorizer.class.name` unset) answers every ACL request SECURITY_DISABLED with the message "No Authorizer
//! is configured." (`AclApis`): DescribeAcls at the top level, CreateAcls once per creation, DeleteAcls once per
//! filter. Nothing in the request changes the answer, so the v0 layouts (Kafka 3.9's oldest, without the pattern
//! type) are answered in [`legacy_v0`] by counting the creations / filters.

use std::sync::Arc;

use bytes::{Buf, Bytes};
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_response::DeleteAclsFilterResult;
use kafka_protocol::messages::{
    ApiKey, CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse, RequestHeader,
};
use kafka_protocol::protocol::Encodable;

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// The code and message every ACL answer carries.
fn disabled() -> (i16, Option<kafka_protocol::protocol::StrBytes>) {
    let e = Error::SecurityDisabled;
    (error_code::code(&e), Some(sb(error_code::message(&e))))
}

/// Answers DescribeAcls: SECURITY_DISABLED, no resources.
pub async fn describe(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    _req: DescribeAclsRequest,
) -> DescribeAclsResponse {
    let (code, message) = disabled();
    DescribeAclsResponse::default()
        .with_error_code(code)
        .with_error_message(message)
}

/// Answers CreateAcls: SECURITY_DISABLED for each creation.
pub async fn create(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: CreateAclsRequest,
) -> CreateAclsResponse {
    create_answer(req.creations.len())
}

fn create_answer(creations: usize) -> CreateAclsResponse {
    let (code, message) = disabled();
    CreateAclsResponse::default().with_results(
        (0..creations)
            .map(|_| {
                AclCreationResult::default()
                    .with_error_code(code)
                    .with_error_message(message.clone())
            })
            .collect(),
    )
}

/// Answers DeleteAcls: SECURITY_DISABLED for each filter, nothing matched.
pub async fn delete(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DeleteAclsRequest,
) -> DeleteAclsResponse {
    delete_answer(req.filters.len())
}

fn delete_answer(filters: usize) -> DeleteAclsResponse {
    let (code, message) = disabled();
    DeleteAclsResponse::default().with_filter_results(
        (0..filters)
            .map(|_| {
                DeleteAclsFilterResult::default()
                    .with_error_code(code)
                    .with_error_message(message.clone())
            })
            .collect(),
    )
}

/// The body of a v0 answer of `api` (DescribeAcls, CreateAcls or DeleteAcls) to the v0 request `body`. The v0
/// responses are v1's layout (v1 added the pattern type only to ACL entries, of which there are none here); the
/// requests start with the creations / filters array, whose length is all that is read. Errors name what is
/// wrong with the frame (the connection is then closed, as for any undecodable request).
pub(crate) fn legacy_v0(api: ApiKey, mut body: Bytes) -> Result<bytes::BytesMut, String> {
    let mut count = || {
        if body.remaining() < 4 {
            return Err(format!(
                "cannot decode {api:?} v0 request: its array is cut short"
            ));
        }
        let n = body.get_i32();
        // Each element takes more than one byte: a count above the bytes left is a lie.
        if n < 0 || n as usize > body.remaining() {
            return Err(format!(
                "cannot decode {api:?} v0 request: array length {n}"
            ));
        }
        Ok(n as usize)
    };
    let mut out = bytes::BytesMut::new();
    let encoded = match api {
        ApiKey::DescribeAcls => {
            let (code, message) = disabled();
            DescribeAclsResponse::default()
                .with_error_code(code)
                .with_error_message(message)
                .encode(&mut out, 1)
        }
        ApiKey::CreateAcls => create_answer(count()?).encode(&mut out, 1),
        ApiKey::DeleteAcls => delete_answer(count()?).encode(&mut out, 1),
        other => return Err(format!("{other:?} v0 is not an ACL request")),
    };
    encoded.map_err(|e| format!("cannot encode {api:?} response (as v1): {e}"))?;
    Ok(out)
}
