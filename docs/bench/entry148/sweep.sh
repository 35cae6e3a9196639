# entry 148: the 16-bit channel-last backward's tile limit, swept with temporary knobs in
# .ab/sweep (this build; CC1D_AB_TILE_W4SILU=1 lets width 4 with SiLU take the tile kernel at
# 2^24, CC1D_AB_TILE_LIMIT_LOG2=25 raises the 16-bit limit to 2^25; never committed).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
python3 scripts/bench_alternating.py --config docs/bench/entry148/sweep-config.json \
  --precompile docs/bench/entry147/precompile.json --out /tmp/e148 \
  built=.ab/sweep w4silu=.ab/sweep@CC1D_AB_TILE_W4SILU=1 l25=.ab/sweep@CC1D_AB_TILE_LIMIT_LOG2=25 \
  l25w4=.ab/sweep@CC1D_AB_TILE_LIMIT_LOG2=25@CC1D_AB_TILE_W4SILU=1 > $OUT/sweep-h100.txt 2>&1; echo "rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/sweep-json.tgz -C /tmp e148
grep -A40 'compare_runs' $OUT/sweep-h100.txt
