#!/usr/bin/env python3
"""Transactional interop checks for the Python clients against a running strata broker.

usage: transactions.py BOOTSTRAP {confluent,kafka-python,aiokafka}

Each check: a transactional producer commits COMMITTED records over two partitions, then aborts ABORTED more;
a consume-transform-produce step sends a consumer's position to a third transaction and commits it. A
read_committed consumer must see exactly the committed records (and the transformed ones), a read_uncommitted
one every record, and the group's committed offset must be the one sent to the transaction.
"""
import asyncio
import sys
import time
import uuid

COMMITTED = 20
ABORTED = 7
PARTITIONS = 2


def values(prefix, n):
    return [f"{prefix}-{i}".encode() for i in range(n)]


def read_all(bs, topic, isolation, want):
    """Every value of `topic` from the beginning (confluent-kafka consumer, no group commits)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bs, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "isolation.level": isolation, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got = []
    deadline = time.time() + 60
    while len(got) < want and time.time() < deadline:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        got.append(m.value())
    # Nothing more may arrive.
    end = time.time() + 1.0
    while time.time() < end:
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    return sorted(got)


def create(bs, *topics):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bs})
    fs = admin.create_topics([NewTopic(t, num_partitions=PARTITIONS, replication_factor=1) for t in topics])
    for f in fs.values():
        f.result(30)


def verify(bs, client, topic, out, group):
    from confluent_kafka import Consumer, TopicPartition

    want = sorted(values("committed", COMMITTED))
    got = read_all(bs, topic, "read_committed", COMMITTED)
    assert got == want, f"{client}: read_committed saw {len(got)} records, expected {COMMITTED}"
    got = read_all(bs, topic, "read_uncommitted", COMMITTED + ABORTED)
    assert got == sorted(want + values("aborted", ABORTED)), f"{client}: read_uncommitted saw {len(got)}"
    got = read_all(bs, out, "read_committed", 3)
    assert got == sorted([b"ctp-0", b"ctp-1", b"ctp-2"]), f"{client}: transformed records {got}"
    c = Consumer({"bootstrap.servers": bs, "group.id": group})
    committed = c.committed([TopicPartition(topic, 0)], timeout=10)
    c.close()
    assert committed[0].offset == 3, f"{client}: committed offset {committed[0].offset}, expected 3"


def confluent(bs):
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic, out = f"ckt-{uuid.uuid4().hex[:8]}", f"ckt-out-{uuid.uuid4().hex[:8]}"
    create(bs, topic, out)
    p = Producer({"bootstrap.servers": bs, "transactional.id": f"ck-{topic}"})
    p.init_transactions(30)
    p.begin_transaction()
    for i, v in enumerate(values("committed", COMMITTED)):
        p.produce(topic, value=v, partition=i % PARTITIONS)
    p.commit_transaction(30)
    p.begin_transaction()
    for i, v in enumerate(values("aborted", ABORTED)):
        p.produce(topic, value=v, partition=i % PARTITIONS)
    p.flush(30)
    p.abort_transaction(30)
    group = f"ckt-group-{uuid.uuid4().hex[:6]}"
    c = Consumer({"bootstrap.servers": bs, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 30
    while len(got) < 3 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append(m)
    assert len(got) == 3
    p.begin_transaction()
    for i in range(3):
        p.produce(out, value=f"ctp-{i}".encode(), partition=0)
    p.send_offsets_to_transaction([TopicPartition(topic, 0, 3)], c.consumer_group_metadata(), 30)
    p.commit_transaction(30)
    c.close()
    verify(bs, "confluent-kafka", topic, out, group)


def kafka_python(bs):
    from kafka import KafkaProducer
    from kafka.structs import OffsetAndMetadata, TopicPartition

    topic, out = f"kpt-{uuid.uuid4().hex[:8]}", f"kpt-out-{uuid.uuid4().hex[:8]}"
    create(bs, topic, out)
    p = KafkaProducer(bootstrap_servers=bs, transactional_id=f"kp-{topic}")
    p.init_transactions()
    p.begin_transaction()
    for i, v in enumerate(values("committed", COMMITTED)):
        p.send(topic, value=v, partition=i % PARTITIONS)
    p.commit_transaction()
    p.begin_transaction()
    for i, v in enumerate(values("aborted", ABORTED)):
        p.send(topic, value=v, partition=i % PARTITIONS)
    p.flush()
    p.abort_transaction()
    group = f"kpt-group-{uuid.uuid4().hex[:6]}"
    p.begin_transaction()
    for i in range(3):
        p.send(out, value=f"ctp-{i}".encode(), partition=0)
    p.send_offsets_to_transaction({TopicPartition(topic, 0): OffsetAndMetadata(3, "", -1)}, group)
    p.commit_transaction()
    p.close()
    verify(bs, "kafka-python", topic, out, group)


async def aiokafka_main(bs):
    from aiokafka import AIOKafkaProducer, TopicPartition

    topic, out = f"aiot-{uuid.uuid4().hex[:8]}", f"aiot-out-{uuid.uuid4().hex[:8]}"
    create(bs, topic, out)
    p = AIOKafkaProducer(bootstrap_servers=bs, transactional_id=f"aio-{topic}", enable_idempotence=True)
    await p.start()
    group = f"aiot-group-{uuid.uuid4().hex[:6]}"
    try:
        async with p.transaction():
            for i, v in enumerate(values("committed", COMMITTED)):
                await p.send(topic, value=v, partition=i % PARTITIONS)
        await p.begin_transaction()
        for i, v in enumerate(values("aborted", ABORTED)):
            await p.send(topic, value=v, partition=i % PARTITIONS)
        await p.flush()
        await p.abort_transaction()
        async with p.transaction():
            for i in range(3):
                await p.send(out, value=f"ctp-{i}".encode(), partition=0)
            await p.send_offsets_to_transaction({TopicPartition(topic, 0): 3}, group)
    finally:
        await p.stop()
    verify(bs, "aiokafka", topic, out, group)


def main():
    bs, which = sys.argv[1], sys.argv[2]
    if which == "confluent":
        confluent(bs)
    elif which == "kafka-python":
        kafka_python(bs)
    elif which == "aiokafka":
        asyncio.run(aiokafka_main(bs))
    else:
        raise SystemExit(f"unknown client {which}")
    print(f"{which}-txn: ok")


if __name__ == "__main__":
    main()
