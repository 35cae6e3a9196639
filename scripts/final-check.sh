#!/usr/bin/env bash
# On a GPU host after kernel changes: build, the gpu tests, compute-sanitizer on the
# kernels that changed (memcheck; racecheck where shared memory is shared between
# threads), then the benches named as arguments (config and optional --filter regex,
# as "config.json:regex"), into ${OUT:-gpu-out}.
#   usage: scripts/final-check.sh "memcheck:update,varlen,backward" "racecheck:forward,varlen" configs/bench/anchors.json:"bwd cl"
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
export CC1D_BUILD_DIR=${CC1D_BUILD_DIR:-build}
bash scripts/configure.sh > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
export CC1D_TEST_CACHE_DIR=$(mktemp -d)
ctest --test-dir "$CC1D_BUILD_DIR" -L gpu --output-on-failure -j 4 --timeout 900 > "$out/gpu-tests.log" 2>&1
echo "gpu tests: exit $?"; grep -E "tests passed|Failed|\*\*\*" "$out/gpu-tests.log" | tail -12
for arg in "$@"; do
  case "$arg" in
    memcheck:*|racecheck:*)
      tool=${arg%%:*}
      for t in $(echo "${arg#*:}" | tr , ' '); do
        log="$out/sanitize-$tool-$t.log"
        CC1D_SANITIZER_RUN=1 compute-sanitizer --tool "$tool" --error-exitcode 9 "$CC1D_BUILD_DIR/tests/gpu_test_$t" > "$log" 2>&1
        echo "$tool $t: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
      done ;;
    *)
      config=${arg%%:*}; filter=""; [ "$config" != "$arg" ] && filter=${arg#*:}
      name=$(basename "$config" .json)
      "$CC1D_BUILD_DIR"/tools/cc1d-bench --config "$config" ${filter:+--filter "$filter"} --json "$out/bench-$name.json" \
        --markdown "$out/bench-$name.md" > "$out/bench-$name.log" 2>&1
      echo "bench $name: exit $?"; grep -E "^[a-z].*(ok|FAIL|ERROR)$" "$out/bench-$name.log" | cut -c1-140 | tail -60 ;;
  esac
done
