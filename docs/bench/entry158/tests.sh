# Entry 158's GPU checks on one GPU host: the new case (seq_idx through the tile kernel,
# every call also through the register walk) plain and under compute-sanitizer memcheck
# and racecheck, and the backward cases whose channel-last calls now take both paths
# (the layout x dtype x width matrix, the long sequences, the small calls, the tile
# kernel's cases) and the race test; T seconds each, side by side.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh gpu_test_backward gpu_test_backward_race > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests T=${T:-170}
NEW='*seq_idx through the tile kernel*'
run() {   # name, then the command
  local name=$1; shift
  ( timeout $T "$@" > $OUT/$name.txt 2>&1; echo "rc $?" >> $OUT/$name.txt ) &
}
run tests-new $B/gpu_test_backward -tc="$NEW"
run mem-new compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW"
run race-new compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW"
run tests-matrix $B/gpu_test_backward -tc='*every layout x dtype pair x width*'
run tests-seq $B/gpu_test_backward -tc='*channel-last seq_idx with long sequences*,*seq_idx with states*'
run tests-tile $B/gpu_test_backward -tc='*below 2^24 elements*,*fp32 rows of whole 16-byte*,*compiles only the module*'
run tests-small $B/gpu_test_backward -tc='*small calls in one launch*,*few positions and many channels*'
run tests-race $B/gpu_test_backward_race
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-new mem-new race-new tests-matrix tests-seq tests-tile tests-small tests-race; do
  echo "== $f"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' $OUT/$f.txt | head -6; tail -n 1 $OUT/$f.txt
done
