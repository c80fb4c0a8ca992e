# Sourced by bench/vs-kafka*.sh: starting Apache Kafka 4.4 and strata side by side with the same listeners
# (PLAINTEXT, and SASL_SSL with PLAIN over TLS from one PKCS12 keystore), and the measurements both get.
# Expects ROOT and WORK set, and `set -euo pipefail` in the caller.
KAFKA="$ROOT/bench/kafka/kafka.sh"
STRATA_PID=""
SASL_USER=bench
SASL_PASS=bench-secret
JAAS_SERVER="org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER=\"$SASL_PASS\";"

say() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
tool() { "$KAFKA" run "$@" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 == 0 || a == "" || a == "-") print "-"; else printf "%.3g", a / b}'; }

# The strata binary: STRATA_BIN, else a release build of this tree; copied (a shared target dir is rebuilt by others).
strata_bin() {
  if [ -z "${STRATA_BIN:-}" ]; then
    (cd "$ROOT" && cargo build --release -q -p strata-broker --bin strata)
    STRATA_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/strata"
  fi
  cp "$STRATA_BIN" "$WORK/strata"
}

# rdkafka_performance with zstd and SSL (bench/kafka/rdkafka-perf.sh builds it once); RDPERF overrides.
rdperf_bin() { RDPERF=${RDPERF:-$("$ROOT/bench/kafka/rdkafka-perf.sh")}; }

# A CA and a server certificate for 127.0.0.1/localhost in a PKCS12 keystore both brokers load; client configs for
# Kafka's Java tools (client.properties) and librdkafka (RDKAFKA_SASL, -X arguments).
tls_material() {
  local d=$WORK/tls
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench-ca -keyout "$d/ca.key" -out "$d/ca.pem" \
    2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$d/ext"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
    -extfile "$d/ext" -out "$d/server.pem" 2>/dev/null
  openssl pkcs12 -export -in "$d/server.pem" -inkey "$d/server.key" -certfile "$d/ca.pem" -passout pass:bench-pass \
    -out "$d/server.p12"
  cat >"$d/client.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$SASL_USER" password="$SASL_PASS";
ssl.truststore.type=PEM
ssl.truststore.location=$d/ca.pem
EOF
  RDKAFKA_SASL=(-X security.protocol=SASL_SSL -X sasl.mechanism=PLAIN -X "sasl.username=$SASL_USER"
    -X "sasl.password=$SASL_PASS" -X "ssl.ca.location=$d/ca.pem")
}
# start_kafka PORT SASLPORT DIR [k=v ...] -> PID, START_MS (launch to serving, formatting excluded)
start_kafka() {
  local port=$1 sport=$2 dir=$3 cport out
  shift 3
  cport=$(free_port)
  out=$("$KAFKA" start "$dir" "$port" "$cport" \
    "listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport,CONTROLLER://127.0.0.1:$cport" \
    "advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport" \
    listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL \
    ssl.keystore.type=PKCS12 "ssl.keystore.location=$WORK/tls/server.p12" ssl.keystore.password=bench-pass \
    ssl.key.password=bench-pass sasl.enabled.mechanisms=PLAIN \
    "listener.name.sasl_ssl.plain.sasl.jaas.config=$JAAS_SERVER" "$@")
  START_MS=$(echo "$out" | awk '/^ready/ {print $3}')
  PID=$(cat "$dir/kafka.pid")
}

# start_strata PORT SASLPORT DATA [--override k=v ...] -> PID, STRATA_PID, START_MS (launch to the port accepting). As
# Kafka from kafka.sh, with group.initial.rebalance.delay.ms=0 (a Java consumer measures its group join too).
start_strata() {
  local port=$1 sport=$2 data=$3 t0 deadline
  shift 3
  mkdir -p "$data"
  t0=$(now_ms)
  "$WORK/strata" --override "log.dirs=$data" \
    --override "listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport" \
    --override ssl.keystore.type=PKCS12 --override "ssl.keystore.location=$WORK/tls/server.p12" \
    --override ssl.keystore.password=bench-pass --override ssl.key.password=bench-pass \
    --override sasl.enabled.mechanisms=PLAIN --override "sasl.jaas.config=$JAAS_SERVER" \
    --override http.listener= --override group.initial.rebalance.delay.ms=0 "$@" >>"$WORK/strata.log" 2>&1 &
  STRATA_PID=$!
  PID=$STRATA_PID
  deadline=$((t0 + 120000))
  until port_open "$port"; do
    kill -0 "$STRATA_PID" 2>/dev/null || { tail "$WORK/strata.log" >&2; return 1; }
    [ "$(now_ms)" -lt "$deadline" ] || { tail "$WORK/strata.log" >&2; return 1; }
    sleep 0.01
  done
  START_MS=$(($(now_ms) - t0))
}

stop_strata() { # [signal]
  [ -n "$STRATA_PID" ] || return 0
  kill -"${1:-TERM}" "$STRATA_PID" 2>/dev/null || true
  wait "$STRATA_PID" 2>/dev/null || true
  STRATA_PID=""
}

common_cleanup() {
  stop_strata
  "$KAFKA" stop "$WORK/kafka" >/dev/null 2>&1 || true
}
