#!/usr/bin/env bash
# Runs real Kafka clients against the built `strata` binary: kcat (Debian's librdkafka 2.0.2), confluent-kafka,
# kafka-python (also pinned to 0.8.2/0.9/0.10 protocol versions and message formats v0/v1), aiokafka, kafkajs and
# @platformatic/kafka (newest API versions only) and franz-go (Go, with kadm and GroupTransactSession) each
# produce, consume, use a consumer group and an admin call, asserting counts and contents; confluent-kafka also
# creates a compacted topic and reads back the latest value per key; confluent-kafka, kafka-python, aiokafka and
# kafkajs run transactions (commit, abort, offsets in a transaction) checked with read_committed and
# read_uncommitted consumers; kafka-python 2.0.2 SASL (SaslHandshake v0) when KP2_PYTHON is set; then kcat against a second broker with tiering defaults reads back from the remote tier,
# byte-identical, with /metrics showing remote fetch bytes; ACLs with an authorizer: kafka-python's own
# test_create_describe_delete_acls and confluent-kafka's admin ACL calls with per-principal enforcement. Needs tests/interop/install.sh first. Prints "N passed, M failed"; exits non-zero on a failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PREFIX=${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}
cd "$ROOT"

# STRATA_BIN: use an already-built binary (e.g. a release build) instead of building the debug one.
BIN=${STRATA_BIN:-}
if [ -z "$BIN" ]; then
  cargo build -q -p strata-broker --bin strata
  TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
  case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
  BIN="$TARGET/debug/strata"
fi
[ -x "$BIN" ] || { echo "strata binary not found at $BIN" >&2; exit 1; }

