#!/usr/bin/env bash
# Tiered storage, Apache Kafka 4.4 beside strata (issue 33 item 2). Not a test.
#
#   bench/vs-kafka-tiered.sh
#
# Kafka: its RemoteLogManager (KIP-405) with TopicBasedRemoteLogMetadataManager and a filesystem
# RemoteStorageManager. Kafka's own LocalTieredStorage is only in the kafka-storage *test* jar, which Maven Central
# does not serve for 4.4.0 (neither the "test" nor the "tests" classifier resolves), so the RSM is ours:
# bench/kafka/rsm/FsRemoteStorageManager.java (plain file copies + fsync; ranged reads), compiled by
# `kafka.sh rsm`. strata: its default filesystem tier. Per broker, one after the other:
#   1. a topic with remote.storage.enable=true, segment.bytes=SEG (16 MiB), local.retention.bytes=1;
#   2. copy lag under load: ProducerPerformance at RATE records/s of 1 KiB (default 20,000 = ~20 MB/s) for LAG_SECS
#      (30 s); every 0.5 s, lag = rolled local segments (all but the newest .log) whose base offset has no remote
#      copy yet (the RSM's files / strata's objects are named by base offset); max and mean over the run, and the
#      time from the end of the load until every rolled segment is remote;
#   3. remote catch-up: once only the active segment is local, Kafka's ConsumerPerformance and librdkafka's
#      rdkafka_performance read everything from offset 0 (MB/s; broker CPU seconds).
# Knobs: STRATA_BIN, RDPERF, RATE, LAG_SECS, SEG, OUT. Data (local and remote) in a temp dir, removed at exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RATE=${RATE:-20000}
LAG_SECS=${LAG_SECS:-30}
SEG=${SEG:-16777216}
WORK=$(mktemp -d)
# shellcheck source=bench/kafka/common.sh
. "$ROOT/bench/kafka/common.sh"
trap 'common_cleanup; rm -rf "$WORK"' EXIT
strata_bin
"$KAFKA" rsm
rdperf_bin
tls_material
T=tier

base_offsets() { find "$1" -name '*.log' 2>/dev/null | sed -E 's#.*/([0-9]{20})[^/]*\.log$#\1#' | sort -u; }
# lag LOCALDIR REMOTEDIR -> rolled local segments without a remote copy
lag() {
  local loc rem
  loc=$(base_offsets "$1" | head -n -1)
  rem=$(base_offsets "$2")
  [ -n "$loc" ] || { echo 0; return; }
  comm -23 <(echo "$loc") <(echo "$rem") | grep -c . || true
}

