#!/usr/bin/env bash
# Outgrowing one node (issue 34): MirrorMaker 2 moves topics, data and consumer-group positions from strata to a
# three-broker Kafka 4.4 KRaft cluster on loopback, and from that cluster to a fresh strata; record counts, checksums
# and group positions are compared both ways. Not in CI (about 8 minutes on 2 cores; it needs ~3 GB of memory for
# the five JVMs). Needs Java 17+ and Maven (jars into ~/.cache/strata-kafka, see bench/kafka/cluster.sh).
#
#   tests/mirror/run.sh            build strata (debug) and run both directions; exit 1 on any difference
# Environment: STRATA_BIN (an already-built strata instead of cargo build), MIRROR_KEEP=1 (keep the work dir).
#
# strata -> Kafka: topics mm-orders (3 partitions, retention.ms and max.message.bytes set), mm-tiered (tiered,
# 64 KiB segments, local.retention.bytes=1: its data is in strata's remote tier before MM2 starts), mm-compacted
# (cleanup.policy=compact, compacted by strata before the move) and mm-txn (transactions, half of them aborted).
# Two groups move: mm-app read a third of mm-orders before MM2 started and stays idle (far behind the end), mm-live
# reads every record while 9000 more are produced and MM2 copies them (a caught-up application). Each resumes on
# the target; every record must have been read before or after the move, duplicates are counted.
# Kafka -> strata: prod-events, prod-compacted, prod-txn and groups prod-app, prod-live the same way, into a
# fresh strata.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KAFKA="$ROOT/bench/kafka/kafka.sh"
CLUSTER="$ROOT/bench/kafka/cluster.sh"

