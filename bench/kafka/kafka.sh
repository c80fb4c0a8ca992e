#!/usr/bin/env bash
# Apache Kafka beside strata: fetch it from Maven Central, run a single-node KRaft broker (combined mode) on loopback.
# The reference for the benchmarks and the oracle of the differential tests (issue 33). See README.md here.
#
#   kafka.sh install                       fetch Kafka's jars into the cache (once; idempotent)
#   kafka.sh start DIR PORT [CPORT] [k=v ...]
#                                          format DIR and start a broker: PLAINTEXT on 127.0.0.1:PORT, controller on
#                                          127.0.0.1:CPORT (a free port when omitted); k=v lines go into
#                                          server.properties; returns once the broker serves (bounded), printing
#                                          "ready PORT <ms>"
#   kafka.sh stop DIR                      stop the broker started in DIR (SIGTERM, then SIGKILL after a deadline)
#   kafka.sh classpath                     print the classpath (for Kafka's tools: java -cp "$(kafka.sh classpath)" ...)
#   kafka.sh run CLASS ARGS...             run a Kafka class (e.g. org.apache.kafka.tools.ProducerPerformance)
#   kafka.sh rsm                           compile rsm/FsRemoteStorageManager.java (a filesystem RemoteStorageManager
#                                          for Kafka's RemoteLogManager; needs javac) into the cache, on the classpath
#
# Environment: KAFKA_VERSION (4.4.0), STRATA_KAFKA_CACHE (~/.cache/strata-kafka), KAFKA_HEAP_OPTS (-Xms256m -Xmx1g),
# KAFKA_START_TIMEOUT (seconds, 90), KAFKA_STOP_TIMEOUT (seconds, 30), KAFKA_LOG_LEVEL (INFO).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
version="${KAFKA_VERSION:-4.4.0}"
cache="${STRATA_KAFKA_CACHE:-$HOME/.cache/strata-kafka}/$version"
libs="$cache/libs"
stamp="$cache/.installed"
# A fixed cluster id (any 16 bytes, base64url): runs are reproducible and the differential normaliser has one value.
cluster_id="c3RyYXRhLXJlZmVyZW5jZQ"

die() { echo "kafka.sh: $*" >&2; exit 1; }

now_ms() { date +%s%3N; }

install() {
  if [ -f "$stamp" ]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  command -v java >/dev/null || die "java not found (Kafka $version needs Java 17+; apt-get install openjdk-17-jre-headless)"
  rm -rf "$libs"
  mkdir -p "$libs"
  # copy-dependencies of a pom that only lists Kafka's artifacts: the jars and their runtime dependencies, no build.
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" -Dkafka.version="$version" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" \
    || die "fetching Kafka $version from Maven Central failed (see above)"
  [ -f "$libs/kafka_2.13-$version.jar" ] || die "kafka_2.13-$version.jar missing from $libs after mvn"
  touch "$stamp"
}

classpath() {
  [ -f "$stamp" ] || die "Kafka $version is not installed; run: $0 install"
  if [ -f "$cache/rsm/fs-rsm.jar" ]; then echo "$libs/*:$cache/rsm/fs-rsm.jar"; else echo "$libs/*"; fi
}

rsm() {
  install
  local src="$here/rsm/FsRemoteStorageManager.java" out="$cache/rsm"
  if [ -f "$out/fs-rsm.jar" ] && [ "$out/fs-rsm.jar" -nt "$src" ]; then return 0; fi
  command -v javac >/dev/null || die "javac not found (apt-get install openjdk-17-jdk-headless)"
  rm -rf "$out" && mkdir -p "$out/classes"
  javac -d "$out/classes" -cp "$libs/*" "$src" || die "compiling $src failed"
  jar cf "$out/fs-rsm.jar.tmp" -C "$out/classes" . && mv "$out/fs-rsm.jar.tmp" "$out/fs-rsm.jar"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

java_opts() {
  local dir="$1"
  # KAFKA_HEAP_OPTS and G1 settings as Kafka's kafka-run-class.sh uses them, with a smaller default heap.
  # shellcheck disable=SC2206
  opts=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g}
    -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$dir/log4j2.properties" "-Dkafka.logs.dir=$dir/logs")
}

write_config() {
  local dir="$1" port="$2" cport="$3"
  shift 3
  cat >"$dir/server.properties" <<EOF
# Written by bench/kafka/kafka.sh: single-node KRaft, broker and controller in one process, loopback only.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
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
logger.kafka.name = kafka
logger.kafka.level = ${KAFKA_LOG_LEVEL:-INFO}
logger.state.name = state.change.logger
logger.state.level = WARN
EOF
}

