# entry 146: one build with a temporary CC1D_AB_TILE16_BPS (blocks an SM the 16-bit tile plan
# fills, .ab/sweep: this commit plus that knob); settings alternating, the second round in
# reverse order.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
cmake -S .ab/sweep -B /tmp/b-sweep -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build /tmp/b-sweep -j16 --target cc1d-bench cc1d-precompile > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
cat > /tmp/pc.json <<'J'
{"targets": ["sm_90"], "variants": [{"op": "bwd", "layout": "channel_last", "width": [2, 3, 4], "x_dtype": ["fp16", "bf16"], "activation": ["none", "silu"], "bias": true, "small_call": false}]}
J
export CC1D_CACHE_DIR=/tmp/c-sweep
/tmp/b-sweep/tools/cc1d-precompile --config /tmp/pc.json --jobs 16 | tail -n1
rm -rf /tmp/sw; mkdir -p /tmp/sw   # (a warm machine keeps /tmp)
echo "ready $(( $(date +%s) - t0 )) s"
for s in 0 2 3 5 6 6 5 3 2 0; do
  r=1; [ -e /tmp/sw/u$s-1.json ] && r=2
  CC1D_AB_TILE16_BPS=$s /tmp/b-sweep/tools/cc1d-bench --config docs/bench/entry146/sweep-config.json --json /tmp/sw/u$s-$r.json > /dev/null 2>&1
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - <<'PY' | tee $OUT/sweep.txt
import json, os
o = '/tmp/sw'
S = ['0', '2', '3', '5', '6']
runs = {s: [json.load(open(f'{o}/u{s}-{r}.json')) for r in (1, 2)] for s in S}
print('device', runs['0'][0]['device'], 'copy', [round(x['copy_gb_per_s']) for v in runs.values() for x in v])
print('blocks an SM in 16-bit: 0 = as built (4); µs, mean of two rounds (change against 0)')
for i, c in enumerate(runs['0'][0]['cases']):
    m = {s: sum(x['cases'][i]['median_us'] for x in runs[s]) / 2 for s in S}
    ok = all(x['cases'][i]['check']['ok'] for v in runs.values() for x in v)
    cells = ' '.join(f"{s}:{m[s]:.2f}" + ('' if s == '0' else f"({100*(m[s]/m['0']-1):+.1f}%)") for s in S)
    print(f"{c['label']:34s} {c['shape_text']:11s} {cells} {'ok' if ok else 'CHECK FAILED'}")
PY
echo "all $(( $(date +%s) - t0 )) s"
tar -C /tmp -czf $OUT/sweep-json.tgz sw
