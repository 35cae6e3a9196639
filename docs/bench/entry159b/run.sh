# The 16-bit seq_idx SiLU width-4 calls of 2^25-2^27 elements on the tile kernel (entry
# 159's plan: 2 blocks an SM past 2^25) and on the register walk, two alternating rounds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
timeout $(( ${LIMIT:-500} - 10 )) python3 scripts/bench_alternating.py --config docs/bench/entry159b/ab-config.json \
  --precompile docs/bench/entry159b/ab-precompile.json --out /tmp/ab159b --rounds 2 \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. > $OUT/ab.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab159b
grep -A12 'compare_runs' $OUT/ab.txt | tail -n 12
