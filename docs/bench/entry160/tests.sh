# Entry 160's GPU checks on one GPU host: the two new cases (channel-last rows off 16-byte
# boundaries through the modules of such rows and the main ones, forward and backward)
# plain and under compute-sanitizer memcheck and racecheck, and the cases whose
# channel-last calls of such rows now take those modules (the layout x dtype x width
# matrices, the tile kernel's cases, seq_idx with states); T seconds each, side by side.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh gpu_test_backward gpu_test_forward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests T=${T:-170}
NEWB='*channel-last rows off 16-byte boundaries*'
NEWF='*channel-last rows off 16-byte boundaries*'
run() {   # name, then the command
  local name=$1; shift
  ( timeout $T "$@" > $OUT/$name.txt 2>&1; echo "rc $?" >> $OUT/$name.txt ) &
}
run tests-new-bwd $B/gpu_test_backward -tc="$NEWB"
run tests-new-fwd $B/gpu_test_forward -tc="$NEWF"
run mem-new-bwd compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEWB"
run mem-new-fwd compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_forward -tc="$NEWF"
run race-new-bwd compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEWB"
run race-new-fwd compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_forward -tc="$NEWF"
run tests-bwd $B/gpu_test_backward -tc='*every layout x dtype pair x width*,*below 2^24 elements*,*seq_idx through the tile kernel*,*seq_idx with states*'
run tests-fwd $B/gpu_test_forward -tc='*every layout x dtype pair x width*,*seq_idx together with*,*odd channel counts*,*channel-last*'
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-new-bwd tests-new-fwd mem-new-bwd mem-new-fwd race-new-bwd race-new-fwd tests-bwd tests-fwd; do
  echo "== $f"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' $OUT/$f.txt | head -6; tail -n 1 $OUT/$f.txt
done
