//! ACL bindings as Kafka models them (`org.apache.kafka.common.acl` / `common.resource`): a resource pattern
//! (resource type, name, pattern type) and an entry (principal, host, operation, permission), with the wire codes of
//! each enum, the filters of DescribeAcls / DeleteAcls (`ResourcePatternFilter`, `AccessControlEntryFilter`,
//! `match` included) and the validation of a new binding (`AclApis` + `AclControlManager.validateNewAcl`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $code:expr, $text:expr;)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum $name { $($(#[$vm])* $v,)* }
        impl $name {
            /// The wire code; `None` for a code Kafka does not define (Kafka reads it as UNKNOWN).
            pub fn from_code(code: i8) -> Option<Self> {
                match code { $($code => Some(Self::$v),)* _ => None }
            }
            /// The wire code.
            pub fn code(self) -> i8 {
                match self { $(Self::$v => $code,)* }
            }
            /// Kafka's name (`TOPIC`, `PREFIXED`, `DESCRIBE_CONFIGS`, ...).
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => $text,)* }
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

wire_enum!(
    /// Kafka's `ResourceType` (0 UNKNOWN is read as an unknown code).
    ResourceType {
        /// A filter matching every type.
        Any = 1, "ANY";
        /// A topic.
        Topic = 2, "TOPIC";
        /// A consumer group.
        Group = 3, "GROUP";
        /// The cluster (name `kafka-cluster`).
        Cluster = 4, "CLUSTER";
        /// A transactional id.
        TransactionalId = 5, "TRANSACTIONAL_ID";
        /// A delegation token.
        DelegationToken = 6, "DELEGATION_TOKEN";
        /// A user (delegation tokens on behalf of).
        User = 7, "USER";
    }
);

wire_enum!(
    /// Kafka's `PatternType`.
    PatternType {
        /// A filter matching every pattern type, names compared literally.
        Any = 1, "ANY";
        /// A filter matching the patterns that apply to a resource name.
        Match = 2, "MATCH";
        /// The exact name, or `*` for every name.
        Literal = 3, "LITERAL";
        /// Every name starting with the pattern's name.
        Prefixed = 4, "PREFIXED";
    }
);

wire_enum!(
    /// Kafka's `AclOperation`.
    AclOperation {
        /// A filter matching every operation.
        Any = 1, "ANY";
        /// Every operation.
        All = 2, "ALL";
        /// Read.
        Read = 3, "READ";
        /// Write.
        Write = 4, "WRITE";
        /// Create.
        Create = 5, "CREATE";
        /// Delete.
        Delete = 6, "DELETE";
        /// Alter.
        Alter = 7, "ALTER";
        /// Describe (implied by READ, WRITE, DELETE and ALTER).
        Describe = 8, "DESCRIBE";
        /// Inter-broker actions.
        ClusterAction = 9, "CLUSTER_ACTION";
        /// Describe configs (implied by ALTER_CONFIGS).
        DescribeConfigs = 10, "DESCRIBE_CONFIGS";
        /// Alter configs.
        AlterConfigs = 11, "ALTER_CONFIGS";
        /// Idempotent produce.
        IdempotentWrite = 12, "IDEMPOTENT_WRITE";
        /// Create delegation tokens.
        CreateTokens = 13, "CREATE_TOKENS";
        /// Describe delegation tokens.
        DescribeTokens = 14, "DESCRIBE_TOKENS";
        /// Two-phase commit of a transactional id (KIP-939).
        TwoPhaseCommit = 15, "TWO_PHASE_COMMIT";
    }
);

wire_enum!(
    /// Kafka's `AclPermissionType`.
    Permission {
        /// A filter matching both.
        Any = 1, "ANY";
        /// Deny: wins over any allow.
        Deny = 2, "DENY";
        /// Allow.
        Allow = 3, "ALLOW";
    }
);

/// The one name of the CLUSTER resource.
pub const CLUSTER_NAME: &str = "kafka-cluster";
/// The resource name (of a LITERAL pattern) and host that match every name and host.
pub const WILDCARD: &str = "*";
/// The principal that matches every user.
pub const WILDCARD_PRINCIPAL: &str = "User:*";

