# ablation A/B of the channel-last backward's tail: two alternating rounds a side
for r in 1 2; do for s in base noreduce nosums; do
  CC1D_TEMPLATE_DIR=$PWD/.ab/tpl-$s CC1D_CACHE_DIR=/tmp/cache-$s build/tools/cc1d-bench --config docs/bench/entry135/walk-config.json --json $OUT/ab-$s-$r.json > /dev/null 2>&1
  python3 -c "import json; d=json.load(open('$OUT/ab-$s-$r.json')); print('$s', $r, [(c['label'], c['median_us'], c['check']) for c in d['cases']])"
done; done
