# The 16-bit backward rows of 4x5376x4096 (both layouts) on whichever GPU comes: the
# channel-last ones run the tile kernel (entry 149), never timed on an H200.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh cc1d-bench > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
timeout $(( ${LIMIT:-250} - ($(date +%s) - t0) )) build/tools/cc1d-bench --config configs/bench/anchors.json \
  --filter 'mamba2-2.7b bwd (cl|cf) w4 (fp16|bf16) (none|silu) bias +4x5376x4096' \
  --json $OUT/large16.json --markdown $OUT/large16.md > $OUT/large16.log 2>&1
echo "bench rc $? $(( $(date +%s) - t0 )) s"
cat $OUT/large16.md
