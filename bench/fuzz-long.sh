#!/usr/bin/env bash
# Long fuzzing runs of the wire decoder, of scenarios in the simulation's world and of the
# glue's byte protocol (libFuzzer, ASan+UBSan).
# Prints executions, coverage and crashes per target.
#   bench/fuzz-long.sh [seconds per target]   (default 300)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-300}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_wire fuzz_world fuzz_boundary >/dev/null
for target in fuzz_wire fuzz_world fuzz_boundary; do
  work="build/fuzz/corpus-long/$target"
  mkdir -p "$work"
  log="build/fuzz/$target-long.log"
  status=0
  "./build/fuzz/tests/fuzz/$target" -max_total_time="$seconds" -max_len=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix=build/fuzz/ "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  crashes=$(find build/fuzz -maxdepth 1 -name "crash-*" | wc -l)
  echo "$target: ${seconds}s, $execs executions, coverage $cov edges, exit $status, crash files $crashes"
done
