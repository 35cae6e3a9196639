# entry 147 on a GPU host: the A/B runs (the build before, this one, this one with clusters
# off), then this build's GPU cases for the cluster sums and the tile kernel, and
# compute-sanitizer on the new case. (.ab/head: a git worktree of the commit before.)
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
python3 scripts/bench_alternating.py --config docs/bench/entry147/ab-config.json \
  --precompile docs/bench/entry147/precompile.json --out /tmp/e147-runs \
  before=.ab/head after=. off=.@CC1D_DISABLE_CLUSTERS=1 > $OUT/ab-h100.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp e147-runs
rm -rf /tmp/tc; export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 --target gpu_test_backward gpu_test_graph_capture > /tmp/bt.log 2>&1; tail -n1 /tmp/bt.log
B=build/tests
( timeout 200 $B/gpu_test_backward -tc='*clusters*' > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
  timeout 150 $B/gpu_test_backward -tc='*through the tile kernel*' >> $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
  timeout 100 $B/gpu_test_backward -tc='*exactly 2^24*' >> $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
  timeout 100 $B/gpu_test_graph_capture >> $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt ) &
( timeout 250 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*tile kernel*clusters*' > $OUT/race-cl-clusters.txt 2>&1; echo "rc $?" >> $OUT/race-cl-clusters.txt ) &
( timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*tile kernel*clusters*' > $OUT/mem-cl-clusters.txt 2>&1; echo "rc $?" >> $OUT/mem-cl-clusters.txt ) &
wait
echo "all $(( $(date +%s) - t0 )) s"
grep -E 'SUCCESS|FAIL|rc |assertions|test cases|clusters|ERROR SUMMARY|RACECHECK SUMMARY' $OUT/tests.txt $OUT/race-cl-clusters.txt $OUT/mem-cl-clusters.txt | head -40
tail -n 40 $OUT/ab-h100.txt
