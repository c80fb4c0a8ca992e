#!/usr/bin/env python3
"""Interop checks for the Python clients against a running strata broker.

usage: clients.py BOOTSTRAP {confluent,kafka-python,kafka-python-0.8,kafka-python-0.9,kafka-python-0.10,aiokafka,confluent-compact}

Each check creates a topic through the client's admin API, produces N keyed messages, consumes them back in a
consumer group, commits, reads the committed offsets back, and asserts counts and contents. confluent-compact
creates a compacted topic, writes every key twice and waits (bounded) until a read from the beginning sees only
the latest value of each key (the broker's log cleaner ran). kafka-python-0.9 / -0.10 pin kafka-python to a 0.9 /
0.10 broker's protocol (Produce v1 / v2 with message format v0 / v1, Fetch v1 / v2 with down-converted data,
ListOffsets v0), as old tools do, and read back what a current producer wrote too; kafka-python-0.8 pins it to
0.8.2's (Produce v0 / Fetch v0 with message format v0, ListOffsets v0, Metadata v0, FindCoordinator v0,
OffsetCommit / OffsetFetch v1) and also commits and reads the commits back.
"""
import asyncio
import sys
import time
import uuid

N = 200
PARTITIONS = 3


def expected():
    return {f"key-{i}".encode(): f"value-{i}-{'x' * (i % 17)}".encode() for i in range(N)}


def check(got, client):
    want = expected()
    assert len(got) == N, f"{client}: consumed {len(got)} messages, expected {N}"
    assert dict(got) == want, f"{client}: consumed contents differ"


