//! DescribeAcls (key 29), CreateAcls (30), DeleteAcls (31): with an authorizer ([`crate::authz`]) they read and
//! change its durable bindings as Kafka's `AclApis` does — DescribeAcls groups the matching bindings by resource
//! pattern, CreateAcls validates each creation on its own (INVALID_REQUEST naming what is wrong) and stores the
//! valid ones in one durable write, DeleteAcls answers per filter the bindings it removed. Who may call them
//! (DESCRIBE / ALTER on the cluster) is `crate::guard`'s. Without an authorizer (`authorizer.class.name` unset),
//! Kafka answers every ACL request SECURITY_DISABLED: DescribeAcls at the top level, CreateAcls once per creation,
//! DeleteAcls once per filter. The v0 layouts (Kafka 3.9's oldest, without the pattern type) are answered in
//! [`legacy_v0`] by counting the creations / filters — without an authorizer only.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{
    ApiKey, CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse, RequestHeader,
};
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::{blocking, sb};
use crate::authz::acl::{codes, AclBinding, AclFilter};
use crate::broker::Broker;
use crate::error::{Error, Result};
use crate::error_code;

/// The code and message of an error.
fn failure(e: &Error) -> (i16, Option<StrBytes>) {
    (error_code::code(e), Some(sb(error_code::message(e))))
}

/// The code and message every ACL answer carries without an authorizer.
fn disabled() -> (i16, Option<StrBytes>) {
    failure(&Error::SecurityDisabled)
}

/// A filter from its wire fields; an unknown code is INVALID_REQUEST.
#[allow(clippy::too_many_arguments)]
fn filter(
    rt: i8,
    name: Option<&StrBytes>,
    pt: i8,
    principal: Option<&StrBytes>,
    host: Option<&StrBytes>,
    op: i8,
    perm: i8,
) -> Result<AclFilter> {
    let (resource_type, pattern_type, operation, permission) = codes(rt, pt, op, perm)?;
    Ok(AclFilter {
        resource_type,
        resource_name: name.map(|s| s.to_string()),
        pattern_type,
        principal: principal.map(|s| s.to_string()),
        host: host.map(|s| s.to_string()),
        operation,
        permission,
    })
}

/// Answers DescribeAcls: the bindings the filter matches, by resource pattern.
pub async fn describe(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeAclsRequest,
) -> DescribeAclsResponse {
    let Some(authz) = broker.authorizer() else {
        let (code, message) = disabled();
        return DescribeAclsResponse::default()
            .with_error_code(code)
            .with_error_message(message);
    };
    let f = filter(
        req.resource_type_filter,
        req.resource_name_filter.as_ref(),
        req.pattern_type_filter,
        req.principal_filter.as_ref(),
        req.host_filter.as_ref(),
        req.operation,
        req.permission_type,
    );
    let f = match f {
        Ok(f) => f,
        Err(e) => {
            let (code, message) = failure(&e);
            return DescribeAclsResponse::default()
                .with_error_code(code)
                .with_error_message(message);
        }
    };
    let mut by_pattern: BTreeMap<(i8, String, i8), Vec<AclDescription>> = BTreeMap::new();
    for b in authz.store().describe(&f) {
        by_pattern
            .entry((
                b.resource_type.code(),
                b.resource_name.clone(),
                b.pattern_type.code(),
            ))
            .or_default()
            .push(
                AclDescription::default()
                    .with_principal(sb(b.principal))
                    .with_host(sb(b.host))
                    .with_operation(b.operation.code())
                    .with_permission_type(b.permission.code()),
            );
    }
    DescribeAclsResponse::default().with_resources(
        by_pattern
            .into_iter()
            .map(|((rt, name, pt), acls)| {
                DescribeAclsResource::default()
                    .with_resource_type(rt)
                    .with_resource_name(sb(name))
                    .with_pattern_type(pt)
                    .with_acls(acls)
            })
            .collect(),
    )
}

