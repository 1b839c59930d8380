#!/usr/bin/env bash
# Stalled WebSocket readers and memory (docs/PERFORMANCE.md "Stalled readers and memory"). One
# run: the Release server on loopback (the embedded defaults with the per-address limits lifted,
# a fresh data dir), tachyon-load's signed mixed load at RATE tx/s with one healthy subscriber
# (order_book, trade, account_all: its freshness), and, in a "stalled" run, STALLED more readers
# subscribed to order_book/0 that stop reading after the subscription (bench/api/stalled_readers.py:
# small receive buffer, Ethernet-sized segments). WARMUP s into the load they connect, hold for
# DURATION s, then leave; the run goes on AFTER s more. A "baseline" run is the same without them.
# Pairs alternate the order (baseline first, then stalled first, ...). Each run reports VmRSS
# (/proc/PID/status) at start (when the readers connect), its peak, and AFTER s after they left;
# how the server closed them (/metrics); the healthy reader's order_book freshness (engine ->
# client) and the load's ack p50/p99; the last table gives stalled / baseline per pair.
#
#   bench/api/stalled_readers.sh [--pairs N] [--out DIR] [--no-build] [--stalled-only|--baseline-only]
#
# Environment (default): DURATION (30; 60 for the figures in docs/PERFORMANCE.md), AFTER (30),
# WARMUP (5), STALLED (100), RATE (1000), DURABILITY (fsync), BUILD (build/release: built here
# with the release preset unless --no-build; another dir must be configured already),
# STALL_TIMEOUT_MS, TOTAL_QUEUE_BYTES, LOCK_MEMORY (unset: the config's), MALLOC_CONF (jemalloc
# settings to try instead of the server's own).
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs=1 out="" build=1 only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pairs) pairs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --stalled-only) only=stalled; shift ;;
    --baseline-only) only=baseline; shift ;;
    *) echo "stalled_readers.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
server_malloc_conf=${MALLOC_CONF:-}  # the server's alone, not the load generator's
unset MALLOC_CONF
DURATION=${DURATION:-30} AFTER=${AFTER:-30} WARMUP=${WARMUP:-5} STALLED=${STALLED:-100}
RATE=${RATE:-1000} DURABILITY=${DURABILITY:-fsync} BUILD=${BUILD:-build/release}
out="${out:-stalled-readers-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [[ $build == 1 ]]; then
  [[ $BUILD == build/release ]] && cmake --preset release >/dev/null
  cmake --build "$BUILD" --target tachyon tachyon-load
fi
bin="$BUILD/src/app"
py=bench/api/stalled_readers.py

# The configuration: the embedded defaults with these lines replaced (each must exist).
config() {
  local cfg="$1" dir="$2"
  cp configs/tachyon.toml "$cfg"
  edit() {
    grep -q "^$1" "$cfg" || { echo "stalled_readers.sh: '$1' not in the config" >&2; exit 2; }
    sed -i "s|^$1.*|$1 $2|" "$cfg"
  }
  edit 'listen_address =' '"127.0.0.1"'
  edit 'port =' '0'
  edit 'admin_port =' '0'
  edit 'max_connections_per_ip =' '10000'
  edit 'ip_rate_per_s =' '10000000'
  edit 'ip_burst =' '10000000'
  edit 'account_rate_per_s =' '10000000'
  edit 'account_burst =' '10000000'
  edit 'data_dir =' "\"$dir/data\""
  edit 'durability =' "\"$DURABILITY\""
  edit 'trace_dir =' "\"$dir/traces\""
  [[ -n ${STALL_TIMEOUT_MS:-} ]] && edit 'ws_stall_timeout_ms =' "$STALL_TIMEOUT_MS"
  [[ -n ${TOTAL_QUEUE_BYTES:-} ]] && edit 'ws_total_queue_bytes =' "$TOTAL_QUEUE_BYTES"
  [[ -n ${LOCK_MEMORY:-} ]] && edit 'lock_memory =' "\"$LOCK_MEMORY\""
  return 0
}

