#!/usr/bin/env bash
# Tiered-storage benchmarks against the strata binary (not tests; figures go to bench/RESULTS.md).
#
#   bench/tiering.sh catchup [fs|s3|garage]   consumer catch-up from the remote tier vs from the local log, same run
#   bench/tiering.sh lag     [fs|s3|garage]   RemoteCopyLagSegments under sustained produce at half the max ingest rate
#   bench/tiering.sh rss     [fs|s3|garage]   broker RSS while 1 GiB segments upload
#
# fs = the default filesystem backend (under the data dir); s3 = the local S3 server of
# `cargo build --release -p strata-tiering --example s3_server` (s3s-fs, a separate process, objects on disk);
# garage = Garage (a production S3 server), started by ../shared/testing/install-garage.sh on 127.0.0.1:3900
# with its data under the scratch dir (GARAGE_SH overrides the script). With garage, catchup also times a
# plain parallel ranged GET of the same log objects with one curl process (GET_CHUNK bytes per GET, GET_PAR in flight:
# 1 and GET_PAR, default 4 MiB and 4), to tell the server's limit from strata's.
# Knobs (env): BIN (strata binary; default $CARGO_TARGET_DIR/release/strata), PERF (rdkafka_performance),
# PY (python with confluent-kafka; tests/interop/install.sh), PORT (19500), MSGS (1000000 x 1 KiB = ~1 GB for
# catchup), SEG (segment.bytes for catchup/lag, 67108864), LAG_SECS (30), RSS_GB (3), WORK (scratch dir parent),
# DROP_CACHES=1 (catchup: drop the page cache before each consume; lag: before starting; root), EXTRA="key=value ..." (more broker
# overrides, e.g. EXTRA=rsm.config.fetch.chunk.cache.prefetch.max.size=0 for no read-ahead), KEEP_LOG=FILE (keep the broker's log;
# RUST_LOG=info for the copy timeline), METRICS_OUT=FILE (catchup: the broker's /metrics after the consumes), PROFILE=FILE (catchup: `perf record -g` of the broker during the remote consume).
# Every run deletes its data at the end.
set -euo pipefail
MODE=${1:?usage: bench/tiering.sh catchup|lag|rss [fs|s3|garage]}
BACKEND=${2:-fs}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=${BIN:-$TARGET/release/strata}
S3BIN=${S3BIN:-$TARGET/release/examples/s3_server}
PERF=${PERF:-$HOME/.kharness/bin/rdkafka_performance}
PY=${PY:-${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}/venv/bin/python}
PORT=${PORT:-19500}
HTTP=$((PORT + 1))
S3PORT=$((PORT + 2))
MSGS=${MSGS:-1000000}
SEG=${SEG:-67108864}
LAG_SECS=${LAG_SECS:-30}
RSS_GB=${RSS_GB:-3}
GARAGE_SH=${GARAGE_SH:-$ROOT/../shared/testing/install-garage.sh}
[ -x "$GARAGE_SH" ] || GARAGE_SH=/work/shared/testing/install-garage.sh
GET_CHUNK=${GET_CHUNK:-4194304}
GET_PAR=${GET_PAR:-4}
# The local test key install-garage.sh imports.
GARAGE_KEY=GK0123456789abcdef01234567
GARAGE_SECRET=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
BS=127.0.0.1:$PORT
for f in "$BIN" "$PERF" "$PY"; do [ -x "$f" ] || { echo "missing $f" >&2; exit 1; }; done
WORK=$(mktemp -d -p "${WORK:-/tmp}" strata-tier-bench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -f "$WORK/garage/pid" ]; then
    local g
    g=$(cat "$WORK/garage/pid")
    kill -TERM "$g" 2>/dev/null || true
    while kill -0 "$g" 2>/dev/null; do sleep 0.1; done
  fi
  if [ -n "${KEEP_LOG:-}" ] && [ -f "$WORK/broker.log" ]; then cp "$WORK/broker.log" "$KEEP_LOG"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

say() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

start_s3() {
  [ -x "$S3BIN" ] || { echo "missing $S3BIN (cargo build --release -p strata-tiering --example s3_server)" >&2; exit 1; }
  "$S3BIN" "$WORK/s3" "127.0.0.1:$S3PORT" strata strata-local >"$WORK/s3.log" 2>&1 &
  PIDS+=($!)
  until (exec 3<>"/dev/tcp/127.0.0.1/$S3PORT") 2>/dev/null; do sleep 0.05; done
}

