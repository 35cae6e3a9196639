# entry 137, third run: runs of 8 without SiLU and 4 with it (this tree) against runs of 4 (.ab/run4) and the staged base
# (.ab/base: `git archive 10d8723 -- . ':!docs'`, the build before the entry; .ab/run4: the entry's tree with
# CC1D_BWD_SMALL_CL_RUN(silu) defined as 4 in kernel_templates/params.h; .ab/small-both.json: config-small-both.json).
# Run from the repository root on the GPU host with OUT set to an output folder.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
b() { cmake -S $1 -B $2 -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build $2 -j5 --target cc1d-bench $3 > $2.log 2>&1; }
b .ab/base /tmp/bbase "" &
b .ab/run4 /tmp/brun4 "" &
b . /tmp/bmix "gpu_test_backward gpu_test_backward_race" &
wait
tail -n1 /tmp/bbase.log /tmp/brun4.log /tmp/bmix.log
T=/tmp/bmix/tests/gpu_test_backward
$T -tc='*small calls in one launch*,*every layout x dtype*,*seq_idx with states*' 2>&1 | tail -3
/tmp/bmix/tests/gpu_test_backward_race 2>&1 | tail -3
for r in 1 2; do
  for v in base mix run4; do
    CC1D_CACHE_DIR=/tmp/c-$v /tmp/b$v/tools/cc1d-bench --config .ab/small-both.json --json $OUT/ab-$v-$r.json > /dev/null 2>&1
  done
done
python3 - <<'PY' | tee $OUT/ab.txt
import json, os
o = os.environ['OUT']
def load(s): return [json.load(open(f'{o}/ab-{s}-{r}.json')) for r in (1, 2)]
runs = {v: load(v) for v in ('base', 'mix', 'run4')}
b = runs['base']
print('device', b[0]['device'], 'copy GB/s', [round(x['copy_gb_per_s']) for v in runs.values() for x in v], 'empty us', [round(x['empty_kernel_us'], 2) for v in runs.values() for x in v])
print(f"{'case':50s} {'shape':12s} {'base':>7s} {'mix':>7s} {'run4':>7s}   mix     run4")
for i, c in enumerate(b[0]['cases']):
    m = {v: sum(x['cases'][i]['median_us'] for x in runs[v]) / 2 for v in runs}
    ok = all(x['cases'][i]['check']['ok'] for v in runs.values() for x in v)
    print(f"{c['label']:50s} {c['shape_text']:12s} {m['base']:7.2f} {m['mix']:7.2f} {m['run4']:7.2f} {100*(m['mix']/m['base']-1):+6.1f}% {100*(m['run4']/m['base']-1):+6.1f}% {'ok' if ok else 'CHECK FAILED'}")
PY
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T -tc='*small calls in one launch*' 2>&1 | tail -2
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $T -tc='*small calls in one launch*' 2>&1 | tail -2
