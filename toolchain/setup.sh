#!/usr/bin/env bash
# Installs everything Baton needs on a fresh Debian 12 machine, idempotently:
# Debian packages (Emscripten, doctest, clang runtimes for sanitizers and libFuzzer,
# Chromium for the browser tests) and the npm dependencies from the lock file.
# Source it for the environment (`. toolchain/env.sh`) or run it; both are safe to repeat.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

# postgresql: the server fence's race test runs against a real, throwaway PostgreSQL.
debian_packages=(emscripten doctest-dev cmake ninja-build clang libclang-rt-14-dev chromium postgresql)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "toolchain: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm dependencies (playwright-core, esbuild, typescript, peers for the benchmarks).
# The stamp makes repeated runs instant while the lock file is unchanged.
stamp="$root/node_modules/.baton-lock-stamp"
if [ ! -f "$stamp" ] || ! cmp -s "$root/package-lock.json" "$stamp"; then
  echo "toolchain: npm ci"
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$root/package-lock.json" "$stamp"
fi
