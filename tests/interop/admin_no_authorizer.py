"""confluent-kafka AdminClient against strata (no authorizer): `admin_no_authorizer.py BOOTSTRAP TOPIC`.

The `kafka-acls` flows (describe/create/delete ACLs) must fail at once with SECURITY_DISABLED, as against a Kafka
broker without `authorizer.class.name`, and elect_leaders must report ELECTION_NOT_NEEDED for a partition of a
single node. Prints one line per check; exit status 0 on success, 1 with a message otherwise."""
import sys
import time

from confluent_kafka import ElectionType, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)

bs, topic = sys.argv[1], sys.argv[2]
admin = AdminClient({"bootstrap.servers": bs})
failures = []


def expect_error(what, future, code, timeout=15):
    t0 = time.time()
    try:
        got = future.result(timeout=timeout)
        failures.append(f"{what}: succeeded with {got!r}, wanted {code}")
        return
    except KafkaException as e:
        err = e.args[0]
    except Exception as e:  # a timeout, or an unsupported-feature error
        failures.append(f"{what}: {type(e).__name__} {e}")
        return
    took = time.time() - t0
    if err.code() != code:
        failures.append(f"{what}: {err} (code {err.code()}), wanted {code}")
    else:
        print(f"{what} {err.name()} in {took:.2f}s: {err.str()}", flush=True)


acl_filter = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                              AclPermissionType.ANY)
# librdkafka drops DescribeAcls' top-level error code (rd_kafka_DescribeAclsResponse_parse): against Kafka without
# an authorizer, as here, it returns no bindings — at once, not a hang or "unsupported by broker".
t0 = time.time()
try:
    got = admin.describe_acls(acl_filter, request_timeout=10).result(timeout=15)
    if got:
        failures.append(f"describe_acls: {got}")
    else:
        print(f"describe_acls (confluent) no bindings in {time.time() - t0:.2f}s", flush=True)
except Exception as e:
    failures.append(f"describe_acls (confluent): {type(e).__name__} {e}")
binding = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.READ,
                     AclPermissionType.ALLOW)
for b, f in admin.create_acls([binding], request_timeout=10).items():
    expect_error("create_acls", f, KafkaError.SECURITY_DISABLED)
for b, f in admin.delete_acls([acl_filter], request_timeout=10).items():
    expect_error("delete_acls", f, KafkaError.SECURITY_DISABLED)

f = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)])
try:
    res = f.result(timeout=15)
    errs = {f"{tp.topic}-{tp.partition}": e for tp, e in res.items()}
    e = errs.get(f"{topic}-0")
    if e is None or e.code() != KafkaError.ELECTION_NOT_NEEDED:
        failures.append(f"elect_leaders: {errs}")
    else:
        print(f"elect_leaders {e.name()}", flush=True)
except Exception as e:
    failures.append(f"elect_leaders: {type(e).__name__} {e}")

# A group with a committed offset, described with its authorized operations (Kafka without an authorizer: all).
from confluent_kafka import Consumer

consumer = Consumer({"bootstrap.servers": bs, "group.id": "ops-group", "enable.auto.commit": False})
consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
consumer.close()
try:
    groups = admin.describe_consumer_groups(["ops-group"], include_authorized_operations=True, request_timeout=10)
    g = groups["ops-group"].result(timeout=15)
    ops = sorted(op.name for op in (g.authorized_operations or []))
    if ops != ["DELETE", "DESCRIBE", "READ"]:
        failures.append(f"describe_consumer_groups authorized operations: {g.authorized_operations}")
    else:
        print(f"describe_consumer_groups authorized operations {','.join(ops)}", flush=True)
except Exception as e:
    failures.append(f"describe_consumer_groups: {type(e).__name__} {e}")

# kafka-python reads the error code: SecurityDisabledError, as against Kafka.
try:
    from kafka.admin import ACLFilter, KafkaAdminClient
    from kafka.admin import ACLOperation, ACLPermissionType, ResourcePatternFilter
    from kafka.admin import ACLResourcePatternType, ResourceType as KpResourceType
    from kafka.errors import SecurityDisabledError
except ImportError as e:
    print(f"kafka-python not installed, its check skipped: {e}")
else:
    kp = KafkaAdminClient(bootstrap_servers=bs, request_timeout_ms=10000)
    flt = ACLFilter(principal=None, host="*", operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                    resource_pattern=ResourcePatternFilter(KpResourceType.TOPIC, topic, ACLResourcePatternType.ANY))
    try:
        got = kp.describe_acls(flt)
        failures.append(f"describe_acls (kafka-python): {got}")
    except SecurityDisabledError as e:
        print(f"describe_acls SECURITY_DISABLED (kafka-python): {e}", flush=True)
    except Exception as e:
        failures.append(f"describe_acls (kafka-python): {type(e).__name__} {e}")
    kp.close()

if failures:
    print("\n".join(failures))
    sys.exit(1)
