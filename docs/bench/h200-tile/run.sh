# One short call on whichever GPU comes. On an H200: the 16-bit channel-last backward
# anchor cells on the tile kernel against the register walk (the tile kernel's plans were
# timed on H100s only). On an H100: docs/bench/entry159b (entry 159's seq_idx plan past 2^25
# elements against the walk). Two alternating rounds either way.
set -u
t0=$(date +%s)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
echo "$name" | tee $OUT/device.txt
case "$name" in
*H200*) dir=docs/bench/h200-tile ;;
*) dir=docs/bench/entry159b ;;
esac
timeout $(( ${LIMIT:-330} - 10 )) python3 scripts/bench_alternating.py --config $dir/ab-config.json \
  --precompile $dir/ab-precompile.json --out /tmp/abx --rounds 2 \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. > $OUT/ab.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s ($dir)"
tar czf $OUT/ab-json.tgz -C /tmp abx
grep -A16 'compare_runs' $OUT/ab.txt | tail -n 16
