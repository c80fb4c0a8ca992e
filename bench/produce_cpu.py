#!/usr/bin/env python3
"""Broker CPU per produced and consumed record, for comparing strata builds (issue 30 item 5).

Each run starts a fresh broker from one of the given binaries (release builds; its own temporary log dir, only
`listeners` and `log.dirs` overridden so older builds start too), produces MESSAGES uncompressed 100-byte records
to one partition with confluent-kafka (librdkafka; acks=1, linger.ms=5, batch.size=1000000), then consumes them
all from the beginning, and stops the broker and deletes its data. The broker's CPU seconds (utime + stime from
/proc/PID/stat) are taken around each phase. Rounds run every binary once, rotating which goes first. Prints each
run with the load average, then per binary the medians of produce and consume CPU seconds and records/s.

  bench/produce_cpu.py [-n MESSAGES] [-r ROUNDS] [-s SIZE] NAME=BINARY [NAME=BINARY ...]

Needs the Python venv of tests/interop/install.sh (confluent-kafka). Not a test.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from confluent_kafka import Consumer, Producer, TopicPartition


def start(binary):
    d = tempfile.mkdtemp(prefix="strata-cpu-bench-")
    p = subprocess.Popen(
        [binary, "--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", f"log.dirs={d}"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env={**os.environ, "RUST_LOG": "warn,strata=info"})
    deadline = time.time() + 30
    for line in p.stderr:
        m = re.search(r"bootstrap\.servers=(\S+)", line)
        if m:
            return p, m.group(1), d
        if time.time() > deadline:
            break
    p.kill()
    raise SystemExit(f"{binary} did not print its bootstrap address")


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def run(binary, n, size):
    p, bs, d = start(binary)
    try:
        topic = "cpu-bench"
        payload = b"x" * size
        pr = Producer({"bootstrap.servers": bs, "acks": "1", "linger.ms": "5", "batch.size": 1000000,
                       "compression.type": "none", "queue.buffering.max.messages": 1000000})
        # Metadata + topic auto-creation before the clock starts.
        pr.produce(topic, payload)
        assert pr.flush(30) == 0
        c0, t0 = cpu(p.pid), time.time()
        for _ in range(n - 1):
            while True:
                try:
                    pr.produce(topic, payload)
                    break
                except BufferError:
                    pr.poll(0.001)
        assert pr.flush(120) == 0
        tp, cp = time.time() - t0, cpu(p.pid) - c0
        co = Consumer({"bootstrap.servers": bs, "group.id": "cpu-bench", "auto.offset.reset": "earliest",
                       "enable.auto.commit": False})
        co.assign([TopicPartition(topic, 0, 0)])
        got = 0
        c0, t0 = cpu(p.pid), time.time()
        while got < n:
            for m in co.consume(10000, 1.0):
                assert m.error() is None, m.error()
                got += 1
            assert time.time() - t0 < 300, "consume stalled"
        tc, cc = time.time() - t0, cpu(p.pid) - c0
        co.close()
        return cp, n / tp, cc, n / tc
    finally:
        p.terminate()
        p.wait(30)
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2_000_000)
    ap.add_argument("-r", type=int, default=5)
    ap.add_argument("-s", type=int, default=100)
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    bins = [b.split("=", 1) for b in a.bins]
    res = {name: [] for name, _ in bins}
    for r in range(a.r):
        order = bins[r % len(bins):] + bins[:r % len(bins)]
        for name, binary in order:
            load = os.getloadavg()[0]
            cp, rp, cc, rc = run(binary, a.n, a.s)
            res[name].append((cp, rp, cc, rc))
            print(f"round {r} {name:8s} load {load:5.2f}  produce {cp:.2f} CPU-s {rp:9.0f} rec/s  "
                  f"consume {cc:.2f} CPU-s {rc:9.0f} rec/s", flush=True)
    print(f"medians over {a.r} rounds of {a.n} x {a.s} B:")
    for name, _ in bins:
        m = [statistics.median(x[i] for x in res[name]) for i in range(4)]
        print(f"  {name:8s} produce {m[0]:.3f} CPU-s {m[1]:9.0f} rec/s   consume {m[2]:.3f} CPU-s {m[3]:9.0f} rec/s")


if __name__ == "__main__":
    main()