declare -A R
bench() { # broker
  local b=$1 port sport local_dir remote_dir bs ppid samples=() t0 c0 c1 r
  port=$(free_port); sport=$(free_port); bs=127.0.0.1:$port
  say "load $(load); $b: start with tiering on"
  if [ "$b" = kafka ]; then
    remote_dir=$WORK/kafka-remote
    start_kafka "$port" "$sport" "$WORK/kafka" remote.log.storage.system.enable=true \
      remote.log.storage.manager.class.name=strata.bench.FsRemoteStorageManager "rsm.config.dir=$remote_dir" \
      remote.log.metadata.manager.listener.name=PLAINTEXT \
      rlmm.config.remote.log.metadata.topic.replication.factor=1 \
      rlmm.config.remote.log.metadata.topic.num.partitions=1 remote.log.manager.task.interval.ms=1000 \
      log.retention.check.interval.ms=1000
    local_dir=$WORK/kafka/data/$T-0
  else
    remote_dir=$WORK/sdata/remote
    start_strata "$port" "$sport" "$WORK/sdata" --override log.retention.check.interval.ms=1000 \
      --override remote.log.manager.task.interval.ms=1000 \
      --override rlmm.config.remote.log.metadata.topic.num.partitions=1
    local_dir=$WORK/sdata/$T-0
  fi
  tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bs" --create --topic "$T" --partitions 1 \
    --replication-factor 1 --config remote.storage.enable=true --config "segment.bytes=$SEG" \
    --config local.retention.bytes=1 --config retention.ms=-1 --config file.delete.delay.ms=0 >/dev/null
  R[$b-load]=$(load)
  c0=$(cpu_ticks "$PID")
  tool org.apache.kafka.tools.ProducerPerformance --topic "$T" --num-records $((RATE * LAG_SECS)) --record-size 1024 \
    --throughput "$RATE" --producer-props "bootstrap.servers=$bs" acks=1 linger.ms=5 >"$WORK/$b.produce" &
  ppid=$!
  while kill -0 "$ppid" 2>/dev/null; do samples+=("$(lag "$local_dir" "$remote_dir")"); sleep 0.5; done
  wait "$ppid"
  t0=$(now_ms)
  until [ "$(lag "$local_dir" "$remote_dir")" = 0 ] && [ "$(base_offsets "$local_dir" | wc -l)" -le 1 ]; do
    [ $(($(now_ms) - t0)) -lt 600000 ] || { echo "$b: offload did not finish in 600 s" >&2; return 1; }
    sleep 0.2
  done
  R[$b-drain]=$(($(now_ms) - t0))
  c1=$(cpu_ticks "$PID")
  R[$b-copycpu]=$(awk -v t=$((c1 - c0)) 'BEGIN {printf "%.1f", t / 100}')
  R[$b-lagmax]=$(printf '%s\n' "${samples[@]}" | sort -n | tail -1)
  R[$b-lagmean]=$(printf '%s\n' "${samples[@]}" | awk '{s += $1} END {printf "%.2f", s / NR}')
  R[$b-remote]=$(du -sm "$remote_dir" | awk '{print $1}')
  R[$b-produce]=$(tail -1 "$WORK/$b.produce" | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')
  say "$b: lag max ${R[$b-lagmax]} mean ${R[$b-lagmean]} segments, drained ${R[$b-drain]} ms after the load, remote ${R[$b-remote]} MB"
  c0=$(cpu_ticks "$PID")
  r=$(tool org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$bs" --topic "$T" \
    --messages $((RATE * LAG_SECS)) --timeout 120000 | tail -1)
  c1=$(cpu_ticks "$PID")
  R[$b-java]=$(echo "$r" | awk -F', *' 'NF > 4 {print $4}')
  R[$b-javacpu]=$(awk -v t=$((c1 - c0)) 'BEGIN {printf "%.1f", t / 100}')
  c0=$(cpu_ticks "$PID")
  r=$(timeout 300 "$RDPERF" -C -t "$T" -p 0 -b "$bs" -o beginning -c $((RATE * LAG_SECS)) -q -u 2>/dev/null |
    awk -F'|' '/^\|/ && $2+0 > 0 {b=$7} END {gsub(/ /,"",b); print b}')
  c1=$(cpu_ticks "$PID")
  R[$b-rd]=${r:--}
  R[$b-rdcpu]=$(awk -v t=$((c1 - c0)) 'BEGIN {printf "%.1f", t / 100}')
  say "load $(load); $b remote catch-up: Java ${R[$b-java]} MB/s, rdkafka ${R[$b-rd]} MB/s"
  if [ "$b" = kafka ]; then "$KAFKA" stop "$WORK/kafka" >/dev/null; rm -rf "$WORK/kafka" "$remote_dir"; else stop_strata; rm -rf "$WORK/sdata"; fi
}
T0=$(date -u +%H:%M)
bench kafka
bench strata
{
  echo "## Tiered storage, strata vs Apache Kafka 4.4, $(date -u +%F) $T0–$(date -u +%H:%M) UTC, \`bench/vs-kafka-tiered.sh\`"
  echo
  echo "Kafka: RemoteLogManager + TopicBasedRemoteLogMetadataManager + bench/kafka/rsm/FsRemoteStorageManager.java (ours:"
  echo "Maven Central has no kafka-storage test jar with LocalTieredStorage for 4.4.0); strata: its filesystem tier."
  echo "Both on the same disk; one partition, segment.bytes=$SEG, local.retention.bytes=1, task interval 1 s; load:"
  echo "$RATE x 1 KiB records/s for $LAG_SECS s (acks=1); strata at commit $(git -C "$ROOT" rev-parse --short HEAD)."
  echo
  echo "| | load | produced MB/s | copy lag max / mean (segments) | drained after load ms | broker CPU s (load + drain) | remote catch-up MB/s Java / rdkafka | broker CPU s Java / rdkafka |"
  echo "|---|---|---|---|---|---|---|---|"
  for b in kafka strata; do
    echo "| $b | ${R[$b-load]%% *} | ${R[$b-produce]} | ${R[$b-lagmax]} / ${R[$b-lagmean]} | ${R[$b-drain]} | ${R[$b-copycpu]} | ${R[$b-java]} / ${R[$b-rd]} | ${R[$b-javacpu]} / ${R[$b-rdcpu]} |"
  done
  echo "| strata / Kafka | | | | $(ratio "${R[strata-drain]}" "${R[kafka-drain]}") | $(ratio "${R[strata-copycpu]}" "${R[kafka-copycpu]}") | $(ratio "${R[strata-java]}" "${R[kafka-java]}") / $(ratio "${R[strata-rd]}" "${R[kafka-rd]}") | |"
  echo
} | tee -a "${OUT:-/dev/null}"
