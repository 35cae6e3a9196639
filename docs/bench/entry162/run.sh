# Entry 162 in one call (carry [".deps", ".ab/k161"]; .ab/k161 = kernel_templates of main
# before entry 162). One build; entry 160's forward module comes from the same binaries
# with CC1D_TEMPLATE_DIR=.ab/k161 (host code is the same). First the GPU cases that run
# the changed module, plainly and under compute-sanitizer memcheck and racecheck, and the
# backward's caller-workspace case (its query fixed on main); then this build's forward
# against entry 160's, alternating (A B B A), in what is left of LIMIT seconds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
W=/tmp/w162; rm -rf $W; mkdir -p $W/out
bash scripts/configure.sh gpu_test_backward gpu_test_forward gpu_test_c_api_gpu cc1d-bench > /tmp/build.log 2>&1
echo "build rc $? $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc
NEW='*channel-last rows off 16-byte boundaries*'
run() {   # name, timeout, command...
  local name=$1 limit=$2; shift 2
  ( timeout $limit "$@" > /tmp/$name.log 2>&1; echo "rc $?" >> /tmp/$name.log ) &
}
run fwd-plain ${T:-150} build/tests/gpu_test_forward -tc="$NEW"
run fwd-memcheck ${T:-150} compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/gpu_test_forward -tc="$NEW"
run fwd-racecheck ${T:-150} compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/gpu_test_forward -tc="$NEW"
run fwd-matrix ${T:-150} build/tests/gpu_test_forward -tc="*every layout x dtype pair x width*,*long row with many tiles*,*seq_idx together with initial*"
run bwd-workspace ${T:-150} build/tests/gpu_test_backward -tc="*caller's workspace*,*partial rows padded*,*long walks with a tail*"
run capi ${T:-150} build/tests/gpu_test_c_api_gpu
wait
for n in fwd-plain fwd-memcheck fwd-racecheck fwd-matrix bwd-workspace capi; do
  echo "== $n"; grep -E 'test cases:|assertions:|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|ERROR:' /tmp/$n.log | head -5; tail -n1 /tmp/$n.log
done | tee $OUT/summary.txt
for n in fwd-plain fwd-memcheck fwd-racecheck fwd-matrix bwd-workspace capi; do gzip -c /tmp/$n.log > $OUT/$n.log.gz; done
echo "A/B from $(( $(date +%s) - t0 )) s"
bench() {   # name, template dir ("" = embedded)
  ( [ -n "$2" ] && export CC1D_TEMPLATE_DIR=$2
    CC1D_CACHE_DIR=$W/c-${1%-*} timeout $(( ${LIMIT:-400} - ($(date +%s) - t0) - 5 )) build/tools/cc1d-bench \
      --config docs/bench/entry162/ab-config.json --json $W/out/$1.json > $W/out/$1.log 2>&1; echo "$1 rc $? $(( $(date +%s) - t0 )) s" )
}
bench e160-1 $PWD/.ab/k161; bench e162-1 ""; bench e162-2 ""; bench e160-2 $PWD/.ab/k161
runs() { ls $W/out/$1-*.json 2>/dev/null | paste -sd, ; }   # the runs that finished in time
python3 scripts/compare_runs.py e160=$(runs e160) e162=$(runs e162) | tee $OUT/ab.txt
tar czf $OUT/ab-json.tgz -C $W out
