#!/usr/bin/env bash
# Installs what is needed, builds and runs the whole test suite: ctest on the Release build
# (benchmarks compiled too), every benchmark in a short mode with its gates (scripts/bench.sh),
# ctest on the ASan+UBSan build and on the ThreadSanitizer build, and the fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-2}"

echo "== Release build and tests"
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release

echo "== Benchmarks in a short mode, and their gates (scripts/bench.sh)"
scripts/bench.sh

echo "== ASan + UBSan build and tests"
cmake --preset asan >/dev/null
cmake --build --preset asan
# The Release run covers the 1M-tx reference comparison; the sanitizer run uses a shorter stream.
# The storage simulation too: 15 seeds instead of 100 (about 400 power cuts); 5 failovers of 20.
TACHYON_REF_TXS="${TACHYON_REF_TXS_ASAN:-200000}" TACHYON_SIM_SEEDS="${TACHYON_SIM_SEEDS_ASAN:-15}" \
  TACHYON_FAILOVER_RUNS="${TACHYON_FAILOVER_RUNS_ASAN:-5}" \
  ASAN_OPTIONS=detect_leaks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --preset asan
echo "== ThreadSanitizer: every class shared between threads (pipe, obs), the server under the api tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan --target pipe_tests obs_tests api_tests tachyon
# A race in a server the api tests start is reported in that process: every report goes to a
# file, and any file fails the run.
tsan_reports="$(mktemp -d)"
TSAN_OPTIONS="halt_on_error=1:log_path=${tsan_reports}/report" ctest --preset tsan
if compgen -G "${tsan_reports}/report*" >/dev/null; then
  cat "${tsan_reports}"/report* >&2
  echo "ThreadSanitizer reported races (above)" >&2
  exit 1
fi

echo "== libFuzzer smoke (every decoder, ${TACHYON_FUZZ_SECONDS:-10}s each)"
scripts/fuzz.sh "${TACHYON_FUZZ_SECONDS:-10}"
echo "== all tests passed"
