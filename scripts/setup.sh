#!/usr/bin/env bash
# Installs every Debian package the build, tests and tools need. Idempotent: quiet and quick
# when everything is already installed. Run as root (or with sudo available).
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev libabsl-dev libjemalloc-dev libhwloc-dev hwloc-nox
  libgtest-dev libgmock-dev libbenchmark-dev libspdlog-dev libfmt-dev
  libsimdjson-dev libsodium-dev libssl-dev libtomlplusplus-dev libcli11-dev
  clang-14 libclang-rt-14-dev libfuzzer-14-dev clang-format zlib1g-dev
  python3 python3-websockets curl universal-ctags valgrind openssl
  prometheus chromium
  nats-server libnats-dev
)
# Node.js runs the ccxt acceptance test; a machine that has node already keeps its own.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The prometheus package is here for promtool (the checks of configs/prometheus): its own
  # server, started by the package where systemd runs, is not needed.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null &&
     systemctl is-active --quiet prometheus 2>/dev/null; then
    $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  echo "setup: done"
fi

# The ccxt client for the acceptance test, pinned by tests/api/ccxt/package-lock.json, installed
# under build/ccxt (third-party code stays out of the source tree; the test runs the acceptance
# script from there).
root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/build/ccxt"
mkdir -p "$deps"
if ! cmp -s "$root/tests/api/ccxt/package-lock.json" "$deps/package-lock.json" ||
   [ ! -f "$deps/node_modules/ccxt/package.json" ]; then
  echo "setup: npm ci (ccxt for the acceptance test)"
  cp "$root/tests/api/ccxt/package.json" "$root/tests/api/ccxt/package-lock.json" "$deps/"
  (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "setup: npm ci failed (no npm registry?): the server runs, the ccxt acceptance test will fail" >&2
fi
