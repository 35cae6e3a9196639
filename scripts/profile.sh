#!/usr/bin/env bash
# On a GPU host: build, then profile one launch of each case of a bench config with
# Nsight Compute (clocks left as they are), writing the report text into ${OUT:-gpu-out}.
#   usage: scripts/profile.sh [configs/bench/profile.json] [kernel-name regex]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
config=${1:-configs/bench/profile.json}
kernels=${2:-^cc1d_}
export CC1D_BUILD_DIR=${CC1D_BUILD_DIR:-build}
bash scripts/configure.sh > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(SpeedOfLight Occupancy LaunchStats WarpStateStats SchedulerStats ComputeWorkloadAnalysis MemoryWorkloadAnalysis SourceCounters)
"$ncu" --clock-control none --kernel-name "regex:$kernels" ${sections[@]/#/--section } \
  "$CC1D_BUILD_DIR"/tools/cc1d-bench --config "$config" > "$out/ncu.txt" 2>&1
echo "ncu: exit $?"
grep -E "^  cc1d_|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" "$out/ncu.txt" | head -150
