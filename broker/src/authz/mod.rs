//! Authorization: Kafka's ACLs with the semantics of its `StandardAuthorizer`, switched on as Kafka's
//! `server.properties` switches it on (`authorizer.class.name` naming `StandardAuthorizer`, or the 3.x
//! `AclAuthorizer`). Off (the default), the broker holds no [`Authorizer`] and the request path checks one `Option`
//! per request.
//!
//! A request is allowed when its principal is one of `super.users`; else the bindings whose pattern applies to the
//! resource (its literal name, `*`, every prefix) decide: a DENY binding matching principal (or `User:*`), host (or
//! `*`) and operation (or ALL) denies; else an ALLOW binding matching them allows — an ALLOW of READ, WRITE, DELETE or
//! ALTER also allows DESCRIBE, one of ALTER_CONFIGS also DESCRIBE_CONFIGS; else, when no binding at all applies to
//! the resource, `allow.everyone.if.no.acl.found` decides, and otherwise the request is denied
//! (`StandardAuthorizerData.findAclRule`).
//!
//! [`acl`] is the data model, [`store`] the durable bindings, [`principal`] how a connection's principal is derived;
//! what each API checks is `crate::guard`'s.

pub mod acl;
pub mod principal;
pub mod store;

use std::collections::HashSet;
use std::path::Path;

use acl::{AclOperation, Permission, ResourceType, CLUSTER_NAME, WILDCARD, WILDCARD_PRINCIPAL};
use store::AclStore;

use crate::config::{keys, BrokerConfig};
use crate::error::{Error, Result};

/// `authorizer.class.name` values that switch the authorizer on: Kafka's KRaft authorizer and the ZooKeeper-era
/// one (Kafka 3.x `server.properties`), both with StandardAuthorizer's semantics here.
pub const AUTHORIZER_CLASSES: &[&str] = &[
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
];

/// Who is asking: the connection's principal (`User:alice`) and the client's IP address.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    /// `Type:name`.
    pub principal: &'a str,
    /// The client's IP address as text (`127.0.0.1`).
    pub host: &'a str,
}

/// The authorizer: the durable bindings and the two settings. See the [module docs](self).
#[derive(Debug)]
pub struct Authorizer {
    store: AclStore,
    super_users: HashSet<String>,
    allow_if_no_acl: bool,
}

impl Authorizer {
    /// The authorizer `config` asks for, its bindings read from `meta_dir`; `None` when `authorizer.class.name` is
    /// empty. Another class stops start-up naming the key, so does a `principal.builder.class` other than Kafka's
    /// default.
    pub fn from_config(config: &BrokerConfig, meta_dir: &Path) -> Result<Option<Authorizer>> {
        let values = config.config_values();
        principal::check_principal_builder(
            values.value(&keys::PRINCIPAL_BUILDER_CLASS).as_deref(),
        )?;
        let class = values.value(&keys::AUTHORIZER_CLASS_NAME);
        let class = class.trim();
        if class.is_empty() {
            return Ok(None);
        }
        if !AUTHORIZER_CLASSES.contains(&class) {
            return Err(Error::config(
                keys::AUTHORIZER_CLASS_NAME.name().into(),
                class.into(),
                format!(
                    "strata's authorizer is Kafka's StandardAuthorizer: use {}",
                    AUTHORIZER_CLASSES[0]
                ),
            ));
        }
        let super_users = values
            .value(&keys::SUPER_USERS)
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        Ok(Some(Authorizer {
            store: AclStore::open(meta_dir)?,
            super_users,
            allow_if_no_acl: values.value(&keys::ALLOW_EVERYONE_IF_NO_ACL_FOUND),
        }))
    }

    /// An authorizer over `store` (tests).
    pub fn new(store: AclStore, super_users: &[&str], allow_if_no_acl: bool) -> Authorizer {
        Authorizer {
            store,
            super_users: super_users.iter().map(|s| s.to_string()).collect(),
            allow_if_no_acl,
        }
    }

    /// The bindings.
    pub fn store(&self) -> &AclStore {
        &self.store
    }