/// Answers CreateAcls: each creation validated on its own, the valid ones stored in one durable write.
pub async fn create(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: CreateAclsRequest,
) -> CreateAclsResponse {
    let Some(authz) = broker.authorizer().cloned() else {
        return create_answer(req.creations.len());
    };
    let checked: Vec<Result<AclBinding>> = req
        .creations
        .iter()
        .map(|c| {
            let (resource_type, pattern_type, operation, permission) = codes(
                c.resource_type,
                c.resource_pattern_type,
                c.operation,
                c.permission_type,
            )?;
            let b = AclBinding {
                resource_type,
                resource_name: c.resource_name.to_string(),
                pattern_type,
                principal: c.principal.to_string(),
                host: c.host.to_string(),
                operation,
                permission,
            };
            b.validate().map(|_| b)
        })
        .collect();
    let valid: Vec<AclBinding> = checked
        .iter()
        .filter_map(|r| r.as_ref().ok().cloned())
        .collect();
    let stored = if valid.is_empty() {
        Ok(())
    } else {
        blocking(move || authz.store().add(&valid)).await
    };
    let results = checked
        .iter()
        .map(|r| {
            let outcome = match (r, &stored) {
                (Err(e), _) | (Ok(_), Err(e)) => Some(failure(e)),
                (Ok(_), Ok(())) => None,
            };
            match outcome {
                None => AclCreationResult::default(),
                Some((code, message)) => AclCreationResult::default()
                    .with_error_code(code)
                    .with_error_message(message),
            }
        })
        .collect();
    CreateAclsResponse::default().with_results(results)
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

/// Answers DeleteAcls: per filter, the bindings it removed (all filters applied in one durable write).
pub async fn delete(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DeleteAclsRequest,
) -> DeleteAclsResponse {
    let Some(authz) = broker.authorizer().cloned() else {
        return delete_answer(req.filters.len());
    };
    let parsed: Vec<Result<AclFilter>> = req
        .filters
        .iter()
        .map(|f| {
            filter(
                f.resource_type_filter,
                f.resource_name_filter.as_ref(),
                f.pattern_type_filter,
                f.principal_filter.as_ref(),
                f.host_filter.as_ref(),
                f.operation,
                f.permission_type,
            )
        })
        .collect();
    let valid: Vec<AclFilter> = parsed
        .iter()
        .filter_map(|r| r.as_ref().ok().cloned())
        .collect();
    let removed = blocking(move || authz.store().remove(&valid)).await;
    let mut removed_each = match &removed {
        Ok(r) => r.clone().into_iter(),
        Err(_) => Vec::new().into_iter(),
    };
    let results = parsed
        .iter()
        .map(|r| match (r, &removed) {
            (Err(e), _) | (Ok(_), Err(e)) => {
                let (code, message) = failure(e);
                DeleteAclsFilterResult::default()
                    .with_error_code(code)
                    .with_error_message(message)
            }
            (Ok(_), Ok(_)) => DeleteAclsFilterResult::default().with_matching_acls(
                removed_each
                    .next()
                    .unwrap_or_default()
                    .into_iter()
                    .map(matching)
                    .collect(),
            ),
        })
        .collect();
    DeleteAclsResponse::default().with_filter_results(results)
}

fn matching(b: AclBinding) -> DeleteAclsMatchingAcl {
    DeleteAclsMatchingAcl::default()
        .with_resource_type(b.resource_type.code())
        .with_resource_name(sb(b.resource_name))
        .with_pattern_type(b.pattern_type.code())
        .with_principal(sb(b.principal))
        .with_host(sb(b.host))
        .with_operation(b.operation.code())
        .with_permission_type(b.permission.code())
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

/// The body of a v0 answer of `api` (DescribeAcls, CreateAcls or DeleteAcls) to the v0 request `body`, without an
/// authorizer. The v0 responses are v1's layout (v1 added the pattern type only to ACL entries, of which there are
/// none here); the requests start with the creations / filters array, whose length is all that is read. Errors
/// name what is wrong with the frame (the connection is then closed, as for any undecodable request); with an
/// authorizer, v0 (Kafka clients before 2.0) is refused the same way.
pub(crate) fn legacy_v0(
    broker: &Broker,
    api: ApiKey,
    mut body: Bytes,
) -> std::result::Result<bytes::BytesMut, String> {
    if broker.authorizer().is_some() {
        return Err(format!(
            "{api:?} v0 is not served with an authorizer: its clients (Kafka before 2.0) cannot name a pattern type; use v1+"
        ));
    }
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
