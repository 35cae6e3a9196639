# Entry 154's build on one GPU: first the GPU cases entry 154 left unrun
# (docs/bench/entry154/tests.sh: the new case under both sanitizers and the backward cases
# the suite run did not reach), then the backward rows of configs/bench/anchors.json with
# the code objects compiled ahead by cc1d-precompile, then (FWD=1) the forward rows, each
# in what is left of the call. TESTS=0 skips the GPU cases.
set -u
t0=$(date +%s)
# Seconds of the call's LIMIT still left.
left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
bash scripts/configure.sh gpu_test_backward cc1d-bench cc1d-precompile > /tmp/b0.log 2>&1; tail -n1 /tmp/b0.log
[ "${TESTS:-1}" = 1 ] && T=${T:-150} bash docs/bench/entry154/tests.sh
export CC1D_CACHE_DIR=/tmp/ac
# BIG=1: the 2^24-2^27 case (channel-last, untouched by entries 153-154) beside the
# precompile, on its own cache; the bench waits for it.
if [ "${BIG:-0}" = 1 ]; then
  ( CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc timeout ${T:-150} build/tests/gpu_test_backward -tc='*2^24 to 2^27*' > $OUT/tests-big.txt 2>&1; echo "rc $?" >> $OUT/tests-big.txt ) &
fi
timeout $(left) build/tools/cc1d-precompile --config configs/precompile/mamba.json --target sm_90 --jobs 16 | tail -n1
wait
timeout $(left) build/tools/cc1d-bench --config configs/bench/anchors.json --filter op=bwd --json $OUT/bwd.json --markdown $OUT/bwd.md > $OUT/bwd.log 2>&1; echo "bwd rc $? $(( $(date +%s) - t0 )) s"
tail -n 3 $OUT/bwd.log
if [ "${FWD:-0}" = 1 ]; then
  timeout $(left) build/tools/cc1d-bench --config configs/bench/anchors.json --filter op=fwd --json $OUT/fwd.json --markdown $OUT/fwd.md > $OUT/fwd.log 2>&1; echo "fwd rc $? $(( $(date +%s) - t0 )) s"
  tail -n 3 $OUT/fwd.log
fi
