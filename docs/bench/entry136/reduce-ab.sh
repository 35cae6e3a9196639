# entry 136: two builds (base: .ab/base, a copy of the tree before the change, and this tree), two alternating rounds
set -u
cmake -S .ab/base -B /tmp/bbase -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build /tmp/bbase -j8 --target cc1d-bench > /tmp/bbase.log 2>&1 &
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j8 --target cc1d-bench > /tmp/bnew.log 2>&1
wait
tail -n 1 /tmp/bbase.log /tmp/bnew.log
for r in 1 2; do
  CC1D_CACHE_DIR=/tmp/c-base /tmp/bbase/tools/cc1d-bench --config docs/bench/entry136/ab-config.json --json $OUT/ab-base-$r.json > /dev/null 2>&1
  CC1D_CACHE_DIR=/tmp/c-r64 build/tools/cc1d-bench --config docs/bench/entry136/ab-config.json --json $OUT/ab-r64-$r.json > /dev/null 2>&1
done
python3 - <<'PY'
import json, os
o = os.environ['OUT']
def load(s): return [json.load(open(f'{o}/ab-{s}-{r}.json'))['cases'] for r in (1, 2)]
b, v = load('base'), load('r64')
for i, c in enumerate(b[0]):
    mb = sum(x[i]['median_us'] for x in b) / 2; mv = sum(x[i]['median_us'] for x in v) / 2
    ok = all(x[i]['check']['ok'] for x in b + v)
    print(f"{c['label']:40s} {c['shape_text']:14s} {mb:8.2f} {mv:8.2f} {100*(mv/mb-1):+6.2f}% {'ok' if ok else 'CHECK FAILED'}")
PY
