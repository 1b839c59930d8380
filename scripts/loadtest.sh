#!/usr/bin/env bash
# Load test: starts tachyon with a load-test configuration (the embedded defaults with the
# per-IP and per-account limits lifted, loopback only, a fresh data dir), runs tachyon-load for a
# scenario, stops the server, and leaves everything in one folder: the report (report.txt,
# report.json, SVG plots), the server's context switches per answered tx (ctx.json: all its
# threads, voluntary and not, from /proc), its /metrics and /admin/latency at the end, its log,
# and any flight-recorder dumps.
#
#   scripts/loadtest.sh [--scenario mixed|demo|lobster] [--rate N] [--duration S] [--out DIR]
#                       [--durability fsync|write|none|replicated] [--detail off|loadtest]
#                       [--workers N] [--group-commit apply|writer] [--pipeline-threads 0|1|2]
#                       [--push-interval US] [--commit-linger US] [--preallocate true|false]
#                       [--pipeline-loop auto|api|own] [--verify-helpers N]
#                       [--nats URLS [--stream NAME] [--stream-replicas N]] [--consoles N]
#                       [-- extra tachyon-load options]
# With --nats the server is a cluster's primary on that NATS (docs/ARCHITECTURE.md "Cluster").
# With --consoles N, N operator's consoles stay open on the admin listener during the load
# (bench/api/console_reader.py; their frame counts in consoles.log).
#
# Examples:
#   scripts/loadtest.sh --rate 5000 --duration 60
#   scripts/loadtest.sh --scenario lobster --duration 30 -- --speed 10
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=mixed rate=1000 duration=10 out="" durability=fsync detail=off build=1
group_commit=apply pipeline_threads=0 consoles=0
nats="" stream="" stream_replicas=1
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --scenario) scenario="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --durability) durability="$2"; shift 2 ;;
    --detail) detail="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --group-commit) group_commit="$2"; shift 2 ;;
    --pipeline-threads) pipeline_threads="$2"; shift 2 ;;
    --push-interval) push_interval="$2"; shift 2 ;;
    --commit-linger) commit_linger="$2"; shift 2 ;;
    --preallocate) preallocate="$2"; shift 2 ;;
    --pipeline-loop) pipeline_loop="$2"; shift 2 ;;
    --verify-helpers) verify_helpers="$2"; shift 2 ;;
    --consoles) consoles="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --nats) nats="$2"; shift 2 ;;
    --stream) stream="$2"; shift 2 ;;
    --stream-replicas) stream_replicas="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "loadtest.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
out="${out:-loadtest-$(date +%Y%m%d-%H%M%S)-${scenario}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if [[ $build == 1 ]]; then
  scripts/setup.sh  # the packages (a fresh machine), quick when present
  cmake --preset release >/dev/null
  cmake --build --preset release --target tachyon tachyon-load
fi
bin=build/release/src/app

# The configuration: the embedded defaults with these lines replaced (each must exist).
cfg="$out/tachyon-loadtest.toml"
cp configs/tachyon.toml "$cfg"
edit() {
  grep -q "^$1" "$cfg" || { echo "loadtest.sh: '$1' not in configs/tachyon.toml" >&2; exit 2; }
  sed -i "s|^$1.*|$1 $2|" "$cfg"
}
edit 'listen_address =' '"127.0.0.1"'
edit 'port =' '0'
edit 'admin_port =' '0'
[[ -z ${workers:-} ]] || edit 'workers =' "$workers"
edit 'max_subscriptions =' '10000'
edit 'max_connections_per_ip =' '10000'
edit 'ip_rate_per_s =' '10000000'
edit 'ip_burst =' '10000000'
edit 'account_rate_per_s =' '10000000'
edit 'account_burst =' '10000000'
edit 'data_dir =' "\"$out/data\""
edit 'durability =' "\"$durability\""
edit 'group_commit =' "\"$group_commit\""
edit 'pipeline_threads =' "$pipeline_threads"
[[ -z ${push_interval:-} ]] || edit 'push_interval_us =' "$push_interval"
[[ -z ${commit_linger:-} ]] || edit 'commit_linger_us =' "$commit_linger"
[[ -z ${preallocate:-} ]] || edit 'preallocate_segments =' "$preallocate"
[[ -z ${pipeline_loop:-} ]] || edit 'pipeline_loop =' "\"$pipeline_loop\""
[[ -z ${verify_helpers:-} ]] || edit 'verify_helpers =' "$verify_helpers"
edit 'detail =' "\"$detail\""
edit 'trace_dir =' "\"$out/traces\""
if [[ -n $nats ]]; then
  edit 'role =' '"primary"'
  edit 'nats =' "\"$nats\""
  edit 'stream =' "\"${stream:-LOAD$(date +%s%N)}\""
  edit 'stream_replicas =' "$stream_replicas"
