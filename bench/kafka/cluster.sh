#!/usr/bin/env bash
# A three-broker Apache Kafka KRaft cluster on loopback, beside bench/kafka/kafka.sh (whose install and classpath it
# uses), and MirrorMaker 2 from Maven Central: the other end of "Outgrowing one node" (issue 34, tests/mirror/).
#
#   cluster.sh install                  fetch Kafka (kafka.sh install) and MirrorMaker 2's jars into the cache
#   cluster.sh start DIR PORT [k=v ...] format and start nodes 1..3 in DIR/node-N, each broker and controller in
#                                       one process: PLAINTEXT on 127.0.0.1:PORT, PORT+1, PORT+2, controllers on
#                                       PORT+10..PORT+12; replication factor 3 and min.insync.replicas 2 for
#                                       internal topics; k=v lines go into every server.properties. Returns once
#                                       all three serve (bounded), printing "ready BOOTSTRAP <ms>"
#   cluster.sh stop DIR                 stop the three nodes (SIGTERM, then SIGKILL after a deadline)
#   cluster.sh bootstrap DIR            print the bootstrap servers of the cluster in DIR
#   cluster.sh mm2 PROPS                run MirrorMaker 2 (dedicated mode, org.apache.kafka.connect.mirror.MirrorMaker)
#                                       in the foreground on PROPS
#
# Environment: as kafka.sh (KAFKA_VERSION, STRATA_KAFKA_CACHE, KAFKA_START_TIMEOUT, KAFKA_STOP_TIMEOUT,
# KAFKA_LOG_LEVEL); CLUSTER_HEAP_OPTS per node (-Xms128m -Xmx512m); MM2_VERSION (4.3.1: the newest connect-mirror
# on Maven Central when this was written, 4.4.0 is not published there; it runs on its own jars, its clients talk
# to the 4.4 cluster and to strata over the protocol); MM2_HEAP_OPTS (-Xms128m -Xmx512m).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
kafka_sh="$here/kafka.sh"
version="${KAFKA_VERSION:-4.4.0}"
mm2_version="${MM2_VERSION:-4.3.1}"
mm2_libs="${STRATA_KAFKA_CACHE:-$HOME/.cache/strata-kafka}/mm2-$mm2_version/libs"
# Fixed cluster id (16 bytes, base64url) distinct from kafka.sh's single node.
cluster_id="c3RyYXRhLWNsdXN0ZXIzMw"
nodes=(1 2 3)

die() { echo "cluster.sh: $*" >&2; exit 1; }

now_ms() { date +%s%3N; }

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

install() {
  "$kafka_sh" install
  if [ -f "$mm2_libs/connect-mirror-$mm2_version.jar" ]; then
    return 0
  fi
  rm -rf "$mm2_libs"
  mkdir -p "$mm2_libs"
  mvn -q -B -Dstyle.color=never -f "$here/mirror-pom.xml" -Dmm2.version="$mm2_version" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$mm2_libs" \
    || die "fetching MirrorMaker 2 ($mm2_version) from Maven Central failed (see above)"
  [ -f "$mm2_libs/connect-mirror-$mm2_version.jar" ] || die "connect-mirror-$mm2_version.jar missing after mvn"
}

write_config() {
  local dir="$1" node="$2" port0="$3"
  shift 3
  local voters="" n
  for n in "${nodes[@]}"; do
    voters+="${voters:+,}$n@127.0.0.1:$((port0 + 9 + n))"
  done
  local port=$((port0 + node - 1)) cport=$((port0 + 9 + node))
  cat >"$dir/server.properties" <<EOF
# Written by bench/kafka/cluster.sh: node $node of a three-node KRaft cluster, broker and controller in one process.
process.roles=broker,controller
node.id=$node
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
EOF
  local kv
  for kv in "$@"; do
    case "$kv" in
      *=*) echo "$kv" >>"$dir/server.properties" ;;
      *) die "expected key=value, got '$kv'" ;;
    esac
  done
  cat >"$dir/log4j2.properties" <<EOF
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${KAFKA_LOG_LEVEL:-INFO}
rootLogger.appenderRef.out.ref = out
logger.state.name = state.change.logger
logger.state.level = WARN
EOF
}

java_opts() {
  local dir="$1"
  # shellcheck disable=SC2206
  opts=(${CLUSTER_HEAP_OPTS:--Xms128m -Xmx512m}
    -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -Djava.awt.headless=true "-Dlog4j2.configurationFile=$dir/log4j2.properties" "-Dkafka.logs.dir=$dir/logs")
}

