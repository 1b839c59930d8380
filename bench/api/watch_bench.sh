#!/usr/bin/env bash
# `tachyon-cli watch` over NODES local servers (docs/PERFORMANCE.md "Watching many nodes"): each
# a Release server on loopback with its own data dir, its books filled by 3 s of tachyon-load's
# mixed load (FILL_TPS) and then left still; prints two rounds of the watch, then its --bench
# table (ROUNDS rounds of every node's book, BOOK_ROWS orders a side, each way of fetching and
# parsing in turn).
#
#   bench/api/watch_bench.sh [--out DIR] [--no-build]
#
# Environment (default): NODES (8), FILL_TPS (1000), ROUNDS (300), BOOK_ROWS (100).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="" build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "watch_bench.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
NODES=${NODES:-8} FILL_TPS=${FILL_TPS:-1000} ROUNDS=${ROUNDS:-300} BOOK_ROWS=${BOOK_ROWS:-100}
out="${out:-watch-bench-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [[ $build == 1 ]]; then
  cmake --preset release >/dev/null
  cmake --build build/release --target tachyon tachyon-cli tachyon-load
fi
bin=build/release/src/app
# The embedded defaults with the per-address rate limit lifted (the bench reads far faster).
cfg="$out/tachyon.toml"
cp configs/tachyon.toml "$cfg"
sed -i 's|^ip_rate_per_s =.*|ip_rate_per_s = 10000000|; s|^ip_burst =.*|ip_burst = 10000000|' "$cfg"
sed -i 's|^account_rate_per_s =.*|account_rate_per_s = 10000000|; s|^account_burst =.*|account_burst = 10000000|' "$cfg"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
nodes=""
for i in $(seq 1 "$NODES"); do
  "$bin/tachyon" --config "$cfg" --data-dir "$out/node$i" --listen-address 127.0.0.1 --port 0 --admin-port 0 \
    --durability write >"$out/node$i.log" 2>&1 &
  pids+=($!)
done
for i in $(seq 1 "$NODES"); do
  for _ in $(seq 300); do grep -q '] ready: ' "$out/node$i.log" && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/node$i.log")
  admin=$(sed -n 's/.*admin on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/node$i.log")
  # Quotes rest when the load ends: a full book (its exit status judges the load, not the fill).
  "$bin/tachyon-load" --port "$port" --admin-port "$admin" --operator-key "$out/node$i/operator.key" \
    --rate "$FILL_TPS" --duration 3 --floor-pings 0 --subscribers 0 --out "$out/fill$i" \
    >"$out/fill$i.log" 2>&1 || true
  nodes+="${nodes:+,}127.0.0.1:$port"
done
"$bin/tachyon-cli" watch --nodes "$nodes" --rounds 2 --interval-ms 500 | tee "$out/watch.txt"
"$bin/tachyon-cli" watch --nodes "$nodes" --bench "$ROUNDS" --book-rows "$BOOK_ROWS" | tee "$out/bench.md"
