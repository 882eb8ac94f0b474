#!/usr/bin/env bash
# The benchmark: Baton beside broadcast-channel, tab-election and bare navigator.locks, in the
# same run, in real headless Chromium; size and core throughput. Writes bench/RESULTS.md.
#
#   bench/run.sh            full run (about 15 minutes on 2 cores), rewrites bench/RESULTS.md
#   bench/run.sh --quick    a trial or two per case (about 90 s); prints the target check and
#                           writes bench/out/results-quick.json; add --write to rewrite RESULTS.md
#   other options are passed to bench/run.mjs (--json FILE, --only PHASES, --no-write)
#
# Builds what it needs first (incrementally): the wasm core and the tab-baton package, the
# native throughput benchmark, a names-only wasm build for the size breakdown (full mode, or
# when it exists already), and the bench pages. Needs the toolchain of toolchain/setup.sh
# (Emscripten, doctest, Chromium) and the workspace's npm dependencies.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
. ./toolchain/env.sh

quick=0
for arg in "$@"; do [ "$arg" = "--quick" ] && quick=1; done
step() { printf '[bench] %s\n' "$*"; }

for tool in emcc cmake ninja node; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh: '$tool' not found; run toolchain/setup.sh first" >&2; exit 1; }
done
[ -x "${BATON_CHROMIUM:-/usr/bin/chromium}" ] || { echo "bench/run.sh: Chromium not found; run toolchain/setup.sh first" >&2; exit 1; }
[ -d node_modules/broadcast-channel ] && [ -d node_modules/tab-election ] && [ -d node_modules/esbuild ] \
  || { echo "bench/run.sh: npm dependencies missing (npm ci)" >&2; exit 1; }

step "wasm core and tab-baton package"
# The build tree is shared with whoever else builds in this checkout: if a concurrent link
# left the package without its wasm, build again.
for attempt in 1 2 3; do
  cmake --preset wasm >/dev/null
  cmake --build --preset wasm >/dev/null
  node js-glue/build.mjs >/dev/null
  [ -s js-glue/dist/baton-core.wasm ] && break
  [ "$attempt" = 3 ] && { echo "bench/run.sh: js-glue/dist/baton-core.wasm is missing" >&2; exit 1; }
  step "the package has no wasm (a concurrent build?); building again"
  sleep 5
done

step "native throughput benchmark"
cmake --preset native >/dev/null
cmake --build --preset native --target baton_bench_core >/dev/null

names=build/bench-wasm-names
if [ "$quick" = 0 ] || [ -f "$names/build.ninja" ]; then
  step "wasm with function names, for the size breakdown ($names)"
  cmake -S . -B "$names" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE=/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake \
    -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_EXE_LINKER_FLAGS=--profiling-funcs >/dev/null
  cmake --build "$names" --target baton_wasm >/dev/null
fi

step "bench pages (esbuild)"
node bench/build-pages.mjs >/dev/null

step "running: node bench/run.mjs $*"
exec node bench/run.mjs "$@"
