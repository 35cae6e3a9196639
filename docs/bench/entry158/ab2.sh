# Entry 158's second A/B on one GPU host: the register walk, the tile kernel as built and
# the tile kernel bound to 4 blocks an SM in 16-bit with seq_idx (templates in .ab/tpl4:
# kernel_templates with that one launch bound changed), alternating, ROUNDS rounds.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-400} python3 scripts/bench_alternating.py --config docs/bench/entry158/ab2-config.json \
  --precompile docs/bench/entry158/precompile.json --out /tmp/ab158b --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. bound4=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tpl4 > $OUT/ab2.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab2-json.tgz -C /tmp ab158b
grep -A30 'compare_runs' $OUT/ab2.txt | tail -n 30
