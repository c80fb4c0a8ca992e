#!/usr/bin/env bash
# librdkafka's benchmark client, examples/rdkafka_performance.c, built from the librdkafka sources that the rdkafka-sys
# crate bundles (the version strata's tests link), with zstd, lz4 and OpenSSL (SASL PLAIN/SCRAM over TLS) so every
# row of bench/vs-kafka.sh can use it. Not a test.
#
#   bench/kafka/rdkafka-perf.sh          build once into $STRATA_KAFKA_CACHE/rdkafka_performance; prints its path
#
# Needs: gcc g++ make pkg-config zlib1g-dev libzstd-dev libssl-dev (apt-get). librdkafka's configure runs with
# --no-download (nothing fetched besides the crate through cargo). Idempotent: a binary that runs is kept.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${STRATA_KAFKA_CACHE:-$HOME/.cache/strata-kafka}
BIN=$CACHE/rdkafka_performance
die() { echo "rdkafka-perf.sh: $*" >&2; exit 1; }
runs() { local out; [ -x "$1" ] && out=$("$1" -X list 2>&1) && [[ "$out" = *bootstrap.servers* ]]; }
if runs "$BIN"; then echo "$BIN"; exit 0; fi
for p in gcc g++ make pkg-config zlib1g-dev libzstd-dev libssl-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || die "missing Debian package $p"
done
# The rdkafka-sys version in Cargo.lock: its crate carries librdkafka's sources.
ver=$(awk '/^name = "rdkafka-sys"/ {getline; gsub(/"/, "", $3); print $3}' "$ROOT/Cargo.lock")
[ -n "$ver" ] || die "rdkafka-sys not in Cargo.lock"
src=$(ls -d "$HOME"/.cargo/registry/src/*/rdkafka-sys-"$ver"/librdkafka 2>/dev/null | head -1)
[ -n "$src" ] || (cd "$ROOT" && cargo fetch -q) && src=$(ls -d "$HOME"/.cargo/registry/src/*/rdkafka-sys-"$ver"/librdkafka | head -1)
[ -f "$src/examples/rdkafka_performance.c" ] || die "librdkafka sources incomplete at $src"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$src" "$work/l"
chmod -R u+w "$work/l"
cd "$work/l"
./configure --no-download --no-cache --enable-zlib --enable-zstd --enable-ssl --disable-gssapi --disable-curl \
  --disable-lz4-ext >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log" >&2; die "configure failed"; }
make -s -j"$(nproc)" -C src librdkafka.a >"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; die "make failed"; }
make -s -C examples rdkafka_performance >>"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; die "make failed"; }
mkdir -p "$CACHE"
install -m 0755 examples/rdkafka_performance "$BIN.tmp.$$"
mv -f "$BIN.tmp.$$" "$BIN"
runs "$BIN" || die "$BIN does not run"
echo "$BIN"
