#!/usr/bin/env bash
# On a GPU host: every gpu test program within a time limit. The long programs run for
# many minutes one case after another, so each program is split into shards of a few
# test cases (doctest --first/--last) that run side by side and share one kernel cache.
# Each shard's result is printed as it ends, so a run cut off by its limit still tells
# which cases passed, and the case a killed shard was in.
#   usage: scripts/gpu-suite.sh [PROGRAM ...]   (test binaries in the build's tests/,
#          default every gpu_test_*; e.g. gpu_test_backward unit_test_codegen)
#   env:   SHARD  test cases a shard (default 3)       JOBS  shards at once (default 6)
#          LIMIT  seconds for the whole run (default 540)
#          SANITIZE=memcheck|racecheck  every shard under that compute-sanitizer tool
#          OUT    folder for the logs (default gpu-suite-out)
#          NO_BUILD=1  use the build as it is
# Exit status: 0 only when every shard ran to its end and passed (or the program skipped).
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
build=${CC1D_BUILD_DIR:-build}
out=${OUT:-gpu-suite-out}
shard=${SHARD:-3} jobs=${JOBS:-6} limit=${LIMIT:-540}
mkdir -p "$out"

programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  [ -n "${NO_BUILD:-}" ] || bash scripts/configure.sh > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  # The longest first, so that they start early.
  programs=(gpu_test_backward gpu_test_forward)
  for t in "$build"/tests/gpu_test_*; do
    name=${t##*/}
    [[ " ${programs[*]} " == *" $name "* ]] || programs+=("$name")
  done
elif [ -z "${NO_BUILD:-}" ]; then
  bash scripts/configure.sh "${programs[@]}" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
fi
echo "built in $(( $(date +%s) - start )) s; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"

export CC1D_TEST_SOURCE_DIR=$PWD
export CC1D_TEST_CACHE_DIR=${CC1D_TEST_CACHE_DIR:-$(mktemp -d)}
wrap=()
[ -n "${SANITIZE:-}" ] && wrap=(compute-sanitizer --tool "$SANITIZE" --error-exitcode 9) && export CC1D_SANITIZER_RUN=1

# One shard: its cases, its time left, then one line of what happened.
run_shard() {   # program, first, last
  local program=$1 first=$2 last=$3 log="$out/$1-$2.log"
  local left=$(( limit - ($(date +%s) - start) ))
  if [ "$left" -le 5 ]; then echo "$program cases $first-$last: not started (time limit)"; return 3; fi
  local t0=$(date +%s)
  timeout "$left" "${wrap[@]}" "$build/tests/$program" --first="$first" --last="$last" --duration=true > "$log" 2>&1
  local rc=$?
  local ended asserts sanitizer verdict
  ended=$(grep -cE '^[0-9.]+ s: ' "$log")   # (--duration prints a line as each case ends)
  asserts=$(grep -E '^\[doctest\] assertions:' "$log" | tail -1 | sed 's/\[doctest\] assertions: *//; s/ *| *$//')
  sanitizer=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/=* *//')
  case $rc in
    0) verdict=passed ;;
    77) verdict="skipped: $(grep -m1 'SKIPPED' "$log" | cut -c1-100)" ;;
    124|137) verdict="killed at the time limit in: $(grep 'TEST CASE:' "$log" | tail -1 | sed 's/TEST CASE: *//')"
             [ "$ended" -gt 0 ] && ended=$((ended - 1)) ;;   # (the killed case prints its line too)
    *) verdict="FAILED (exit $rc)" ;;
  esac
  echo "$program cases $first-$last: $verdict [$ended ended; assertions ${asserts:-none}${sanitizer:+; $sanitizer}] $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || [ $rc -eq 77 ]
}

status_dir=$(mktemp -d)
n=0
for program in "${programs[@]}"; do
  binary="$build/tests/$program"
  [ -x "$binary" ] || { echo "$program: no such test binary in $build/tests"; touch "$status_dir/missing-$program"; continue; }
  count=$("$binary" --count 2>/dev/null | sed -n 's/.*passing the current filters: *\([0-9]*\).*/\1/p')
  [ -n "$count" ] && [ "$count" -gt 0 ] || count=1   # (a program that skips says so when run)
  for (( first = 1; first <= count; first += shard )); do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    last=$(( first + shard - 1 < count ? first + shard - 1 : count ))
    n=$((n + 1))
    ( run_shard "$program" "$first" "$last" || touch "$status_dir/bad-$n" ) &
  done
done
wait
bad=$(ls "$status_dir" | wc -l)
rm -rf "$status_dir"
echo "$n shards in $(( $(date +%s) - start )) s; $bad did not pass or did not end; logs in $out"
[ "$bad" -eq 0 ]
