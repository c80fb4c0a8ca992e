#!/usr/bin/env bash
# strata against Apache Kafka 4.4 on the same machine with the same clients (issue 33 item 2). Not a test.
#
#   bench/vs-kafka.sh [small|full|smoke]   the throughput/latency/CPU matrix (default small)
#   bench/vs-kafka-restart.sh              restart with 10,000 partitions, clean and after SIGKILL
#   bench/vs-kafka-tiered.sh               tiered: Kafka's RemoteLogManager (filesystem RSM) vs strata's fs tier
#
# Both brokers run at once (Kafka 4.4 KRaft combined mode from bench/kafka/kafka.sh; strata release build), each
# with a PLAINTEXT and a SASL_SSL (PLAIN, one PKCS12 keystore) listener; every row runs on both (Kafka first for the
# java client, alternating for rdkafka), so load from the shared machine hits both alike. Rows: partitions, record size, acks, compression, protocol;
# `full` = {1,12} x {100 B, 1 KiB} x {acks 1, all} x {none, lz4, zstd} over PLAINTEXT (24 rows) plus 4 SASL_SSL rows;
# `small` = 3 PLAINTEXT rows and 1 SASL_SSL row; `smoke` = 2 tiny rows (checks that the script works).
# Per row and client (CLIENTS, default "java rdkafka"):
#   java     Kafka 4.4's ProducerPerformance (as fast as it goes; linger.ms=5, batch.size=262144) and
#            ConsumerPerformance (everything, from the beginning); then produce latency p50/p99/p99.9 at a fixed rate
#            of half Kafka's maximum of the row (linger.ms=0, LAT_SECONDS), the same rate for strata
#   rdkafka  librdkafka's rdkafka_performance -P (keyless: the sticky partitioner; linger.ms=5, batch.size=1000000)
#            and -C -G (a fresh group, from the earliest offset; fetch.queue.backoff.ms=10: with the default 1000 a
#            consumer whose queue passed queued.max.messages.kbytes waits a whole second before it fetches again, so
#            a compressed 12-partition row took 1 s more on whichever broker's partitions the sticky partitioner had
#            filled less evenly: 0.13-0.28x one run, 1.15-1.3x with 10 ms, 2026-12-05)
# CPU s/GB = the broker's utime+stime (/proc/PID/stat) over the produce and consume runs / (bytes produced +
# consumed, uncompressed). Per broker: launch to serving (port accepting; Kafka: its "started" log line too), and
# RSS (VmRSS after all rows, VmHWM = peak). `uptime` load is printed with every row: the machine is shared.
#
# Knobs: STRATA_BIN (default: cargo build --release, target/release/strata), RDPERF (rdkafka_performance; default:
# bench/kafka/rdkafka-perf.sh builds it), COUNT_SCALE (1: 300,000 x 100 B / 100,000 x 1 KiB per run; 0.5 halves),
# CONSUME_RUNS (3: rdkafka consumes each row's records this many times with fresh groups and shows the median MB/s; a
# 100 B consume is bound by the client's per-message cost and lands on one of two plateaus run to run), LAT_SECONDS (10), CLIENTS, OUT (a markdown file to append the tables to), STOP_AT (a `date -d` time: rows not
# started by then are skipped and left out of the tables), PIN ("BROKER_CPUS CLIENT_CPUS", e.g. "0 1": every thread
# of both brokers on BROKER_CPUS and the clients on CLIENT_CPUS, with `taskset`, so a client and a broker never take
# each other's core; unset, all share the machine). Data under a temp dir, removed at exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MATRIX=${1:-small}
LAT_SECONDS=${LAT_SECONDS:-10}
CLIENTS=${CLIENTS:-java rdkafka}
WORK=$(mktemp -d)
# shellcheck source=bench/kafka/common.sh
. "$ROOT/bench/kafka/common.sh"
trap 'common_cleanup; rm -rf "$WORK"' EXIT

case "$MATRIX" in
  smoke) ROWS=("1 100 1 none plain" "12 1024 all zstd sasl"); COUNT_SCALE=${COUNT_SCALE:-0.05}; LAT_SECONDS=2 ;;
  small) ROWS=("1 100 1 none plain" "12 1024 all lz4 plain" "12 1024 all zstd plain" "12 1024 1 none sasl") ;;
  full)
    ROWS=()
    for p in 1 12; do for s in 100 1024; do for a in 1 all; do for c in none lz4 zstd; do
      ROWS+=("$p $s $a $c plain")
    done; done; done; done
    ROWS+=("1 100 1 none sasl" "1 1024 1 none sasl" "12 100 1 none sasl" "12 1024 all lz4 sasl") ;;
  *) echo "usage: $0 [small|full|smoke]" >&2; exit 2 ;;
