# Entry 160's GPU checks after its plan change (tests.sh's cases; the forward case's width
# 1 without states): T seconds each (the backward matrix TM), side by side.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh gpu_test_backward gpu_test_forward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests T=${T:-170}
NEW='*channel-last rows off 16-byte boundaries*'
run() {   # name, seconds, then the command
  local name=$1 t=$2; shift 2
  ( timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc $?" >> $OUT/$name.log ) &
}
run tests-new-bwd $T $B/gpu_test_backward -tc="$NEW"
run tests-new-fwd $T $B/gpu_test_forward -tc="$NEW"
run mem-new-bwd $T compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW"
run mem-new-fwd $T compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_forward -tc="$NEW"
run race-new-bwd $T compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW"
run race-new-fwd $T compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_forward -tc="$NEW"
run tests-matrix-bwd ${TM:-240} $B/gpu_test_backward -tc='*every layout x dtype pair x width*'
run tests-bwd $T $B/gpu_test_backward -tc='*below 2^24 elements*,*seq_idx through the tile kernel*,*seq_idx with states*,*partial rows padded*'
run tests-fwd $T $B/gpu_test_forward -tc='*every layout x dtype pair x width*,*seq_idx together with*,*odd channel counts*,*channel-last*'
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-new-bwd tests-new-fwd mem-new-bwd mem-new-fwd race-new-bwd race-new-fwd tests-matrix-bwd tests-bwd tests-fwd; do
  echo "== $f"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' $OUT/$f.log | head -6; tail -n 1 $OUT/$f.log
  gzip $OUT/$f.log
done