impl AclOperation {
    /// The operations Kafka reports in authorized-operations fields for a resource type
    /// (`AclEntry.supportedOperations`).
    pub fn supported(rt: ResourceType) -> &'static [AclOperation] {
        use AclOperation::*;
        match rt {
            ResourceType::Topic => &[
                Read,
                Write,
                Create,
                Describe,
                Delete,
                Alter,
                DescribeConfigs,
                AlterConfigs,
            ],
            ResourceType::Group => &[Read, Describe, Delete, DescribeConfigs, AlterConfigs],
            ResourceType::Cluster => &[
                Create,
                ClusterAction,
                DescribeConfigs,
                AlterConfigs,
                IdempotentWrite,
                Alter,
                Describe,
            ],
            ResourceType::TransactionalId => &[Describe, Write],
            ResourceType::DelegationToken => &[Describe],
            ResourceType::User => &[CreateTokens, DescribeTokens],
            ResourceType::Any => &[],
        }
    }
}

/// One ACL binding: who may (or may not) do what on which resources from where. Stored as JSON by
/// [`super::store::AclStore`] (the enums by Kafka's names).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AclBinding {
    /// TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN or USER.
    pub resource_type: ResourceType,
    /// The resource name (`*` with LITERAL: every name; the prefix with PREFIXED).
    pub resource_name: String,
    /// LITERAL or PREFIXED.
    pub pattern_type: PatternType,
    /// `Type:name`, e.g. `User:alice`, or `User:*`.
    pub principal: String,
    /// A client IP address, or `*`.
    pub host: String,
    /// Any operation but ANY.
    pub operation: AclOperation,
    /// ALLOW or DENY.
    pub permission: Permission,
}

/// Reads the four codes of a binding or filter: an unknown code is INVALID_REQUEST naming it (Kafka reads such a
/// code as UNKNOWN and refuses the request).
pub fn codes(
    rt: i8,
    pt: i8,
    op: i8,
    perm: i8,
) -> Result<(ResourceType, PatternType, AclOperation, Permission)> {
    let bad = |what: &str, code: i8| Error::InvalidAcl(format!("unknown {what} code {code}"));
    Ok((
        ResourceType::from_code(rt).ok_or_else(|| bad("resource type", rt))?,
        PatternType::from_code(pt).ok_or_else(|| bad("pattern type", pt))?,
        AclOperation::from_code(op).ok_or_else(|| bad("operation", op))?,
        Permission::from_code(perm).ok_or_else(|| bad("permission type", perm))?,
    ))
}

impl AclBinding {
    /// Kafka's checks of a new binding, in its order (`AclApis.handleCreateAcls`, then
    /// `AclControlManager.validateNewAcl` and the principal's parse): INVALID_REQUEST naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidAcl(m));
        if self.resource_type == ResourceType::Cluster && self.resource_name != CLUSTER_NAME {
            return bad(format!(
                "The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
            ));
        }
        if self.resource_name.is_empty() {
            return bad("Invalid empty resource name".into());
        }
        if self.resource_type == ResourceType::Any {
            return bad(format!("Invalid resourceType {}", self.resource_type));
        }
        if !matches!(
            self.pattern_type,
            PatternType::Literal | PatternType::Prefixed
        ) {
            return bad(format!("Invalid patternType {}", self.pattern_type));
        }
        if self.operation == AclOperation::Any {
            return bad(format!("Invalid operation {}", self.operation));
        }
        if self.permission == Permission::Any {
            return bad(format!("Invalid permissionType {}", self.permission));
        }
        match self.principal.split_once(':') {
            Some((t, n)) if !t.is_empty() && !n.is_empty() => Ok(()),
            _ => bad(format!(
                "Could not parse principal from `{}` (no colon is found separating principal type from principal name)",
                self.principal
            )),
        }
    }
}

