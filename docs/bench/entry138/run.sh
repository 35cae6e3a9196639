# entry 138: the channel-last small-call backward (runs in registers) past 2^17 elements against the main kernels, one build
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
cmake -S .ab/limit -B /tmp/blim -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build /tmp/blim -j16 --target cc1d-bench gpu_test_backward > /tmp/blim.log 2>&1
tail -n1 /tmp/blim.log
for r in 1 2; do
  CC1D_CACHE_DIR=/tmp/c-lim /tmp/blim/tools/cc1d-bench --config .ab/limit.json --json $OUT/lim-small-$r.json > /dev/null 2>&1
  CC1D_DISABLE_SMALL_BACKWARD=1 CC1D_CACHE_DIR=/tmp/c-lim /tmp/blim/tools/cc1d-bench --config .ab/limit.json --json $OUT/lim-main-$r.json > /dev/null 2>&1
done
python3 - <<'PY' | tee $OUT/lim.txt
import json, os
o = os.environ['OUT']
def load(s): return [json.load(open(f'{o}/lim-{s}-{r}.json')) for r in (1, 2)]
runs = {v: load(v) for v in ('main', 'small')}
m0 = runs['main']
print('device', m0[0]['device'], 'copy GB/s', [round(x['copy_gb_per_s']) for v in runs.values() for x in v])
for i, c in enumerate(m0[0]['cases']):
    m = {v: sum(x['cases'][i]['median_us'] for x in runs[v]) / 2 for v in runs}
    ok = all(x['cases'][i]['check']['ok'] for v in runs.values() for x in v)
    print(f"{c['label']:40s} {c['shape_text']:12s} main {m['main']:7.2f} small {m['small']:7.2f} {100*(m['small']/m['main']-1):+6.1f}% {'ok' if ok else 'CHECK FAILED'}")
PY