step() { printf '\n[%5ds] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
die() { echo "tests/mirror: $*" >&2; exit 1; }
T0=$(date +%s)

BIN=${STRATA_BIN:-}
if [ -z "$BIN" ]; then
  (cd "$ROOT" && cargo build -q -p strata-broker --bin strata)
  TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
  case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
  BIN="$TARGET/debug/strata"
fi
[ -x "$BIN" ] || die "strata binary not found at $BIN"
"$CLUSTER" install

WORK=$(mktemp -d /tmp/strata-mirror.XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  "$CLUSTER" stop "$WORK/kafka" 2>/dev/null || true
  if [ "${MIRROR_KEEP:-0}" = 1 ] || [ $rc -ne 0 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
  exit $rc
}
trap cleanup EXIT

CP="$("$KAFKA" classpath)"
mkdir -p "$WORK/classes"
javac -q -d "$WORK/classes" -cp "$CP" "$HERE/MirrorCheck.java" 2>/dev/null || javac -d "$WORK/classes" -cp "$CP" "$HERE/MirrorCheck.java"
printf 'status = warn\nappender.err.type = Console\nappender.err.name = err\nappender.err.target = SYSTEM_ERR\nappender.err.layout.type = PatternLayout\nappender.err.layout.pattern = %%p %%m (%%c)%%n\nrootLogger.level = ERROR\nrootLogger.appenderRef.err.ref = err\n' >"$WORK/log4j2.properties"
# The client side (tests/mirror/MirrorCheck.java); its log goes to $WORK/check.log.
check() {
  java -Xmx256m "-Dlog4j2.configurationFile=$WORK/log4j2.properties" -cp "$WORK/classes:$CP" MirrorCheck "$@" \
    2>>"$WORK/check.log" || { echo "MirrorCheck $* failed; $WORK/check.log:" >&2; tail -20 "$WORK/check.log" >&2; return 1; }
}
# caught_up SRC DST TOPIC MODE: waits until the target's digest equals the source's; prints the wait.
caught_up() {
  local r
  r=$(check wait-equal "$1" "$2" "$3" "$4" read_committed 240) || { echo "$r"; die "$3 did not catch up"; }
  echo "$3 ($4): caught up ${r#caught-up } ms after the check started"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# A base port with base..base+2 and base+10..base+12 free, for the cluster.
cluster_base() {
  python3 - <<'PY'
import random, socket
for _ in range(200):
    b = random.randrange(20000, 40000)
    try:
        socks = []
        for p in [b, b + 1, b + 2, b + 10, b + 11, b + 12]:
            s = socket.socket(); s.bind(("127.0.0.1", p)); socks.append(s)
        print(b); break
    except OSError:
        pass
    finally:
        for s in socks: s.close()
PY
}

# start_strata NAME: starts strata with its data in $WORK/NAME; sets SBS (bootstrap) and records the pid.
start_strata() {
  local name="$1" port
  port=$(free_port)
  mkdir -p "$WORK/$name"
  "$BIN" --override "listeners=PLAINTEXT://127.0.0.1:$port" --override "log.dirs=$WORK/$name/data" \
    --override "rsm.config.storage.filesystem.root=$WORK/$name/remote" \
    --override remote.log.manager.task.interval.ms=500 --override log.retention.check.interval.ms=500 \
    --override log.cleaner.backoff.ms=500 --override group.initial.rebalance.delay.ms=0 \
    >"$WORK/$name/strata.log" 2>&1 &
  PIDS+=($!)
  local deadline=$(( $(date +%s) + 60 ))
  until grep -q "strata ready: bootstrap.servers=" "$WORK/$name/strata.log"; do
    [ "$(date +%s)" -lt "$deadline" ] || { tail -20 "$WORK/$name/strata.log"; die "strata ($name) did not start"; }
    kill -0 "${PIDS[-1]}" 2>/dev/null || { tail -20 "$WORK/$name/strata.log"; die "strata ($name) exited"; }
    sleep 0.2
  done
  SBS="127.0.0.1:$port"
}

# mm2_props FILE SOURCE TARGET SOURCE_BS TARGET_BS TOPICS GROUPS: a dedicated MirrorMaker 2 for one flow.
# Identity replication policy: topic names stay the same (a move, not a backup). Internal topics on strata get
# replication factor 1 (a single node), on the cluster 3.
mm2_props() {
  local file="$1" src="$2" dst="$3" sbs="$4" dbs="$5" topics="$6" groups="$7" rf_src rf_dst
  if [ "$src" = strata ]; then rf_src=1; rf_dst=3; else rf_src=3; rf_dst=1; fi
  cat >"$file" <<EOF
clusters = $src, $dst
$src.bootstrap.servers = $sbs
$dst.bootstrap.servers = $dbs
$src->$dst.enabled = true
$dst->$src.enabled = false
$src->$dst.topics = $topics
$src->$dst.groups = $groups
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
sync.topic.configs.enabled = true
sync.topic.acls.enabled = false
sync.group.offsets.enabled = true
sync.group.offsets.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
emit.heartbeats.interval.seconds = 1
refresh.topics.interval.seconds = 5
refresh.groups.interval.seconds = 5
offset.lag.max = 10
# Committed data only: the source consumers read with read_committed, so aborted records are not copied.
$src.consumer.isolation.level = read_committed
replication.factor = $rf_dst
checkpoints.topic.replication.factor = $rf_dst
$src->$dst.heartbeats.topic.replication.factor = $rf_dst
$dst->$src.heartbeats.topic.replication.factor = $rf_src
offset-syncs.topic.replication.factor = $rf_src
# Each cluster holds a Connect worker's internal topics (the herder of the disabled flow too).
strata.config.storage.replication.factor = 1
strata.offset.storage.replication.factor = 1
strata.status.storage.replication.factor = 1
kafka.config.storage.replication.factor = 3
kafka.offset.storage.replication.factor = 3
kafka.status.storage.replication.factor = 3
# Tiering is the target's own choice: strata's tier settings are not copied to a cluster without a remote store;
# segment.bytes neither (Kafka 4 refuses less than 1 MiB, strata allows small segments).
config.properties.exclude = remote\\.storage\\.enable, local\\.retention\\.ms, local\\.retention\\.bytes, segment\\.bytes, follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas
EOF
}

start_mm2() {
  "$CLUSTER" mm2 "$1" >"$2" 2>&1 &
  PIDS+=($!)
  MM2_PID=$!
}

stop_mm2() {
  kill -TERM "$MM2_PID" 2>/dev/null || true
  wait "$MM2_PID" 2>/dev/null || true
}

# compare SRC DST TOPIC MODE: the two digests (read_committed), printed; fails when they differ.
compare() {
  local a b
  a=$(check digest "$1" "$3" "$4" read_committed)
  b=$(check digest "$2" "$3" "$4" read_committed)
  echo "$3 ($4) source: $(tail -1 <<<"$a") | target: $(tail -1 <<<"$b")"
  [ "$a" = "$b" ] || { echo "source:"; echo "$a"; echo "target:"; echo "$b"; die "$3 differs"; }
}

# synced_positions DST GROUP: waits until the group's positions on the target are there and unchanged over 3 s
# (checkpoints every second); prints them.
synced_positions() {
  local last="" now same=0 deadline=$(( $(date +%s) + 120 ))
  while [ $same -lt 3 ]; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$2's offsets were not synced to $1"
    now=$(check positions "$1" "$2")
    if [ -n "$now" ] && [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
    last=$now
    sleep 1
  done
  echo "$last"
}

# live_group SRC DST TOPIC GROUP N FROM MORE: while MirrorMaker 2 runs, MORE records are produced to TOPIC (from
# record FROM) and GROUP reads N of TOPIC on the source; then the group moves to DST.
live_group() {
  check produce "$1" "$3" "$7" 1000 "$6" &
  local producer=$!
  check consume-group "$1" "$3" "$4" "$5" "$WORK/$4.before"
  wait $producer
}

# ---------------------------------------------------------------------------------------------------------------
step "start strata and a three-broker Kafka cluster"
start_strata strata-src
STRATA_SRC=$SBS
BASE=$(cluster_base)
"$CLUSTER" start "$WORK/kafka" "$BASE"
KBS=$("$CLUSTER" bootstrap "$WORK/kafka")
echo "strata $STRATA_SRC, Kafka $KBS"

step "strata -> Kafka: topics and data on strata"
check create "$STRATA_SRC" mm-orders 3 1 retention.ms=604800001 max.message.bytes=2000000
check create "$STRATA_SRC" mm-tiered 2 1 remote.storage.enable=true segment.bytes=65536 local.retention.bytes=1
check create "$STRATA_SRC" mm-compacted 1 1 cleanup.policy=compact segment.bytes=16384 min.cleanable.dirty.ratio=0.01 \
  delete.retention.ms=1000
check create "$STRATA_SRC" mm-txn 1 1
check produce "$STRATA_SRC" mm-orders 30000 1000
check produce "$STRATA_SRC" mm-tiered 20000 20000
check produce "$STRATA_SRC" mm-compacted 5000 100
check txn "$STRATA_SRC" mm-txn 40 25
# Group mm-app read part of mm-orders before the move and is idle (its position is far behind the end).
check consume-group "$STRATA_SRC" mm-orders mm-app 12000 "$WORK/mm-app.before"
echo "positions on strata: $(check positions "$STRATA_SRC" mm-app)"
# The tiered topic's data is in strata's remote tier: local copies deleted below the local log start.
deadline=$(( $(date +%s) + 60 ))
until check local-start "$STRATA_SRC" mm-tiered | awk '{ if ($5 < 5000) bad=1 } END { exit bad }'; do
  [ "$(date +%s)" -lt "$deadline" ] || die "mm-tiered was not offloaded"
  sleep 1
done
check local-start "$STRATA_SRC" mm-tiered
# strata's __remote_log_metadata as Kafka's own tool reads it (Kafka's RemoteLogMetadataSerde format, issue 34).
"$KAFKA" run org.apache.kafka.tools.DumpLogSegments --remote-log-metadata-decoder --files \
  "$(find "$WORK/strata-src/data" -path '*__remote_log_metadata-*' -name '*.log' | paste -sd,)" >"$WORK/rlmm-dump.txt"
grep -q "payload: RemoteLogSegmentMetadataUpdate{" "$WORK/rlmm-dump.txt" || die "kafka-dump-log decoded no update"
! grep -q "Error at offset" "$WORK/rlmm-dump.txt" || die "kafka-dump-log could not decode a record"
echo "kafka-dump-log --remote-log-metadata-decoder: $(grep -c 'payload: RemoteLogSegmentMetadata{' "$WORK/rlmm-dump.txt") \
segment records, $(grep -c 'payload: RemoteLogSegmentMetadataUpdate{' "$WORK/rlmm-dump.txt") updates decoded, e.g."
grep -m2 "payload: " "$WORK/rlmm-dump.txt" | sed 's/^.*payload: /  /'

step "strata -> Kafka: MirrorMaker 2"
mm2_props "$WORK/s2k.properties" strata kafka "$STRATA_SRC" "$KBS" 'mm-.*' 'mm-.*'
start_mm2 "$WORK/s2k.properties" "$WORK/mm2-s2k.log"
MM2_T0=$(date +%s%3N)
for t in mm-orders mm-tiered mm-txn; do caught_up "$STRATA_SRC" "$KBS" "$t" all; done
caught_up "$STRATA_SRC" "$KBS" mm-compacted latest
echo "lag to catch up: every topic equal $(( $(date +%s%3N) - MM2_T0 )) ms after MirrorMaker 2 started"
step "strata -> Kafka: a live application: 9000 more records produced while group mm-live reads all 39000"
live_group "$STRATA_SRC" "$KBS" mm-orders mm-live 39000 30000 9000
caught_up "$STRATA_SRC" "$KBS" mm-orders all
compare "$STRATA_SRC" "$KBS" mm-orders all
compare "$STRATA_SRC" "$KBS" mm-tiered all
compare "$STRATA_SRC" "$KBS" mm-compacted latest
compare "$STRATA_SRC" "$KBS" mm-txn all
for t in mm-orders mm-tiered mm-compacted mm-txn; do
  echo "$t partitions: strata $(check describe "$STRATA_SRC" $t) | Kafka $(check describe "$KBS" $t)"
  [ "$(check describe "$STRATA_SRC" $t)" = "$(check describe "$KBS" $t)" ] || die "$t partition count differs"
done
echo "mm-orders configs on Kafka: $(check configs "$KBS" mm-orders retention.ms max.message.bytes)"
check configs "$KBS" mm-orders retention.ms | grep -q "retention.ms=604800001" || die "mm-orders retention.ms not synced"
echo "mm-compacted configs on Kafka: $(check configs "$KBS" mm-compacted cleanup.policy)"
check configs "$KBS" mm-compacted cleanup.policy | grep -q "cleanup.policy=compact" || die "cleanup.policy not synced"
# Group positions: checkpoints translated and written into the cluster's groups (sync.group.offsets).
for g in mm-app mm-live; do
  pos=$(synced_positions "$KBS" $g) || exit 1
  echo "$g positions: strata $(check positions "$STRATA_SRC" $g) | Kafka $pos"
done
stop_mm2
check resume "$KBS" mm-orders mm-app "$WORK/mm-app.before"
check resume "$KBS" mm-orders mm-live "$WORK/mm-live.before"

# ---------------------------------------------------------------------------------------------------------------
step "Kafka -> strata: topics and data on the cluster"
check create "$KBS" prod-events 3 3 retention.ms=604800002
check create "$KBS" prod-compacted 2 3 cleanup.policy=compact
check create "$KBS" prod-txn 1 3
check produce "$KBS" prod-events 30000 1000
check produce "$KBS" prod-compacted 5000 100
check txn "$KBS" prod-txn 40 25
check consume-group "$KBS" prod-events prod-app 12000 "$WORK/prod-app.before"
echo "positions on Kafka: $(check positions "$KBS" prod-app)"
start_strata strata-dst
STRATA_DST=$SBS
echo "fresh strata $STRATA_DST"

step "Kafka -> strata: MirrorMaker 2"
mm2_props "$WORK/k2s.properties" kafka strata "$KBS" "$STRATA_DST" 'prod-.*' 'prod-.*'
start_mm2 "$WORK/k2s.properties" "$WORK/mm2-k2s.log"
MM2_T0=$(date +%s%3N)
for t in prod-events prod-txn; do caught_up "$KBS" "$STRATA_DST" "$t" all; done
caught_up "$KBS" "$STRATA_DST" prod-compacted latest
echo "lag to catch up: every topic equal $(( $(date +%s%3N) - MM2_T0 )) ms after MirrorMaker 2 started"
step "Kafka -> strata: a live application: 9000 more records produced while group prod-live reads all 39000"
live_group "$KBS" "$STRATA_DST" prod-events prod-live 39000 30000 9000
caught_up "$KBS" "$STRATA_DST" prod-events all
compare "$KBS" "$STRATA_DST" prod-events all
compare "$KBS" "$STRATA_DST" prod-compacted latest
compare "$KBS" "$STRATA_DST" prod-txn all
for t in prod-events prod-compacted prod-txn; do
  echo "$t partitions: Kafka $(check describe "$KBS" $t) | strata $(check describe "$STRATA_DST" $t)"
  [ "$(check describe "$KBS" $t)" = "$(check describe "$STRATA_DST" $t)" ] || die "$t partition count differs"
done
echo "prod-events configs on strata: $(check configs "$STRATA_DST" prod-events retention.ms)"
check configs "$STRATA_DST" prod-events retention.ms | grep -q "retention.ms=604800002" || die "retention.ms not synced"
check configs "$STRATA_DST" prod-compacted cleanup.policy | grep -q "cleanup.policy=compact" \
  || die "cleanup.policy not synced"
for g in prod-app prod-live; do
  pos=$(synced_positions "$STRATA_DST" $g) || exit 1
  echo "$g positions: Kafka $(check positions "$KBS" $g) | strata $pos"
done
stop_mm2
check resume "$STRATA_DST" prod-events prod-app "$WORK/prod-app.before"
check resume "$STRATA_DST" prod-events prod-live "$WORK/prod-live.before"

step "both directions: records, checksums and positions match (run time $(( $(date +%s) - T0 )) s)"