esac
COUNT_SCALE=${COUNT_SCALE:-1}
CONSUME_RUNS=${CONSUME_RUNS:-3}

strata_bin
"$KAFKA" install >/dev/null
case " $CLIENTS " in *" rdkafka "*) rdperf_bin ;; esac
tls_material

count_for() { awk -v s="$1" -v k="$COUNT_SCALE" 'BEGIN {printf "%d", (s == 100 ? 300000 : 100000) * k}'; }

# java_row BS proto parts size acks codec rate topic -> "prodMB/s prodRec/s consMB/s p50 p99 p999 cpu_s/GB"
java_row() {
  local bs=$1 proto=$2 parts=$3 size=$4 acks=$5 codec=$6 rate=$7 t=$8 count c0 c1 prod cons lat sec=()
  count=$(count_for "$size")
  [ "$proto" = sasl ] && sec=(--command-config "$WORK/tls/client.properties")
  c0=$(cpu_ticks "$PID")
  prod=$(tool org.apache.kafka.tools.ProducerPerformance --topic "$t" --num-records "$count" --record-size "$size" \
    --throughput -1 "${sec[@]}" --producer-props "bootstrap.servers=$bs" "acks=$acks" "compression.type=$codec" \
    linger.ms=5 batch.size=262144 | tail -1)
  [ "$proto" = sasl ] && sec=(--command-config "$WORK/tls/client.properties")
  cons=$(tool org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$bs" --topic "$t" --messages "$count" \
    --timeout 60000 "${sec[@]}" | tail -1)
  c1=$(cpu_ticks "$PID")
  [ -n "$rate" ] || rate=$(echo "$prod" | sed -E 's/.* ([0-9.]+) records\/sec.*/\1/' | awk '{printf "%d", $1 / 2}')
  [ "$proto" = sasl ] && sec=(--command-config "$WORK/tls/client.properties")
  lat=$(tool org.apache.kafka.tools.ProducerPerformance --topic "$t" --num-records "$((rate * LAT_SECONDS))" \
    --record-size "$size" --throughput "$rate" "${sec[@]}" --producer-props "bootstrap.servers=$bs" "acks=$acks" \
    "compression.type=$codec" linger.ms=0 | tail -1)
  # "N records sent, R records/sec (M MB/sec), ..."; consumer CSV: start, end, MB, MB.sec, nMsg, nMsg.sec, ...
  local pmb cmb p50 p99 p999
  pmb=$(echo "$prod" | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')
  cmb=$(echo "$cons" | awk -F', *' 'NF > 4 {print $4}')
  p50=$(echo "$lat" | sed -nE 's/.* ([0-9]+) ms 50th.*/\1/p')
  p99=$(echo "$lat" | sed -nE 's/.* ([0-9]+) ms 99th.*/\1/p')
  p999=$(echo "$lat" | sed -nE 's/.* ([0-9]+) ms 99.9th.*/\1/p')
  echo "${pmb:--} $rate ${cmb:--} ${p50:--} ${p99:--} ${p999:--} $(cpu_per_gb $((c1 - c0)) "$count" "$size")"
}

cpu_per_gb() { awk -v t="$1" -v n="$2" -v s="$3" 'BEGIN {printf "%.1f", t / 100 / (2 * n * s / 1e9)}'; }
# rdkafka_performance -u prints a table; the last data row holds the totals (msgs/s in column 7/6, MB/s in 8/7).
rd_produce_mb() { awk -F'|' '/^\|/ && $2+0 > 0 {b=$8} END {gsub(/ /,"",b); print b}'; }
rd_consume_mb() { awk -F'|' '/^\|/ && $2+0 > 0 {b=$7} END {gsub(/ /,"",b); print b}'; }

# rdkafka_row BS proto parts size acks codec topic -> "prodMB/s consMB/s cpu_s/GB"
rdkafka_row() {
  local bs=$1 proto=$2 size=$4 acks=$5 codec=$6 t=$7 count c0 c1 pmb cmb sec=()
  count=$(count_for "$size")
  [ "$proto" = sasl ] && sec=("${RDKAFKA_SASL[@]}")
  c0=$(cpu_ticks "$PID")
  pmb=$("$RDPERF" -P -t "$t" -b "$bs" -s "$size" -c "$count" -a "$([ "$acks" = all ] && echo -1 || echo "$acks")" \
    -z "$codec" -q -u -X linger.ms=5 -X batch.size=1000000 -X queue.buffering.max.messages=1000000 "${sec[@]}" \
    2>/dev/null | rd_produce_mb)
  cmb=$(timeout 120 "$RDPERF" -C -G "g-$t" -t "$t" -b "$bs" -c "$count" -q -u -X fetch.queue.backoff.ms=10 "${sec[@]}" 2>/dev/null | rd_consume_mb)
  c1=$(cpu_ticks "$PID")
  # More consumes of the same records (fresh groups), outside the CPU window; the row shows the median.
  local runs=("${cmb:-0}") i
  for ((i = 2; i <= CONSUME_RUNS; i++)); do
    runs+=("$(timeout 120 "$RDPERF" -C -G "g-$t-$i" -t "$t" -b "$bs" -c "$count" -q -u -X fetch.queue.backoff.ms=10 "${sec[@]}" 2>/dev/null |
      rd_consume_mb)")
  done
  cmb=$(printf '%s\n' "${runs[@]}" | sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}')
  echo "${pmb:--} ${cmb:--} $(cpu_per_gb $((c1 - c0)) "$count" "$size")"
}

# create_topics BS "topic parts" ...: with confluent-kafka's AdminClient when the interop venv has it (one process for
# all rows), else one TopicCommand per topic.
PY=${PY:-${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}/venv/bin/python}
create_topics() {
  local bs=$1 tp
  shift
  if [ -x "$PY" ] && "$PY" -c 'import confluent_kafka' 2>/dev/null; then
    "$PY" - "$bs" "$@" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
ts = [NewTopic(t.split()[0], int(t.split()[1]), 1) for t in sys.argv[2:]]
for f in a.create_topics(ts, request_timeout=120).values():
    f.result(120)
PYEOF
  else
    for tp in "$@"; do
      tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bs" --create --topic "${tp% *}" \
        --partitions "${tp#* }" --replication-factor 1 >/dev/null
    done
  fi
}
topic_name() { echo "vs-$1-p$2-s$3-a$4-$5-$6"; } # client parts size acks codec proto

say "load $(load); starting Kafka and strata"
KP=$(free_port); KS=$(free_port); SP=$(free_port); SS=$(free_port)
LOAD0=$(load)
T0=$(date -u +%H:%M)
start_kafka "$KP" "$KS" "$WORK/kafka"
KPID=$PID
KSTART=$START_MS
start_strata "$SP" "$SS" "$WORK/strata-data" --override remote.log.storage.system.enable=false
SPID=$PID
SSTART=$START_MS
say "started: Kafka ${KSTART} ms, strata ${SSTART} ms"
PINNED=""
if [ -n "${PIN:-}" ]; then
  read -r BROKER_CPUS CLIENT_CPUS <<<"$PIN"
  taskset -a -p -c "$BROKER_CPUS" "$KPID" >/dev/null
  taskset -a -p -c "$BROKER_CPUS" "$SPID" >/dev/null
  # Clients (rdkafka_performance, the Java tools, the topic creator) start on CLIENT_CPUS from here on.
  taskset -p -c "$CLIENT_CPUS" $$ >/dev/null
  PINNED="brokers on CPU $BROKER_CPUS and clients on CPU $CLIENT_CPUS (taskset); "
  say "pinned: $PINNED"
fi

TOPICS=()
for row in "${ROWS[@]}"; do
  read -r parts size acks codec proto <<<"$row"
  for client in $CLIENTS; do TOPICS+=("$(topic_name "$client" "$parts" "$size" "$acks" "$codec" "$proto") $parts"); done
done
create_topics "127.0.0.1:$KP" "${TOPICS[@]}"
create_topics "127.0.0.1:$SP" "${TOPICS[@]}"
STOP_EPOCH=$([ -n "${STOP_AT:-}" ] && date -d "$STOP_AT" +%s || echo 9999999999)
declare -A JK JS RK RS ROWLOAD
DONE_ROWS=()
for i in "${!ROWS[@]}"; do
  if [ "$(date +%s)" -ge "$STOP_EPOCH" ]; then say "STOP_AT reached: rows from ${ROWS[$i]} on not run"; break; fi
  DONE_ROWS+=("$i")
  read -r parts size acks codec proto <<<"${ROWS[$i]}"
  ROWLOAD[$i]=$(load)
  for client in $CLIENTS; do
    rate=""
    # Java rows need Kafka first (the latency rate is half its maximum); rdkafka rows alternate which broker goes
    # first, so what one broker leaves running after its row (flushes, GC) does not always land on the other.
    order="kafka strata"
    [ "$client" = rdkafka ] && ((i % 2)) && order="strata kafka"
    for b in $order; do
      # What the row before wrote is flushed first: dirty pages past the kernel's threshold throttle whichever
      # broker writes next (a 1 KiB uncompressed row measured 0.59x one run and 1.29x the run before).
      sync
      if [ $b = kafka ]; then PID=$KPID; port=$KP; sport=$KS; else PID=$SPID; port=$SP; sport=$SS; fi
      bs=127.0.0.1:$([ "$proto" = sasl ] && echo "$sport" || echo "$port")
      t=$(topic_name "$client" "$parts" "$size" "$acks" "$codec" "$proto")
      if [ "$client" = java ]; then
        r=$(java_row "$bs" "$proto" "$parts" "$size" "$acks" "$codec" "$rate" "$t")
        [ $b = kafka ] && { JK[$i]=$r; rate=$(echo "$r" | awk '{print $2}'); } || JS[$i]=$r
      else
        r=$(rdkafka_row "$bs" "$proto" "$parts" "$size" "$acks" "$codec" "$t")
        [ $b = kafka ] && RK[$i]=$r || RS[$i]=$r
      fi
      say "load $(load); $client $b ${ROWS[$i]}: $r"
    done
  done
done
KRSS=$(($(rss_kib "$KPID" VmRSS) / 1024)); KHWM=$(($(rss_kib "$KPID" VmHWM) / 1024))
SRSS=$(($(rss_kib "$SPID" VmRSS) / 1024)); SHWM=$(($(rss_kib "$SPID" VmHWM) / 1024))
LOAD1=$(load)

{
  echo "## strata vs Apache Kafka 4.4 (issue 33 item 2), $(date -u +%F) $T0–$(date -u +%H:%M) UTC, \`bench/vs-kafka.sh $MATRIX\`"
  echo
  echo "Both brokers up at once, each row on both (Kafka first for java, alternating for rdkafka); ${PINNED}$("$WORK/strata" --version 2>/dev/null | head -1)"
  echo "release build, tree at commit $(git -C "$ROOT" rev-parse --short HEAD); COUNT_SCALE=$COUNT_SCALE (1 = 300,000 x 100 B or"
  echo "100,000 x 1 KiB per run), latency at half Kafka's maximum for ${LAT_SECONDS} s; rdkafka consume MB/s the median of ${CONSUME_RUNS} consumes. Load average (1/5/15 min) before:"
  echo "$LOAD0; after: $LOAD1; per row below. Ratios are strata / Kafka (throughput: higher is better; latency, CPU:"
  echo "lower is better). Rows run: ${#DONE_ROWS[@]} of ${#ROWS[@]}."
  echo
  if [[ " $CLIENTS " = *" java "* ]]; then
    echo "Kafka's Java perf tools:"
    echo
    echo "| parts | size | acks | codec | proto | load | produce MB/s K / S (ratio) | consume MB/s K / S (ratio) | p50 ms K / S | p99 ms K / S | p99.9 ms K / S | CPU s/GB K / S (ratio) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for i in "${DONE_ROWS[@]}"; do
      read -r parts size acks codec proto <<<"${ROWS[$i]}"
      read -r kp _ kc k50 k99 k999 kcpu <<<"${JK[$i]}"
      read -r sp _ sc s50 s99 s999 scpu <<<"${JS[$i]}"
      echo "| $parts | $size | $acks | $codec | $proto | ${ROWLOAD[$i]%% *} | $kp / $sp ($(ratio "$sp" "$kp")) | $kc / $sc ($(ratio "$sc" "$kc")) | $k50 / $s50 | $k99 / $s99 | $k999 / $s999 | $kcpu / $scpu ($(ratio "$scpu" "$kcpu")) |"
    done
    echo
  fi
  if [[ " $CLIENTS " = *" rdkafka "* ]]; then
    echo "librdkafka's rdkafka_performance:"
    echo
    echo "| parts | size | acks | codec | proto | produce MB/s K / S (ratio) | consume MB/s K / S (ratio) | CPU s/GB K / S (ratio) |"
    echo "|---|---|---|---|---|---|---|---|"
    for i in "${DONE_ROWS[@]}"; do
      read -r parts size acks codec proto <<<"${ROWS[$i]}"
      read -r kp kc kcpu <<<"${RK[$i]}"
      read -r sp sc scpu <<<"${RS[$i]}"
      echo "| $parts | $size | $acks | $codec | $proto | $kp / $sp ($(ratio "$sp" "$kp")) | $kc / $sc ($(ratio "$sc" "$kc")) | $kcpu / $scpu ($(ratio "$scpu" "$kcpu")) |"
    done
    echo
  fi
  echo "| broker | launch to serving ms | RSS after the rows MiB | peak RSS MiB |"
  echo "|---|---|---|---|"
  echo "| Kafka 4.4 | $KSTART | $KRSS | $KHWM |"
  echo "| strata | $SSTART | $SRSS | $SHWM |"
  echo "| ratio | $(ratio "$SSTART" "$KSTART") | $(ratio "$SRSS" "$KRSS") | $(ratio "$SHWM" "$KHWM") |"
  echo
} | tee -a "${OUT:-/dev/null}"
