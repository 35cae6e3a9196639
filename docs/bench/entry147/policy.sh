# entry 147, second run: where cluster blocks land (placement.cu), then the A/B with the
# cluster scheduling policy as a temporary knob (.ab/sweep: this build with
# CC1D_AB_CLUSTER_SPREAD=1 asking for spread placement; never committed).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
nvcc -arch=sm_90 -o /tmp/placement docs/bench/entry147/placement.cu -lcuda && /tmp/placement | tee $OUT/placement-h100.txt
python3 scripts/bench_alternating.py --config docs/bench/entry147/policy-config.json \
  --precompile docs/bench/entry147/precompile.json --out /tmp/e147-policy \
  before=.ab/head lb=.ab/sweep spread=.ab/sweep@CC1D_AB_CLUSTER_SPREAD=1 off=.ab/sweep@CC1D_DISABLE_CLUSTERS=1 > $OUT/policy-h100.txt 2>&1; echo "ab rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/policy-json.tgz -C /tmp e147-policy
grep -A30 'compare_runs' $OUT/policy-h100.txt
