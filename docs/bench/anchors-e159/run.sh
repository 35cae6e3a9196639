# One call on whichever GPU comes, the build after entry 159. On an H200: every anchor row
# (docs/bench/anchors-e154/run.sh: backward then forward rows, code objects compiled ahead
# by cc1d-precompile), the first H200 run since entry 128. On an H100: the seq_idx calls
# entry 159's kernel takes that its A/B did not time (docs/bench/anchors-e158's widths 1-3
# in fp16 and fp32, and the 2^22 edge), on it and on the register walk, alternating, two
# rounds.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
echo "$name" | tee $OUT/device.txt
nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,power.limit --format=csv | tee -a $OUT/device.txt
case "$name" in
*H200*) TESTS=0 FWD=1 LIMIT=${LIMIT:-585} bash docs/bench/anchors-e154/run.sh ;;
*)
  t0=$(date +%s)
  timeout $(( ${H100_LIMIT:-420} - 10 )) python3 scripts/bench_alternating.py \
    --config docs/bench/anchors-e158/ab-widths-config.json \
    --precompile docs/bench/anchors-e158/ab-widths-precompile.json --out /tmp/abw --rounds 2 \
    walk=.@CC1D_DISABLE_BACKWARD_TILE=1 tile=. > $OUT/ab-widths.txt 2>&1
  echo "ab rc $? $(( $(date +%s) - t0 )) s"
  tar czf $OUT/ab-widths-json.tgz -C /tmp abw
  grep -A40 'compare_runs' $OUT/ab-widths.txt | tail -n 40 ;;
esac
