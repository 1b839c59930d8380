#!/usr/bin/env bash
# Where the CPU goes when followers take the traders (docs/PERFORMANCE.md "Cluster"): the same
# mixed load at one offered rate, the runs alternating round by round:
#   single     one node (role single), every connection on it;
#   primary    a cluster (one nats-server, replicated durability, two replicas), every
#              connection on the primary;
#   replicas   the same cluster, every connection on the two replicas (tachyon-load --targets):
#              they decode, verify and dry-run each tx and forward it to the primary.
# For each run: the server CPU (utime + stime of every thread, /proc/PID/stat) per answered tx,
# the primary's and the replicas' apart, and the ack latency.
#
#   bench/cluster/targets.sh [rate] [duration_s] [rounds]     (defaults 1000 10 2)
#
# Needs the Release build (tachyon, tachyon-load) and nats-server. Output: a table on stdout, the
# runs' reports under build/bench-targets/.
set -euo pipefail
cd "$(dirname "$0")/../.."
rate=${1:-1000} duration=${2:-10} rounds=${3:-2}
out=build/bench-targets
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
bin=build/release/src/app
trap 'pkill -9 -f "$out/" 2>/dev/null || true' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

nats_port=$(free_port)
"${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}" -a 127.0.0.1 \
  -p "$nats_port" -js -sd "$out/nats" -l "$out/nats.log" >/dev/null 2>&1 &
sleep 1
nats="nats://127.0.0.1:$nats_port"

# A node: name role durability; its config is the load test's (limits raised for one IP).
start_node() {
  local name=$1 role=$2 durability=$3 dir="$out/$1" cfg="$out/$1/tachyon.toml"
  mkdir -p "$dir"
  cp configs/tachyon.toml "$cfg"
  sed -i -e 's|^listen_address =.*|listen_address = "127.0.0.1"|' -e 's|^port =.*|port = 0|' \
    -e 's|^admin_port =.*|admin_port = 0|' -e 's|^max_subscriptions =.*|max_subscriptions = 10000|' \
    -e 's|^max_connections_per_ip =.*|max_connections_per_ip = 10000|' \
    -e 's|^ip_rate_per_s =.*|ip_rate_per_s = 10000000|' -e 's|^ip_burst =.*|ip_burst = 10000000|' \
    -e 's|^account_rate_per_s =.*|account_rate_per_s = 10000000|' \
    -e 's|^account_burst =.*|account_burst = 10000000|' -e "s|^data_dir =.*|data_dir = \"$dir/data\"|" \
    -e "s|^durability =.*|durability = \"$durability\"|" -e "s|^role =.*|role = \"$role\"|" \
    -e "s|^nats =.*|nats = \"$nats\"|" -e 's|^stream =.*|stream = "BTARGETS"|' "$cfg"
  "$bin/tachyon" --config "$cfg" >"$dir/server.log" 2>&1 &
  echo $! >"$dir/pid"
  for _ in $(seq 1 300); do
    grep -q "] ready: " "$dir/server.log" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "] ready: " "$dir/server.log" || { tail "$dir/server.log"; echo "$name did not start" >&2; exit 1; }
  grep -o 'listening on [0-9.]*:[0-9]*' "$dir/server.log" | grep -o '[0-9]*$' >"$dir/port"
  grep -o 'admin on [0-9.]*:[0-9]*' "$dir/server.log" | grep -o '[0-9]*$' >"$dir/admin"
}
start_node single single fsync
start_node primary primary replicated
start_node replica1 replica fsync
start_node replica2 replica fsync

cpu_ticks() { awk '{print $14 + $15}' "/proc/$(cat "$out/$1/pid")/stat"; }

run() {  # label node-that-funds targets...
  local label=$1 funder=$2 dir="$out/$1-$round"
  shift 2
  local targets=() n
  for n in "$@"; do targets+=("127.0.0.1:$(cat "$out/$n/port")"); done
  local before=() node
  for node in single primary replica1 replica2; do before+=("$(cpu_ticks "$node")"); done
  "$bin/tachyon-load" --port "$(cat "$out/$funder/port")" --admin-port "$(cat "$out/$funder/admin")" \
    --operator-key "$out/$funder/data/operator.key" --rate "$rate" --duration "$duration" \
    --targets "$(IFS=,; echo "${targets[*]}")" --out "$dir" >"$dir.log" 2>&1 ||
    { tail -20 "$dir.log"; exit 1; }
  local after=()
  for node in single primary replica1 replica2; do after+=("$(cpu_ticks "$node")"); done
  python3 - "$dir" "$label" "$(getconf CLK_TCK)" "${before[*]}" "${after[*]}" <<'PY'
import json, sys
d, label, hz = sys.argv[1], sys.argv[2], int(sys.argv[3])
before, after = [int(x) for x in sys.argv[4].split()], [int(x) for x in sys.argv[5].split()]
r = json.load(open(d + "/report.json"))
answered = r["accepted"] + r["rejected"]
us = [(a - b) / hz * 1e6 / answered for a, b in zip(after, before)]
node = us[0] if label == "single" else us[1]
reps = "" if label == "single" else f"{us[2]:.0f} / {us[3]:.0f}"
print(f"| {label} | {r['achieved_tps']:.0f} | {node:.0f} | {reps} | {r['ack']['p50_us']} | {r['ack']['p99_us']} |")
PY
}

echo "mixed scenario at $rate tx/s for $duration s per run, $rounds rounds alternating"
echo
echo "| connections on | achieved tx/s | CPU µs per tx: the node or primary | CPU µs per tx: replica 1 / 2 | ack p50 µs | ack p99 µs |"
echo "|---|---|---|---|---|---|"
for ((round = 1; round <= rounds; round++)); do
  run single single single
  run primary primary primary
  run replicas primary replica1 replica2
done
