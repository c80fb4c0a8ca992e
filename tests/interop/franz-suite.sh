#!/usr/bin/env bash
# franz-go's own integration tests (its client package, pkg/kgo: produce/consume, groups classic and KIP-848,
# transactions with GroupTransactSession ETL, regex consumers, pausing, pooling, large messages...) run against
# strata, with the pass/fail/skip figure and each test that did not pass. Not part of .ci/run (~2-4 min).
# franz-go's source is its module zip from the Go module proxy (`go mod download`), copied under FRANZ_DIR (default
# ~/.cache/strata-franz-suite, outside the repository; never committed). The broker: BOOT=host:port, else the built
# strata (STRATA_BIN, else the debug build) started here with --ephemeral.
#   tests/interop/franz-suite.sh                 # whole package
#   tests/interop/franz-suite.sh -run TestTxnEtl # extra arguments go to `go test`
# Env: FRANZ_VERSION (v1.22.3), FRANZ_RECORDS (records per ETL test; franz-go's default 500000, here 100000).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VERSION=${FRANZ_VERSION:-v1.22.3}
W=${FRANZ_DIR:-$HOME/.cache/strata-franz-suite}
SRC="$W/franz-go-$VERSION"
mkdir -p "$W"

if [ ! -d "$SRC/pkg/kgo" ]; then
  dir=$(cd "$HERE/franz" && go mod download -json "github.com/twmb/franz-go@$VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  rm -rf "$SRC.tmp"; cp -r "$dir" "$SRC.tmp"; chmod -R u+w "$SRC.tmp"; mv "$SRC.tmp" "$SRC"
fi

PID=
LOG="$W/broker.log"
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
BS=${BOOT:-}
if [ -z "$BS" ]; then
  BIN=${STRATA_BIN:-}
  if [ -z "$BIN" ]; then
    (cd "$ROOT" && cargo build -q -p strata-broker --bin strata)
    TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
    case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
    BIN="$TARGET/debug/strata"
  fi
  # A SASL_PLAINTEXT listener beside the plain one for franz-go's SCRAM-SHA-256 and OAUTHBEARER (unsecured JWS)
  # tests; the SCRAM user is created with kadm (franz-check scram-user).
  RUST_LOG=warn,strata=info "$BIN" --ephemeral \
    --override listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0 \
    --override sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER --override http.listener= 2>"$LOG" &
  PID=$!
  for _ in $(seq 1 300); do
    BS=$(grep -o 'bootstrap.servers=[^ ]*' "$LOG" | head -1 | cut -d= -f2 || true)
    [ -n "$BS" ] && break
    kill -0 "$PID" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$BS" ] || { cat "$LOG" >&2; echo "strata printed no ready line" >&2; exit 1; }
  SASL_BS=$(grep -o 'strata ready: .*' "$LOG" | head -1 | grep -o 'SASL_PLAINTEXT://[^ ,]*' | sed 's|.*://||')
  CHECK=${STRATA_INTEROP_PREFIX:-$HOME/.cache/strata-interop}/franz/franz-check
  [ -x "$CHECK" ] || "$HERE/install.sh" >/dev/null
  "$CHECK" scram-user "$BS" franz franz-secret
  export KGO_TEST_SCRAM_SEEDS=$SASL_BS KGO_TEST_SCRAM=franz:franz-secret KGO_TEST_OAUTH_SEEDS=$SASL_BS
fi
echo "franz-go $VERSION pkg/kgo against $BS"

start=$(date +%s)
cd "$SRC"
KGO_SEEDS=$BS KGO_TEST_RF=1 KGO_TEST_RECORDS=${FRANZ_RECORDS:-100000} KGO_LOG_LEVEL=none \
  go test -count=1 -timeout 25m -json "$@" ./pkg/kgo/ >"$W/report.json" 2>"$W/build.err" || true

python3 - "$W/report.json" "$(( $(date +%s) - start ))" <<'PY'
import json, sys
res, out = {}, {}
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    t = e.get("Test")
    if not t or "/" in t:
        continue
    if e["Action"] == "output":
        out.setdefault(t, []).append(e["Output"])
    elif e["Action"] in ("pass", "fail", "skip"):
        res[t] = e["Action"]
n = {a: sum(1 for v in res.values() if v == a) for a in ("pass", "fail", "skip")}
for t, a in sorted(res.items()):
    if a == "pass":
        continue
    why = [l.strip() for l in out.get(t, []) if l.startswith("    ") and "deleting" not in l]
    print(f"{a.upper():4} {t}: {' | '.join(why[:3])[:300]}")
print(f"franz-go kgo: {n['pass']} passed, {n['fail']} failed, {n['skip']} skipped ({sys.argv[2]} s)")
sys.exit(1 if n["fail"] or not res else 0)
PY
