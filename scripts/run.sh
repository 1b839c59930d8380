#!/usr/bin/env bash
# Installs what is needed, builds (Release) and runs tachyon on its embedded defaults.
# Until the network server lands (issue 5) this runs the engine's replay tool: a seeded stream
# of 1M mixed transactions through the deterministic engine, printing verdicts and the state hash.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tachyon-replay
exec ./build/release/src/app/tachyon-replay "$@"
