# Next device session: (1) the GPU case of 2^24 and 2^25 calls (never run yet) and the tile case;
# (2) entry 149's sweep: the 16-bit tile limit past 2^25 (4x5376x4096 is 2^26.4).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
rm -rf /tmp/tc; export CC1D_TEST_CACHE_DIR=/tmp/tc
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 --target gpu_test_backward > /tmp/bt.log 2>&1; tail -n1 /tmp/bt.log
timeout 200 build/tests/gpu_test_backward -tc='*2^24 and 2^25*,*through the tile kernel*' > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt; tail -n4 $OUT/tests.txt
python3 scripts/bench_alternating.py --config .ab/e149-config.json --precompile docs/bench/entry147/precompile.json --out /tmp/e149 \
  built=.ab/sweep tile27=.ab/sweep@CC1D_AB_TILE_LIMIT_LOG2=27 fp32at25=.ab/sweep@CC1D_AB_TILE32_LIMIT_LOG2=25 > $OUT/sweep.txt 2>&1; echo "rc $? $(( $(date +%s) - t0 )) s"
tar czf $OUT/sweep-json.tgz -C /tmp e149
grep -A20 'compare_runs' $OUT/sweep.txt
