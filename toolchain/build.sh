#!/usr/bin/env bash
# Builds everything a page needs: the core to WebAssembly (wasm preset) and the
# tab-baton package (js-glue/dist). Installs the toolchain first (idempotent).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./toolchain/setup.sh
. ./toolchain/env.sh
cmake --preset wasm >/dev/null
cmake --build --preset wasm
node js-glue/build.mjs
