"""kafka-python 2.0.2 (SaslHandshake v0, KIP-43: raw SASL tokens without SaslAuthenticate) against a SASL_PLAINTEXT
listener with PLAIN and SCRAM-SHA-256. `sasl_v0.py BS admin` (confluent-kafka, SASL PLAIN as admin) creates the
SCRAM user; `sasl_v0.py BS client` (kafka-python 2.0.2) produces and consumes with each mechanism and checks a wrong
password is refused."""
import sys

BS, MODE = sys.argv[1], sys.argv[2]
PLAIN = ("PLAIN", "alice", "alice-secret")
SCRAM = ("SCRAM-SHA-256", "dave", "dave-secret")


def admin():
    from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialUpsertion)
    a = AdminClient({"bootstrap.servers": BS, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                     "sasl.username": PLAIN[1], "sasl.password": PLAIN[2]})
    up = UserScramCredentialUpsertion(SCRAM[1], ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                      SCRAM[2].encode())
    for f in a.alter_user_scram_credentials([up]).values():
        f.result(timeout=30)


def sasl(mech, user, pw):
    return dict(bootstrap_servers=BS, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mech,
                sasl_plain_username=user, sasl_plain_password=pw, request_timeout_ms=10000,
                api_version_auto_timeout_ms=10000)


def client():
    import kafka
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import NoBrokersAvailable
    assert kafka.__version__ == "2.0.2", kafka.__version__
    for mech, user, pw in (PLAIN, SCRAM):
        topic = "sasl-v0-" + mech.lower()
        p = KafkaProducer(**sasl(mech, user, pw))
        for i in range(10):
            p.send(topic, b"v%d" % i)
        p.flush(timeout=30)
        p.close()
        c = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **sasl(mech, user, pw))
        got = [m.value for m in c]
        c.close()
        assert got == [b"v%d" % i for i in range(10)], (mech, got)
        try:
            KafkaProducer(**sasl(mech, user, "wrong")).close()
        except NoBrokersAvailable:
            pass
        else:
            raise AssertionError(mech + ": a wrong password connected")
        print(mech, "ok")


admin() if MODE == "admin" else client()
