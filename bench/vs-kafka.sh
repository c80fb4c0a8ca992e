#!/usr/bin/env bash
# strata against Apache Kafka 4.4 on the same machine, one after the other, with the same clients (issue 33 item 2):
# Kafka's own perf tools (org.apache.kafka.tools.ProducerPerformance / ConsumerPerformance through
# bench/kafka/kafka.sh run). Not a test.
#
#   bench/vs-kafka.sh [small|full]      (default small: three rows, a few minutes)
#
# Per row (partitions, record size, acks, compression): produce throughput (as fast as the tool goes), consume
# throughput (everything produced, from the beginning), produce latency p50/p99/p99.9 at a fixed rate of half
# Kafka's maximum for that row, and the broker's CPU seconds (utime + stime from /proc/PID/stat) per GB produced and
# consumed. Per broker: start-to-serving time (launch to the listener accepting), RSS after the rows and its peak
# (VmRSS / VmHWM). `uptime` load is recorded beside the figures: the machine is shared.
#
# Knobs: STRATA_BIN (default: cargo build --release, then target/release/strata), COUNT (records per throughput
# run; default 300000 for 100 B, 100000 for 1 KiB), LAT_SECONDS (10, length of the fixed-rate run), OUT (a
# markdown file to append the table to; default: stdout only). Data goes to a temp dir, removed at exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KAFKA="$ROOT/bench/kafka/kafka.sh"
MATRIX=${1:-small}
LAT_SECONDS=${LAT_SECONDS:-10}
WORK=$(mktemp -d)
STRATA_PID=""
cleanup() {
  [ -n "$STRATA_PID" ] && kill "$STRATA_PID" 2>/dev/null || true
  "$KAFKA" stop "$WORK/kafka" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

case "$MATRIX" in
  small) ROWS=("1 100 1 none" "12 1024 all lz4" "12 1024 all zstd") ;;
  full)
    ROWS=()
    for p in 1 12; do for s in 100 1024; do for a in 1 all; do for c in none lz4 zstd; do
      ROWS+=("$p $s $a $c")
    done; done; done; done ;;
  *) echo "usage: $0 [small|full]" >&2; exit 2 ;;
esac

