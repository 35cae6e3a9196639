# Entry 151 against its parent on one machine, alternating, three rounds: the 16-bit
# channel-last backward on 4x256x4096 (the tile kernel, whose PTX entry 151 left
# unchanged) read 2-7% slower in the anchor run after entry 151 than in the runs before.
# BASE is a source tree of the parent, made beforehand on a host with the repository:
#   mkdir -p .ab/base151 && git archive f846414~1 | tar -x -C .ab/base151
set -u
BASE=${BASE:-.ab/base151}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-300} python3 scripts/bench_alternating.py --config docs/bench/entry151/ab-parent-config.json \
  --precompile docs/bench/entry151/ab-parent-precompile.json --out /tmp/ab151 --rounds 3 \
  parent=$BASE e151=. > $OUT/ab-parent.txt 2>&1; echo "rc $? $(( $(date +%s) - t0 )) s"
grep -A12 'compare_runs' $OUT/ab-parent.txt | tail -n 12
