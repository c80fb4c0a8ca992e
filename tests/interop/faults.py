"""confluent-kafka against a strata broker set to fail Produce: `faults.py BOOTSTRAP TOPIC`.

The caller (tests/faults.rs) has set NOT_LEADER_OR_FOLLOWER x3 on Produce; the producer must retry to success and
deliver exactly one record. Exit status 0 on success, 1 with a message otherwise."""
import sys

from confluent_kafka import Producer

bs, topic = sys.argv[1], sys.argv[2]
errors, delivered = [], []


def report(err, msg):
    (errors if err else delivered).append(err or msg.offset())


p = Producer({"bootstrap.servers": bs, "acks": "all", "retry.backoff.ms": 50, "message.timeout.ms": 30000})
p.produce(topic, value=b"retried", callback=report)
left = p.flush(30)
if left or errors or len(delivered) != 1:
    print(f"not delivered: left={left} errors={errors} delivered={delivered}")
    sys.exit(1)
print(f"delivered at offset {delivered[0]}")