WORK=$(mktemp -d)
PID=
cleanup() {
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

RUST_LOG=info "$BIN" --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$WORK/data" \
  --override group.initial.rebalance.delay.ms=0 \
  --override log.cleaner.backoff.ms=100 2>"$WORK/broker.log" &
PID=$!
BS=
for _ in $(seq 1 300); do
  BS=$(grep -o 'bootstrap.servers=[^ ]*' "$WORK/broker.log" | head -1 | cut -d= -f2 || true)
  [ -n "$BS" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/broker.log" >&2; echo "strata exited during start-up" >&2; exit 1; }
  sleep 0.1
done
[ -n "$BS" ] || { cat "$WORK/broker.log" >&2; echo "strata printed no ready line" >&2; exit 1; }
echo "strata ready at $BS"

pass=0
fail=0
check() {
  local name=$1; shift
  if "$@" >"$WORK/$name.out" 2>&1; then
    pass=$((pass + 1)); echo "ok   $name"
  else
    fail=$((fail + 1)); echo "FAIL $name"; tail -40 "$WORK/$name.out" | sed 's/^/    /'
  fi
}

kcat_check() {
  local t="kcat-$RANDOM" want got md
  want=$(for i in $(seq 1 100); do echo "k$i:v$i-$((i * 7))"; done)
  # Produce (auto-creates the topic) and read back.
  echo "$want" | kcat -b "$BS" -P -t "$t" -K: -X acks=all
  got=$(timeout 60 kcat -b "$BS" -C -e -q -o beginning -t "$t" -f '%k:%s\n')
  [ "$got" = "$want" ] || { echo "kcat consume differs"; diff <(echo "$want") <(echo "$got") | head; return 1; }
  # Admin: metadata lists the topic and the internal offsets topic.
  # (Output captured first: with pipefail, `producer | grep -q` fails when grep exits before the producer has
  # written everything — SIGPIPE.)
  md=$(kcat -b "$BS" -L)
  grep -q "topic \"$t\" with 1 partitions" <<<"$md"
  grep -q 'topic "__consumer_offsets"' <<<"$md"
  # Consumer group: consume all, commit on close; a second run resumes after the committed offsets.
  got=$(timeout 60 kcat -b "$BS" -G "$t-g" -q -c 100 -f '%s\n' -X auto.offset.reset=earliest "$t" | wc -l)
  [ "$got" -eq 100 ] || { echo "group consumed $got of 100"; return 1; }
  for i in 1 2 3; do echo "late$i"; done | kcat -b "$BS" -P -t "$t"
  got=$(timeout 60 kcat -b "$BS" -G "$t-g" -q -c 3 -f '%s\n' -X auto.offset.reset=earliest "$t")
  [ "$got" = "$(printf 'late1\nlate2\nlate3')" ] || { echo "group did not resume at its commit: $got"; return 1; }
  # The internal offsets topic is readable.
  got=$(timeout 30 kcat -b "$BS" -C -e -q -o beginning -t __consumer_offsets -f '%o\n' | wc -l)
  [ "$got" -ge 1 ] || { echo "__consumer_offsets is empty"; return 1; }
}

check kcat kcat_check
for c in confluent kafka-python kafka-python-0.8 kafka-python-0.9 kafka-python-0.10 aiokafka confluent-compact; do
  check "$c" timeout 180 "$PREFIX/venv/bin/python" "$HERE/clients.py" "$BS" "$c"
done
check kafkajs env NODE_PATH="$PREFIX/node/node_modules" KAFKAJS_NO_PARTITIONER_WARNING=1 \
  timeout 180 node "$HERE/kafkajs-check.js" "$BS"
# A client that speaks only the newest versions (Produce v11, Fetch v17 by topic id, ListOffsets v9, OffsetCommit /
# OffsetFetch v9, Metadata v12, CreateTopics v7, DeleteTopics v6, DescribeConfigs v4; it prints what it sent).
check platformatic env NODE_PATH="$PREFIX/node/node_modules" \
  timeout 180 node "$HERE/platformatic-check.js" "$BS"
# Transactions: each client's transactional producer commits, aborts and sends offsets to a transaction.
for c in confluent kafka-python aiokafka; do
  check "$c-txn" timeout 180 "$PREFIX/venv/bin/python" "$HERE/transactions.py" "$BS" "$c"
done
check kafkajs-txn env NODE_PATH="$PREFIX/node/node_modules" KAFKAJS_NO_PARTITIONER_WARNING=1 \
  timeout 180 node "$HERE/kafkajs-txn.js" "$BS"

# franz-go 1.22 (Go) and kadm: admin calls, the idempotent producer, a consumer group, GroupTransactSession
# (tests/interop/franz/main.go).
check franz-go timeout 180 "$PREFIX/franz/franz-check" "$BS"

# Graceful shutdown writes the clean-shutdown marker.
kill -TERM "$PID"
if wait "$PID" && [ -e "$WORK/data/.kafka_cleanshutdown" ]; then
  pass=$((pass + 1)); echo "ok   sigterm-clean-shutdown"
else
  fail=$((fail + 1)); echo "FAIL sigterm-clean-shutdown"; tail -20 "$WORK/broker.log"
fi
PID=

# kafka-python 2.0.2 logs in with SaslHandshake v0 and raw SASL tokens (KIP-43), PLAIN and SCRAM-SHA-256. Optional
# (not installed by install.sh: kafka-python 2.0.2 does not import on Python 3.12+): KP2_PYTHON, else
# $PREFIX/venv-kp2/bin/python (`python3.11 -m venv $PREFIX/venv-kp2 && $PREFIX/venv-kp2/bin/pip install
# kafka-python==2.0.2`).
KP2=${KP2_PYTHON:-$PREFIX/venv-kp2/bin/python}
# Waits (30 s at most) for strata's ready line in LOG and prints the value of FIELD on it (bootstrap.servers,
# listeners, ...); prints nothing if the line never came.
ready_value() {
  local log=$1 field=$2 v=""
  for _ in $(seq 1 300); do
    v=$(grep -o 'strata ready: .*' "$log" | head -1 | grep -o " $field=[^ ]*" | cut -d= -f2- || true)
    [ -n "$v" ] && break
    sleep 0.1
  done
  echo "$v"
}
# Starts a broker with one SASL_PLAINTEXT listener (PLAIN user alice, SCRAM-SHA-256 enabled) logging to
# $WORK/NAME.log, sets PID and SASL_BS, and creates the SCRAM user dave (sasl_v0.py admin).
sasl_broker() {
  local name=$1
  RUST_LOG=info "$BIN" --override listeners=SASL_PLAINTEXT://127.0.0.1:0 --override "log.dirs=$WORK/$name" \
    --override sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256 \
    --override 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";' \
    2>"$WORK/$name.log" &
  PID=$!
  SASL_BS=$(ready_value "$WORK/$name.log" bootstrap.servers)
  [ -n "$SASL_BS" ] || { cat "$WORK/$name.log"; return 1; }
  timeout 60 "$PREFIX/venv/bin/python" "$HERE/sasl_v0.py" "$SASL_BS" admin
}
sasl_v0_check() {
  local bs
  sasl_broker sasl || return 1
  bs=$SASL_BS
  timeout 180 "$KP2" "$HERE/sasl_v0.py" "$bs" client || { grep -E 'WARN|ERROR' "$WORK/sasl.log" | tail -10; return 1; }
  kill -TERM "$PID"; wait "$PID"; PID=
}
# kcat (librdkafka 2.0.2) with SCRAM-SHA-256: librdkafka before 2.6.1 repeats its nonce in the client-final
# message (librdkafka#4895), which Kafka 3.x accepted and strata accepts (the nonce must end with the server's).
kcat_scram_check() {
  local bs t="kcat-scram-$RANDOM" got
  sasl_broker kcat-scram || return 1
  bs=$SASL_BS
  local auth=(-X security.protocol=sasl_plaintext -X sasl.mechanism=SCRAM-SHA-256 -X sasl.username=dave
    -X sasl.password=dave-secret)
  seq 1 20 | timeout 60 kcat -b "$bs" "${auth[@]}" -P -t "$t"
  got=$(timeout 60 kcat -b "$bs" "${auth[@]}" -C -t "$t" -o beginning -e -q | wc -l)
  [ "$got" = 20 ] || { echo "kcat SCRAM read $got of 20"; grep -E 'WARN|ERROR' "$WORK/kcat-scram.log" | tail -5; return 1; }
  kill -TERM "$PID"; wait "$PID"; PID=
}
check kcat-scram-sha-256 kcat_scram_check

# ACLs (issue 31): a broker with Kafka's StandardAuthorizer, PLAINTEXT (User:ANONYMOUS, a super user) and
# SASL_PLAINTEXT with PLAIN users alice and bob: kafka-python's own test_create_describe_delete_acls, and
# confluent-kafka's admin ACL calls with produce/metadata enforced per principal (tests/interop/acls.py).
acl_check() {
  local which=$1 listeners plain sasl_bs
  RUST_LOG=info "$BIN" --override log.dirs="$WORK/acl-$which" --override http.listener= \
    --override listeners=PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0 \
    --override listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT \
    --override sasl.enabled.mechanisms=PLAIN \
    --override 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";' \
    --override authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer \
    --override super.users=User:ANONYMOUS 2>"$WORK/acl-$which.log" &
  PID=$!
  listeners=$(ready_value "$WORK/acl-$which.log" listeners)
  [ -n "$listeners" ] || { cat "$WORK/acl-$which.log"; return 1; }
  plain=$(tr ',' '\n' <<<"$listeners" | grep '^PLAINTEXT://' | sed 's|.*://||')
  sasl_bs=$(tr ',' '\n' <<<"$listeners" | grep '^SASL://' | sed 's|.*://||')
  timeout 120 "$PREFIX/venv/bin/python" "$HERE/acls.py" "$plain" "$sasl_bs" "$which" "$PREFIX/kafka-python-src" ||
    { grep -E 'WARN|ERROR' "$WORK/acl-$which.log" | tail -10; kill -9 "$PID"; PID=; return 1; }
  kill -TERM "$PID"; wait "$PID"; PID=
}
check kafka-python-acls acl_check kafka-python
check confluent-acls acl_check confluent

# Secured listeners with every client: SSL with a client certificate required, SASL_SSL with PLAIN, SCRAM-SHA-256
# and SCRAM-SHA-512, SASL_PLAINTEXT with PLAIN. Certificates are made here with the openssl CLI (v3, with SANs).
secured_start() {
  local pki="$WORK/pki" ext
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca-key.pem" -out "$pki/ca.pem" -days 2 \
    -subj /CN=strata-interop-ca -addext basicConstraints=critical,CA:TRUE 2>/dev/null
  for who in server client; do
    openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$who-key.pem" -out "$pki/$who.csr" \
      -subj "/CN=strata-interop-$who" 2>/dev/null
    if [ "$who" = server ]; then
      ext='basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
    else
      ext='basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
    fi
    openssl x509 -req -in "$pki/$who.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca-key.pem" -CAcreateserial -days 2 \
      -out "$pki/$who.pem" -extfile <(printf "$ext") 2>/dev/null
  done
  cat "$pki/server-key.pem" "$pki/server.pem" >"$pki/server-bundle.pem"
  RUST_LOG=info "$BIN" --override log.dirs="$WORK/secured" --override http.listener= \
    --override listeners=PLAINTEXT://127.0.0.1:0,MTLS://127.0.0.1:0,SASLSSL://127.0.0.1:0,SASLPLAIN://127.0.0.1:0 \
    --override listener.security.protocol.map=PLAINTEXT:PLAINTEXT,MTLS:SSL,SASLSSL:SASL_SSL,SASLPLAIN:SASL_PLAINTEXT \
    --override ssl.keystore.location="$pki/server-bundle.pem" --override ssl.truststore.location="$pki/ca.pem" \
    --override listener.name.mtls.ssl.client.auth=required \
    --override sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 \
    --override 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";' \
    2>"$WORK/secured.log" &
  PID=$!
  SECURED=$(ready_value "$WORK/secured.log" listeners)
  [ -n "$SECURED" ] || { cat "$WORK/secured.log" >&2; return 1; }
  timeout 60 "$PREFIX/venv/bin/python" "$HERE/secured.py" "$SECURED" "$pki" admin -
}
kcat_secured() {
  local setup=$1 pki="$WORK/pki" t="sec-kcat-$1-$RANDOM" got want addr args=()
  addr() { tr ',' '\n' <<<"$SECURED" | grep "^$1://" | sed 's|.*://||'; }
  case "$setup" in
    ssl-client-cert) args=(-b "$(addr MTLS)" -X security.protocol=ssl -X ssl.ca.location="$pki/ca.pem"
      -X ssl.certificate.location="$pki/client.pem" -X ssl.key.location="$pki/client-key.pem") ;;
    sasl_ssl-plain) args=(-b "$(addr SASLSSL)" -X security.protocol=sasl_ssl -X ssl.ca.location="$pki/ca.pem"
      -X sasl.mechanism=PLAIN -X sasl.username=alice -X sasl.password=alice-secret) ;;
    sasl_ssl-scram-sha-256) args=(-b "$(addr SASLSSL)" -X security.protocol=sasl_ssl -X ssl.ca.location="$pki/ca.pem"
      -X sasl.mechanism=SCRAM-SHA-256 -X sasl.username=sam -X sasl.password=sam-secret) ;;
    sasl_ssl-scram-sha-512) args=(-b "$(addr SASLSSL)" -X security.protocol=sasl_ssl -X ssl.ca.location="$pki/ca.pem"
      -X sasl.mechanism=SCRAM-SHA-512 -X sasl.username=sue -X sasl.password=sue-secret) ;;
    sasl_plaintext-plain) args=(-b "$(addr SASLPLAIN)" -X security.protocol=sasl_plaintext
      -X sasl.mechanism=PLAIN -X sasl.username=alice -X sasl.password=alice-secret) ;;
  esac
  want=$(seq 1 10)
  echo "$want" | timeout 60 kcat "${args[@]}" -P -t "$t" -X acks=all
  got=$(timeout 60 kcat "${args[@]}" -C -t "$t" -o beginning -e -q)
  [ "$got" = "$want" ] || { echo "kcat $setup read: $got"; return 1; }
}
SETUPS="ssl-client-cert sasl_ssl-plain sasl_ssl-scram-sha-256 sasl_ssl-scram-sha-512 sasl_plaintext-plain"
if secured_start >"$WORK/secured-start.out" 2>&1; then
  for setup in $SETUPS; do
    check "secured-kcat-$setup" kcat_secured "$setup"
    for c in confluent kafka-python aiokafka; do
      check "secured-$c-$setup" timeout 120 "$PREFIX/venv/bin/python" "$HERE/secured.py" "$SECURED" "$WORK/pki" "$c" "$setup"
    done
    check "secured-kafkajs-$setup" env NODE_PATH="$PREFIX/node/node_modules" \
      timeout 120 node "$HERE/secured.js" "$SECURED" "$WORK/pki" "$setup"
  done
  kill -TERM "$PID"; wait "$PID" || true; PID=
