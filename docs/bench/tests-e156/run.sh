# One call on whichever GPU comes, the build of entry 156. On an H200: every anchor row
# (docs/bench/anchors-e154/run.sh: backward then forward rows, code objects compiled
# ahead by cc1d-precompile), the first H200 run since entry 128. On an H100, whose anchor
# rows entry 156's run already has: every GPU test (ctest -L gpu) instead.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
echo "$name" | tee $OUT/device.txt
nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,power.limit --format=csv | tee -a $OUT/device.txt
case "$name" in
*H200*) TESTS=0 FWD=1 LIMIT=${LIMIT:-585} bash docs/bench/anchors-e154/run.sh ;;
*)
  # Entry 156's GPU tests already passed on an H100; SKIP_H100=1 leaves at once.
  [ "${SKIP_H100:-0}" = 1 ] && { echo "not an H200: nothing run"; exit 0; }
  t0=$(date +%s)
  bash scripts/configure.sh > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
  echo "build $(( $(date +%s) - t0 )) s"
  CC1D_TEST_CACHE_DIR=/tmp/tc timeout $(( ${LIMIT:-585} - ($(date +%s) - t0) )) \
    ctest --test-dir build -L gpu -j 4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1
  echo "ctest rc $? $(( $(date +%s) - t0 )) s"
  tail -n 40 $OUT/ctest-gpu.txt ;;
esac