start_garage() {
  "$GARAGE_SH" start "$WORK/garage" >"$WORK/garage-start.log" 2>&1 || { cat "$WORK/garage-start.log" >&2; exit 1; }
  until (exec 3<>/dev/tcp/127.0.0.1/3900) 2>/dev/null; do sleep 0.05; done
}
# parallel_get PAR: every .log object of the bucket in GET_CHUNK ranges, PAR GETs in flight, all from one curl
# process (`--parallel`, reused connections) -> "MB/s bytes s".
parallel_get() {
  local par=$1 auth=(-H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --aws-sigv4 aws:amz:garage:s3 --user "$GARAGE_KEY:$GARAGE_SECRET")
  local keys k size cfg=$WORK/get.curl
  keys=$(curl -sf "${auth[@]}" "http://127.0.0.1:3900/strata?list-type=2&max-keys=1000" |
    grep -o '<Key>[^<]*\.log</Key>' | sed 's/<[^>]*>//g')
  : >"$cfg"
  while read -r k; do
    [ -n "$k" ] || continue
    size=$(curl -sfI "${auth[@]}" "http://127.0.0.1:3900/strata/$k" | awk 'tolower($1) == "content-length:" {print $2+0}')
    for ((o = 0; o < size; o += GET_CHUNK)); do
      [ -s "$cfg" ] && echo next
      printf 'url = "http://127.0.0.1:3900/strata/%s"\nrange = "%d-%d"\noutput = "/dev/null"\n' "$k" "$o" \
        "$((o + GET_CHUNK - 1 < size - 1 ? o + GET_CHUNK - 1 : size - 1))"
      printf 'aws-sigv4 = "aws:amz:garage:s3"\nuser = "%s:%s"\nheader = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\n' \
        "$GARAGE_KEY" "$GARAGE_SECRET"
      printf 'write-out = "%%{size_download}\\n"\nfail\n'
    done >>"$cfg"
  done <<<"$keys"
  local t0 t1 bytes
  t0=$(date +%s.%N)
  bytes=$(curl -s --no-progress-meter --parallel --parallel-max "$par" -K "$cfg" | awk '{s += $1} END {print s+0}')
  t1=$(date +%s.%N)
  awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN {printf "%.0f %d %.2f\n", b / 1e6 / (z - a), b, z - a}'
}

# start_broker EXTRA_OVERRIDES...: starts strata, waits for the port; sets BROKER_PID.
start_broker() {
  local args=(--override "listeners=PLAINTEXT://$BS" --override "log.dirs=$WORK/data"
    --override "http.listener=127.0.0.1:$HTTP"
    --override log.retention.check.interval.ms=1000 --override remote.log.manager.task.interval.ms=1000
    --override rlmm.config.remote.log.metadata.topic.num.partitions=1)
  if [ "$BACKEND" = s3 ]; then
    start_s3
    args+=(--override rsm.config.storage.backend=s3 --override rsm.config.storage.s3.bucket.name=strata
      --override rsm.config.storage.s3.region=us-east-1
      --override "rsm.config.storage.s3.endpoint.url=http://127.0.0.1:$S3PORT"
      --override rsm.config.storage.s3.path.style.access.enabled=true
      --override rsm.config.storage.aws.access.key.id=strata-local
      --override rsm.config.storage.aws.secret.access.key=strata-local --override rsm.config.key.prefix=bench/)
  elif [ "$BACKEND" = garage ]; then
    start_garage
    args+=(--override rsm.config.storage.backend=s3 --override rsm.config.storage.s3.bucket.name=strata
      --override rsm.config.storage.s3.region=garage
      --override rsm.config.storage.s3.endpoint.url=http://127.0.0.1:3900
      --override rsm.config.storage.s3.path.style.access.enabled=true
      --override "rsm.config.storage.aws.access.key.id=$GARAGE_KEY"
      --override "rsm.config.storage.aws.secret.access.key=$GARAGE_SECRET" --override rsm.config.key.prefix=bench/)
  fi
  # shellcheck disable=SC2206
  local extra=(${EXTRA:-})
  for kv in "${extra[@]}"; do args+=(--override "$kv"); done
  RUST_LOG=${RUST_LOG:-warn} "$BIN" "${args[@]}" "$@" >"$WORK/broker.log" 2>&1 &
  BROKER_PID=$!
  PIDS+=("$BROKER_PID")
  until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do
    kill -0 "$BROKER_PID" 2>/dev/null || { cat "$WORK/broker.log" >&2; exit 1; }
    sleep 0.05
  done
}

