#!/usr/bin/env bash
# Every benchmark in bench/ in a short, CI-sized mode, then the gates (scripts/bench_gates.py)
# on figures this 2-vCPU VM cannot blur: allocations per tx, instructions per operation counted
# by callgrind, context switches per tx, and ratios against a baseline measured in the same run.
# No gate is on an absolute time. Results: build/bench/results.json and build/bench/summary.txt,
# each binary's own output beside them. See docs/PERFORMANCE.md "Benchmarks in CI".
#
#   scripts/bench.sh                      run everything and check the gates
#   scripts/bench.sh --update-baseline    the same, then write the counted figures into
#                                         bench/baseline.json (commit it, saying why they moved)
# Needs the Release build (cmake --preset release && cmake --build --preset release).
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/release/bench
APP=build/release/src/app
OUT=build/bench
rm -rf "$OUT"
mkdir -p "$OUT"

# name, then the command: its output (stdout and stderr) goes to $OUT/<name>.txt.
run() {
  local name=$1
  shift
  local t0=$SECONDS
  if ! "$@" >"$OUT/$name.txt" 2>&1; then
    cat "$OUT/$name.txt" >&2
    echo "bench: $name failed" >&2
    exit 1
  fi
  echo "  $name: $((SECONDS - t0)) s"
}
# A Google Benchmark binary: its JSON too.
gbench() {
  local name=$1
  shift
  run "$name" "$B/$name" --benchmark_min_time=0.1 --benchmark_format=console \
    --benchmark_out="$OUT/$name.json" --benchmark_out_format=json "$@"
}

echo "== benchmarks (short mode)"
gbench bench_engine --gbench_only=1 --benchmark_filter='mixed/(engine|engine_book|std_map_book)/'
gbench bench_json
gbench bench_verify
gbench bench_codec
gbench bench_risk --benchmark_filter='/10000/'
run bench_ring "$B/bench_ring" 5000000 0
run bench_pipeline "$B/bench_pipeline" 20000 20000 steady
run bench_seq_types "$B/bench_seq_types" 20000 20000
run bench_obs "$B/bench_obs" 30000 1
run bench_published "$B/bench_published" 0.2
run bench_history "$B/bench_history" 200
run bench_account_base "$B/bench_account_base" 20000
run bench_engine_service "$B/bench_engine_service" 100000
run bench_engine_memory "$B/bench_engine_memory" 20000 4 2000
run bench_first_touch "$B/bench_first_touch" 1 0
run bench_apply "$B/bench_apply" 1 --warm-only
run bench_read_side "$B/bench_read_side" --row 0
run bench_store "$B/bench_store" --quick

echo "== instructions per operation (callgrind)"
for w in engine apply codec; do
  run "callgrind_$w" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$w" \
    --toggle-collect=measured "$B/bench_instructions" "$w" 20000
done
for w in verify_libsodium verify_tables; do
  run "callgrind_$w" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$w" \
    --toggle-collect=measured "$B/bench_instructions" "$w" 200
done

echo "== context switches per tx: the server under tachyon-load at a fixed rate"
scripts/bench_ctx.sh "$OUT/ctx" 2000 6 >"$OUT/ctx.txt" 2>&1 || {
  cat "$OUT/ctx.txt" >&2
  echo "bench: the context-switch run failed" >&2
  exit 1
}

echo "== gates"
python3 scripts/bench_gates.py "$OUT" bench/baseline.json "$@"
