#!/usr/bin/env bash
# Context switches per tx of the whole server at a fixed offered rate: scripts/loadtest.sh (the
# Release server, limits lifted, fsync, loopback) with the mixed scenario; the figure is in
# <out>/ctx.json (every server thread's switches over the txs answered).
#
#   scripts/bench_ctx.sh <out dir> <rate tx/s> <seconds>
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/loadtest.sh --no-build --rate "$2" --duration "$3" --out "$1"
