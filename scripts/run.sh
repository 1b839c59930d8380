#!/usr/bin/env bash
# Installs what is needed, builds (Release) and runs the tachyon server on its embedded defaults:
# a local journal and snapshots in ./tachyon-data and the demo markets of configs/tachyon.toml.
# Ctrl-C (or SIGTERM) stops it cleanly: journal synced, final snapshot written.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tachyon tachyon-cli tachyon-replay tachyon-feed
exec ./build/release/src/app/tachyon "$@"
