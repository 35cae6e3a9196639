# Ran on the build with cp-async-rows.patch applied (main at 3396a2a plus the patch), 2026-12-07.
# Entry 161 in one short call (carry [".deps", ".ab/e160"]; .ab/e160 = `git archive` of main
# before entry 161, unpacked, less docs/bench). Both builds and their precompiled caches
# are made while the forward's and the backward's cases of rows off 16-byte boundaries run
# plainly and under compute-sanitizer memcheck and racecheck (T seconds each); then this
# build against entry 160's, alternating (A B B A ...), in what is left of LIMIT seconds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
W=/tmp/w161; rm -rf $W; mkdir -p $W/out
deps=-DCMAKE_PREFIX_PATH=$PWD/.deps/usr
( cmake -S .ab/e160 -B $W/b0 -G Ninja -DCMAKE_BUILD_TYPE=Release $deps > $W/b0.log 2>&1 &&
  cmake --build $W/b0 -j8 --target cc1d-bench cc1d-precompile >> $W/b0.log 2>&1 &&
  $W/b0/tools/cc1d-precompile --config docs/bench/entry161/precompile.json --cache-dir $W/c0 --jobs 4 >> $W/b0.log 2>&1
  echo "e160 ready rc $? $(( $(date +%s) - t0 )) s" ) &
bash scripts/configure.sh gpu_test_backward gpu_test_forward cc1d-bench cc1d-precompile > /tmp/build.log 2>&1
echo "build rc $? $(( $(date +%s) - t0 )) s"
( build/tools/cc1d-precompile --config docs/bench/entry161/precompile.json --cache-dir $W/c1 --jobs 4 > $W/c1.log 2>&1; echo "e161 cache rc $?" ) &
export CC1D_TEST_CACHE_DIR=/tmp/tc
NEW='*channel-last rows off 16-byte boundaries*'
for op in backward forward; do
  for tool in plain memcheck racecheck; do
    pre=""; [ $tool != plain ] && pre="compute-sanitizer --tool $tool --error-exitcode 9"
    ( CC1D_CACHE_DIR=/tmp/tc timeout ${T:-110} $pre build/tests/gpu_test_$op -tc="$NEW" > /tmp/$op-$tool.log 2>&1; echo "rc $?" >> /tmp/$op-$tool.log ) &
  done
done
wait
for op in backward forward; do for tool in plain memcheck racecheck; do
  echo "== $op $tool"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' /tmp/$op-$tool.log | head -5; tail -n1 /tmp/$op-$tool.log
done; done | tee $OUT/summary.txt
gzip -c /tmp/backward-racecheck.log > $OUT/race-bwd.log.gz; gzip -c /tmp/forward-racecheck.log > $OUT/race-fwd.log.gz
echo "A/B from $(( $(date +%s) - t0 )) s"
bench() { CC1D_CACHE_DIR=$W/c$2 timeout $(( ${LIMIT:-400} - ($(date +%s) - t0) - 5 )) $W/$3/tools/cc1d-bench --config docs/bench/entry161/ab-config.json --json $W/out/$1.json > $W/out/$1.log 2>&1; echo "$1 rc $? $(( $(date +%s) - t0 )) s"; }
ln -s $PWD/build $W/b1
bench e160-1 0 b0; bench e161-1 1 b1; bench e161-2 1 b1; bench e160-2 0 b0
runs() { ls $W/out/$1-*.json 2>/dev/null | paste -sd, ; }   # the runs that finished in time
python3 scripts/compare_runs.py e160=$(runs e160) e161=$(runs e161) | tee $OUT/ab.txt
tar czf $OUT/ab-json.tgz -C $W out
