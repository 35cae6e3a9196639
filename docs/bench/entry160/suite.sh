# The GPU test programs besides the forward and backward ones, on the build after entry
# 160, side by side, T seconds each.
set -u
t0=$(date +%s)
bash scripts/configure.sh gpu_test_backward_race gpu_test_bad_input gpu_test_c_api_gpu gpu_test_disk_cache_roundtrip \
  gpu_test_forward_large_index gpu_test_graph_capture gpu_test_update gpu_test_varlen > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
for t in backward_race bad_input c_api_gpu disk_cache_roundtrip forward_large_index graph_capture update varlen; do
  ( timeout ${T:-120} build/tests/gpu_test_$t > /tmp/$t.log 2>&1; echo "rc $?" >> /tmp/$t.log ) &
done
wait
for t in backward_race bad_input c_api_gpu disk_cache_roundtrip forward_large_index graph_capture update varlen; do
  echo "== $t $(grep -E 'test cases:' /tmp/$t.log) $(grep -E 'assertions:' /tmp/$t.log) $(tail -n1 /tmp/$t.log)"
done | tee $OUT/suite.txt
echo "all $(( $(date +%s) - t0 )) s"
