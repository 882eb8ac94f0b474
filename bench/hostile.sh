#!/usr/bin/env bash
# Long mode of tests/browser/hostile.test.js: a healthy leader in headless Chromium through
# 60 s of hostile frames of every kind at 2 a second each (the suite runs 10 s), and a burst
# of 20 000 frames in one second (the suite sends 5 000); prints the leader's time per frame in Baton's handler.
#   bench/hostile.sh [seconds]      (default 60)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
BATON_HOSTILE_SECONDS="${1:-60}" BATON_HOSTILE_BURST=20000 node --test --test-concurrency=1 tests/browser/hostile.test.js
