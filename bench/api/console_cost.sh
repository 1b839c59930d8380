#!/usr/bin/env bash
# What open operator's consoles cost the server under load (docs/PERFORMANCE.md "The console"):
# scripts/loadtest.sh runs without consoles and with CONSOLES of them open, alternating, ROUNDS
# times each, and the table gives each run's ack p50 / p99 and the server's CPU per tx.
#
#   bench/api/console_cost.sh [--out DIR] [--no-build]
#
# Environment (default): RATE (1000), DURATION (20), ROUNDS (2), CONSOLES (5).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="" build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "console_cost.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
RATE=${RATE:-1000} DURATION=${DURATION:-20} ROUNDS=${ROUNDS:-2} CONSOLES=${CONSOLES:-5}
out="${out:-console-cost-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
nb=()
[[ $build == 0 ]] && nb=(--no-build)
for round in $(seq 1 "$ROUNDS"); do
  order=(0 "$CONSOLES")
  (( round % 2 == 0 )) && order=("$CONSOLES" 0)
  for n in "${order[@]}"; do
    scripts/loadtest.sh "${nb[@]}" --rate "$RATE" --duration "$DURATION" --consoles "$n" \
      --out "$out/r$round-c$n" >"$out/r$round-c$n.log" 2>&1
    nb=(--no-build)
  done
done
python3 - "$out" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
print("| run | consoles | frames read | ack p50 µs | ack p99 µs | server CPU µs/tx |")
print("|---|---|---|---|---|---|")
for d in sorted(glob.glob(out + "/r*-c*"), key=lambda p: (int(re.search(r"r(\d+)", p).group(1)), p)):
    if not os.path.isdir(d):
        continue
    r = json.load(open(d + "/report.json"))
    n = int(re.search(r"-c(\d+)$", d).group(1))
    frames = 0
    if os.path.exists(d + "/consoles.log"):
        frames = sum(int(m) for m in re.findall(r"(\d+) frames", open(d + "/consoles.log").read()))
    cpu = r.get("server_cost", {}).get("cpu_us_per_tx", "-")
    print(f"| {os.path.basename(d)} | {n} | {frames} | {r['ack']['p50_us']} | {r['ack']['p99_us']} | {cpu} |")
PY
