# Entry 150's sweep: blocks an SM of the 16-bit channel-last tile plan on calls past 2^25
# elements (a temporary knob, CC1D_AB_TILE16_BPS, in a tree never committed: .ab/sweep),
# and the register walk for them again (CC1D_AB_TILE_LIMIT_LOG2=25: entry 149's limit
# undone), for a device entry 149 did not measure on.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
python3 scripts/bench_alternating.py --config docs/bench/entry150/sweep-config.json \
  --precompile docs/bench/entry147/precompile.json --out /tmp/e150 \
  built=.ab/sweep bps3=.ab/sweep@CC1D_AB_TILE16_BPS=3 bps4=.ab/sweep@CC1D_AB_TILE16_BPS=4 \
  walk=.ab/sweep@CC1D_AB_TILE_LIMIT_LOG2=25 > $OUT/sweep.txt 2>&1; echo "rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/sweep-json.tgz -C /tmp e150
grep -A30 'compare_runs' $OUT/sweep.txt | tail -n 30
