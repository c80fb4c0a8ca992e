#!/usr/bin/env bash
# Memory and start-up under two hostile conditions. Not a test.
#
#   bench/robustness.sh crash [STRATA_BIN]    start-up after SIGKILL with many partitions
#   bench/robustness.sh slow  [STRATA_BIN]    clients that pipeline fetches and never read the responses
#
# crash: a topic of $PARTS (200) partitions with 1000 records, SIGKILL, restart; prints the time from exec until
#        the ready line, the data dir's disk use and the broker's VmRSS afterwards (every active segment is
#        recovered, its indexes rebuilt).
# slow:  20000 × 500 B records in one partition; $CONNS (30) connections, each sending up to 2000 Fetch v4
#        requests (1 MiB each) with a 4 KiB receive buffer and reading nothing; prints the broker's RssAnon
#        before, while they wait (4 samples, 2 s apart), whether another client (kcat -L) is served meanwhile,
#        and after they close.
# Needs the interop clients (tests/interop/install.sh: confluent-kafka in $STRATA_INTEROP_PREFIX/venv) and kcat.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODE=${1:?crash or slow}
BIN=${2:-${CARGO_TARGET_DIR:-$ROOT/target}/release/strata}
[ -x "$BIN" ] || { echo "no strata binary at $BIN (cargo build --release -p strata-broker)" >&2; exit 1; }
PY=${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}/venv/bin/python
PORT=${PORT:-19991}
PARTS=${PARTS:-200}
CONNS=${CONNS:-30}
DATA=$(mktemp -d)
LOG=$DATA.log
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$DATA" "$LOG"; }
trap cleanup EXIT

start_broker() {
  : > "$LOG"
  "$BIN" --override "listeners=PLAINTEXT://127.0.0.1:$PORT" --override "log.dirs=$DATA" > "$LOG" 2>&1 &
  pid=$!
  for _ in $(seq 1200); do
    grep -q "strata ready" "$LOG" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
    sleep 0.01
  done
  echo "broker not ready after 12 s" >&2; exit 1
}

case "$MODE" in
crash)
  start_broker
  "$PY" - "$PORT" "$PARTS" <<'PY'
import sys
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
port, parts = sys.argv[1], int(sys.argv[2])
admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
admin.create_topics([NewTopic("many", parts, 1)])["many"].result()
p = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
for i in range(1000):
    p.produce("many", b"v%d" % i, partition=i % parts)
assert p.flush(30) == 0
PY
  echo "before the crash: disk $(du -sh "$DATA" | cut -f1), VmRSS $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") kB"
  kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
  t0=$(date +%s%N)
  start_broker
  t1=$(date +%s%N)
  echo "restart after SIGKILL: $(( (t1 - t0) / 1000000 )) ms to the ready line, disk $(du -sh "$DATA" | cut -f1), VmRSS $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") kB"
  ;;
slow)
  start_broker
  "$PY" - "$PORT" <<'PY'
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": f"127.0.0.1:{sys.argv[1]}", "linger.ms": 5})
for _ in range(20000):
    p.produce("slow", b"x" * 500, partition=0)
assert p.flush(30) == 0
PY
  "$PY" - "$PORT" "$pid" "$CONNS" <<'PY'
import socket, struct, subprocess, sys, time
port, pid, conns = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def rss_anon_mb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1]) // 1024
def s16(s):
    return struct.pack(">h", len(s)) + s.encode()
def fetch(corr, offset):
    header = struct.pack(">hhi", 1, 4, corr) + s16("slow-reader")
    body = (struct.pack(">iiiib", -1, 0, 1, 1 << 20, 0) + struct.pack(">i", 1) + s16("slow")
            + struct.pack(">i", 1) + struct.pack(">iqi", 0, offset, 1 << 20))
    return struct.pack(">i", len(header) + len(body)) + header + body
print("RssAnon before:", rss_anon_mb(), "MB")
socks = []
for _ in range(conns):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setblocking(False)
    for i in range(2000):
        try:
            s.send(fetch(i, (i * 2000) % 18000))
        except BlockingIOError:
            break
    socks.append(s)
samples = []
for _ in range(4):
    time.sleep(2)
    samples.append(rss_anon_mb())
print("RssAnon while", conns, "connections do not read:", samples, "MB")
other = subprocess.run(["kcat", "-L", "-b", f"127.0.0.1:{port}", "-m", "5"], capture_output=True)
print("another client served meanwhile:", other.returncode == 0)
for s in socks:
    s.close()
time.sleep(2)
print("RssAnon 2 s after they closed:", rss_anon_mb(), "MB")
PY
  ;;
*)
  echo "usage: bench/robustness.sh crash|slow [STRATA_BIN]" >&2; exit 2;;
esac
