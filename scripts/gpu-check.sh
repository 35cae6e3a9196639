#!/usr/bin/env bash
# On a GPU host: build, run the gpu tests, then what the arguments name, writing logs
# and results into ${OUT:-gpu-out}. Used for the numbers in docs/perf.md.
#   usage: scripts/gpu-check.sh [--sanitize] [TOOL:TEST,TEST...] [CONFIG[:REGEX]] ...
#     --sanitize             memcheck and racecheck on every gpu test binary
#     memcheck:update,varlen compute-sanitizer's tool on gpu_test_update, gpu_test_varlen
#     configs/bench/x.json   a bench config; ":REGEX" keeps only the matching cases
# e.g. scripts/gpu-check.sh "memcheck:update,backward" "racecheck:forward" configs/bench/anchors.json:"bwd cl"
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
export CC1D_BUILD_DIR=${CC1D_BUILD_DIR:-build}
bash scripts/configure.sh > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
export CC1D_TEST_CACHE_DIR=$(mktemp -d)
ctest --test-dir "$CC1D_BUILD_DIR" -L gpu --output-on-failure -j 4 --timeout 900 > "$out/gpu-tests.log" 2>&1
echo "gpu tests: exit $?"; grep -E "tests passed|Failed|\*\*\*|SKIPPED" "$out/gpu-tests.log" | tail -30

sanitize() {   # tool, test name (gpu_test_<name>)
  local log="$out/sanitize-$1-$2.log"
  CC1D_SANITIZER_RUN=1 compute-sanitizer --tool "$1" --error-exitcode 9 "$CC1D_BUILD_DIR/tests/gpu_test_$2" > "$log" 2>&1
  echo "$1 $2: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
}

for arg in "$@"; do
  case "$arg" in
    --sanitize)
      for t in "$CC1D_BUILD_DIR"/tests/gpu_test_*; do
        for tool in memcheck racecheck; do sanitize "$tool" "${t##*/gpu_test_}"; done
      done ;;
    memcheck:*|racecheck:*)
      for t in $(echo "${arg#*:}" | tr , ' '); do sanitize "${arg%%:*}" "$t"; done ;;
    *)
      config=${arg%%:*}; filter=""; [ "$config" != "$arg" ] && filter=${arg#*:}
      name=$(basename "$config" .json)
      "$CC1D_BUILD_DIR"/tools/cc1d-bench --config "$config" ${filter:+--filter "$filter"} --json "$out/bench-$name.json" \
        --markdown "$out/bench-$name.md" > "$out/bench-$name.log" 2>&1
      echo "bench $name: exit $?"; tail -60 "$out/bench-$name.log" ;;
  esac
done
