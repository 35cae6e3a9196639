# Ablation A/B of the channel-last backward's tail: two alternating rounds a side, one
# binary, three template directories made from kernel_templates/ before the run:
#   .ab/tpl-base      a plain copy;
#   .ab/tpl-noreduce  bwd_channel_last.cu's reduce entry runs `if (p.dim < 0) cc1d_bwd_reduce(p);`
#                     (never true: the work and its wait left out, the launch kept);
#   .ab/tpl-nosums    that, and the main entry's cc1d_bwd_block_sums under the same test
#                     (the sums are still computed: the test keeps them live).
for r in 1 2; do for s in base noreduce nosums; do
  CC1D_TEMPLATE_DIR=$PWD/.ab/tpl-$s CC1D_CACHE_DIR=/tmp/cache-$s build/tools/cc1d-bench --config docs/bench/entry135/walk-config.json --json $OUT/ab-$s-$r.json > /dev/null 2>&1
  python3 -c "import json; d=json.load(open('$OUT/ab-$s-$r.json')); print('$s', $r, [(c['label'], c['median_us'], c['check']) for c in d['cases']])"
done; done
