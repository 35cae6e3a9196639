# Entry 158's A/B on one GPU host: one build, the channel-last backward calls with seq_idx
# on the tile kernel (as built) against the register walk (CC1D_DISABLE_BACKWARD_TILE=1),
# alternating, ROUNDS rounds, in LIMIT seconds.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee -a $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-420} python3 scripts/bench_alternating.py --config docs/bench/entry158/ab-config.json \
  --precompile docs/bench/entry158/precompile.json --out /tmp/ab158 --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. > $OUT/ab.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab158
grep -A30 'compare_runs' $OUT/ab.txt | tail -n 30
