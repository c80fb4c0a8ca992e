#!/usr/bin/env bash
# Installs the interop clients into a local prefix (no system-wide pip/npm changes). Idempotent.
#   STRATA_INTEROP_PREFIX (default ~/.cache/strata-interop): venv/ with confluent-kafka, kafka-python, aiokafka (and
#   pytest, which kafka-python's test module imports); kafka-python-src/ (its sdist, for its own ACL test);
#   node/node_modules/kafkajs and @platformatic/kafka (1.20.0: the last release for node 20; it speaks only Kafka 3.5+'s
#   newest API versions); franz/franz-check (franz-go, built with go). kcat (Debian's, librdkafka 2.0.2) comes from
#   apt (see .ci/run).
set -euo pipefail
PREFIX=${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}
PY=${PYTHON:-python3}
mkdir -p "$PREFIX"

if [ ! -x "$PREFIX/venv/bin/python" ]; then
  "$PY" -m venv "$PREFIX/venv"
fi
if ! "$PREFIX/venv/bin/python" - <<'PYEOF' 2>/dev/null
import importlib.metadata as m
want = {"confluent-kafka": "2.16.1", "kafka-python": "3.0.12", "aiokafka": "0.14.0", "pytest": "9.2.0"}
assert all(m.version(k) == v for k, v in want.items())
PYEOF
then
  "$PREFIX/venv/bin/pip" install -q --disable-pip-version-check --only-binary=:all: \
    confluent-kafka==2.16.1 kafka-python==3.0.12 aiokafka==0.14.0 pytest==9.2.0
fi
# kafka-python's own integration tests (its source distribution from PyPI): acls.py runs its
# test_create_describe_delete_acls against strata's authorizer.
if [ ! -f "$PREFIX/kafka-python-src/test/integration/test_admin_integration.py" ]; then
  rm -rf "$PREFIX/kafka-python-src" "$PREFIX/kafka-python-sdist"
  "$PREFIX/venv/bin/pip" download -q --disable-pip-version-check --no-binary=:all: --no-deps \
    -d "$PREFIX/kafka-python-sdist" kafka-python==3.0.12
  mkdir -p "$PREFIX/kafka-python-src"
  tar xzf "$PREFIX"/kafka-python-sdist/kafka_python-3.0.12.tar.gz -C "$PREFIX/kafka-python-src" --strip-components=1
fi

mkdir -p "$PREFIX/node"
if [ ! -f "$PREFIX/node/node_modules/kafkajs/package.json" ] ||
   ! grep -q '"version": "2.2.4"' "$PREFIX/node/node_modules/kafkajs/package.json"; then
  ( cd "$PREFIX/node" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install -s --no-audit --no-fund kafkajs@2.2.4 >/dev/null )
fi
if [ ! -f "$PREFIX/node/node_modules/@platformatic/kafka/package.json" ] ||
   ! grep -q '"version": "1.20.0"' "$PREFIX/node/node_modules/@platformatic/kafka/package.json"; then
  ( cd "$PREFIX/node" && npm install -s --no-audit --no-fund @platformatic/kafka@1.20.0 >/dev/null )
fi
# franz-go 1.22 + kadm (Go): tests/interop/franz built into $PREFIX/franz/franz-check; modules from the Go module
# proxy into Go's module cache (~/go/pkg/mod), pinned by franz/go.sum. Needs go 1.26+ (the machine's).
if command -v go >/dev/null; then
  mkdir -p "$PREFIX/franz"
  ( cd "$(dirname "$0")/franz" && go build -trimpath -o "$PREFIX/franz/franz-check" . )
else
  echo "go not found: franz-go's interop check will fail (install Go 1.26+)" >&2
fi
echo "interop clients installed under $PREFIX"
