#!/usr/bin/env bash
# strata's resident memory after the rdkafka rows of `bench/vs-kafka.sh full`, strata alone, for comparing builds
# (issue 33: RSS <= 0.1x Kafka's). Not a test.
#
#   bench/rss.sh NAME=BINARY [NAME=BINARY ...]
#
# Each round runs every binary once (rotating which goes first): a fresh broker (its own temp log dir, removed
# after), the 24 PLAINTEXT rows ({1,12} partitions x {100 B, 1 KiB} x acks {1, all} x {none, lz4, zstd}) with
# librdkafka's rdkafka_performance exactly as vs-kafka.sh runs them (-P then -C -G from the earliest offset), then
# the broker's VmRSS and VmHWM (peak) from /proc/PID/status right after the last row, and its VmRSS again after
# SETTLE seconds idle (the heap trim of broker/src/heap.rs runs every 5 s). Prints produce/consume MB/s and CPU
# s/GB per row, the load average per row, and a line per run.
#
# Knobs: ROUNDS (2), COUNT_SCALE (0.3, as the 2026-12-05 matrix: 90,000 x 100 B / 30,000 x 1 KiB per run),
# SETTLE (12 s), RDPERF (rdkafka_performance; default bench/kafka/rdkafka-perf.sh builds it), PY (a python with
# confluent-kafka to create the topics; default the interop venv's).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-2}
COUNT_SCALE=${COUNT_SCALE:-0.3}
SETTLE=${SETTLE:-12}
PY=${PY:-${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}/venv/bin/python}
WORK=$(mktemp -d)
# shellcheck source=bench/kafka/common.sh
. "$ROOT/bench/kafka/common.sh"
trap 'stop_strata; rm -rf "$WORK"' EXIT
[ $# -ge 1 ] || { echo "usage: $0 NAME=BINARY [NAME=BINARY ...]" >&2; exit 2; }
RDPERF=${RDPERF:-$("$ROOT/bench/kafka/rdkafka-perf.sh")}

ROWS=()
for p in 1 12; do for s in 100 1024; do for a in 1 all; do for c in none lz4 zstd; do
  ROWS+=("$p $s $a $c")
done; done; done; done
count_for() { awk -v s="$1" -v k="$COUNT_SCALE" 'BEGIN {printf "%d", (s == 100 ? 300000 : 100000) * k}'; }
cpu_per_gb() { awk -v t="$1" -v n="$2" -v s="$3" 'BEGIN {printf "%.1f", t / 100 / (2 * n * s / 1e9)}'; }
rd_produce_mb() { awk -F'|' '/^\|/ && $2+0 > 0 {b=$8} END {gsub(/ /,"",b); print b}'; }
rd_consume_mb() { awk -F'|' '/^\|/ && $2+0 > 0 {b=$7} END {gsub(/ /,"",b); print b}'; }

# run NAME BINARY: one broker, every row, the RSS figures.
run() {
  local name=$1 bin=$2 port data t0 tps=() row parts size acks codec t count c0 c1 pmb cmb rss hwm settled
  port=$(free_port)
  data=$WORK/data-$name
  mkdir -p "$data"
  "$bin" --override "log.dirs=$data" --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override http.listener= --override remote.log.storage.system.enable=false >"$WORK/$name.log" 2>&1 &
  STRATA_PID=$!
  t0=$(now_ms)
  until port_open "$port"; do
    kill -0 "$STRATA_PID" 2>/dev/null && [ $(($(now_ms) - t0)) -lt 60000 ] || { tail "$WORK/$name.log" >&2; exit 1; }
    sleep 0.01
  done
  for row in "${ROWS[@]}"; do tps+=("$(echo "rss-$row" | tr ' ' '-') ${row%% *}"); done
  "$PY" - "127.0.0.1:$port" "${tps[@]}" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in a.create_topics([NewTopic(t.split()[0], int(t.split()[1]), 1) for t in sys.argv[2:]], request_timeout=60).values():
    f.result(60)
PYEOF
  for row in "${ROWS[@]}"; do
    read -r parts size acks codec <<<"$row"
    t=$(echo "rss-$row" | tr ' ' '-')
    count=$(count_for "$size")
    c0=$(cpu_ticks "$STRATA_PID")
    pmb=$(timeout 120 "$RDPERF" -P -t "$t" -b "127.0.0.1:$port" -s "$size" -c "$count" \
      -a "$([ "$acks" = all ] && echo -1 || echo "$acks")" -z "$codec" -q -u -X linger.ms=5 -X batch.size=1000000 \
      -X queue.buffering.max.messages=1000000 2>/dev/null | rd_produce_mb)
    cmb=$(timeout 120 "$RDPERF" -C -G "g-$t" -t "$t" -b "127.0.0.1:$port" -c "$count" -q -u -X fetch.queue.backoff.ms=10 2>/dev/null |
      rd_consume_mb)
    c1=$(cpu_ticks "$STRATA_PID")
    echo "row $name | $parts | $size | $acks | $codec | $(load | cut -d' ' -f1) | ${pmb:--} | ${cmb:--} | $(cpu_per_gb $((c1 - c0)) "$count" "$size") |"
  done
  rss=$(($(rss_kib "$STRATA_PID" VmRSS) / 1024))
  hwm=$(($(rss_kib "$STRATA_PID" VmHWM) / 1024))
  sleep "$SETTLE"
  settled=$(($(rss_kib "$STRATA_PID" VmRSS) / 1024))
  echo "rss $name: after the rows $rss MiB, peak $hwm MiB, after ${SETTLE} s idle $settled MiB; load $(load)"
  stop_strata
  rm -rf "$data"
}

say "load $(load); ${#ROWS[@]} rows x $# binaries x $ROUNDS rounds, COUNT_SCALE=$COUNT_SCALE"
echo "row | name | parts | size | acks | codec | load | produce MB/s | consume MB/s | CPU s/GB |"
BINS=("$@")
for ((r = 0; r < ROUNDS; r++)); do
  for ((i = 0; i < ${#BINS[@]}; i++)); do
    spec=${BINS[$(((i + r) % ${#BINS[@]}))]}
    run "${spec%%=*}" "${spec#*=}"
  done
done
say "done; load $(load)"
