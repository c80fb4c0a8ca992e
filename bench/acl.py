#!/usr/bin/env python3
"""Authorizer cost (issue 31): produce/consume throughput and broker CPU with the authorizer off vs on with 1,000 ACLs.

Two `strata` processes (the given binary, release build), one without an authorizer and one with Kafka's
StandardAuthorizer and 1,000 bindings written to its acls.json before start (the client, User:ANONYMOUS, is allowed
through prefixed grants among them: every check walks literal, prefix and wildcard lookups; no super user). Runs
alternate off/on, swapping which goes first each round (the second run writes while the kernel flushes the
first's pages), with confluent-kafka (librdkafka): 1 KiB and 100-byte messages, acks=1, linger.ms=5, one
partition. Prints each round and the median on/off ratios of throughput and broker CPU seconds.

  bench/acl.py <strata-binary> [MESSAGES [ROUNDS]]   (needs confluent-kafka: tests/interop/install.sh's venv)
"""
import json, os, subprocess, sys, time, re, tempfile, statistics
from confluent_kafka import Producer, Consumer
BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 500000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 6
def bindings():
    out = []
    b = lambda rt, name, pt, who, op: {"resource_type": rt, "resource_name": name, "pattern_type": pt, "principal": who, "host": "*", "operation": op, "permission": "ALLOW"}
    for i in range(996):
        who = f"User:svc-{i % 50}"
        out.append([b("TOPIC", f"orders-{i}", "LITERAL", who, "READ"), b("TOPIC", f"be{i}-", "PREFIXED", who, "WRITE"), b("GROUP", f"group-{i}", "LITERAL", who, "READ")][i % 3])
    me = "User:ANONYMOUS"
    out += [b("TOPIC", "bench-", "PREFIXED", me, "WRITE"), b("TOPIC", "bench-", "PREFIXED", me, "READ"), b("TOPIC", "bench-", "PREFIXED", me, "CREATE"),
            b("GROUP", "bench-", "PREFIXED", me, "READ")]
    return out
def start(on):
    d = tempfile.mkdtemp()
    args = [BIN, "--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", f"log.dirs={d}", "--override", "http.listener=",
            "--override", "remote.log.storage.system.enable=false"]
    if on:
        os.makedirs(d, exist_ok=True)
        # acls.json sits in the metadata dir (the first log dir)
        json.dump(bindings(), open(os.path.join(d, "acls.json"), "w"))
        args += ["--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"]
    p = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env={**os.environ, "RUST_LOG": "info"})
    for line in p.stderr:
        if "acls=" in line: print("   ", line.strip()[-80:])
        m = re.search(r"bootstrap\.servers=(\S+)", line)
        if m: return p, m.group(1)
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
def run(p, bs, topic, size):
    payload = b"x" * size
    pr = Producer({"bootstrap.servers": bs, "acks": "1", "linger.ms": "5", "queue.buffering.max.messages": 1000000})
    c0 = cpu(p.pid); t0 = time.time()
    for _ in range(N):
        while True:
            try: pr.produce(topic, payload); break
            except BufferError: pr.poll(0.001)
    assert pr.flush(120) == 0
    tp = time.time() - t0; cp = cpu(p.pid) - c0
    co = Consumer({"bootstrap.servers": bs, "group.id": "bench-" + topic, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    co.subscribe([topic]); got = 0
    c0 = cpu(p.pid); t0 = time.time()
    while got < N:
        for m in co.consume(10000, 1.0):
            assert m.error() is None, m.error(); got += 1
        assert time.time() - t0 < 300
    tc = time.time() - t0; cc = cpu(p.pid) - c0
    co.close()
    return N / tp, N / tc, cp, cc
off, bs_off = start(False); on, bs_on = start(True)
for shape, size in [("1KiB", 1024), ("100B", 100)]:
    rp, rc, cpp, cpc = [], [], [], []
    for r in range(ROUNDS):
        # Alternate which goes first (the second run writes while the kernel flushes the first's pages).
        if r % 2 == 0:
            a = run(off, bs_off, f"bench-off-{shape}-{r}", size); b = run(on, bs_on, f"bench-on-{shape}-{r}", size)
        else:
            b = run(on, bs_on, f"bench-on-{shape}-{r}", size); a = run(off, bs_off, f"bench-off-{shape}-{r}", size)
        print(f"{shape} round {r}: off produce {a[0]:8.0f}/s consume {a[1]:8.0f}/s broker CPU {a[2]:.2f}+{a[3]:.2f} s | on produce {b[0]:8.0f}/s consume {b[1]:8.0f}/s broker CPU {b[2]:.2f}+{b[3]:.2f} s", flush=True)
        rp.append(b[0] / a[0]); rc.append(b[1] / a[1]); cpp.append(b[2] / max(a[2], 0.01)); cpc.append(b[3] / max(a[3], 0.01))
    print(f"{shape}: median on/off throughput produce {100*statistics.median(rp):.1f} %, consume {100*statistics.median(rc):.1f} %; broker CPU produce {100*statistics.median(cpp):.1f} %, consume {100*statistics.median(cpc):.1f} %", flush=True)
off.terminate(); on.terminate()