# create_topic NAME key=value...
create_topic() {
  "$PY" - "$BS" "$@" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
bs, name, cfg = sys.argv[1], sys.argv[2], dict(kv.split("=", 1) for kv in sys.argv[3:])
a = AdminClient({"bootstrap.servers": bs})
a.create_topics([NewTopic(name, 1, 1, config=cfg)])[name].result(30)
PYEOF
}

metric() { # NAME TOPIC -> value (0 when absent); Kafka's name (…PerSec for a meter) or the exporter's lower-case one
  local n=${1%PerSec}
  curl -s "http://127.0.0.1:$HTTP/metrics" |
    awk -v a="kafka_server_BrokerTopicMetrics_$1{topic=\"$2\"}" \
      -v b="kafka_server_brokertopicmetrics_$(echo "$n" | tr 'A-Z' 'a-z'){topic=\"$2\"}" \
      -v c="kafka_server_brokertopicmetrics_$(echo "$n" | tr 'A-Z' 'a-z')_total{topic=\"$2\"}" \
      '$1 == a || $1 == b || $1 == c {v=$2} END {printf "%.0f\n", v}'
}
dir_mb() { du -sm "$1" 2>/dev/null | awk '{print $1}'; }
# Last table row of `rdkafka_performance -u`: "msgs/s MB/s".
produce_rate() { awk -F'|' '/^\|/ && $2+0 > 0 {m=$7; b=$8} END {gsub(/ /,"",m); gsub(/ /,"",b); print m, b}'; }
consume_rate() { awk -F'|' '/^\|/ && $2+0 > 0 {m=$6; b=$7} END {gsub(/ /,"",m); gsub(/ /,"",b); print m, b}'; }
produce() { # TOPIC COUNT [extra perf args] -> "msgs/s MB/s"
  local t=$1 n=$2; shift 2
  "$PERF" -P -t "$t" -p 0 -b "$BS" -s 1024 -c "$n" -a 1 -q -u -X linger.ms=5 -X batch.size=1000000 \
    -X queue.buffering.max.messages=1000000 "$@" 2>/dev/null | produce_rate
}
consume() { # TOPIC COUNT -> "msgs/s MB/s"
  "$PERF" -C -t "$1" -p 0 -b "$BS" -o beginning -c "$2" -q -u 2>/dev/null | consume_rate
}
cpu_ticks() { # PID -> utime+stime in clock ticks (0 when gone)
  awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}
