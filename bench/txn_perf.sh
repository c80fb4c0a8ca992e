#!/usr/bin/env bash
# Transactional produce against idempotent produce with Kafka 4.4's own kafka-producer-perf-test
# (org.apache.kafka.tools.ProducerPerformance, through bench/kafka/kafka.sh run): librdkafka has no transaction
# version 2, Kafka's Java client uses it when the broker finalizes `transaction.version` 2 (KIP-890 part 2).
# Not a test.
#
#   bench/txn_perf.sh BIN [ROUNDS [RECORDS [TXN_MS [TV]]]]
#
# Starts BIN (a release strata) on loopback in a temp dir; TV=1 downgrades `transaction.version` to 1 first
# (kafka-features downgrade), TV=2 (default) keeps what the broker finalizes. Each round runs an idempotent producer
# (acks=all, enable.idempotence=true) and a transactional one (--transactional-id, a commit every TXN_MS ms,
# default 100), alternating which goes first, RECORDS records of 512 bytes (default 300000) to one partition each,
# linger.ms=5, batch.size=1000000. Prints each run's MB/s and the medians.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:?usage: bench/txn_perf.sh BIN [ROUNDS [RECORDS [TXN_MS [TV]]]]}
ROUNDS=${2:-3}
RECORDS=${3:-300000}
TXN_MS=${4:-100}
TV=${5:-2}
KAFKA="$HERE/kafka/kafka.sh"
"$KAFKA" install

WORK=$(mktemp -d)
PID=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$WORK/data" 2>"$WORK/broker.log" &
PID=$!
BS=
for _ in $(seq 1 300); do
  BS=$(grep -o 'bootstrap.servers=[^ ]*' "$WORK/broker.log" | head -1 | cut -d= -f2 || true)
  [ -n "$BS" ] && break
  sleep 0.1
done
[ -n "$BS" ] || { echo "strata did not start" >&2; cat "$WORK/broker.log" >&2; exit 1; }
if [ "$TV" != 2 ]; then
  "$KAFKA" run org.apache.kafka.tools.FeatureCommand --bootstrap-server "$BS" downgrade \
    --feature "transaction.version=$TV" >/dev/null
fi
"$KAFKA" run org.apache.kafka.tools.FeatureCommand --bootstrap-server "$BS" describe | grep transaction.version || true

# One run: prints MB/s.
run() {
  local kind=$1 topic=$2
  local extra=()
  [ "$kind" = txn ] && extra=(--transactional-id "perf-$topic" --transaction-duration-ms "$TXN_MS")
  "$KAFKA" run org.apache.kafka.tools.TopicCommand --bootstrap-server "$BS" --create --topic "$topic" \
    --partitions 1 >/dev/null
  "$KAFKA" run org.apache.kafka.tools.ProducerPerformance --topic "$topic" --num-records "$RECORDS" \
    --record-size 512 --throughput -1 "${extra[@]}" --producer-props "bootstrap.servers=$BS" acks=all \
    enable.idempotence=true linger.ms=5 batch.size=1000000 2>/dev/null \
    | tail -1 | sed -E 's/.*records\/sec \(([0-9.]+) MB\/sec\).*/\1/'
}

idem=()
txn=()
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    i=$(run idem "idem-$r"); t=$(run txn "txn-$r")
  else
    t=$(run txn "txn-$r"); i=$(run idem "idem-$r")
  fi
  idem+=("$i"); txn+=("$t")
  echo "round $r: idempotent $i MB/s, transactional $t MB/s (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
python3 - "${idem[*]}" "${txn[*]}" <<'PY'
import statistics, sys
i = [float(x) for x in sys.argv[1].split()]
t = [float(x) for x in sys.argv[2].split()]
mi, mt = statistics.median(i), statistics.median(t)
print(f"median: idempotent {mi:.1f} MB/s, transactional {mt:.1f} MB/s, transactional/idempotent {100 * mt / mi:.0f} %")
PY