fi

log="$out/server.log"
"$bin/tachyon" --config "$cfg" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  grep -q "] ready: " "$log" && break
  kill -0 $server 2>/dev/null || { cat "$log"; echo "loadtest.sh: the server did not start" >&2; exit 1; }
  sleep 0.1
done
port=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$')
admin=$(grep -o 'admin on [0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$')
echo "loadtest.sh: server on 127.0.0.1:$port (admin $admin), durability $durability, detail $detail"

lobster=()
if [[ $scenario == lobster ]]; then
  lobster=(--lobster "${LOBSTER_FILE:-tests/data/lobster/AMZN_2012-06-21_34200000_57600000_message_5_subset.csv.gz}")
fi
# Context switches of every server thread (voluntary + nonvoluntary), before and after the load.
switches() {
  cat /proc/"$server"/task/*/status 2>/dev/null |
    awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {s += $2} END {print s + 0}'
}
# Open operator's consoles during the load (bench/api/console_reader.py: what a browser reads).
readers=()
for _ in $(seq 1 "$consoles"); do
  /usr/bin/python3 bench/api/console_reader.py "ws://127.0.0.1:$admin/console/ws" >>"$out/consoles.log" 2>&1 &
  readers+=($!)
done
status=0
switches_before=$(switches)
"$bin/tachyon-load" --scenario "$scenario" --port "$port" --admin-port "$admin" \
  --operator-key "$out/data/operator.key" --rate "$rate" --duration "$duration" \
  --sync-dir "$out/data" --out "$out" "${lobster[@]}" "${extra[@]}" || status=$?
switches_after=$(switches)
for r in "${readers[@]}"; do kill -TERM "$r" 2>/dev/null || true; wait "$r" || true; done
python3 - "$out" "$switches_before" "$switches_after" "$rate" <<'PY' || status=1
import json, sys
out, before, after, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
r = json.load(open(out + "/report.json"))
answered = r["accepted"] + r["rejected"]
# The run alone (tachyon-load's own reading, without the funding and the floors before it), else
# the whole invocation.
per_tx = r["server_cost"]["switches_per_tx"] if "server_cost" in r else (
    (after - before) / answered if answered else float("nan"))
json.dump({"offered_tps": rate, "answered": answered, "switches_whole_invocation": after - before,
           "per_tx": per_tx}, open(out + "/ctx.json", "w"))
print(f"loadtest.sh: server context switches per answered tx during the run: {per_tx:.2f} "
      f"({after - before} over the whole tachyon-load invocation, funding and floors included)")
PY

curl -s "http://127.0.0.1:$admin/metrics" >"$out/server-metrics.txt" || true
curl -s "http://127.0.0.1:$admin/admin/latency" >"$out/server-latency.txt" || true
kill -TERM $server
wait $server || true
trap - EXIT
rm -rf "$out/data"  # the journal and snapshots of synthetic traffic
echo "loadtest.sh: report in $out (report.txt, report.json, *.svg, server-latency.txt, server-metrics.txt, server.log)"
exit $status
