# Entry 154's GPU cases on one H100: the new case of fp32 channel-first rows of 129-256
# vectors (and compute-sanitizer memcheck and racecheck on it), and the backward cases the
# suite run of verify.sh did not reach (its first process timed out in the 2^24-2^27 case).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh gpu_test_backward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests T=${T:-150}
( timeout $T $B/gpu_test_backward -tc='*129 to 256 vectors*' > $OUT/tests-new.txt 2>&1; echo "rc $?" >> $OUT/tests-new.txt ) &
( timeout $T compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*129 to 256 vectors*' > $OUT/mem-new.txt 2>&1; echo "rc $?" >> $OUT/mem-new.txt ) &
( timeout $T compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*129 to 256 vectors*' > $OUT/race-new.txt 2>&1; echo "rc $?" >> $OUT/race-new.txt ) &
( timeout $T $B/gpu_test_backward -tc='*compiles only the module*,*seq_idx with long sequences*' > $OUT/tests-rest1.txt 2>&1; echo "rc $?" >> $OUT/tests-rest1.txt ) &
( timeout $T $B/gpu_test_backward -tc='*small calls in one launch*,*few positions and many channels*,*whole 16-byte vectors in one launch*,*empty calls*' > $OUT/tests-rest2.txt 2>&1; echo "rc $?" >> $OUT/tests-rest2.txt ) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-new mem-new race-new tests-rest1 tests-rest2; do echo "== $f"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' $OUT/$f.txt | head -6; tail -n 1 $OUT/$f.txt; done
