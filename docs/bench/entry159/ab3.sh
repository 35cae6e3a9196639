# Entry 159's third A/B on one GPU host: the 16-bit seq_idx tile plan at 2 blocks an SM (as
# built), 4 and 6 (CC1D_EXPERIMENT_TILE16_BLOCKS, a knob of the experiment's build only),
# and the kernel bound to 4 blocks (.ab/tplC) at 4, against the register walk;
# ab2-config.json's cases, alternating, ROUNDS rounds, in LIMIT seconds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
timeout ${LIMIT:-400} python3 scripts/bench_alternating.py --config docs/bench/entry159/ab2-config.json \
  --precompile docs/bench/entry159/precompile.json --out /tmp/ab159c --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 b2=. b4=.@CC1D_EXPERIMENT_TILE16_BLOCKS=4 b6=.@CC1D_EXPERIMENT_TILE16_BLOCKS=6 \
  bound4b4=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tplC@CC1D_EXPERIMENT_TILE16_BLOCKS=4 > $OUT/ab3.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab3-json.tgz -C /tmp ab159c
grep -A12 'compare_runs' $OUT/ab3.txt | tail -n 12
