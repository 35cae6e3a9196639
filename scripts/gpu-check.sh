#!/usr/bin/env bash
# On a GPU host: build, run the gpu tests, then the benchmarks named as arguments
# (config paths), writing logs and results into ${OUT:-gpu-out}. Used for the numbers
# in docs/perf.md.
#   usage: scripts/gpu-check.sh [--sanitize] [configs/bench/x.json ...]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
sanitize=0
if [ "${1:-}" = --sanitize ]; then sanitize=1; shift; fi
export CC1D_BUILD_DIR=${CC1D_BUILD_DIR:-build}
bash scripts/configure.sh > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
export CC1D_TEST_CACHE_DIR=$(mktemp -d)
ctest --test-dir "$CC1D_BUILD_DIR" -L gpu --output-on-failure -j 4 --timeout 900 > "$out/gpu-tests.log" 2>&1
echo "gpu tests: exit $?"; grep -E "tests passed|Failed|\*\*\*|SKIPPED" "$out/gpu-tests.log" | tail -30
if [ $sanitize = 1 ]; then
  for t in "$CC1D_BUILD_DIR"/tests/gpu_test_*; do
    for tool in memcheck racecheck; do
      CC1D_SANITIZER_RUN=1 compute-sanitizer --tool $tool --error-exitcode 9 "$t" > "$out/sanitize-$tool-$(basename "$t").log" 2>&1
      echo "$tool $(basename "$t"): exit $? $(grep -E 'ERROR SUMMARY' "$out/sanitize-$tool-$(basename "$t").log" | tail -1)"
    done
  done
fi
for config in "$@"; do
  name=$(basename "$config" .json)
  "$CC1D_BUILD_DIR"/tools/cc1d-bench --config "$config" --json "$out/bench-$name.json" --markdown "$out/bench-$name.md" > "$out/bench-$name.log" 2>&1
  echo "bench $name: exit $?"; tail -60 "$out/bench-$name.log"
done