    /// Whether `who` may do `op` on the resource `rt` named `name`. See the [module docs](self).
    pub fn authorize(
        &self,
        who: Requester<'_>,
        op: AclOperation,
        rt: ResourceType,
        name: &str,
    ) -> bool {
        if self.super_users.contains(who.principal) {
            return true;
        }
        let snap = self.store.snapshot();
        let (mut any, mut allowed, mut denied) = (false, false, false);
        snap.for_each_applying(rt, name, |b| {
            any = true;
            match applies(who, op, b) {
                Some(Permission::Deny) => {
                    denied = true;
                    false
                }
                Some(_) => {
                    allowed = true;
                    true
                }
                None => true,
            }
        });
        let ok = !denied && (allowed || (!any && self.allow_if_no_acl));
        if !ok {
            tracing::debug!(principal = who.principal, host = who.host, operation = %op, resource_type = %rt,
                resource = name, deny_acl = denied, "authorization denied");
        }
        ok
    }

    /// Whether `who` may do `op` on the cluster.
    pub fn authorize_cluster(&self, who: Requester<'_>, op: AclOperation) -> bool {
        self.authorize(who, op, ResourceType::Cluster, CLUSTER_NAME)
    }

    /// Whether `who` may do `op` on some resource of type `rt` (`Authorizer.authorizeByResourceType`: an ALLOW
    /// for `*`, or an allowed literal/prefix no DENY of the same or a shorter prefix covers).
    pub fn authorize_any(&self, who: Requester<'_>, op: AclOperation, rt: ResourceType) -> bool {
        if self.authorize(who, op, rt, "hardcode") {
            return true;
        }
        let snap = self.store.snapshot();
        let relevant = |b: &&acl::AclBinding| {
            (b.host == WILDCARD || b.host == who.host)
                && (b.principal == who.principal || b.principal == WILDCARD_PRINCIPAL)
                && (b.operation == op || b.operation == AclOperation::All)
        };
        let mut deny_literal = HashSet::new();
        let mut deny_prefix = HashSet::new();
        let mut allow = Vec::new();
        for b in snap.of_type(rt).filter(relevant) {
            let prefixed = b.pattern_type == acl::PatternType::Prefixed;
            match b.permission {
                Permission::Deny if !prefixed && b.resource_name == WILDCARD => return false,
                Permission::Deny if prefixed => drop(deny_prefix.insert(b.resource_name.as_str())),
                Permission::Deny => drop(deny_literal.insert(b.resource_name.as_str())),
                Permission::Allow if !prefixed && b.resource_name == WILDCARD => return true,
                Permission::Allow => allow.push((prefixed, b.resource_name.as_str())),
                Permission::Any => {}
            }
        }
        allow.iter().any(|(prefixed, name)| {
            (*prefixed || !deny_literal.contains(name))
                && !name
                    .char_indices()
                    .map(|(i, c)| &name[..i + c.len_utf8()])
                    .any(|p| deny_prefix.contains(p))
        })
    }

    /// Kafka's authorized-operations bit field of a resource for `who` (`AuthHelper.authorizedOperations`).
    pub fn authorized_operations(&self, who: Requester<'_>, rt: ResourceType, name: &str) -> i32 {
        AclOperation::supported(rt)
            .iter()
            .filter(|op| self.authorize(who, **op, rt, name))
            .fold(0, |bits, op| bits | (1 << op.code()))
    }
}

/// Whether binding `b` speaks about `who` doing `op`: `Some(permission)` when it does
/// (`StandardAuthorizerData.findResult`: implied operations only for ALLOW).
fn applies(who: Requester<'_>, op: AclOperation, b: &acl::AclBinding) -> Option<Permission> {
    use AclOperation::*;
    if b.principal != who.principal && b.principal != WILDCARD_PRINCIPAL {
        return None;
    }
    if b.host != WILDCARD && b.host != who.host {
        return None;
    }
    if b.operation != All {
        let matched = match (b.permission, op) {
            (Permission::Allow, Describe) => {
                matches!(b.operation, Describe | Read | Write | Delete | Alter)
            }
            (Permission::Allow, DescribeConfigs) => {
                matches!(b.operation, DescribeConfigs | AlterConfigs)
            }
            _ => b.operation == op,
        };
        if !matched {
            return None;
        }
    }
    Some(b.permission)
}

#[cfg(test)]
mod tests;