else
  fail=$((fail + 1)); echo "FAIL secured-start"; tail -30 "$WORK/secured-start.out" | sed 's/^/    /'
fi

if [ -x "$KP2" ]; then
  check kafka-python-2.0.2-sasl-v0 sasl_v0_check
else
  echo "skip kafka-python-2.0.2-sasl-v0 (no $KP2)"
fi

# Tiered storage the README's way: broker defaults make kcat's auto-created topic tiered; once the local
# segments are gone, kcat reads everything back from the remote tier (the filesystem backend under log.dirs).
kcat_tiered_check() {
  local data="$WORK/tiered" t="tiered-$RANDOM" bs="" metrics="" want got
  RUST_LOG=info "$BIN" --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$data" \
    --override log.remote.storage.enable=true --override log.segment.bytes=65536 \
    --override log.local.retention.bytes=1 --override log.retention.check.interval.ms=200 \
    --override remote.log.manager.task.interval.ms=200 --override http.listener=127.0.0.1:0 \
    2>"$WORK/tiered.log" &
  PID=$!
  bs=$(ready_value "$WORK/tiered.log" bootstrap.servers)
  [ -n "$bs" ] || { cat "$WORK/tiered.log"; return 1; }
  want=$(seq 1 20000 | sed 's/^/tiered-record-/')
  echo "$want" | kcat -b "$bs" -P -t "$t" -X acks=all
  # Wait (bounded) until the first local segment is gone: offset 0 then lives only in the remote tier.
  for _ in $(seq 1 300); do
    [ -e "$data/$t-0/00000000000000000000.log" ] || break
    sleep 0.1
  done
  [ ! -e "$data/$t-0/00000000000000000000.log" ] || { echo "local segments never deleted"; ls "$data/$t-0"; return 1; }
  got=$(timeout 60 kcat -b "$bs" -C -e -q -o beginning -t "$t" -f '%s\n')
  [ "$got" = "$want" ] || { echo "remote read differs"; diff <(echo "$want") <(echo "$got") | head; return 1; }
  metrics=$(grep -o 'metrics=Some([^)]*)' "$WORK/tiered.log" | head -1 | sed 's/metrics=Some(//; s/)//')
  # Bounded poll; the page goes to a file first (`curl | grep -q` under pipefail failed when grep exited before
  # curl had written the whole page: SIGPIPE, the flake seen once in CI).
  for _ in $(seq 1 50); do
    curl -sf --max-time 5 "http://$metrics/metrics" > "$WORK/metrics.txt" || true
    grep -Eq "^kafka_server_brokertopicmetrics_remotefetchbytes_total\\{topic=\"$t\"\\} [1-9]" "$WORK/metrics.txt" && break
    sleep 0.2
  done
  grep -Eq "^kafka_server_brokertopicmetrics_remotefetchbytes_total\\{topic=\"$t\"\\} [1-9]" "$WORK/metrics.txt" || {
    echo "no remote fetch bytes in /metrics ($metrics)"
    grep -E 'remotefetch|remotecopybytes|delayedremotefetch' "$WORK/metrics.txt" | grep -v '^#'
    ls -la "$data/$t-0"
    grep -Ev 'DEBUG|TRACE' "$WORK/tiered.log" | tail -25
    return 1
  }
  # The log cleaner's metrics are on the same page (Kafka's kafka.log:type=LogCleaner names, as Strimzi's rules).
  grep -Eq '^kafka_log_logcleaner_time_since_last_run_ms [0-9]' "$WORK/metrics.txt" || {
    echo "no log cleaner metrics in /metrics"; return 1; }
  kill -TERM "$PID"; wait "$PID"; PID=
}
check kcat-tiered kcat_tiered_check

echo "interop: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
