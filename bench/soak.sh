#!/usr/bin/env bash
# Long simulation soak: tens of millions of steps across all three authorities with
# every fault type, plus the broken-storage variant. Prints violations (must be 0),
# the longest leaderless gap after faults stop and the worst stale-owner window.
#   bench/soak.sh [steps]      (default 30000000, about 3 minutes on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
steps="${1:-30000000}"
cmake --preset native >/dev/null
cmake --build --preset native --target baton_sim >/dev/null
./build/native/tests/baton_sim --steps "$steps" --first-seed 100000 &
all=$!
./build/native/tests/baton_sim --steps "$((steps / 10))" --storage-broken --first-seed 500000 &
broken=$!
wait "$all"
wait "$broken"
