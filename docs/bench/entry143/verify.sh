set -u
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 --target gpu_test_backward > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
export CC1D_TEST_CACHE_DIR=/tmp/tc
B=build/tests
( timeout 170 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*' > $OUT/race-tile.txt 2>&1; echo "rc $?" >> $OUT/race-tile.txt ) &
( timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*,*mid size walked*' > $OUT/mem-tile.txt 2>&1; echo "rc $?" >> $OUT/mem-tile.txt ) &
( timeout 170 $B/gpu_test_backward -tc='*caller*workspace*,*many rows feeding*' > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt ) &
wait
tail -n 4 $OUT/race-tile.txt $OUT/mem-tile.txt $OUT/tests.txt
