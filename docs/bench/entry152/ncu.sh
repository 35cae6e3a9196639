# Entry 152's follow-up: each kernel of the fp32 backward calls on 8x2048x1024 alone under
# Nsight Compute (serialized, caches flushed before each; six calls a case), on the build of
# entry 152 (build/), its variants compiled first:
#   CC1D_CACHE_DIR=/tmp/tc build/tools/cc1d-precompile --config docs/bench/entry152/ncu-precompile.json --jobs 16
sed 's/"warmup": 10, "reps": 40/"warmup": 1, "reps": 3/' docs/bench/entry152/ncu-config.json > /tmp/c.json
CC1D_CACHE_DIR=/tmp/tc ncu --kernel-name regex:cc1d_bwd -c 60 \
  --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum \
  build/tools/cc1d-bench --config /tmp/c.json > $OUT/ncu.txt 2>&1
