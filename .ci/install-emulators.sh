#!/usr/bin/env bash
# Installs the object-store emulators the GCS and Azure tiering tests start (tiering/src/testing/emulator.rs)
# into a local prefix (no system-wide pip/npm changes). Idempotent.
#   STRATA_EMULATOR_PREFIX (default ~/.cache/strata-emulators):
#     venv/bin/gcp-storage-emulator   (PyPI gcp-storage-emulator, Google Cloud Storage JSON API)
#     node/node_modules/.bin/azurite-blob (npm azurite, Azure Blob Storage)
set -euo pipefail
PREFIX=${STRATA_EMULATOR_PREFIX:-$HOME/.cache/strata-emulators}
PY=${PYTHON:-python3}
GCS_VERSION=2026.7.19
AZURITE_VERSION=3.37.0
mkdir -p "$PREFIX"

if [ ! -x "$PREFIX/venv/bin/python" ]; then
  "$PY" -m venv "$PREFIX/venv"
fi
if ! "$PREFIX/venv/bin/python" -c "import importlib.metadata as m; assert m.version('gcp-storage-emulator') == '$GCS_VERSION'" 2>/dev/null; then
  "$PREFIX/venv/bin/pip" install -q --disable-pip-version-check "gcp-storage-emulator==$GCS_VERSION"
fi

mkdir -p "$PREFIX/node"
if [ ! -f "$PREFIX/node/node_modules/azurite/package.json" ] ||
   ! grep -q "\"version\": \"$AZURITE_VERSION\"" "$PREFIX/node/node_modules/azurite/package.json"; then
  ( cd "$PREFIX/node" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install -s --no-audit --no-fund "azurite@$AZURITE_VERSION" >/dev/null )
fi
echo "object-store emulators installed under $PREFIX"