/// A DescribeAcls / DeleteAcls filter (`AclBindingFilter`): `None` strings match everything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclFilter {
    /// A resource type, or ANY.
    pub resource_type: ResourceType,
    /// The name, or `None` for any.
    pub resource_name: Option<String>,
    /// LITERAL, PREFIXED, ANY or MATCH.
    pub pattern_type: PatternType,
    /// The principal, or `None` for any.
    pub principal: Option<String>,
    /// The host, or `None` for any.
    pub host: Option<String>,
    /// An operation, or ANY.
    pub operation: AclOperation,
    /// A permission, or ANY.
    pub permission: Permission,
}

impl AclFilter {
    /// Whether `b` matches, as Kafka's `AclBindingFilter.matches`.
    pub fn matches(&self, b: &AclBinding) -> bool {
        self.pattern_matches(b) && self.entry_matches(b)
    }

    /// `ResourcePatternFilter.matches`: MATCH takes every pattern that applies to the filter's (literal) name.
    fn pattern_matches(&self, b: &AclBinding) -> bool {
        if self.resource_type != ResourceType::Any && self.resource_type != b.resource_type {
            return false;
        }
        let pt = self.pattern_type;
        if pt != PatternType::Any && pt != PatternType::Match && pt != b.pattern_type {
            return false;
        }
        let Some(name) = &self.resource_name else {
            return true;
        };
        if pt == PatternType::Any || pt == b.pattern_type {
            return *name == b.resource_name;
        }
        match b.pattern_type {
            PatternType::Literal => *name == b.resource_name || b.resource_name == WILDCARD,
            _ => name.starts_with(&b.resource_name),
        }
    }

    /// `AccessControlEntryFilter.matches`.
    fn entry_matches(&self, b: &AclBinding) -> bool {
        self.principal.as_ref().is_none_or(|p| *p == b.principal)
            && self.host.as_ref().is_none_or(|h| *h == b.host)
            && (self.operation == AclOperation::Any || self.operation == b.operation)
            && (self.permission == Permission::Any || self.permission == b.permission)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(name: &str, pt: PatternType) -> AclBinding {
        AclBinding {
            resource_type: ResourceType::Topic,
            resource_name: name.into(),
            pattern_type: pt,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: AclOperation::Read,
            permission: Permission::Allow,
        }
    }

    fn filter(name: Option<&str>, pt: PatternType) -> AclFilter {
        AclFilter {
            resource_type: ResourceType::Any,
            resource_name: name.map(String::from),
            pattern_type: pt,
            principal: None,
            host: None,
            operation: AclOperation::Any,
            permission: Permission::Any,
        }
    }

    #[test]
    fn match_filters_take_every_pattern_that_applies_and_literal_filters_only_their_own() {
        let lit = binding("orders", PatternType::Literal);
        let star = binding("*", PatternType::Literal);
        let pre = binding("ord", PatternType::Prefixed);
        let other = binding("pay", PatternType::Prefixed);
        let m = filter(Some("orders"), PatternType::Match);
        assert!(m.matches(&lit) && m.matches(&star) && m.matches(&pre) && !m.matches(&other));
        let l = filter(Some("orders"), PatternType::Literal);
        assert!(l.matches(&lit) && !l.matches(&star) && !l.matches(&pre));
        let any = filter(Some("ord"), PatternType::Any);
        assert!(any.matches(&pre) && !any.matches(&lit));
        assert!(filter(None, PatternType::Any).matches(&other));
    }

    #[test]
    fn new_bindings_are_checked_as_kafka_checks_them() {
        let mut b = binding("t", PatternType::Literal);
        assert!(b.validate().is_ok());
        b.resource_type = ResourceType::Cluster;
        assert!(b
            .validate()
            .unwrap_err()
            .to_string()
            .contains("kafka-cluster"));
        b = binding("", PatternType::Literal);
        assert!(b.validate().is_err());
        b = binding("t", PatternType::Match);
        assert!(b.validate().unwrap_err().to_string().contains("MATCH"));
        b = binding("t", PatternType::Literal);
        b.principal = "alice".into();
        assert!(b.validate().unwrap_err().to_string().contains("principal"));
        assert_eq!(
            AclOperation::from_code(10),
            Some(AclOperation::DescribeConfigs)
        );
        assert_eq!(ResourceType::from_code(0), None);
        assert!(codes(2, 3, 3, 9).is_err());
    }
}