start() {
  [ $# -ge 2 ] || die "usage: $0 start DIR PORT [key=value ...]"
  local root="$1" port0="$2"
  shift 2
  [[ "$port0" =~ ^[0-9]+$ ]] || die "PORT must be a number, got '$port0'"
  local cp
  cp="$("$kafka_sh" classpath)"
  mkdir -p "$root"
  root="$(cd "$root" && pwd)"
  local n dir p
  for n in "${nodes[@]}"; do
    for p in $((port0 + n - 1)) $((port0 + 9 + n)); do
      if port_open "$p"; then die "127.0.0.1:$p is already in use"; fi
    done
  done
  local t0
  t0="$(now_ms)"
  for n in "${nodes[@]}"; do
    dir="$root/node-$n"
    mkdir -p "$dir"
    if [ -f "$dir/kafka.pid" ] && kill -0 "$(cat "$dir/kafka.pid")" 2>/dev/null; then
      die "node $n already runs in $dir (pid $(cat "$dir/kafka.pid"))"
    fi
    write_config "$dir" "$n" "$port0" "$@"
    java_opts "$dir"
    if [ ! -f "$dir/data/meta.properties" ]; then
      java "${opts[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/server.properties" \
        --ignore-formatted >"$dir/format.log" 2>&1 || { cat "$dir/format.log" >&2; die "format of node $n failed"; }
    fi
  done
  for n in "${nodes[@]}"; do
    dir="$root/node-$n"
    java_opts "$dir"
    setsid java "${opts[@]}" -cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/kafka.log" 2>&1 </dev/null &
    echo $! >"$dir/kafka.pid"
  done
  echo "127.0.0.1:$port0,127.0.0.1:$((port0 + 1)),127.0.0.1:$((port0 + 2))" >"$root/bootstrap"
  local deadline=$(( $(date +%s) + ${KAFKA_START_TIMEOUT:-120} ))
  for n in "${nodes[@]}"; do
    dir="$root/node-$n"
    while ! { grep -q "Kafka Server started" "$dir/kafka.log" && port_open $((port0 + n - 1)); }; do
      if ! kill -0 "$(cat "$dir/kafka.pid")" 2>/dev/null; then
        tail -n 40 "$dir/kafka.log" >&2
        stop "$root" || true
        die "node $n exited during start-up (log: $dir/kafka.log)"
      fi
      if [ "$(date +%s)" -ge "$deadline" ]; then
        tail -n 40 "$dir/kafka.log" >&2
        stop "$root" || true
        die "node $n did not serve within ${KAFKA_START_TIMEOUT:-120}s (log: $dir/kafka.log)"
      fi
      sleep 0.2
    done
  done
  echo "ready $(cat "$root/bootstrap") $(( $(now_ms) - t0 ))"
}

stop() {
  [ $# -eq 1 ] || die "usage: $0 stop DIR"
  local root="$1" n dir pid
  for n in "${nodes[@]}"; do
    dir="$root/node-$n"
    [ -f "$dir/kafka.pid" ] || continue
    pid="$(cat "$dir/kafka.pid")"
    kill -TERM "$pid" 2>/dev/null || true
  done
  local deadline=$(( $(date +%s) + ${KAFKA_STOP_TIMEOUT:-30} ))
  for n in "${nodes[@]}"; do
    dir="$root/node-$n"
    [ -f "$dir/kafka.pid" ] || continue
    pid="$(cat "$dir/kafka.pid")"
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "cluster.sh: node $n (pid $pid) still running after ${KAFKA_STOP_TIMEOUT:-30}s; SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.1
    done
    rm -f "$dir/kafka.pid"
  done
}

mm2() {
  [ $# -eq 1 ] || die "usage: $0 mm2 PROPS"
  [ -f "$mm2_libs/connect-mirror-$mm2_version.jar" ] || die "MirrorMaker 2 is not installed; run: $0 install"
  local props="$1" tmp
  tmp="$(mktemp -d)"
  printf 'status = warn\nappender.out.type = Console\nappender.out.name = out\nappender.out.layout.type = PatternLayout\nappender.out.layout.pattern = [%%d] %%p %%m (%%c)%%n\nrootLogger.level = INFO\nrootLogger.appenderRef.out.ref = out\nlogger.clients.name = org.apache.kafka.clients\nlogger.clients.level = WARN\n' >"$tmp/log4j2.properties"
  # shellcheck disable=SC2086
  exec java ${MM2_HEAP_OPTS:--Xms128m -Xmx512m} -XX:+UseG1GC "-Dlog4j2.configurationFile=$tmp/log4j2.properties" \
    -cp "$mm2_libs/*" org.apache.kafka.connect.mirror.MirrorMaker "$props"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  install) install ;;
  start) start "$@" ;;
  stop) stop "$@" ;;
  bootstrap) [ $# -eq 1 ] || die "usage: $0 bootstrap DIR"; cat "$1/bootstrap" ;;
  mm2) mm2 "$@" ;;
  *) die "usage: $0 install | start DIR PORT [key=value ...] | stop DIR | bootstrap DIR | mm2 PROPS" ;;
esac
