# Entry 160's second call: the GPU checks after the plan change (tests2.sh), then the
# backward A/B in what is left of LIMIT seconds: the module of rows off 16-byte boundaries
# on the kept plan (new: 5 vectors a staging round; b3: 3, the templates in .ab/tplB3)
# against the main module (main: CC1D_DISABLE_SHIFTED_ROWS=1), two alternating rounds.
set -u
t0=$(date +%s)
T=${T:-170} TM=${TM:-240} bash docs/bench/entry160/tests2.sh
left=$(( ${LIMIT:-570} - ($(date +%s) - t0) - 15 ))
echo "A/B with $left s left"
timeout $left python3 scripts/bench_alternating.py --config docs/bench/entry160/ab2-config.json \
  --precompile docs/bench/entry160/ab-precompile.json --out /tmp/ab160b --rounds 2 \
  main=.@CC1D_DISABLE_SHIFTED_ROWS=1 new=. b3=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tplB3 > $OUT/ab2.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab2-json.tgz -C /tmp ab160b
grep -A30 'compare_runs' $OUT/ab2.txt | tail -n 30
