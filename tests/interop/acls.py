"""ACLs with Python clients against strata's authorizer (issue 31). The broker (tests/interop/run.sh, acl_broker)
serves PLAINTEXT (User:ANONYMOUS, a super user) and SASL_PLAINTEXT with PLAIN users alice and bob, with Kafka's
StandardAuthorizer switched on.

  acls.py <plain-bootstrap> <sasl-bootstrap> kafka-python <kafka-python-src>
      runs kafka-python's own test_create_describe_delete_acls (test/integration/test_admin_integration.py of its
      source distribution, unchanged) with a KafkaAdminClient as its kafka_admin_client fixture
  acls.py <plain-bootstrap> <sasl-bootstrap> confluent
      confluent-kafka's admin create_acls / describe_acls / delete_acls, then enforcement: bob's produce is
      TOPIC_AUTHORIZATION_FAILED, alice's (WRITE granted) is delivered, and bob's metadata does not show the topic
"""
import importlib.util
import random
import string
import sys
import types
import uuid


def kafka_python(plain, src):
    from kafka import KafkaAdminClient

    # The two helpers test_admin_integration.py imports from kafka-python's test tree (not in its sdist).
    testutil = types.ModuleType("test.testutil")
    testutil.env_kafka_version = lambda: (4, 0)
    testutil.random_string = lambda n: "".join(random.choice(string.ascii_letters) for _ in range(n))
    fixtures = types.ModuleType("test.integration.fixtures")
    fixtures.create_topics = lambda *a, **k: None
    for name, mod in {"test": types.ModuleType("test"), "test.integration": types.ModuleType("test.integration"),
                      "test.testutil": testutil, "test.integration.fixtures": fixtures}.items():
        sys.modules[name] = mod
    spec = importlib.util.spec_from_file_location(
        "kafka_python_admin_integration", f"{src}/test/integration/test_admin_integration.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    admin = KafkaAdminClient(bootstrap_servers=plain)
    try:
        tests.test_create_describe_delete_acls(admin)
    finally:
        admin.close()
    print("kafka-python test_create_describe_delete_acls passed")


def sasl(bs, user):
    return {"bootstrap.servers": bs, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": user, "sasl.password": f"{user}-secret"}


def confluent(plain, sasl_bs):
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                       NewTopic, ResourcePatternType, ResourceType)

    topic = f"acl-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": plain})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    write = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                       AclOperation.WRITE, AclPermissionType.ALLOW)
    deny = AclBinding(ResourceType.TOPIC, "pay-", ResourcePatternType.PREFIXED, "User:bob", "*",
                      AclOperation.ALL, AclPermissionType.DENY)
    for f in admin.create_acls([write, deny]).values():
        assert f.result(30) is None
    match = AclBindingFilter(ResourceType.TOPIC, "pay-orders", ResourcePatternType.MATCH, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)
    found = admin.describe_acls(match).result(30)
    assert found == [deny], found
    mine = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
                            AclOperation.ANY, AclPermissionType.ANY)
    assert admin.describe_acls(mine).result(30) == [write]

    def produce(user):
        p = Producer({**sasl(sasl_bs, user), "message.timeout.ms": 10000})
        outcome = []
        p.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
        p.flush(20)
        return outcome

    bob = produce("bob")
    assert bob and bob[0] is not None and bob[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, bob
    alice = produce("alice")
    assert alice == [None], alice
    # bob may not describe the topic: his metadata does not show it; alice's WRITE implies DESCRIBE.
    assert topic not in AdminClient(sasl(sasl_bs, "bob")).list_topics(timeout=20).topics
    assert topic in AdminClient(sasl(sasl_bs, "alice")).list_topics(timeout=20).topics

    deleted = admin.delete_acls([mine, match])
    results = [f.result(30) for f in deleted.values()]
    assert sorted(len(r) for r in results) == [1, 1], results
    assert admin.describe_acls(mine).result(30) == []
    print("confluent-kafka ACL admin calls and enforcement passed")


if __name__ == "__main__":
    plain, sasl_bs, which = sys.argv[1], sys.argv[2], sys.argv[3]
    if which == "kafka-python":
        kafka_python(plain, sys.argv[4])
    else:
        confluent(plain, sasl_bs)
