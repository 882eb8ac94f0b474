#!/usr/bin/env bash
# Long simulation soak: tens of millions of steps across all three authorities with
# every fault type, hostile frames of every kind and an imperfect store, plus the
# broken-storage variant. Prints violations (must be 0), the longest leaderless gap after
# faults stop, the worst stale-owner window and how many terms ran degraded.
#   bench/soak.sh [steps]      (default 30000000, about 5 minutes on 2 cores)
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
