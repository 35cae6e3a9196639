# Entry 158's rule on another GPU: the seq_idx calls the tile kernel takes, on it and on
# the register walk, alternating, two rounds, in LIMIT seconds.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-240} python3 scripts/bench_alternating.py --config docs/bench/entry158/ab3-config.json \
  --precompile docs/bench/entry158/precompile.json --out /tmp/ab158c --rounds 2 \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. > $OUT/ab3.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
grep -A12 'compare_runs' $OUT/ab3.txt | tail -n 12
