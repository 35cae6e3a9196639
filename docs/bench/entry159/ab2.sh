# Entry 159's second A/B on one GPU host: the register walk, the id-mask tile kernel as
# built and three forms of it (.ab/tplA, tplB, tplC; ab2-config.json says which),
# alternating, ROUNDS rounds, in LIMIT seconds.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
timeout ${LIMIT:-400} python3 scripts/bench_alternating.py --config docs/bench/entry159/ab2-config.json \
  --precompile docs/bench/entry159/precompile.json --out /tmp/ab159b --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 masks=. wholeids=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tplA \
  onewalk=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tplB bound4=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tplC > $OUT/ab2.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab2-json.tgz -C /tmp ab159b
grep -A12 'compare_runs' $OUT/ab2.txt | tail -n 12
