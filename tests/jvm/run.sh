#!/usr/bin/env bash
# Kafka's own Java client (kafka-clients 4.4) and tools against the built `strata` binary: a Maven project of JUnit 5
# tests (tests/jvm/src/test/java), each class starting its own strata (--ephemeral, 127.0.0.1:0). Jars come from
# Maven Central into Maven's local repository (~/.m2/repository unless MAVEN_REPO is set); none is committed.
# STRATA_BIN: use an already-built binary instead of building the debug one. Extra arguments go to Maven
# (e.g. -Dtest=ProducerTest). Prints "tests/jvm: N passed, M failed, S skipped"; exits non-zero on a failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"

BIN=${STRATA_BIN:-}
if [ -z "$BIN" ]; then
  cargo build -q -p strata-broker --bin strata
  TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
  case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
  BIN="$TARGET/debug/strata"
fi
[ -x "$BIN" ] || { echo "strata binary not found at $BIN" >&2; exit 1; }

REPO=${MAVEN_REPO:-$HOME/.m2/repository}
start=$(date +%s)
cd "$HERE"
rm -rf target/surefire-reports spring/target/surefire-reports
rc=0
mvn -q -B -Dmaven.repo.local="$REPO" -Dstrata.bin="$BIN" test "$@" || rc=$?

# Spring for Apache Kafka (issue 32): a module of its own (spring/, Spring Boot's kafka-clients), with the strata
# extension beside spring-kafka-test's EmbeddedKafka (start-up and RSS figures). SPRING=off skips it.
if [ "${SPRING:-on}" != off ]; then
  mvn -q -B -f spring/pom.xml -Dmaven.repo.local="$REPO" -Dstrata.bin="$BIN" test "$@" -Dsurefire.failIfNoSpecifiedTests=false || rc=$?
  cat spring/target/footprint.txt 2>/dev/null || true
fi

# Counts from the surefire reports (one XML per class).
read -r tests failures errors skipped < <(python3 - <<'PY'
import glob, xml.etree.ElementTree as ET
t = f = e = s = 0
for p in glob.glob("target/surefire-reports/TEST-*.xml") + glob.glob("spring/target/surefire-reports/TEST-*.xml"):
    r = ET.parse(p).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)); e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
print(t, f, e, s)
PY
)
failed=$((failures + errors))
echo "tests/jvm: $((tests - failed - skipped)) passed, $failed failed, $skipped skipped ($(( $(date +%s) - start )) s)"
[ "$rc" = 0 ] && [ "$failed" = 0 ] && [ "$tests" -gt 0 ]
