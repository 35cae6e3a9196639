# Entry 153 on one GPU host in one call: the A/B against the build before (BASE, a source
# tree of the commit before: mkdir -p .ab/base153 && git archive <commit> | tar -x -C .ab/base153),
# then this build's channel-first SiLU GPU cases and compute-sanitizer on the g-in-registers case.
set -u
BASE=${BASE:-.ab/base153}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-200} python3 scripts/bench_alternating.py --config docs/bench/entry153/ab-config.json \
  --precompile docs/bench/entry153/precompile.json --out /tmp/ab153 --rounds 2 \
  before=$BASE e153=. > $OUT/ab.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab153
grep -A12 'compare_runs' $OUT/ab.txt | tail -n 12
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 --target gpu_test_backward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
B=build/tests
T=$(( 560 - ($(date +%s) - t0) ))
( timeout $T $B/gpu_test_backward -tc='*g passed between lanes*' > $OUT/tests-g.txt 2>&1; echo "rc $?" >> $OUT/tests-g.txt ) &
( timeout $T $B/gpu_test_backward -tc='*fp32 channel-first*,*thread-block clusters*,*many rows feeding*' > $OUT/tests-cf.txt 2>&1; echo "rc $?" >> $OUT/tests-cf.txt ) &
( timeout $T $B/gpu_test_backward -tc='*every layout*' > $OUT/tests-matrix.txt 2>&1; echo "rc $?" >> $OUT/tests-matrix.txt ) &
( timeout $T compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*g passed between lanes*' > $OUT/mem-g.txt 2>&1; echo "rc $?" >> $OUT/mem-g.txt ) &
( timeout $T compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*g passed between lanes*' > $OUT/race-g.txt 2>&1; echo "rc $?" >> $OUT/race-g.txt ) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in tests-g tests-cf tests-matrix mem-g race-g; do echo "== $f"; grep -E 'test cases:|ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$f.txt; tail -n 1 $OUT/$f.txt; done