garage_pid() { cat "$WORK/garage/pid" 2>/dev/null || echo 0; }
# timed_consume TOPIC COUNT -> "msgs/s MB/s broker-cpu-s garage-cpu-s consumer-cpu-s"
timed_consume() {
  local b0 g0 b1 g1 r
  b0=$(cpu_ticks "$BROKER_PID")
  g0=$(cpu_ticks "$(garage_pid)")
  r=$(/usr/bin/time -f '%U %S' -o "$WORK/consume.time" "$PERF" -C -t "$1" -p 0 -b "$BS" -o beginning -c "$2" -q -u 2>/dev/null | consume_rate)
  b1=$(cpu_ticks "$BROKER_PID")
  g1=$(cpu_ticks "$(garage_pid)")
  echo "$r" "$(awk -v a="$b0" -v b="$b1" -v c="$g0" -v d="$g1" 'NR == 1 {printf "%.2f %.2f %.2f", (b - a) / 100, (d - c) / 100, $1 + $2}' "$WORK/consume.time")"
}
wait_offloaded() { # TOPIC: copy lag 0 and at most one local segment (the active one) left
  local t=$1 deadline=$((SECONDS + 600))
  while :; do
    local lag logs
    lag=$(metric RemoteCopyLagSegments "$t")
    logs=$(find "$WORK/data/$t-0" -name '*.log' | wc -l)
    [ "$lag" = 0 ] && [ "$logs" -le 1 ] && [ "$(metric RemoteLogSizeBytes "$t")" != 0 ] && return 0
    [ $SECONDS -lt $deadline ] || { echo "offload of $t did not finish (lag $lag, $logs local logs)" >&2; exit 1; }
    sleep 0.5
  done
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
# Object-store and RSM calls so far: count and mean latency per operation.
store_calls() {
  curl -s "http://127.0.0.1:$HTTP/metrics" | awk '
    /^strata_(object_store|remote_storage)_request_duration_seconds_(sum|count)/ {
      split($1, a, "{"); fam = a[1]; sub(/_request_duration_seconds_(sum|count)$/, "", fam)
      op = a[2]; sub(/^operation="/, "", op); sub(/"}$/, "", op)
      if ($1 ~ /_sum\{/) sum[fam " " op] = $2; else cnt[fam " " op] = $2 }
    END { for (k in cnt) if (cnt[k] > 0) printf "%s: %d calls, mean %.2f ms\n", k, cnt[k], 1000 * sum[k] / cnt[k] }' | sort
}
# DROP_CACHES=1: each consume starts from a cold page cache (needs root).
drop_caches() { if [ "${DROP_CACHES:-0}" = 1 ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi; }

case "$MODE" in
catchup)
  start_broker
  create_topic remote remote.storage.enable=true "segment.bytes=$SEG" local.retention.bytes=1 retention.ms=-1 file.delete.delay.ms=0
  create_topic local "segment.bytes=$SEG" retention.ms=-1
  say "load $(load); producing $MSGS x 1 KiB into 'local' and into 'remote' (tiered)"
  read -r plm plb < <(produce local "$MSGS")
  read -r prm prb < <(produce remote "$MSGS")
  t0=$SECONDS
  wait_offloaded remote
  say "offloaded in $((SECONDS - t0)) s after the produce: remote $(metric RemoteLogSizeBytes remote) B, local dir $(dir_mb "$WORK/data/remote-0") MB"
  say "load $(load); consuming both from offset 0"
  f0=$(metric RemoteFetchBytesPerSec remote)
  drop_caches
  read -r clm clb clbcpu clgcpu clccpu < <(timed_consume local "$MSGS")
  drop_caches
  if [ -n "${PROFILE:-}" ]; then
    perf record -F 999 --call-graph "${PROFILE_CG:-fp}" -o "$PROFILE" -p "$BROKER_PID" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  read -r crm crb crbcpu crgcpu crccpu < <(timed_consume remote "$MSGS")
  if [ -n "${PROFILE:-}" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  f1=$(metric RemoteFetchBytesPerSec remote)
  printf 'backend=%s messages=%s segment.bytes=%s drop_caches=%s load=%s\n' "$BACKEND" "$MSGS" "$SEG" "${DROP_CACHES:-0}" "$(load)"
  printf 'produce local  %s msg/s %s MB/s\nproduce remote %s msg/s %s MB/s\n' "$plm" "$plb" "$prm" "$prb"
  printf 'consume local  %s msg/s %s MB/s\nconsume remote %s msg/s %s MB/s (RemoteFetchBytesPerSec +%s B)\n' \
    "$clm" "$clb" "$crm" "$crb" "$((f1 - f0))"
  printf 'cpu seconds (broker garage consumer): local %s %s %s; remote %s %s %s\n' \
    "$clbcpu" "$clgcpu" "$clccpu" "$crbcpu" "$crgcpu" "$crccpu"
  awk -v r="$crb" -v l="$clb" 'BEGIN {printf "remote/local = %.0f %%\n", 100 * r / l}'
  store_calls
  if [ -n "${METRICS_OUT:-}" ]; then curl -s "http://127.0.0.1:$HTTP/metrics" >"$METRICS_OUT"; fi
  if [ "$BACKEND" = garage ]; then
    say "load $(load); plain ranged GETs of the same log objects with curl"
    gc0=$(cpu_ticks "$(garage_pid)")
    read -r g1 gb1 gs1 < <(parallel_get 1)
    gc1=$(cpu_ticks "$(garage_pid)")
    read -r gn gbn gsn < <(parallel_get "$GET_PAR")
    gc2=$(cpu_ticks "$(garage_pid)")
    printf 'plain GET (curl, %s B ranges) 1 in flight: %s MB/s (%s B in %s s); %s in flight: %s MB/s (%s B in %s s)\n' \
      "$GET_CHUNK" "$g1" "$gb1" "$gs1" "$GET_PAR" "$gn" "$gbn" "$gsn"
    printf 'garage cpu seconds: 1 in flight %s, %s in flight %s\n' "$(((gc1 - gc0) / 100)).$(printf %02d $(((gc1 - gc0) % 100)))" \
      "$GET_PAR" "$(((gc2 - gc1) / 100)).$(printf %02d $(((gc2 - gc1) % 100)))"
  fi
  ;;
lag)
  drop_caches
  start_broker
  create_topic max "segment.bytes=$SEG" retention.bytes=1073741824 file.delete.delay.ms=0
  read -r mm mb < <(produce max "$MSGS")
  say "max ingest (untiered topic, $MSGS x 1 KiB): $mm msg/s $mb MB/s"
  half=$(awk -v m="$mm" 'BEGIN {printf "%d", m / 2}')
  n=$((half * LAG_SECS))
  create_topic lag remote.storage.enable=true "segment.bytes=$SEG" local.retention.bytes=1 retention.bytes=2147483648 file.delete.delay.ms=0
  say "load $(load); producing $n messages at $half msg/s (half the max) for ~$LAG_SECS s, sampling RemoteCopyLagSegments every second"
  produce lag "$n" -r "$half" >"$WORK/lag-produce.txt" &
  ppid=$!
  : >"$WORK/lag.txt"
  while kill -0 "$ppid" 2>/dev/null; do metric RemoteCopyLagSegments lag >>"$WORK/lag.txt"; sleep 1; done
  wait "$ppid"
  read -r lm lb <"$WORK/lag-produce.txt"
  for _ in 1 2 3 4 5; do metric RemoteCopyLagSegments lag >>"$WORK/lag.txt"; sleep 1; done
  printf 'backend=%s segment.bytes=%s max=%s msg/s (%s MB/s) achieved=%s msg/s (%s MB/s) load=%s\n' \
    "$BACKEND" "$SEG" "$mm" "$mb" "$lm" "$lb" "$(load)"
  printf 'RemoteCopyLagSegments samples: %s\n' "$(tr '\n' ' ' <"$WORK/lag.txt")"
  last=$(tail -1 "$WORK/lag.txt")
  sort -n "$WORK/lag.txt" | awk -v last="$last" '{a[NR]=$1} END {printf "lag segments: max %d, p50 %d, last %d (%d samples)\n", a[NR], a[int((NR+1)/2)], last, NR}'
  store_calls
  ;;
rss)
  start_broker
  create_topic big remote.storage.enable=true segment.bytes=1073741824 local.retention.bytes=1 retention.ms=-1 file.delete.delay.ms=0
  n=$((RSS_GB * 1048576))
  say "load $(load); producing $n x 1 KiB (${RSS_GB} GiB) with 1 GiB segments"
  produce big "$n" -r 200000 >"$WORK/rss-produce.txt" &
  ppid=$!
  : >"$WORK/rss.txt"
  deadline=$((SECONDS + 900))
  while :; do
    awk '/VmRSS|RssAnon|RssFile/ {printf "%s %s ", $1, $2} END {print ""}' "/proc/$BROKER_PID/status" >>"$WORK/rss.txt"
    if ! kill -0 "$ppid" 2>/dev/null; then
      [ "$(metric RemoteCopyLagSegments big)" = 0 ] && [ "$(metric RemoteLogSizeBytes big)" -ge $(((RSS_GB - 1) * 1073741824)) ] && break
    fi
    [ $SECONDS -lt $deadline ] || { echo "uploads did not finish" >&2; break; }
    sleep 0.2
  done
  printf 'backend=%s produced %s GiB, remote %s B, load=%s\n' "$BACKEND" "$RSS_GB" "$(metric RemoteLogSizeBytes big)" "$(load)"
  awk '{for (i = 1; i < NF; i += 2) if ($(i+1) > m[$i]) m[$i] = $(i+1)} END {for (k in m) printf "max %s %.1f MiB\n", k, m[k] / 1024}' "$WORK/rss.txt"
  store_calls
  ;;
*) echo "unknown mode $MODE" >&2; exit 2 ;;
esac
