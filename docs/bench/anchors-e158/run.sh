# One call on whichever GPU comes, the build after entry 158. On an H200: every anchor row
# (docs/bench/anchors-e154/run.sh: backward then forward rows, code objects compiled ahead
# by cc1d-precompile), the first H200 run since entry 128. On an H100, whose anchor rows
# the runs after entries 154 and 156 have: the seq_idx calls entry 158 sent to the tile
# kernel but did not time (widths 1-3 in fp16 and fp32, 16-bit SiLU at width 4 on 2^22
# elements), on it and on the register walk, alternating, two rounds.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
echo "$name" | tee $OUT/device.txt
nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,power.limit --format=csv | tee -a $OUT/device.txt
case "$name" in
*H200*) TESTS=0 FWD=1 LIMIT=${LIMIT:-585} bash docs/bench/anchors-e154/run.sh ;;
*)
  t0=$(date +%s)
  timeout $(( ${LIMIT:-585} - 10 )) python3 scripts/bench_alternating.py \
    --config docs/bench/anchors-e158/ab-widths-config.json \
    --precompile docs/bench/anchors-e158/ab-widths-precompile.json --out /tmp/abw --rounds 2 \
    walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. > $OUT/ab-widths.txt 2>&1
  echo "ab rc $? $(( $(date +%s) - t0 )) s"
  tar czf $OUT/ab-widths-json.tgz -C /tmp abw
  grep -A30 'compare_runs' $OUT/ab-widths.txt | tail -n 30 ;;
esac
