#!/usr/bin/env bash
# The crash loop (issue 30 item 4; docs/TESTING.md): builds `strata` with its crash points (`--features
# failpoints`, a separate build of the binary, copied aside so other builds cannot replace it), then runs the
# ignored test `crash_loop` of tests/crash_loop.rs against it: KILLS kills (default 100), crash points
# round-robin interleaved with SIGKILLs at random moments, all under load, with the checks after each restart.
# Prints the kills per crash point and the problems found; exits non-zero on any.
#   tests/crash_loop.sh [KILLS] [SEED]
# CRASH_LOOP_ONLY=prefix[,prefix...] (e.g. scram.,registry.) limits the crash points to those named so.
set -euo pipefail
cd "$(dirname "$0")/.."
KILLS=${1:-100}
SEED=${2:-2685821657736338717}
TARGET=${CARGO_TARGET_DIR:-target}
cargo build -p strata-broker --bin strata --features failpoints
BIN=$(mktemp -d)/strata-failpoints
cp "$TARGET/debug/strata" "$BIN"
trap 'rm -rf "$(dirname "$BIN")"' EXIT
start=$(date +%s)
STRATA_BIN="$BIN" CRASH_LOOP_KILLS="$KILLS" CRASH_LOOP_FAILPOINTS=1 CRASH_LOOP_SEED="$SEED" \
  cargo test --test it -- --ignored --exact crash_loop::crash_loop --nocapture
echo "crash loop: $KILLS kills in $(( $(date +%s) - start )) s"
