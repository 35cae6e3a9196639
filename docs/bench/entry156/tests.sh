# Entry 156's GPU checks on one GPU host: the new case (partial rows padded off powers of
# two) plain and under compute-sanitizer memcheck and racecheck, and the backward cases
# that read partial rows (the layout x dtype x width matrix, many rows, a caller's
# workspace, the tile kernel's and the 2^24-2^27 case) and the race test.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh gpu_test_backward gpu_test_backward_race > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests T=${T:-300}
NEW='*padded off powers of two*'
( timeout $T $B/gpu_test_backward -tc="$NEW" > $OUT/tests-new.txt 2>&1; echo "rc $?" >> $OUT/tests-new.txt ) &
( timeout $T compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW" > $OUT/mem-new.txt 2>&1; echo "rc $?" >> $OUT/mem-new.txt ) &
( timeout $T compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc="$NEW" > $OUT/race-new.txt 2>&1; echo "rc $?" >> $OUT/race-new.txt ) &
( timeout $T $B/gpu_test_backward -tc='*every layout x dtype pair x width*' > $OUT/tests-matrix.txt 2>&1; echo "rc $?" >> $OUT/tests-matrix.txt ) &
( timeout $T $B/gpu_test_backward -tc='*many rows feeding*,*caller*s workspace*,*below 2^24 elements*,*2^24 to 2^27*' > $OUT/tests-rows.txt 2>&1; echo "rc $?" >> $OUT/tests-rows.txt ) &
( timeout $T $B/gpu_test_backward_race > $OUT/tests-race.txt 2>&1; echo "rc $?" >> $OUT/tests-race.txt ) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-new mem-new race-new tests-matrix tests-rows tests-race; do echo "== $f"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' $OUT/$f.txt | head -6; tail -n 1 $OUT/$f.txt; done
