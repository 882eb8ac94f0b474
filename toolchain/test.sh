#!/usr/bin/env bash
# The whole test suite: native core tests and simulation (plain and under ASan+UBSan),
# the WebAssembly build, the package's types and Node tests, and the end-to-end tests
# in headless Chromium. Installs the toolchain first (idempotent).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./toolchain/setup.sh
. ./toolchain/env.sh

step() { printf '\n=== %s\n' "$*"; }

step "core: doctest and simulation (native)"
cmake --preset native >/dev/null
cmake --build --preset native
ctest --preset native

step "core: doctest and simulation under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize
ctest --preset sanitize

step "core: libFuzzer short runs (wire decoder, scenarios in the simulation's world, the glue's byte protocol)"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_wire fuzz_world fuzz_boundary
ctest --preset fuzz

step "package: WebAssembly core and tab-baton bundle"
./toolchain/build.sh

step "package: TypeScript declarations against typed usage examples"
npx tsc --noEmit -p tests/types

step "package: Node tests of the built module"
node --test tests/node/

step "package: bundler matrix (Vite page and worker, webpack, Rollup, esbuild) in headless Chromium"
node --test --test-concurrency=1 tests/bundlers/

step "end-to-end: headless Chromium"
node --test --test-concurrency=1 tests/browser/
