//! What each API asks of the authorizer ([`crate::authz`]), following Kafka's `KafkaApis` / `AuthHelper`: one
//! [`Guarded`] impl per request type, so an API strata serves does not compile without its decision. A guard either
//! answers the request itself (a whole-request denial: CLUSTER_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED,
//! TRANSACTIONAL_ID_AUTHORIZATION_FAILED in the API's own response shape) or lets the handler run on the resources
//! the principal may touch, then completes the handler's response ([`Fixup`]): the denied topics / groups /
//! partitions with their error, hidden topics removed, authorized-operations fields filled. Denied resources never
//! reach the handler, so nothing of them is written.
//!
//! The handlers stay unaware of ACLs; [`guarded`] is the one call site (from `crate::dispatch` and the legacy
//! versions' handler). With no authorizer it runs the handler directly: one `Option` check per request.

mod cluster;
mod groups;
mod offset_fetch;
mod records;
mod topics;
mod txn;

use std::future::Future;
use std::sync::Arc;

use kafka_protocol::protocol::StrBytes;

use crate::authz::acl::{AclOperation, ResourceType};
use crate::authz::{Authorizer, Requester};
use crate::broker::{request, Broker};
use crate::error::Error;
use crate::error_code;

/// What completes a handler's response once it ran on the allowed part of the request.
pub(crate) type Fixup<R> = Box<dyn FnOnce(&mut R) + Send>;

/// A guard's decision.
pub(crate) enum Guard<Req, Resp> {
    /// Run the handler on this (possibly trimmed) request, then apply the fixup to its response.
    Run(Req, Option<Fixup<Resp>>),
    /// Answer this without running the handler.
    Answer(Resp),
}

impl<Req, Resp> Guard<Req, Resp> {
    /// Run `req` unchanged.
    fn run(req: Req) -> Self {
        Guard::Run(req, None)
    }

    /// Run `req`, then `fix` the response.
    fn then(req: Req, fix: impl FnOnce(&mut Resp) + Send + 'static) -> Self {
        Guard::Run(req, Some(Box::new(fix)))
    }
}

/// Who asks, and what the guards consult: the authorizer and the broker (topic names of ids, existence).
#[derive(Clone)]
pub(crate) struct Check {
    pub authz: Arc<Authorizer>,
    pub broker: Arc<Broker>,
    pub principal: Arc<str>,
    pub host: Arc<str>,
    pub version: i16,
}

impl Check {
    fn who(&self) -> Requester<'_> {
        Requester {
            principal: &self.principal,
            host: &self.host,
        }
    }

    /// Whether the principal may do `op` on `rt` `name`.
    pub fn allowed(&self, op: AclOperation, rt: ResourceType, name: &str) -> bool {
        self.authz.authorize(self.who(), op, rt, name)
    }

    /// `op` on a topic.
    pub fn topic(&self, op: AclOperation, name: &str) -> bool {
        self.allowed(op, ResourceType::Topic, name)
    }

    /// `op` on a group.
    pub fn group(&self, op: AclOperation, name: &str) -> bool {
        self.allowed(op, ResourceType::Group, name)
    }

    /// `op` on a transactional id.
    pub fn txn_id(&self, op: AclOperation, name: &str) -> bool {
        self.allowed(op, ResourceType::TransactionalId, name)
    }

    /// `op` on the cluster.
    pub fn cluster(&self, op: AclOperation) -> bool {
        self.authz.authorize_cluster(self.who(), op)
    }

    /// `op` on some resource of type `rt`.
    pub fn any_of(&self, op: AclOperation, rt: ResourceType) -> bool {
        self.authz.authorize_any(self.who(), op, rt)
    }

    /// The authorized-operations bit field of a resource.
    pub fn operations(&self, rt: ResourceType, name: &str) -> i32 {
        self.authz.authorized_operations(self.who(), rt, name)
    }

    /// The name of the topic with id `id`, if any.
    pub fn topic_name(&self, id: uuid::Uuid) -> Option<String> {
        self.broker.registry().name_of(id)
    }
}

