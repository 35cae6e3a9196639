# entry 146 A/B: the commit before (16-bit tile plans of 4 blocks an SM) vs 2 blocks an SM,
# alternating, two rounds each; then the tile kernel's GPU cases through the new
# rule, and racecheck and memcheck on them.
# (.ab/head: a git worktree of the commit before the change, built as "old")
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
rm -rf /tmp/b-new /tmp/b-old /tmp/c-new /tmp/c-old /tmp/ab-*.json   # (a warm machine keeps /tmp)
for t in new:. old:.ab/head; do n=${t%%:*}; s=${t#*:}
  cmake -S $s -B /tmp/b-$n -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build /tmp/b-$n -j16 --target cc1d-bench cc1d-precompile gpu_test_backward > /tmp/b-$n.log 2>&1; tail -n1 /tmp/b-$n.log
  cat > /tmp/pc.json <<'J'
{"targets": ["sm_90"], "variants": [{"op": "bwd", "layout": "channel_last", "width": [2, 3, 4], "x_dtype": ["fp32", "fp16", "bf16"], "activation": ["none", "silu"], "bias": true, "small_call": false}]}
J
  CC1D_CACHE_DIR=/tmp/c-$n /tmp/b-$n/tools/cc1d-precompile --config /tmp/pc.json --jobs 16 | tail -n1
done
echo "ready $(( $(date +%s) - t0 )) s"
for r in 1 2; do for n in old new; do
  CC1D_CACHE_DIR=/tmp/c-$n /tmp/b-$n/tools/cc1d-bench --config docs/bench/entry146/ab-config.json --json /tmp/ab-$n-$r.json > /dev/null 2>&1
done; done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - <<'PY' | tee $OUT/ab-h100.txt
import json, os
o = '/tmp'
runs = {k: [json.load(open(f'{o}/ab-{k}-{r}.json')) for r in (1, 2)] for k in ('old', 'new')}
print('device', runs['new'][0]['device'], 'copy', [round(x['copy_gb_per_s']) for v in runs.values() for x in v])
for i, c in enumerate(runs['new'][0]['cases']):
    t = {k: [x['cases'][i]['median_us'] for x in v] for k, v in runs.items()}
    p = {k: sum(x['cases'][i]['percent_of_copy'] for x in v) / 2 for k, v in runs.items()}
    ok = all(x['cases'][i]['check']['ok'] for v in runs.values() for x in v)
    m = {k: sum(v) / 2 for k, v in t.items()}
    print(f"{c['label']:36s} {c['shape_text']:11s} old {t['old'][0]:.2f}/{t['old'][1]:.2f} new {t['new'][0]:.2f}/{t['new'][1]:.2f} {100*(m['new']/m['old']-1):+.1f}% ({p['old']:.1f} -> {p['new']:.1f}% of copy) {'ok' if ok else 'CHECK FAILED'}")
PY
export CC1D_TEST_CACHE_DIR=/tmp/c-new
B=/tmp/b-new/tests
( timeout 200 $B/gpu_test_backward -tc='*below 2^24*,*exactly 2^24*,*caller*workspace*,*many rows feeding*' > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt ) &
( timeout 250 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*' > $OUT/race-tile.txt 2>&1; echo "rc $?" >> $OUT/race-tile.txt ) &
( timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*' > $OUT/mem-tile.txt 2>&1; echo "rc $?" >> $OUT/mem-tile.txt ) &
( timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*exactly 2^24*' > $OUT/mem-2p24.txt 2>&1; echo "rc $?" >> $OUT/mem-2p24.txt ) &
wait
tail -n 4 $OUT/tests.txt $OUT/race-tile.txt $OUT/mem-tile.txt $OUT/mem-2p24.txt
tar -C /tmp -czf $OUT/ab-json.tgz ab-old-1.json ab-old-2.json ab-new-1.json ab-new-2.json
echo "all $(( $(date +%s) - t0 )) s"
