# Entry 154's build on one GPU, the rest: the backward's 2^24-2^27 case (the one backward
# case not yet run on this build), then configs/bench/decode.json (decode and packed
# prefill, not run since entries 75-76).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
bash scripts/configure.sh gpu_test_backward cc1d-bench > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/ac
timeout ${T:-200} build/tests/gpu_test_backward -tc='*2^24 to 2^27*' > $OUT/tests-big.txt 2>&1; echo "rc $?" >> $OUT/tests-big.txt
tail -n 4 $OUT/tests-big.txt; echo "test $(( $(date +%s) - t0 )) s"
left=$(( ${LIMIT:-540} - ($(date +%s) - t0) ))
timeout $left build/tools/cc1d-bench --config configs/bench/decode.json --json $OUT/decode.json --markdown $OUT/decode.md > $OUT/decode.log 2>&1; echo "decode rc $? $(( $(date +%s) - t0 )) s"
tail -n 16 $OUT/decode.log
