# The GPU suite on entry 154's build (the working tree with the plan change), one H100, right
# after the A/B: every gpu test but the backward's in one ctest, the backward suite in two
# processes, memcheck and racecheck on the cluster case, memcheck on graph capture.
# (bwd-a's timeout of 430 s ended its last case, 2^24 to 2^27 elements, before it finished.)
# (Outputs here as verify-NAME.txt for $OUT/NAME.txt.)
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests
( ctest --test-dir build -L gpu -E 'gpu.test_backward$' -j3 --output-on-failure --timeout 420 > $OUT/ctest-rest.txt 2>&1; echo "rc $?" >> $OUT/ctest-rest.txt ) &
( timeout 430 $B/gpu_test_backward -tce='*short rows of many channels*' > $OUT/bwd-a.txt 2>&1; echo "rc $?" >> $OUT/bwd-a.txt ) &
( timeout 430 $B/gpu_test_backward -tc='*short rows of many channels*' > $OUT/bwd-b.txt 2>&1; echo "rc $?" >> $OUT/bwd-b.txt ) &
( timeout 430 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*thread-block clusters*' > $OUT/memcheck.txt 2>&1; echo "rc $?" >> $OUT/memcheck.txt
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_graph_capture > $OUT/memcheck-graph.txt 2>&1; echo "rc $?" >> $OUT/memcheck-graph.txt ) &
( timeout 430 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*thread-block clusters*' > $OUT/racecheck.txt 2>&1; echo "rc $?" >> $OUT/racecheck.txt ) &
wait
echo "all $(( $(date +%s) - t0 )) s"
for f in ctest-rest bwd-a bwd-b memcheck memcheck-graph racecheck; do echo "== $f"; tail -n 6 $OUT/$f.txt; done
