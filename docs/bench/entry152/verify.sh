# Entry 152 on an H100 in one call: the A/B against the build before (ab.sh), then this
# build's tile-kernel GPU cases and compute-sanitizer (memcheck, racecheck) on the fp32 one.
set -u
t0=$(date +%s)
LIMIT=${LIMIT:-260} bash docs/bench/entry152/ab.sh
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 --target gpu_test_backward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
B=build/tests
T=$(( 570 - ($(date +%s) - t0) ))
( timeout $T $B/gpu_test_backward -tc='*fp32 rows of whole*,*below 2^24*,*compiles only the module*' > $OUT/tests-tile.txt 2>&1; echo "rc $?" >> $OUT/tests-tile.txt ) &
( timeout $T $B/gpu_test_backward -tc='*2^24 to 2^27*' > $OUT/tests-2e24.txt 2>&1; echo "rc $?" >> $OUT/tests-2e24.txt ) &
( timeout $T compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*fp32 rows of whole*' > $OUT/mem-fp32-tile.txt 2>&1; echo "rc $?" >> $OUT/mem-fp32-tile.txt ) &
( timeout $T compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*fp32 rows of whole*' > $OUT/race-fp32-tile.txt 2>&1; echo "rc $?" >> $OUT/race-fp32-tile.txt ) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-tile tests-2e24 mem-fp32-tile race-fp32-tile; do echo "== $f"; grep -E 'test cases:|ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$f.txt; tail -n 1 $OUT/$f.txt; done
