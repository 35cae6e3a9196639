# Entry 159 in one call: the A/B (the register walk, entry 158's tile kernel from the
# templates in .ab/tpl-old, this one), alternating, ROUNDS rounds, in AB_LIMIT seconds;
# then the GPU checks of entry 158 (docs/bench/entry158/tests.sh: the seq_idx tile case
# plain and under both sanitizers, the matrix, the seq_idx, tile and small-call cases, the
# race test) in what is left of the call (LIMIT seconds in all).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
timeout ${AB_LIMIT:-300} python3 scripts/bench_alternating.py --config docs/bench/entry159/ab-config.json \
  --precompile docs/bench/entry159/precompile.json --out /tmp/ab159 --rounds ${ROUNDS:-2} \
  walk=.@CC1D_DISABLE_BACKWARD_TILE=1 e158=.@CC1D_TEMPLATE_DIR=$PWD/.ab/tpl-old masks=. > $OUT/ab.txt 2>&1
echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab159
grep -A16 'compare_runs' $OUT/ab.txt | tail -n 16
left=$(( ${LIMIT:-580} - ($(date +%s) - t0) ))
echo "tests get $left s"
T=$(( left - 45 )) bash docs/bench/entry158/tests.sh
