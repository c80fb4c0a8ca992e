#!/usr/bin/env bash
# Start-up time and idle memory of the strata binary. Not a test.
#
#   bench/footprint.sh [STRATA_BIN]     default: target/release/strata (or $CARGO_TARGET_DIR/release/strata)
#
# Start-up = from exec until the port accepts a TCP connection (median of 5 runs, fresh data dir each time).
# Idle RSS = VmRSS two seconds after start-up with no clients.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/strata}
[ -x "$BIN" ] || { echo "no strata binary at $BIN (cargo build --release -p strata-broker)" >&2; exit 1; }
PORT=${PORT:-19990}
times=()
for run in 1 2 3 4 5; do
  DATA=$(mktemp -d)
  start=$(date +%s%N)
  "$BIN" --override "listeners=PLAINTEXT://127.0.0.1:$PORT" --override "log.dirs=$DATA" 2>/dev/null &
  pid=$!
  until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "strata exited" >&2; exit 1; }
    sleep 0.001
  done
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
  if [ "$run" = 1 ]; then
    sleep 2
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  fi
  kill -TERM "$pid"; wait "$pid" || true
  rm -rf "$DATA"
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "start-up to accepting connections: median $(awk -v us="${sorted[2]}" 'BEGIN{printf "%.1f", us/1000}') ms (runs, us: ${times[*]})"
echo "idle RSS: $(awk -v kb="$rss" 'BEGIN{printf "%.1f", kb/1024}') MiB"
