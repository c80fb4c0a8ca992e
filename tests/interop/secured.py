#!/usr/bin/env python3
"""Secured listeners with the Python clients: produce 10 messages and read them back over one protocol.

usage: secured.py LISTENERS DIR CLIENT SETUP
  LISTENERS  strata's ready line value: NAME://host:port,... (names MTLS, SASLSSL, SASLPLAIN, PLAINTEXT)
  DIR        holds ca.pem, client.pem, client-key.pem (made by run.sh)
  CLIENT     confluent | kafka-python | aiokafka
  SETUP      ssl-client-cert | sasl_ssl-plain | sasl_ssl-scram-sha-256 | sasl_ssl-scram-sha-512 | sasl_plaintext-plain
`secured.py LISTENERS DIR admin -` creates the SCRAM users (confluent-kafka's admin API on the PLAINTEXT listener).
"""
import asyncio
import sys
import time
import uuid

LISTENERS, DIR, CLIENT, SETUP = sys.argv[1:5]
ADDR = dict(item.split("://", 1) for item in LISTENERS.split(","))
CA, CERT, KEY = f"{DIR}/ca.pem", f"{DIR}/client.pem", f"{DIR}/client-key.pem"
# PLAIN users come from the broker's JAAS line; SCRAM users are made by `admin`.
USERS = {"PLAIN": ("alice", "alice-secret"), "SCRAM-SHA-256": ("sam", "sam-secret"),
         "SCRAM-SHA-512": ("sue", "sue-secret")}
N = 10


def setup():
    """(listener address, protocol, mechanism or None, whether a client certificate is sent)."""
    if SETUP == "ssl-client-cert":
        return ADDR["MTLS"], "SSL", None, True
    protocol, mechanism = SETUP.split("-", 1)
    name = "SASLSSL" if protocol == "sasl_ssl" else "SASLPLAIN"
    return ADDR[name], protocol.upper(), mechanism.upper(), False


def values():
    return [f"{CLIENT}-{SETUP}-{i}".encode() for i in range(N)]


def admin():
    from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialUpsertion)
    a = AdminClient({"bootstrap.servers": ADDR["PLAINTEXT"]})
    ups = [UserScramCredentialUpsertion(USERS["SCRAM-SHA-256"][0],
                                        ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                        USERS["SCRAM-SHA-256"][1].encode()),
           UserScramCredentialUpsertion(USERS["SCRAM-SHA-512"][0],
                                        ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                        USERS["SCRAM-SHA-512"][1].encode())]
    for f in a.alter_user_scram_credentials(ups).values():
        f.result(timeout=30)


def confluent(topic):
    from confluent_kafka import Consumer, Producer, TopicPartition
    addr, protocol, mechanism, cert = setup()
    conf = {"bootstrap.servers": addr, "security.protocol": protocol}
    if protocol.endswith("SSL"):
        conf["ssl.ca.location"] = CA
    if cert:
        conf.update({"ssl.certificate.location": CERT, "ssl.key.location": KEY})
    if mechanism:
        user, password = USERS[mechanism]
        conf.update({"sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password})
    p = Producer({**conf, "acks": "all"})
    errors = []
    for v in values():
        p.produce(topic, value=v, on_delivery=lambda e, m: e and errors.append(e))
    assert p.flush(30) == 0 and not errors, errors
    c = Consumer({**conf, "group.id": f"g-{topic}", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    got, deadline = [], time.time() + 30
    while len(got) < N and time.time() < deadline:
        m = c.poll(1.0)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    return got


def kafka_python_config():
    addr, protocol, mechanism, cert = setup()
    conf = dict(bootstrap_servers=addr, security_protocol=protocol, request_timeout_ms=20000)
    if protocol.endswith("SSL"):
        conf["ssl_cafile"] = CA
    if cert:
        conf.update(ssl_certfile=CERT, ssl_keyfile=KEY)
    if mechanism:
        user, password = USERS[mechanism]
        conf.update(sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)
    return conf


def kafka_python(topic):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    conf = kafka_python_config()
    p = KafkaProducer(acks="all", **conf)
    for v in values():
        p.send(topic, v).get(timeout=30)
    p.close()
    c = KafkaConsumer(consumer_timeout_ms=10000, **conf)
    c.assign([TopicPartition(topic, 0)])
    c.seek_to_beginning()
    got = [m.value for _, m in zip(range(N), c)]
    c.close()
    return got


def aiokafka_run(topic):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.helpers import create_ssl_context
    addr, protocol, mechanism, cert = setup()
    conf = dict(bootstrap_servers=addr, security_protocol=protocol)
    if protocol.endswith("SSL"):
        conf["ssl_context"] = create_ssl_context(cafile=CA, certfile=CERT if cert else None,
                                                 keyfile=KEY if cert else None)
    if mechanism:
        user, password = USERS[mechanism]
        conf.update(sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)

    async def run():
        p = AIOKafkaProducer(acks="all", **conf)
        await p.start()
        try:
            for v in values():
                await p.send_and_wait(topic, v)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(auto_offset_reset="earliest", **conf)
        await c.start()
        got = []
        try:
            c.assign([TopicPartition(topic, 0)])
            await c.seek_to_beginning(TopicPartition(topic, 0))
            while len(got) < N:
                m = await asyncio.wait_for(c.getone(), 30)
                got.append(m.value)
        finally:
            await c.stop()
        return got

    return asyncio.run(run())


if __name__ == "__main__":
    if CLIENT == "admin":
        admin()
        sys.exit(0)
    topic = f"sec-{CLIENT}-{SETUP}-{uuid.uuid4().hex[:6]}"
    run = {"confluent": confluent, "kafka-python": kafka_python, "aiokafka": aiokafka_run}[CLIENT]
    got = run(topic)
    assert got == values(), f"{CLIENT} {SETUP}: read {got!r}"
    print(f"{CLIENT} {SETUP}: {len(got)} messages produced and read back")
