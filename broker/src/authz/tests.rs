use super::acl::{AclBinding, AclOperation as Op, PatternType, Permission, ResourceType as Rt};
use super::*;

fn acl(
    rt: Rt,
    name: &str,
    pt: PatternType,
    who: &str,
    host: &str,
    op: Op,
    perm: Permission,
) -> AclBinding {
    AclBinding {
        resource_type: rt,
        resource_name: name.into(),
        pattern_type: pt,
        principal: who.into(),
        host: host.into(),
        operation: op,
        permission: perm,
    }
}

fn authorizer(
    bindings: &[AclBinding],
    supers: &[&str],
    allow_if_none: bool,
) -> (tempfile::TempDir, Authorizer) {
    let dir = tempfile::tempdir().unwrap();
    let store = AclStore::open(dir.path()).unwrap();
    store.add(bindings).unwrap();
    (dir, Authorizer::new(store, supers, allow_if_none))
}

const ALICE: Requester<'static> = Requester {
    principal: "User:alice",
    host: "10.0.0.1",
};
const BOB: Requester<'static> = Requester {
    principal: "User:bob",
    host: "10.0.0.2",
};

#[test]
fn allow_implies_describe_but_deny_of_read_does_not_deny_describe() {
    use PatternType::Literal as L;
    let (_d, a) = authorizer(
        &[
            acl(
                Rt::Topic,
                "t",
                L,
                "User:alice",
                "*",
                Op::Write,
                Permission::Allow,
            ),
            acl(
                Rt::Topic,
                "t",
                L,
                "User:bob",
                "*",
                Op::Read,
                Permission::Deny,
            ),
            acl(
                Rt::Topic,
                "t",
                L,
                "User:bob",
                "*",
                Op::Describe,
                Permission::Allow,
            ),
            acl(
                Rt::Topic,
                "c",
                L,
                "User:alice",
                "*",
                Op::AlterConfigs,
                Permission::Allow,
            ),
        ],
        &[],
        false,
    );
    assert!(a.authorize(ALICE, Op::Write, Rt::Topic, "t"));
    assert!(a.authorize(ALICE, Op::Describe, Rt::Topic, "t"));
    assert!(!a.authorize(ALICE, Op::Read, Rt::Topic, "t"));
    assert!(!a.authorize(BOB, Op::Read, Rt::Topic, "t"));
    assert!(a.authorize(BOB, Op::Describe, Rt::Topic, "t"));
    assert!(a.authorize(ALICE, Op::DescribeConfigs, Rt::Topic, "c"));
    assert!(!a.authorize(ALICE, Op::Describe, Rt::Topic, "c"));
}

#[test]
fn deny_wins_over_allow_from_any_pattern_and_wildcards_match() {
    let (_d, a) = authorizer(
        &[
            acl(
                Rt::Topic,
                "*",
                PatternType::Literal,
                "User:*",
                "*",
                Op::All,
                Permission::Allow,
            ),
            acl(
                Rt::Topic,
                "secret-",
                PatternType::Prefixed,
                "User:bob",
                "*",
                Op::Read,
                Permission::Deny,
            ),
        ],
        &[],
        false,
    );
    assert!(a.authorize(BOB, Op::Read, Rt::Topic, "public"));
    assert!(!a.authorize(BOB, Op::Read, Rt::Topic, "secret-1"));
    assert!(a.authorize(ALICE, Op::Read, Rt::Topic, "secret-1"));
    assert!(a.authorize(BOB, Op::Write, Rt::Topic, "secret-1"));
}

#[test]
fn hosts_must_match_and_super_users_skip_everything() {
    let (_d, a) = authorizer(
        &[acl(
            Rt::Group,
            "g",
            PatternType::Literal,
            "User:alice",
            "10.0.0.9",
            Op::Read,
            Permission::Allow,
        )],
        &["User:admin"],
        false,
    );
    assert!(!a.authorize(ALICE, Op::Read, Rt::Group, "g"));
    let there = Requester {
        host: "10.0.0.9",
        ..ALICE
    };
    assert!(a.authorize(there, Op::Read, Rt::Group, "g"));
    let admin = Requester {
        principal: "User:admin",
        host: "1.1.1.1",
    };
    assert!(a.authorize(admin, Op::Delete, Rt::Cluster, "kafka-cluster"));
}

#[test]
fn no_acl_on_a_resource_follows_allow_everyone_if_no_acl_found() {
    let bindings = [acl(
        Rt::Topic,
        "t",
        PatternType::Literal,
        "User:alice",
        "*",
        Op::Read,
        Permission::Allow,
    )];
    let (_d, open) = authorizer(&bindings, &[], true);
    // No ACL on "u": allowed; an ACL on "t" for someone else: denied even so.
    assert!(open.authorize(BOB, Op::Read, Rt::Topic, "u"));
    assert!(!open.authorize(BOB, Op::Read, Rt::Topic, "t"));
    let (_d2, closed) = authorizer(&bindings, &[], false);
    assert!(!closed.authorize(BOB, Op::Read, Rt::Topic, "u"));
}

#[test]
fn by_resource_type_needs_an_allow_no_deny_dominates() {
    let (_d, a) = authorizer(
        &[
            acl(
                Rt::Topic,
                "logs-",
                PatternType::Prefixed,
                "User:alice",
                "*",
                Op::Write,
                Permission::Allow,
            ),
            acl(
                Rt::Topic,
                "logs",
                PatternType::Prefixed,
                "User:bob",
                "*",
                Op::Write,
                Permission::Deny,
            ),
            acl(
                Rt::Topic,
                "logs-x",
                PatternType::Literal,
                "User:bob",
                "*",
                Op::Write,
                Permission::Allow,
            ),
        ],
        &[],
        false,
    );
    assert!(a.authorize_any(ALICE, Op::Write, Rt::Topic));
    assert!(!a.authorize_any(BOB, Op::Write, Rt::Topic));
    assert!(!a.authorize_any(ALICE, Op::Read, Rt::Topic));
}

#[test]
fn authorized_operations_are_kafkas_bit_fields() {
    let (_d, a) = authorizer(
        &[acl(
            Rt::Topic,
            "t",
            PatternType::Literal,
            "User:alice",
            "*",
            Op::Read,
            Permission::Allow,
        )],
        &[],
        false,
    );
    // READ (3) and the DESCRIBE (8) it implies.
    assert_eq!(
        a.authorized_operations(ALICE, Rt::Topic, "t"),
        (1 << 3) | (1 << 8)
    );
    assert_eq!(a.authorized_operations(BOB, Rt::Topic, "t"), 0);
}
