# Entry 160 in one call: the GPU checks (tests.sh, T seconds each), then the A/B in what
# is left of LIMIT seconds: the modules of rows off 16-byte boundaries (new: 5 vectors a
# staging round; b3: 3 a round, the templates in .ab/tplB3; six: the 16-bit backward on 6
# blocks an SM) against the main modules (main: CC1D_DISABLE_SHIFTED_ROWS=1; the fp32
# backward of such rows there runs the register walk), two alternating rounds.
# CC1D_TMP_* are the A/B's temporary knobs (not kept).
set -u
t0=$(date +%s)
T=${T:-150} bash docs/bench/entry160/tests.sh
left=$(( ${LIMIT:-570} - ($(date +%s) - t0) - 15 ))
echo "A/B with $left s left"
timeout $left python3 scripts/bench_alternating.py --config docs/bench/entry160/ab-config.json \
  --precompile docs/bench/entry160/ab-precompile.json --out /tmp/ab160 --rounds 2 \
  main=.@CC1D_DISABLE_SHIFTED_ROWS=1 new=.@CC1D_TMP_FP32_SHIFTED_TILE=1 \
  b3=.@CC1D_TMP_FP32_SHIFTED_TILE=1@CC1D_TEMPLATE_DIR=$PWD/.ab/tplB3 \
  six=.@CC1D_TMP_FP32_SHIFTED_TILE=1@CC1D_TMP_SHIFTED_BLOCKS=6 > $OUT/ab.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab160
grep -A40 'compare_runs' $OUT/ab.txt | tail -n 40
