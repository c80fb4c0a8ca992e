#!/usr/bin/env bash
# Throughput and latency of a running Kafka-compatible broker, driven by librdkafka's rdkafka_performance.
# Not a test. Point it at strata or any other broker for a side-by-side figure.
#
#   bench/run.sh BOOTSTRAP            e.g. bench/run.sh 127.0.0.1:9092
#
# Needs: rdkafka_performance (../shared/testing/build-rdkafka-perf.sh; or RDKAFKA_PERF=/path) and the Python
# venv of tests/interop/install.sh (topics are created through confluent-kafka's admin API so every broker gets
# the same partition counts). Knobs: COUNT_100B (2000000), COUNT_1K (500000), RATE (10000 msg/s for latency),
# LAT_COUNT (50000).
#
# Measures, per message size (100 B, 1 KiB) and partition count (1, 8): produce throughput (acks=1) and
# consume throughput (from the beginning of what was produced); then produce latency (acks=1, linger.ms=0)
# at a fixed moderate rate, reporting p50/p99/max from per-message delivery latencies.
set -euo pipefail
BS=${1:?usage: bench/run.sh BOOTSTRAP}
PERF=${RDKAFKA_PERF:-$HOME/.kharness/bin/rdkafka_performance}
PY=${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}/venv/bin/python
COUNT_100B=${COUNT_100B:-2000000}
COUNT_1K=${COUNT_1K:-500000}
RATE=${RATE:-10000}
LAT_COUNT=${LAT_COUNT:-50000}
[ -x "$PERF" ] || { echo "rdkafka_performance not found at $PERF (run ../shared/testing/build-rdkafka-perf.sh)" >&2; exit 1; }
[ -x "$PY" ] || { echo "python venv not found at $PY (run tests/interop/install.sh)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RUN=$(date +%s)

create_topic() { # name partitions
  "$PY" - "$BS" "$1" "$2" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
bs, name, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({"bootstrap.servers": bs})
fs = admin.create_topics([NewTopic(name, num_partitions=parts, replication_factor=1)])
fs[name].result(30)
PYEOF
}

# Last table row of `rdkafka_performance -u`: prints "msgs/s MB/s".
produce_rate() { awk -F'|' '/^\|/ && $2+0 > 0 {m=$7; b=$8} END {gsub(/ /,"",m); gsub(/ /,"",b); print m, b}'; }
consume_rate() { awk -F'|' '/^\|/ && $2+0 > 0 {m=$6; b=$7} END {gsub(/ /,"",m); gsub(/ /,"",b); print m, b}'; }

printf '%-8s %-5s %-10s %14s %10s %14s %10s\n' size parts messages "produce msg/s" "MB/s" "consume msg/s" "MB/s"
for size in 100 1024; do
  count=$COUNT_100B; [ "$size" = 1024 ] && count=$COUNT_1K
  for parts in 1 8; do
    t="bench-$RUN-s$size-p$parts"
    create_topic "$t" "$parts"
    read -r pm pb < <("$PERF" -P -t "$t" -b "$BS" -s "$size" -c "$count" -a 1 -q -u \
      -X linger.ms=5 -X batch.size=1000000 -X queue.buffering.max.messages=1000000 2>/dev/null | produce_rate)
    pargs=(); for p in $(seq 0 $((parts - 1))); do pargs+=(-p "$p"); done
    read -r cm cb < <("$PERF" -C -t "$t" "${pargs[@]}" -b "$BS" -o beginning -c "$count" -q -u 2>/dev/null | consume_rate)
    printf '%-8s %-5s %-10s %14s %10s %14s %10s\n' "$size" "$parts" "$count" "$pm" "$pb" "$cm" "$cb"
  done
done

t="bench-$RUN-latency"
create_topic "$t" 1
"$PERF" -P -t "$t" -b "$BS" -s 1024 -c "$LAT_COUNT" -r "$RATE" -a 1 -l -A "$WORK/lat.txt" -q -X linger.ms=0 \
  >/dev/null 2>&1
sort -n "$WORK/lat.txt" | awk -v rate="$RATE" '{a[NR]=$1} END {
  printf "produce latency, 1 KiB at %d msg/s, acks=1 (%d messages): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
    rate, NR, a[int(NR*0.50)]/1000, a[int(NR*0.99)]/1000, a[NR]/1000 }'
