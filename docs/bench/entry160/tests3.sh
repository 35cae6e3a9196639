# Entry 160's kept form (three vectors a staging round): the new backward case plainly and
# under compute-sanitizer memcheck and racecheck, and the tile kernel's cases; T seconds each.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
bash scripts/configure.sh gpu_test_backward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests T=${T:-150}
NEW='*channel-last rows off 16-byte boundaries*'
run() { local name=$1; shift; ( timeout $T "$@" > /tmp/$name.log 2>&1; echo "rc $?" >> /tmp/$name.log ) & }
run tests-new-bwd $B/gpu_test_backward -tc="$NEW"
run mem-new-bwd compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW"
run race-new-bwd compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW"
run tests-bwd $B/gpu_test_backward -tc='*below 2^24 elements*,*seq_idx through the tile kernel*,*seq_idx with states*,*compiles only the module*'
wait
for f in tests-new-bwd mem-new-bwd race-new-bwd tests-bwd; do
  echo "== $f"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' /tmp/$f.log | head -6; tail -n 1 /tmp/$f.log
done | tee $OUT/summary.txt
