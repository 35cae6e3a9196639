# Entry 156's A/B on one GPU host: the commit before it (BASE, a source tree of main
# before entry 156: `git archive <commit> src kernel_templates include tools CMakeLists.txt
# cmake python tests scripts configs | tar -x -C .ab/base`, carried with .deps) against
# this tree, alternating, three rounds; then the tests of the change (tests.sh).
set -u
BASE=${BASE:-.ab/base}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-420} python3 scripts/bench_alternating.py --config docs/bench/entry156/ab-config.json \
  --precompile docs/bench/entry156/precompile.json --out /tmp/ab156 --rounds ${ROUNDS:-3} \
  before=$BASE padded=. > $OUT/ab.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab156
grep -A30 'compare_runs' $OUT/ab.txt | tail -n 30