# Whether something accepts TCP connections on 127.0.0.1:$1.
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  [ $# -ge 2 ] || die "usage: $0 start DIR PORT [CONTROLLER_PORT] [key=value ...]"
  local dir="$1" port="$2" cport=""
  shift 2
  if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    cport="$1"
    shift
  fi
  [[ "$port" =~ ^[0-9]+$ ]] || die "PORT must be a number, got '$port'"
  [ -n "$cport" ] || cport="$(free_port)"
  local cp
  cp="$(classpath)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -f "$dir/kafka.pid" ] && kill -0 "$(cat "$dir/kafka.pid")" 2>/dev/null; then
    die "a broker already runs in $dir (pid $(cat "$dir/kafka.pid"))"
  fi
  if port_open "$port"; then
    die "127.0.0.1:$port is already in use"
  fi
  write_config "$dir" "$port" "$cport" "$@"
  local java_opts_arr
  java_opts "$dir"
  java_opts_arr=("${opts[@]}")
  local t0
  t0="$(now_ms)"
  if [ ! -f "$dir/data/meta.properties" ]; then
    java "${java_opts_arr[@]}" -cp "$cp" kafka.tools.StorageTool format \
      -t "$cluster_id" -c "$dir/server.properties" --ignore-formatted >"$dir/format.log" 2>&1 \
      || { cat "$dir/format.log" >&2; die "kafka-storage format failed in $dir"; }
  fi
  local t1
  t1="$(now_ms)"
  # setsid: the broker gets its own process group, so stop can signal it without touching the caller's.
  setsid java "${java_opts_arr[@]}" -cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/kafka.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$dir/kafka.pid"
  echo "$port" >"$dir/kafka.port"
  local deadline=$(( $(date +%s) + ${KAFKA_START_TIMEOUT:-90} ))
  # Ready = the server logged that it started and the listener accepts connections.
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$dir/kafka.log" >&2
      rm -f "$dir/kafka.pid"
      die "Kafka exited during start-up (log: $dir/kafka.log)"
    fi
    if grep -q "Kafka Server started" "$dir/kafka.log" && port_open "$port"; then
      break
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 40 "$dir/kafka.log" >&2
      stop "$dir" || true
      die "Kafka did not serve 127.0.0.1:$port within ${KAFKA_START_TIMEOUT:-90}s (log: $dir/kafka.log)"
    fi
    sleep 0.1
  done
  local t2
  t2="$(now_ms)"
  echo "$(( t1 - t0 ))" >"$dir/format.ms"
  echo "$(( t2 - t1 ))" >"$dir/start.ms"
  echo "ready $port $(( t2 - t1 ))"
}

stop() {
  [ $# -eq 1 ] || die "usage: $0 stop DIR"
  local dir="$1"
  [ -f "$dir/kafka.pid" ] || return 0
  local pid
  pid="$(cat "$dir/kafka.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$(( $(date +%s) + ${KAFKA_STOP_TIMEOUT:-30} ))
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "kafka.sh: pid $pid still running after ${KAFKA_STOP_TIMEOUT:-30}s; SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.1
    done
  fi
  rm -f "$dir/kafka.pid"
}

run() {
  [ $# -ge 1 ] || die "usage: $0 run CLASS ARGS..."
  local cp cls="$1"
  shift
  cp="$(classpath)"
  local tmp
  tmp="$(mktemp -d)"
  # Tools log WARN and above to stderr.
  printf 'status = warn\nappender.err.type = Console\nappender.err.name = err\nappender.err.target = SYSTEM_ERR\nappender.err.layout.type = PatternLayout\nappender.err.layout.pattern = [%%d] %%p %%m (%%c)%%n\nrootLogger.level = WARN\nrootLogger.appenderRef.err.ref = err\n' >"$tmp/log4j2.properties"
  local rc=0
  # shellcheck disable=SC2086
  java ${KAFKA_HEAP_OPTS:--Xmx512m} "-Dlog4j2.configurationFile=$tmp/log4j2.properties" -cp "$cp" "$cls" "$@" || rc=$?
  rm -rf "$tmp"
  return $rc
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  install) install ;;
  start) start "$@" ;;
  stop) stop "$@" ;;
  classpath) classpath ;;
  run) run "$@" ;;
  rsm) rsm ;;
  *) die "usage: $0 install | rsm | start DIR PORT [CONTROLLER_PORT] [key=value ...] | stop DIR | classpath | run CLASS ARGS..." ;;
esac
