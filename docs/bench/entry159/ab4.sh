# Entry 159, the rule as kept, in one call: the A/B of ab4-config.json (the register walk,
# the kept plan, every 16-bit seq_idx call at 2 and at 4 blocks an SM), alternating,
# ROUNDS rounds, in AB_LIMIT seconds; then entry 158's GPU checks
# (docs/bench/entry158/tests.sh) in what is left of the call (LIMIT seconds in all).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
timeout ${AB_LIMIT:-300} python3 scripts/bench_alternating.py --config docs/bench/entry159/ab4-config.json \
  --precompile docs/bench/entry159/precompile.json --out /tmp/ab159d --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 kept=. b2=.@CC1D_EXPERIMENT_TILE16_BLOCKS=2 b4=.@CC1D_EXPERIMENT_TILE16_BLOCKS=4 \
  > $OUT/ab4.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab4-json.tgz -C /tmp ab159d
grep -A14 'compare_runs' $OUT/ab4.txt | tail -n 14
left=$(( ${LIMIT:-580} - ($(date +%s) - t0) ))
echo "tests get $left s"
T=$(( left - 45 )) bash docs/bench/entry158/tests.sh