# One run into $out/<name>: kind stalled or baseline.
run() {
  local name="$1" kind="$2" dir="$out/$1"
  mkdir -p "$dir"
  config "$dir/tachyon.toml" "$dir"
  env ${server_malloc_conf:+MALLOC_CONF=$server_malloc_conf} \
    "$bin/tachyon" --config "$dir/tachyon.toml" >"$dir/server.log" 2>&1 &
  local server=$!
  trap "kill $server 2>/dev/null || true" EXIT
  for _ in $(seq 1 300); do
    grep -q "] ready: " "$dir/server.log" && break
    kill -0 $server 2>/dev/null || { cat "$dir/server.log"; echo "the server did not start" >&2; exit 1; }
    sleep 0.1
  done
  local port admin
  port=$(grep -o 'listening on [0-9.]*:[0-9]*' "$dir/server.log" | grep -o '[0-9]*$')
  admin=$(grep -o 'admin on [0-9.]*:[0-9]*' "$dir/server.log" | grep -o '[0-9]*$')
  python3 $py rss --pid $server --out "$dir/rss.tsv" &
  "$bin/tachyon-load" --port "$port" --admin-port "$admin" --operator-key "$dir/data/operator.key" \
    --rate "$RATE" --duration $((WARMUP + DURATION + AFTER + 2)) --subscribers 1 \
    --out "$dir/load" >"$dir/load.log" 2>&1 &
  local load=$!
  until grep -q "running" "$dir/load.log"; do
    kill -0 $load 2>/dev/null || { cat "$dir/load.log"; exit 1; }
    sleep 0.1
  done
  # The queues' total (tachyon_ws_queued_bytes), sampled every half second for its peak.
  (while kill -0 $load 2>/dev/null; do
     curl -s "http://127.0.0.1:$admin/metrics" | awk '/^tachyon_ws_queued_bytes /{print $2}'
     sleep 0.5
   done >"$dir/queued.txt") &
  local sampler=$!
  sleep "$WARMUP"
  local start leave
  start=$(date +%s.%N)
  if [[ $kind == stalled ]]; then
    python3 $py readers --port "$port" --count "$STALLED" --hold "$DURATION" >"$dir/readers.json"
    leave=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["leave_unix"])' "$dir/readers.json")
  else
    sleep "$DURATION"
    leave=$(date +%s.%N)
  fi
  sleep "$AFTER"
  local peak
  wait $load || true
  wait $sampler || true
  peak=$(sort -g "$dir/queued.txt" | tail -1)
  curl -s "http://127.0.0.1:$admin/metrics" >"$dir/metrics.txt"
  # The allocator's cost in the kernel: minor page faults (RSS given back is faulted in again)
  # and mappings (retain:false unmaps what it frees).
  local minflt maps
  minflt=$(awk '{print $10}' "/proc/$server/stat")
  maps=$(wc -l <"/proc/$server/maps")
  kill -TERM $server
  wait $server || true
  trap - EXIT
  cp "$dir/load/report.json" "$dir/report.json"
  rm -rf "$dir/data"
  printf '{"run":"%s","start":%s,"leave":%s,"after":%s,"queued_peak":%s,"minflt":%s,"maps":%s}\n' \
    "$name" "$start" "$leave" "$AFTER" "${peak:-0}" "$minflt" "$maps" >"$dir/marks.json"
  python3 $py summary --dir "$dir" | tee -a "$out/rows.jsonl"
}

echo "stalled_readers.sh: $pairs pair(s), $STALLED stalled readers for $DURATION s, then $AFTER s;" \
  "$RATE tx/s; MALLOC_CONF=${server_malloc_conf:-unset}; into $out"
for i in $(seq 1 "$pairs"); do
  if [[ -n $only ]]; then
    run "$i-$only" "$only"
  elif ((i % 2 == 1)); then
    run "$i-baseline" baseline
    run "$i-stalled" stalled
  else
    run "$i-stalled" stalled
    run "$i-baseline" baseline
  fi
done
python3 $py table --rows "$out/rows.jsonl" | tee "$out/table.md"
