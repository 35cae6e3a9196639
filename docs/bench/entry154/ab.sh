# Entry 154's A/B on one GPU host: the plan of the commit (.) against a source tree whose
# fp32 channel-first backward with SiLU takes one tile of 128 threads a row where two of
# 64 would cover it (T128: the commit with `&& v.activation != Activation::silu` added to
# two_small_tiles in src/api/launch/backward_channel_first.cpp), alternating, three rounds.
# On a tree that has the change (the commit and later), T64 names a tree of the plan
# before it (commit 2ec30d9) and T128=. the tree itself.
set -u
T64=${T64:-.}
T128=${T128:-.ab/t128}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-400} python3 scripts/bench_alternating.py --config docs/bench/entry154/ab-config.json \
  --precompile docs/bench/entry154/precompile.json --out /tmp/ab154 --rounds 3 \
  t64=$T64 t128=$T128 > $OUT/ab.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab154
grep -A10 'compare_runs' $OUT/ab.txt | tail -n 10