if [ -z "${STRATA_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p strata-broker --bin strata)
  STRATA_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/strata"
fi
cp "$STRATA_BIN" "$WORK/strata" # a shared target dir may be rebuilt meanwhile
"$KAFKA" install >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
tool() { "$KAFKA" run "$@" 2>/dev/null; }

start_kafka() { # port -> sets PID, START_MS
  local out
  out=$("$KAFKA" start "$WORK/kafka" "$1")
  START_MS=$(echo "$out" | awk '/^ready/ {print $3}')
  PID=$(cat "$WORK/kafka/kafka.pid")
}
start_strata() { # port -> sets PID, START_MS
  local t0 deadline
  mkdir -p "$WORK/strata-data"
  t0=$(now_ms)
  "$WORK/strata" --override "log.dirs=$WORK/strata-data" --override "listeners=PLAINTEXT://127.0.0.1:$1" \
    --override http.listener= --override remote.log.storage.system.enable=false >"$WORK/strata.log" 2>&1 &
  STRATA_PID=$!
  PID=$STRATA_PID
  deadline=$((t0 + 60000))
  until port_open "$1"; do
    [ "$(now_ms)" -lt "$deadline" ] || { tail "$WORK/strata.log" >&2; exit 1; }
    sleep 0.02
  done
  START_MS=$(($(now_ms) - t0))
}

# One row against the broker at $BS (PID $PID): prints "prodMB/s prodRec/s consMB/s p50 p99 p999 cpu_s_per_GB".
run_row() { # parts size acks codec rate
  local parts=$1 size=$2 acks=$3 codec=$4 rate=$5 t count c0 c1 prod cons lat lcount
  count=${COUNT:-$([ "$size" = 100 ] && echo 300000 || echo 100000)}
  t="vs-p$parts-s$size-a$acks-$codec-$RANDOM"
  tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$BS" --create --topic "$t" --partitions "$parts" \
    --replication-factor 1 >/dev/null
  c0=$(cpu_ticks "$PID")
  prod=$(tool org.apache.kafka.tools.ProducerPerformance --topic "$t" --num-records "$count" --record-size "$size" \
    --throughput -1 --producer-props "bootstrap.servers=$BS" "acks=$acks" "compression.type=$codec" \
    linger.ms=5 batch.size=262144 | tail -1)
  cons=$(tool org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$BS" --topic "$t" --messages "$count" \
    --timeout 60000 | tail -1)
  c1=$(cpu_ticks "$PID")
  # The fixed rate: half of this run's maximum when none is given (Kafka's rows); strata's rows get Kafka's.
  [ -n "$rate" ] || rate=$(echo "$prod" | sed -E 's/.* ([0-9.]+) records\/sec.*/\1/' | awk '{printf "%d", $1 / 2}')
  lcount=$((rate * LAT_SECONDS))
  lat=$(tool org.apache.kafka.tools.ProducerPerformance --topic "$t" --num-records "$lcount" --record-size "$size" \
    --throughput "$rate" --producer-props "bootstrap.servers=$BS" "acks=$acks" "compression.type=$codec" \
    linger.ms=0 | tail -1)
  # "N records sent, R records/sec (M MB/sec), ..." ; consumer CSV: start, end, MB, MB.sec, nMsg, nMsg.sec, ...
  local pmb cmb p50 p99 p999 gb
  pmb=$(echo "$prod" | sed -E 's/.*\(([0-9.]+) MB\/sec\).*/\1/')
  cmb=$(echo "$cons" | awk -F', *' '{print $4}')
  p50=$(echo "$lat" | sed -E 's/.* ([0-9]+) ms 50th.*/\1/')
  p99=$(echo "$lat" | sed -E 's/.* ([0-9]+) ms 99th.*/\1/')
  p999=$(echo "$lat" | sed -E 's/.* ([0-9]+) ms 99.9th.*/\1/')
  gb=$(awk -v n="$count" -v s="$size" 'BEGIN {print 2 * n * s / 1e9}')
  echo "$pmb $rate $cmb $p50 $p99 $p999 $(awk -v t=$((c1 - c0)) -v g="$gb" 'BEGIN {printf "%.1f", t / 100 / g}')"
}

declare -A K S
RATE=()
bench() { # broker
  local port i
  port=$(free_port)
  BS="127.0.0.1:$port"
  "start_$1" "$port"
  eval "$1_START=$START_MS"
  for i in "${!ROWS[@]}"; do
    read -r parts size acks codec <<<"${ROWS[$i]}"
    local rate=${RATE[$i]:-}
    local r
    r=$(run_row "$parts" "$size" "$acks" "$codec" "$rate")
    if [ "$1" = kafka ]; then
      K[$i]=$r
      RATE[$i]=$(echo "$r" | awk '{print $2}')
    else
      S[$i]=$r
    fi
    echo "$1 ${ROWS[$i]}: $r" >&2
  done
  eval "$1_RSS=$(($(rss_kib "$PID" VmRSS) / 1024))"
  eval "$1_HWM=$(($(rss_kib "$PID" VmHWM) / 1024))"
  if [ "$1" = kafka ]; then "$KAFKA" stop "$WORK/kafka" >/dev/null; else kill "$STRATA_PID"; wait "$STRATA_PID" || true; STRATA_PID=""; fi
}

LOAD0=$(uptime | sed 's/.*load average: //')
T0=$(date -u +%H:%M)
bench kafka
bench strata
LOAD1=$(uptime | sed 's/.*load average: //')

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 == 0) print "-"; else printf "%.3g", a / b}'; }
{
  echo "## strata vs Apache Kafka 4.4 (issue 33 item 2), $(date -u +%F) $T0–$(date -u +%H:%M) UTC, \`bench/vs-kafka.sh $MATRIX\`"
  echo
  echo "Same clients for both (Kafka 4.4's ProducerPerformance / ConsumerPerformance), one broker after the other on"
  echo "loopback; $("$WORK/strata" --version 2>/dev/null | head -1), release build (STRATA_BIN=${STRATA_BIN}), tree at commit $(git -C "$ROOT" rev-parse --short HEAD)."
  echo "Load average (1/5/15 min) before: $LOAD0; after: $LOAD1 (2 cores shared with other builds: figures are noisy)."
  echo "Ratios are strata / Kafka (throughput: higher is better; latency, CPU: lower is better). Latency at a fixed"
  echo "rate of half Kafka's maximum for the row, linger.ms=0, ${LAT_SECONDS} s."
  echo
  echo "| partitions | size | acks | codec | produce MB/s K / S (ratio) | consume MB/s K / S (ratio) | p50 ms K / S | p99 ms K / S | p99.9 ms K / S | CPU s/GB K / S (ratio) |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for i in "${!ROWS[@]}"; do
    read -r parts size acks codec <<<"${ROWS[$i]}"
    read -r kp _ kc k50 k99 k999 kcpu <<<"${K[$i]}"
    read -r sp _ sc s50 s99 s999 scpu <<<"${S[$i]}"
    echo "| $parts | $size | $acks | $codec | $kp / $sp ($(ratio "$sp" "$kp")) | $kc / $sc ($(ratio "$sc" "$kc")) | $k50 / $s50 | $k99 / $s99 | $k999 / $s999 | $kcpu / $scpu ($(ratio "$scpu" "$kcpu")) |"
  done
  echo
  echo "| broker | start to serving ms | RSS after the rows MiB | peak RSS MiB |"
  echo "|---|---|---|---|"
  echo "| Kafka 4.4 | $kafka_START | $kafka_RSS | $kafka_HWM |"
  echo "| strata | $strata_START | $strata_RSS | $strata_HWM |"
  echo "| ratio | $(ratio "$strata_START" "$kafka_START") | $(ratio "$strata_RSS" "$kafka_RSS") | $(ratio "$strata_HWM" "$kafka_HWM") |"
  echo
} | tee -a "${OUT:-/dev/null}"
