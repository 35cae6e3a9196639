# Entry 154's A/B on an H200: the commit's plan (.: one 128-thread tile a row for fp32
# channel-first SiLU rows of 129-256 vectors) against the plan before it (T64: a source tree
# of commit 2ec30d9, two 64-thread tiles), alternating, three rounds, same cases as ab.sh.
set -u
T64=${T64:-.ab/t64}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-400} python3 scripts/bench_alternating.py --config docs/bench/entry154/ab-config.json \
  --precompile docs/bench/entry154/precompile.json --out /tmp/ab154 --rounds 3 \
  t64=$T64 t128=. > $OUT/ab.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab154
grep -A10 'compare_runs' $OUT/ab.txt | tail -n 10
