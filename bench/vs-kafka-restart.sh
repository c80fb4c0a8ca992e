#!/usr/bin/env bash
# Restart time with many partitions, Apache Kafka 4.4 beside strata (issue 33 item 2). Not a test.
#
#   bench/vs-kafka-restart.sh            PARTS partitions (10000) in TOPICS topics (10), a little data in each
#
# Per broker, one after the other (Kafka, then strata): start, create the topics, produce RECORDS (20,000) x 100 B
# into each topic (spread over its partitions) and one marker record into the last partition of the last topic;
# then (1) stop with SIGTERM and start again, (2) SIGKILL and start again. Restart time = from launch until a
# consumer (kcat) reads the marker back from that partition: the broker serves every partition it had, not just
# its port. Also printed: launch until the port accepts, and the broker's RSS once serving.
# Knobs: STRATA_BIN, PARTS, TOPICS, RECORDS, OUT (markdown file to append to). Data in a temp dir, removed at exit.
# Kafka gets KAFKA_START_TIMEOUT=900 and KAFKA_STOP_TIMEOUT=600 unless set: with 10,000 partitions on a loaded
# machine its clean shutdown and its log loading take minutes, and kafka.sh's defaults (30 s, 90 s) would turn the
# clean stop into a SIGKILL or fail the start.
set -euo pipefail
export KAFKA_START_TIMEOUT=${KAFKA_START_TIMEOUT:-900} KAFKA_STOP_TIMEOUT=${KAFKA_STOP_TIMEOUT:-600}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PARTS=${PARTS:-10000}
TOPICS=${TOPICS:-10}
RECORDS=${RECORDS:-20000}
PER=$((PARTS / TOPICS))
WORK=$(mktemp -d)
# shellcheck source=bench/kafka/common.sh
. "$ROOT/bench/kafka/common.sh"
trap 'common_cleanup; rm -rf "$WORK"' EXIT
command -v kcat >/dev/null || { echo "kcat not found (apt-get install kcat)" >&2; exit 1; }
strata_bin
"$KAFKA" install >/dev/null
tls_material

# Launch until kcat reads the marker from the last partition (bounded: 10 minutes).
wait_marker() { # port t0
  local deadline=$(($2 + 600000))
  until [ "$(timeout 10 kcat -C -b "127.0.0.1:$1" -t "rs-$((TOPICS - 1))" -p $((PER - 1)) -o -1 -c 1 -e -q \
    2>/dev/null)" = marker ]; do
    [ "$(now_ms)" -lt "$deadline" ] || { echo "no marker within 600 s" >&2; return 1; }
    sleep 0.05
  done
  echo $(($(now_ms) - $2))
}

fill() { # port
  local t
  for ((t = 0; t < TOPICS; t++)); do
    tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$1" --create --topic "rs-$t" \
      --partitions "$PER" --replication-factor 1 >/dev/null
    tool org.apache.kafka.tools.ProducerPerformance --topic "rs-$t" --num-records "$RECORDS" --record-size 100 \
      --throughput -1 --producer-props "bootstrap.servers=127.0.0.1:$1" acks=1 linger.ms=0 batch.size=1000 \
      >/dev/null
  done
  echo marker | kcat -P -b "127.0.0.1:$1" -t "rs-$((TOPICS - 1))" -p $((PER - 1)) -X acks=all
}

declare -A R
bench() { # broker
  local b=$1 port sport t0 first
  port=$(free_port); sport=$(free_port)
  say "load $(load); $b: start, create $PARTS partitions, fill"
  if [ "$b" = kafka ]; then start_kafka "$port" "$sport" "$WORK/kafka"; else start_strata "$port" "$sport" "$WORK/sdata" --override remote.log.storage.system.enable=false; fi
  t0=$(date +%s)
  fill "$port"
  R[$b-fill]=$(($(date +%s) - t0))
  R[$b-fresh]=$(wait_marker "$port" "$(now_ms)")
  for how in clean kill; do
    if [ "$b" = kafka ]; then
      if [ $how = clean ]; then "$KAFKA" stop "$WORK/kafka" >/dev/null; else kill -KILL "$PID"; while kill -0 "$PID" 2>/dev/null; do sleep 0.05; done; rm -f "$WORK/kafka/kafka.pid"; fi
    else
      stop_strata "$([ $how = clean ] && echo TERM || echo KILL)"
    fi
    R[$b-$how-load]=$(load)
    t0=$(now_ms)
    if [ "$b" = kafka ]; then start_kafka "$port" "$sport" "$WORK/kafka"; else start_strata "$port" "$sport" "$WORK/sdata" --override remote.log.storage.system.enable=false; fi
    first=$(($(now_ms) - t0))
    R[$b-$how]=$(wait_marker "$port" "$t0")
    R[$b-$how-port]=$first
    R[$b-$how-rss]=$(($(rss_kib "$PID" VmRSS) / 1024))
    say "load $(load); $b restart after $how: serving in ${R[$b-$how]} ms (start returned after $first ms), RSS ${R[$b-$how-rss]} MiB"
  done
  if [ "$b" = kafka ]; then "$KAFKA" stop "$WORK/kafka" >/dev/null; rm -rf "$WORK/kafka"; else stop_strata; rm -rf "$WORK/sdata"; fi
}
T0=$(date -u +%H:%M)
bench kafka
bench strata
{
  echo "## Restart with $PARTS partitions, strata vs Apache Kafka 4.4, $(date -u +%F) $T0–$(date -u +%H:%M) UTC, \`bench/vs-kafka-restart.sh\`"
  echo
  echo "$TOPICS topics x $PER partitions, $RECORDS x 100 B per topic; strata at commit $(git -C "$ROOT" rev-parse --short HEAD)."
  echo "Restart = launch until kcat reads a marker record from the last partition (Kafka's \"start returned\" = its"
  echo "\"Kafka Server started\" line and the port; strata's = the port accepting)."
  echo
  echo "| restart | load | Kafka serving ms (start returned) | strata serving ms (port) | ratio | RSS MiB K / S |"
  echo "|---|---|---|---|---|---|"
  for how in clean kill; do
    echo "| $([ $how = clean ] && echo "after SIGTERM" || echo "after SIGKILL") | ${R[kafka-$how-load]%% *} / ${R[strata-$how-load]%% *} | ${R[kafka-$how]} (${R[kafka-$how-port]}) | ${R[strata-$how]} (${R[strata-$how-port]}) | $(ratio "${R[strata-$how]}" "${R[kafka-$how]}") | ${R[kafka-$how-rss]} / ${R[strata-$how-rss]} |"
  done
  echo
  echo "Creating and filling the topics took ${R[kafka-fill]} s on Kafka and ${R[strata-fill]} s on strata."
  echo
} | tee -a "${OUT:-/dev/null}"
