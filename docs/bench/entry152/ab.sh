# Entry 152 against the build before it on one machine, alternating, two rounds. BASE is
# a source tree of the commit before, made beforehand on a host with the repository:
#   mkdir -p .ab/base152 && git archive <commit before> | tar -x -C .ab/base152
set -u
BASE=${BASE:-.ab/base152}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
timeout ${LIMIT:-400} python3 scripts/bench_alternating.py --config docs/bench/entry152/ab-config.json \
  --precompile docs/bench/entry152/precompile.json --out /tmp/ab152 --rounds 2 \
  before=$BASE e152=. > $OUT/ab.txt 2>&1; echo "rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/ab-json.tgz -C /tmp ab152
grep -A14 'compare_runs' $OUT/ab.txt | tail -n 14
