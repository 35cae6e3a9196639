# Entry 159's final rule against the register walk on one GPU host (ab5-config.json),
# alternating, ROUNDS rounds, in LIMIT seconds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
timeout ${LIMIT:-200} python3 scripts/bench_alternating.py --config docs/bench/entry159/ab5-config.json \
  --precompile docs/bench/entry159/precompile.json --out /tmp/ab159e --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 final=. > $OUT/ab5.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
grep -A8 'compare_runs' $OUT/ab5.txt | tail -n 8
