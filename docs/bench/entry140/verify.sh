# GPU verification of entry 140's build: every gpu test, the backward suite in three
# processes, racecheck and memcheck on the kernels whose shared-memory base moved.
# (The racecheck of the register path ran in a second call with this filter; the first named
# "*16-bit SiLU, g passed*", which doctest splits at its comma into two filters matching nothing.)
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests
T=470
( ctest --test-dir build -L gpu -E 'gpu.test_backward$' -j3 --output-on-failure --timeout $T > $OUT/ctest-rest.txt 2>&1; echo "rc $?" >> $OUT/ctest-rest.txt ) &
( timeout $T $B/gpu_test_backward -tc='*every layout*' > $OUT/bwd-a.txt 2>&1; echo "rc $?" >> $OUT/bwd-a.txt ) &
( timeout $T $B/gpu_test_backward -tc='*short rows of many channels*' > $OUT/bwd-b.txt 2>&1; echo "rc $?" >> $OUT/bwd-b.txt ) &
( timeout $T $B/gpu_test_backward -tce='*short rows of many channels*,*every layout*' > $OUT/bwd-c.txt 2>&1; echo "rc $?" >> $OUT/bwd-c.txt ) &
( timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*warps own runs of vectors*' > $OUT/race-bwd-silu.txt 2>&1; echo "rc $?" >> $OUT/race-bwd-silu.txt
  timeout 250 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*' > $OUT/race-bwd-tile.txt 2>&1; echo "rc $?" >> $OUT/race-bwd-tile.txt ) &
( timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_forward -tc='*through the staged kernel*' > $OUT/race-fwd-staged.txt 2>&1; echo "rc $?" >> $OUT/race-fwd-staged.txt
  timeout 130 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_forward -tc='*through the staged kernel*' > $OUT/mem-fwd-staged.txt 2>&1; echo "rc $?" >> $OUT/mem-fwd-staged.txt
  timeout 130 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*' > $OUT/mem-bwd-tile.txt 2>&1; echo "rc $?" >> $OUT/mem-bwd-tile.txt ) &
wait
echo "all $(( $(date +%s) - t0 )) s"
for f in ctest-rest bwd-a bwd-b bwd-c race-bwd-silu race-bwd-tile race-fwd-staged mem-fwd-staged mem-bwd-tile; do echo "== $f"; tail -n 4 $OUT/$f.txt; done