def confluent(bs):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    topic = f"ck-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bs})
    fs = admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1,
                                       config={"retention.ms": "86400000"})])
    fs[topic].result(30)
    res = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    configs = list(res.values())[0].result(30)
    assert configs["retention.ms"].value == "86400000", configs["retention.ms"]
    md = admin.list_topics(timeout=10)
    assert len(md.topics[topic].partitions) == PARTITIONS

    p = Producer({"bootstrap.servers": bs, "enable.idempotence": True, "acks": "all"})
    errors = []
    for k, v in expected().items():
        p.produce(topic, key=k, value=v, on_delivery=lambda e, m: e and errors.append(e))
    assert p.flush(30) == 0 and not errors, errors

    group = f"ck-group-{uuid.uuid4().hex[:6]}"
    c = Consumer({"bootstrap.servers": bs, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got = []
    deadline = time.time() + 60
    while len(got) < N and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        assert m.error() is None, m.error()
        got.append((m.key(), m.value()))
    check(got, "confluent-kafka")
    c.commit(asynchronous=False)
    committed = c.committed([TopicPartition(topic, i) for i in range(PARTITIONS)], timeout=10)
    assert sum(tp.offset for tp in committed) == N, committed
    c.close()
    groups = admin.list_consumer_groups().result(30)
    assert any(g.group_id == group for g in groups.valid), groups.valid


def read_from_beginning(bs, topic):
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bs, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 30
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                break
            raise AssertionError(m.error())
        got.append((m.offset(), m.key(), m.value()))
    c.close()
    return got


def confluent_compact(bs):
    from confluent_kafka import KafkaException, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"compact-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1, config={
        "cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})])[topic].result(30)
    p = Producer({"bootstrap.servers": bs, "acks": "all", "linger.ms": 0})
    errors = []
    latest = {}
    for version in (1, 2):
        for i in range(30):
            k, v = f"key-{i}".encode(), f"value-{i}-v{version}-{'x' * 20}".encode()
            p.produce(topic, key=k, value=v, on_delivery=lambda e, m: e and errors.append(e))
            latest[k] = v
        assert p.flush(30) == 0 and not errors, errors
    # A keyless record is refused on a compacted topic (INVALID_RECORD).
    p.produce(topic, value=b"no key", on_delivery=lambda e, m: errors.append(e))
    p.flush(30)
    assert len(errors) == 1 and errors[0].code() == 87, errors
    errors.clear()
    # Later unique keys fill the active segment, so the overwritten ones are in cleanable segments.
    deadline = time.time() + 60
    n = 0
    while True:
        got = read_from_beginning(bs, topic)
        offsets = [o for o, _, _ in got]
        assert offsets == sorted(set(offsets)), "offsets not strictly increasing"
        seen = {}
        for _, k, v in got:
            seen.setdefault(k, []).append(v)
        for k, v in latest.items():
            assert seen.get(k, [None])[-1] == v, (k, seen.get(k))
        if all(len(seen[k]) == 1 for k in latest):
            return
        assert time.time() < deadline, f"not compacted: {[(k, len(seen[k])) for k in latest if len(seen[k]) > 1]}"
        for _ in range(10):
            p.produce(topic, key=f"filler-{n}".encode(), value=b"f" * 100)
            n += 1
        assert p.flush(30) == 0
        time.sleep(0.2)


def kafka_python(bs):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

    topic = f"kp-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bs)
    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    assert topic in admin.list_topics()
    desc = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    assert desc, "describe_configs returned nothing"

    p = KafkaProducer(bootstrap_servers=bs, acks="all")
    for k, v in expected().items():
        p.send(topic, key=k, value=v)
    p.flush(30)
    p.close()

    group = f"kp-group-{uuid.uuid4().hex[:6]}"
    c = KafkaConsumer(topic, bootstrap_servers=bs, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False, consumer_timeout_ms=20000)
    got = []
    for m in c:
        got.append((m.key, m.value))
        if len(got) == N:
            break
    check(got, "kafka-python")
    c.commit()
    committed = sum(c.committed(TopicPartition(topic, i)) or 0 for i in range(PARTITIONS))
    assert committed == N, committed
    c.close()
    offsets = admin.list_group_offsets(group)
    assert sum(o.offset for o in offsets[group].values()) == N, offsets
    described = admin.describe_groups([group])
    assert described, "describe_groups returned nothing"
    # DescribeLogDirs: the topic's partitions with the bytes just produced.
    dirs = admin.describe_log_dirs()
    sizes = {p["partition_index"]: p["partition_size"]
             for d in dirs[0]["log_dirs"] for t in d["topics"] if t["name"] == topic
             for p in t["partitions"]}
    assert sorted(sizes) == list(range(PARTITIONS)) and sum(sizes.values()) > 0, dirs
    admin.delete_topics([topic])
    assert topic not in admin.list_topics()
    admin.close()


def kafka_python_old(bs, version):
    """kafka-python speaking only a 0.9 / 0.10 broker's versions (Kafka 3.9's oldest, below KIP-896's floor)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    topic = f"kpold-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bs)
    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    admin.close()
    old = KafkaProducer(bootstrap_servers=bs, acks="all", api_version=version, compression_type="gzip")
    items = list(expected().items())
    for k, v in items[: N // 2]:
        old.send(topic, key=k, value=v)
    old.flush(30)
    old.close()
    new = KafkaProducer(bootstrap_servers=bs, acks="all")
    for k, v in items[N // 2:]:
        new.send(topic, key=k, value=v)
    new.flush(30)
    new.close()
    for reader_version in (version, None):
        kw = {"api_version": reader_version} if reader_version else {}
        # 0.8.2 has no group membership: offsets kept by the broker (FindCoordinator v0, OffsetCommit /
        # OffsetFetch v1), end offsets by ListOffsets v0.
        group = f"{topic}-g" if reader_version == (0, 8, 2) else None
        c = KafkaConsumer(bootstrap_servers=bs, auto_offset_reset="earliest", enable_auto_commit=False,
                          consumer_timeout_ms=20000, group_id=group, **kw)
        tps = [TopicPartition(topic, i) for i in range(PARTITIONS)]
        c.assign(tps)
        c.seek_to_beginning()
        got = []
        for m in c:
            got.append((m.key, m.value))
            if len(got) == N:
                break
        check(got, f"kafka-python {version} (reader {reader_version or 'current'})")
        if group:
            c.commit()
            ends = c.end_offsets(tps)
            assert sum(ends.values()) == N, ends
            assert all(c.committed(tp) == ends[tp] for tp in tps), [(c.committed(tp), ends[tp]) for tp in tps]
        c.close()


async def aiokafka_main(bs):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topic = f"aio-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bs)
    await admin.start()
    await admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    assert topic in await admin.list_topics()

    p = AIOKafkaProducer(bootstrap_servers=bs, enable_idempotence=True)
    await p.start()
    try:
        for k, v in expected().items():
            await p.send(topic, key=k, value=v)
        await p.flush()
    finally:
        await p.stop()

    group = f"aio-group-{uuid.uuid4().hex[:6]}"
    c = AIOKafkaConsumer(topic, bootstrap_servers=bs, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False)
    await c.start()
    got = []
    try:
        deadline = time.time() + 60
        while len(got) < N and time.time() < deadline:
            batch = await c.getmany(timeout_ms=500)
            for msgs in batch.values():
                got.extend((m.key, m.value) for m in msgs)
        check(got, "aiokafka")
        await c.commit()
        committed = 0
        for i in range(PARTITIONS):
            committed += await c.committed(TopicPartition(topic, i)) or 0
        assert committed == N, committed
    finally:
        await c.stop()
    groups = await admin.list_consumer_groups()
    assert any(g[0] == group for g in groups), groups
    await admin.close()


def main():
    bs, which = sys.argv[1], sys.argv[2]
    if which == "confluent":
        confluent(bs)
    elif which == "kafka-python":
        kafka_python(bs)
    elif which == "kafka-python-0.9":
        kafka_python_old(bs, (0, 9))
    elif which == "kafka-python-0.8":
        kafka_python_old(bs, (0, 8, 2))
    elif which == "kafka-python-0.10":
        kafka_python_old(bs, (0, 10, 0))
    elif which == "confluent-compact":
        confluent_compact(bs)
    elif which == "aiokafka":
        asyncio.run(aiokafka_main(bs))
    else:
        raise SystemExit(f"unknown client {which}")
    print(f"{which}: ok")


if __name__ == "__main__":
    main()
