# Entry 149's build: every gpu test (the backward suite in three processes), racecheck on
# the tile kernel's case, then the backward anchor rows.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests
T=300
( ctest --test-dir build -L gpu -E 'gpu.test_backward$' -j3 --output-on-failure --timeout $T > $OUT/ctest-rest.txt 2>&1; echo "rc $?" >> $OUT/ctest-rest.txt ) &
( timeout $T $B/gpu_test_backward -tc='*every layout*' > $OUT/bwd-a.txt 2>&1; echo "rc $?" >> $OUT/bwd-a.txt ) &
( timeout $T $B/gpu_test_backward -tc='*short rows of many channels*' > $OUT/bwd-b.txt 2>&1; echo "rc $?" >> $OUT/bwd-b.txt ) &
( timeout $T $B/gpu_test_backward -tce='*short rows of many channels*,*every layout*' --duration=true > $OUT/bwd-c.txt 2>&1; echo "rc $?" >> $OUT/bwd-c.txt ) &
( timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*' > $OUT/race-bwd-tile.txt 2>&1; echo "rc $?" >> $OUT/race-bwd-tile.txt ) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in ctest-rest bwd-a bwd-b bwd-c race-bwd-tile; do echo "== $f"; tail -n 4 $OUT/$f.txt; done
grep -E "^[0-9.]+ s: " $OUT/bwd-c.txt | sort -rn | head -4
export CC1D_CACHE_DIR=/tmp/ac
left=$(( ${LIMIT:-585} - ($(date +%s) - t0) ))
timeout $left bash -c "build/tools/cc1d-precompile --config configs/precompile/mamba.json --target sm_90 --jobs 16 | tail -n1; build/tools/cc1d-bench --config configs/bench/anchors.json --filter op=bwd --json $OUT/bwd.json --markdown $OUT/bwd.md > $OUT/bwd.log 2>&1"; echo "bwd rc $? $(( $(date +%s) - t0 )) s"
