# Entry 161's next step: Nsight Compute on the channel-last modules of rows off 16-byte
# boundaries (entry 160's kernels) against the main modules on aligned rows, 4x5377x4096
# against 4x5376x4096 bf16 SiLU, backward (tile kernel) and forward; the first call of each.
# The DRAM bytes tell whether 16-byte blocks that two channel groups share (each row's
# ends off sector boundaries) are read twice, or their sectors written in parts.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
bash scripts/configure.sh cc1d-bench > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_CACHE_DIR=/tmp/pc
for c in ${CASES:-odd-bwd ctl-bwd odd-fwd ctl-fwd}; do
  timeout ${T:-100} ncu -k 'regex:^cc1d_(bwd|fwd)_cl_.*(_bias|_shifted|_tiled)$' -c 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,smsp__inst_executed.sum \
    build/tools/cc1d-bench --config docs/bench/entry161/probe.json --filter "^$c " > $OUT/ncu-$c.txt 2>&1
  echo "$c rc $? $(( $(date +%s) - t0 )) s"
done
grep -H -E '^  [a-z_0-9]+\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Block Limit Shared|Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Grid Size|Waves Per SM|dram__bytes|lts__t_sectors|smsp__inst_executed' $OUT/ncu-*.txt