/// A request type's authorization. See the [module docs](self).
pub(crate) trait Guarded: Sized {
    /// The response the handler returns.
    type Response;
    /// Decides what of the request runs and what the response gets.
    fn guard(self, cx: &Check) -> Guard<Self, Self::Response>;
}

/// Runs `handler` on `req` as the authorizer allows (directly when there is none). `version` is the request's.
pub(crate) async fn guarded<Req, F, Fut>(
    broker: &Arc<Broker>,
    version: i16,
    req: Req,
    handler: F,
) -> Req::Response
where
    Req: Guarded,
    F: FnOnce(Req) -> Fut,
    Fut: Future<Output = Req::Response>,
{
    let Some(authz) = broker.authorizer() else {
        return handler(req).await;
    };
    let (principal, host) = request::requester();
    let cx = Check {
        authz: authz.clone(),
        broker: broker.clone(),
        principal,
        host: Arc::from(host),
        version,
    };
    match req.guard(&cx) {
        Guard::Answer(resp) => resp,
        Guard::Run(req, fix) => {
            let mut resp = handler(req).await;
            if let Some(fix) = fix {
                fix(&mut resp);
            }
            resp
        }
    }
}

/// With an authorizer: whether the requesting principal may DESCRIBE a topic, for a handler that lists topics it
/// was not given by name (a request's limits count only what the principal may see); None without one.
pub(crate) fn topic_filter(broker: &Broker) -> Option<impl Fn(&str) -> bool> {
    let authz = broker.authorizer()?.clone();
    let (principal, host) = request::requester();
    Some(move |topic: &str| {
        let who = Requester {
            principal: &principal,
            host: &host,
        };
        authz.authorize(who, AclOperation::Describe, ResourceType::Topic, topic)
    })
}

/// With an authorizer: of `topics`, those `regex` matches that the requesting principal may DESCRIBE (Kafka's
/// `filterTopicDescribeAuthorizedTopics` on a KIP-848 regex subscription); None without one.
pub(crate) fn regex_topics<'a>(
    broker: &Broker,
    regex: &regex::Regex,
    topics: impl IntoIterator<Item = &'a String>,
) -> Option<std::collections::BTreeSet<String>> {
    let may = topic_filter(broker)?;
    Some(
        topics
            .into_iter()
            .filter(|t| regex.is_match(t) && may(t))
            .cloned()
            .collect(),
    )
}

/// Splits `items` into those `allowed` keeps and the others, each in order.
fn split<T>(items: Vec<T>, mut allowed: impl FnMut(&T) -> bool) -> (Vec<T>, Vec<T>) {
    items.into_iter().partition(|t| allowed(t))
}

/// The code and message of a denial.
fn denied(e: Error) -> (i16, Option<StrBytes>) {
    (
        error_code::code(&e),
        Some(StrBytes::from_string(error_code::message(&e))),
    )
}

/// TOPIC_AUTHORIZATION_FAILED.
fn topic_denied() -> i16 {
    error_code::code(&Error::TopicAuthorizationFailed(String::new()))
}
/// GROUP_AUTHORIZATION_FAILED.
fn group_denied() -> i16 {
    error_code::code(&Error::GroupAuthorizationFailed(String::new()))
}
/// CLUSTER_AUTHORIZATION_FAILED.
fn cluster_denied() -> i16 {
    error_code::code(&Error::ClusterAuthorizationFailed(String::new()))
}
/// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
fn txn_denied() -> i16 {
    error_code::code(&Error::TransactionalIdAuthorizationFailed(String::new()))
}

/// Requests Kafka serves without an authorization check (ApiVersions and the SASL exchange).
macro_rules! unchecked {
    ($($req:ty => $resp:ty),* $(,)?) => {
        $(impl crate::guard::Guarded for $req {
            type Response = $resp;
            fn guard(self, _cx: &crate::guard::Check) -> crate::guard::Guard<Self, $resp> {
                crate::guard::Guard::run(self)
            }
        })*
    };
}
use unchecked;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_order_on_both_sides() {
        let (a, b) = split(vec![1, 2, 3, 4, 5], |n| n % 2 == 1);
        assert_eq!((a, b), (vec![1, 3, 5], vec![2, 4]));
    }
}
