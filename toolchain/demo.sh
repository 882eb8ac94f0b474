#!/usr/bin/env bash
# The main command: set up, build everything, and serve the multi-tab demo on
# 127.0.0.1 (PORT, default 8080). Open the printed URL in several tabs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./toolchain/build.sh
exec node web-demo/server.js --port "${PORT:-8080}"
