#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan+UBSan) and runs each for N seconds (default 10).
# A crash leaves its input in build/fuzz/artifacts/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_decode_tx fuzz_decode_update fuzz_snapshot_load \
  fuzz_tx_info fuzz_ws_message fuzz_ed25519
mkdir -p build/fuzz/artifacts
for t in fuzz_decode_tx fuzz_decode_update fuzz_snapshot_load fuzz_tx_info fuzz_ws_message \
  fuzz_ed25519; do
  mkdir -p "build/fuzz/corpus/$t"
  echo "== $t for ${secs}s"
  # The corpus grows in build/fuzz/corpus/$t; fuzz/seeds/$t (if any) gives it a start.
  seeds=""
  [ -d "fuzz/seeds/$t" ] && seeds="fuzz/seeds/$t"
  if ! "build/fuzz/fuzz/$t" -max_total_time="$secs" -artifact_prefix=build/fuzz/artifacts/ \
      -print_final_stats=1 "build/fuzz/corpus/$t" $seeds >"build/fuzz/$t.log" 2>&1; then
    tail -40 "build/fuzz/$t.log"
    echo "fuzzer $t found a failure (input in build/fuzz/artifacts/)"
    exit 1
  fi
  grep -E "^Done" "build/fuzz/$t.log"
done
