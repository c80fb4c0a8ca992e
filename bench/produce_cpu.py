#!/usr/bin/env python3
"""Broker CPU per produced and consumed record, for comparing strata builds (issue 30 item 5).

Each run starts a fresh broker from one of the given binaries (release builds; its own temporary log dir, only
`listeners` and `log.dirs` overridden so older builds start too), produces MESSAGES uncompressed 100-byte records
to one partition with librdkafka's `rdkafka_performance` (acks=1, linger.ms=5, batch.size=1000000: a client fast
enough to fill its batches, as a Python loop is not), then consumes them all from the beginning with it, and
stops the broker and deletes its data. The broker's CPU seconds (utime + stime from
/proc/PID/stat) are taken around each phase. Rounds run every binary once, rotating which goes first. Prints each
run with the load average, then per binary the medians of produce and consume CPU seconds and records/s.
`PROFILE=DIR` records the broker with `perf record` during each produce phase (DIR/NAME-ROUND.perf);
`PROFILE_CALLGRAPH=dwarf` unwinds with debug info instead of frame pointers (release builds keep none).

  bench/produce_cpu.py [-n MESSAGES] [-r ROUNDS] [-s SIZE] NAME=BINARY [NAME=BINARY ...]

Needs rdkafka_performance (../shared/testing/build-rdkafka-perf.sh; RDKAFKA_PERF=path, default
~/.cache/strata-kafka/rdkafka_performance) and confluent-kafka (tests/interop/install.sh's venv) to create the
topic. Not a test.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from confluent_kafka import Producer

PERF = os.environ.get("RDKAFKA_PERF", os.path.expanduser("~/.cache/strata-kafka/rdkafka_performance"))


def start(binary):
    d = tempfile.mkdtemp(prefix="strata-cpu-bench-")
    log = open(os.path.join(d, "broker.log"), "w+")
    p = subprocess.Popen(
        [binary, "--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", f"log.dirs={d}/data"],
        stderr=log, stdout=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "warn,strata=info"})
    deadline = time.time() + 30
    while time.time() < deadline:
        m = re.search(r"bootstrap\.servers=(\S+)", open(log.name).read())
        if m:
            return p, m.group(1), d
        time.sleep(0.05)
    p.kill()
    raise SystemExit(f"{binary} did not print its bootstrap address")


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def run(binary, n, size, profile=None):
    p, bs, d = start(binary)
    try:
        topic = "cpu-bench"
        # Topic auto-creation and the client's metadata before the clock starts.
        pr = Producer({"bootstrap.servers": bs, "acks": "1"})
        pr.produce(topic, b"x" * size)
        assert pr.flush(30) == 0
        perf = None
        if profile:
            perf = subprocess.Popen(["perf", "record", "-q", "--call-graph", os.environ.get("PROFILE_CALLGRAPH", "fp"), "-F", "999", "-p", str(p.pid), "-o", profile],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        c0, t0 = cpu(p.pid), time.time()
        subprocess.run([PERF, "-P", "-t", topic, "-b", bs, "-s", str(size), "-c", str(n), "-a", "1", "-q",
                        "-X", "linger.ms=5", "-X", "batch.size=1000000", "-X", "compression.codec=none",
                        "-X", "queue.buffering.max.messages=1000000"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        tp, cp = time.time() - t0, cpu(p.pid) - c0
        if perf:
            perf.send_signal(2)
            perf.wait(60)
        c0, t0 = cpu(p.pid), time.time()
        subprocess.run([PERF, "-C", "-t", topic, "-p", "0", "-b", bs, "-o", "beginning", "-c", str(n), "-q"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        tc, cc = time.time() - t0, cpu(p.pid) - c0
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
            prof = os.environ.get("PROFILE")
            cp, rp, cc, rc = run(binary, a.n, a.s, prof and os.path.join(prof, f"{name}-{r}.perf"))
            res[name].append((cp, rp, cc, rc))
            print(f"round {r} {name:8s} load {load:5.2f}  produce {cp:.2f} CPU-s {rp:9.0f} rec/s  "
                  f"consume {cc:.2f} CPU-s {rc:9.0f} rec/s", flush=True)
    print(f"medians over {a.r} rounds of {a.n} x {a.s} B:")
    for name, _ in bins:
        m = [statistics.median(x[i] for x in res[name]) for i in range(4)]
        print(f"  {name:8s} produce {m[0]:.3f} CPU-s {m[1]:9.0f} rec/s   consume {m[2]:.3f} CPU-s {m[3]:9.0f} rec/s")


if __name__ == "__main__":
    main()
