# Entries 163 and 164 (candidates) in one call, on a tree with both patches applied
# (docs/bench/entry163/whole-tiles.patch, docs/bench/entry164/shifted-walk.patch; see
# README.md here). Carry [".deps", ".ab/kmain"]; .ab/kmain = kernel_templates without
# them (`git archive HEAD kernel_templates` before applying). One build;
# main's modules come from the same binaries with CC1D_TEMPLATE_DIR=.ab/kmain (host code is
# the same). The two change different modules (entry 163 the 16-bit channel-last backward
# tile kernel's of rows off 16-byte boundaries, entry 164 the channel-last forward's), so
# one A/B times both. First the GPU cases that run them, plainly and under
# compute-sanitizer memcheck and racecheck; then this build against main's, alternating
# (A B B A), in what is left of LIMIT seconds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
W=/tmp/w164; rm -rf $W; mkdir -p $W/out
bash scripts/configure.sh gpu_test_backward gpu_test_forward gpu_test_forward_large_index gpu_test_varlen cc1d cc1d-bench > /tmp/build.log 2>&1
echo "build rc $? $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc
NEW='*channel-last rows off 16-byte boundaries*'
run() {   # name, timeout, command...
  local name=$1 limit=$2; shift 2
  ( timeout $limit "$@" > /tmp/$name.log 2>&1; echo "rc $?" >> /tmp/$name.log ) &
}
for op in forward backward; do
  run $op-plain ${T:-150} build/tests/gpu_test_$op -tc="$NEW"
  run $op-memcheck ${T:-150} compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/gpu_test_$op -tc="$NEW"
  run $op-racecheck ${T:-150} compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/gpu_test_$op -tc="$NEW"
done
run forward-matrix ${T:-150} build/tests/gpu_test_forward -tc="*every layout x dtype pair x width*,*seq_idx together with initial*"
run backward-tile ${T:-150} build/tests/gpu_test_backward -tc="*through the tile kernel*"
# What changed on the host since the last GPU run (README, "Where it is verified"): x of one
# channel read channel-last, grids of at most 2^22 - 1 blocks along x (the largest calls),
# the packed prefill (of no channels too), and the Python package's packed prefill.
run forward-onechannel ${T:-150} build/tests/gpu_test_forward -tc="*x of one channel*"
run backward-onechannel ${T:-150} build/tests/gpu_test_backward -tc="*x of one channel*"
run large-index ${T:-150} build/tests/gpu_test_forward_large_index
run varlen ${T:-150} build/tests/gpu_test_varlen
run python-varlen ${T:-150} env CC1D_LIBRARY=$PWD/build/libcc1d.so PYTHONPATH=$PWD/python python3 -m pytest -q -p no:cacheprovider python/tests/test_varlen_gpu.py
wait
names="forward-plain forward-memcheck forward-racecheck backward-plain backward-memcheck backward-racecheck forward-matrix backward-tile forward-onechannel backward-onechannel large-index varlen python-varlen"
for n in $names; do
  echo "== $n"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:|passed|failed' /tmp/$n.log | head -5; tail -n1 /tmp/$n.log
done | tee $OUT/summary.txt
for n in $names; do gzip -c /tmp/$n.log > $OUT/$n.log.gz; done
echo "A/B from $(( $(date +%s) - t0 )) s"
bench() {   # name, template dir ("" = embedded)
  ( [ -n "$2" ] && export CC1D_TEMPLATE_DIR=$2
    CC1D_CACHE_DIR=$W/c-${1%-*} timeout $(( ${LIMIT:-400} - ($(date +%s) - t0) - 5 )) build/tools/cc1d-bench \
      --config docs/bench/entry164/ab-config.json --json $W/out/$1.json > $W/out/$1.log 2>&1; echo "$1 rc $? $(( $(date +%s) - t0 )) s" )
}
bench main-1 $PWD/.ab/kmain; bench cand-1 ""; bench cand-2 ""; bench main-2 $PWD/.ab/kmain
runs() { ls $W/out/$1-*.json 2>/dev/null | paste -sd, ; }   # the runs that finished in time
python3 scripts/compare_runs.py main=$(runs main) cand=$(runs cand) | tee $OUT/ab.txt
tar czf $OUT/ab-json.tgz -C $W out
