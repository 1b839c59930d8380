#!/usr/bin/env bash
# Replication figures, every mode in the same run (docs/PERFORMANCE.md "Cluster"): the ack latency
# of tachyon-load's mixed scenario at one offered rate under fsync, write and replicated (one
# nats-server, and a three-server NATS cluster with a 3-replica stream), the modes alternating
# round by round; and the replication lag primary -> replica (a replica follows each replicated
# run; its /health/ready reports primary executed -> replica published, p50 and p99).
#
#   bench/cluster/replication.sh [rate] [duration_s] [rounds]     (defaults 1000 10 2)
#
# Needs the Release build (tachyon, tachyon-load) and nats-server. Output: a table on stdout,
# each run's loadtest folder under build/bench-cluster/.
set -euo pipefail
cd "$(dirname "$0")/../.."
rate=${1:-1000} duration=${2:-10} rounds=${3:-2}
out=build/bench-cluster
rm -rf "$out"
mkdir -p "$out"
bin=build/release/src/app
# (The servers start in command substitutions: they are found by their dirs at the end.)
trap 'pkill -9 -f "$out/" 2>/dev/null || true' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts n nats-servers (1, or 3 in a cluster); prints their client URLs, comma-separated.
start_nats() {
  local n=$1 dir=$2 i ports=() routes=() urls=()
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do ports+=("$(free_port)"); routes+=("$(free_port)"); done
  for ((i = 0; i < n; i++)); do
    local args=(-a 127.0.0.1 -p "${ports[i]}" -n "n$i" -js -sd "$dir/n$i" -l "$dir/n$i.log")
    if ((n > 1)); then
      local others=() j
      for ((j = 0; j < n; j++)); do ((j != i)) && others+=("nats://127.0.0.1:${routes[j]}"); done
      args+=(--cluster_name bench --cluster "nats://127.0.0.1:${routes[i]}"
             --routes "$(IFS=,; echo "${others[*]}")")
    fi
    "${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}" "${args[@]}" >/dev/null 2>&1 &
    urls+=("nats://127.0.0.1:${ports[i]}")
  done
  sleep 2  # JetStream's meta leader (the nodes retry stream creation meanwhile)
  (IFS=,; echo "${urls[*]}")
}

# A replica of stream $1 on NATS $2 with $3 stream replicas, in dir $4; prints its port.
start_replica() {
  local cfg="$4/replica.toml"
  mkdir -p "$4"
  sed -e "s|^stream = .*|stream = \"$1\"|" -e "s|^stream_replicas = .*|stream_replicas = $3|" \
    configs/tachyon.toml >"$cfg"
  "$bin/tachyon" --config "$cfg" --role replica --nats "$2" --data-dir "$4/data" \
    --listen-address 127.0.0.1 --port 0 --admin-port 0 >"$4/replica.log" 2>&1 &
  echo $! >"$4/replica.pid"
  for _ in $(seq 1 100); do
    grep -q "] ready: " "$4/replica.log" 2>/dev/null && break
    sleep 0.1
  done
  grep -o 'listening on [0-9.]*:[0-9]*' "$4/replica.log" | grep -o '[0-9]*$'
}

nats1=$(start_nats 1 "$out/nats1")
nats3=$(start_nats 3 "$out/nats3")
run() {  # name durability [nats replicas]
  local name=$1 dur=$2 nats=${3:-} reps=${4:-1} dir="$out/$1-$round" extra=() port=""
  if [[ -n $nats ]]; then
    local stream="B${name//[^a-z0-9]/}${round}"
    port=$(start_replica "$stream" "$nats" "$reps" "$dir/replica")
    extra=(--nats "$nats" --stream "$stream" --stream-replicas "$reps")
  fi
  scripts/loadtest.sh --no-build --rate "$rate" --duration "$duration" --durability "$dur" \
    --out "$dir" "${extra[@]}" >"$dir.log" 2>&1 || { tail -20 "$dir.log"; exit 1; }
  if [[ -n $port ]]; then
    sleep 1  # the replica's last txs
    curl -s "http://127.0.0.1:$port/health/ready" >"$dir/replica-ready.json"
    kill -TERM "$(cat "$dir/replica/replica.pid")"
  fi
  python3 - "$dir" "$name" <<'PY'
import json, os, sys
d, name = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/report.json"))
lag = ""
if os.path.exists(d + "/replica-ready.json"):
    l = json.load(open(d + "/replica-ready.json"))["cluster"]["replication_lag_us"]
    lag = f"{l['p50']} / {l['p99']} ({l['count']} txs)"
a = r["ack"]
print(f"| {name} | {r['achieved_tps']:.0f} | {a['p50_us']} | {a['p99_us']} | {lag} |")
PY
}

echo "ack latency, mixed scenario at $rate tx/s for $duration s per run, $rounds rounds alternating"
echo
echo "| durability | achieved tx/s | ack p50 µs | ack p99 µs | replication lag p50 / p99 µs (primary executed -> replica published) |"
echo "|---|---|---|---|---|"
for ((round = 1; round <= rounds; round++)); do
  run fsync fsync
  run write write
  run "replicated, 1 nats-server" replicated "$nats1" 1
  run "replicated, 3 nats-servers (R3)" replicated "$nats3" 3
done
