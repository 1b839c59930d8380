#!/usr/bin/env bash
# Installs every Debian package the build, tests and tools need. Idempotent: quiet and quick
# when everything is already installed. Run as root (or with sudo available).
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev libabsl-dev libjemalloc-dev libhwloc-dev hwloc-nox
  libgtest-dev libgmock-dev libbenchmark-dev libspdlog-dev libfmt-dev
  libsimdjson-dev libsodium-dev libssl-dev libtomlplusplus-dev libcli11-dev
  clang-14 libclang-rt-14-dev libfuzzer-14-dev clang-format
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
