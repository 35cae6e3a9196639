# Entry 150's sweep cut to its question for a device entry 149 did not measure on (an
# H200): the tile kernel as built against the register walk past 2^25 elements
# (CC1D_AB_TILE_LIMIT_LOG2=25, in the same tree of temporary knobs as sweep.sh), two
# rounds; about half sweep.sh's time.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-300} python3 scripts/bench_alternating.py --config docs/bench/entry150/sweep-config.json \
  --precompile docs/bench/entry147/precompile.json --out /tmp/e150w \
  built=.ab/sweep walk=.ab/sweep@CC1D_AB_TILE_LIMIT_LOG2=25 > $OUT/sweep-walk.txt 2>&1; echo "rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/sweep-walk-json.tgz -C /tmp e150w
grep -A14 'compare_runs' $OUT/sweep-walk.txt | tail -n 14
