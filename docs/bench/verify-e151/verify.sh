# Entry 151's build: every gpu test (the backward suite in four processes), memcheck on
# the tile kernel's case and the module case, then the backward anchor rows with what is left.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
t0=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 > /tmp/b.log 2>&1; tail -n1 /tmp/b.log
echo "build $(( $(date +%s) - t0 )) s"
export CC1D_TEST_CACHE_DIR=/tmp/tc CC1D_CACHE_DIR=/tmp/tc
B=build/tests
T=${T:-400}
C='*seq_idx with states*,*many rows feeding*,*caller*,*channel-first 16-bit*,*channel-first rows off*,*fp32 channel-first*,*clusters*'
D='*channel-last calls of mid*,*channel-last fp32 calls*,*tail of short*,*below 2^24*,*2^24 to 2^27*,*compiles only the module*,*channel-last seq_idx*'
E='*channel-first seq_idx*,*small calls in one launch*,*channel-last calls of few*,*whole 16-byte vectors in one launch*,*empty calls*'
( ctest --test-dir build -L gpu -E 'gpu.test_backward$' -j3 --output-on-failure --timeout $T > $OUT/ctest-rest.txt 2>&1; echo "rc $?" >> $OUT/ctest-rest.txt ) &
( timeout $T $B/gpu_test_backward -tc='*every layout*' > $OUT/bwd-a.txt 2>&1; echo "rc $?" >> $OUT/bwd-a.txt ) &
( timeout $T $B/gpu_test_backward -tc='*short rows of many channels*' > $OUT/bwd-b.txt 2>&1; echo "rc $?" >> $OUT/bwd-b.txt ) &
( timeout $T $B/gpu_test_backward -tc="$C" --duration=true > $OUT/bwd-c.txt 2>&1; echo "rc $?" >> $OUT/bwd-c.txt ) &
( timeout $T $B/gpu_test_backward -tc="$D" --duration=true > $OUT/bwd-d.txt 2>&1; echo "rc $?" >> $OUT/bwd-d.txt ) &
( timeout $T $B/gpu_test_backward -tc="$E" --duration=true > $OUT/bwd-e.txt 2>&1; echo "rc $?" >> $OUT/bwd-e.txt ) &
( timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test_backward -tc='*below 2^24*,*compiles only the module*' > $OUT/mem-bwd-tile.txt 2>&1; echo "rc $?" >> $OUT/mem-bwd-tile.txt ) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in ctest-rest bwd-a bwd-b bwd-c bwd-d bwd-e mem-bwd-tile; do echo "== $f"; grep -E 'test cases:|ERROR SUMMARY' $OUT/$f.txt; tail -n 3 $OUT/$f.txt; done
grep -hE "^[0-9.]+ s: " $OUT/bwd-?.txt | sort -rn | head -5
export CC1D_CACHE_DIR=/tmp/ac
left=$(( ${LIMIT:-585} - ($(date +%s) - t0) ))
timeout $left bash -c "build/tools/cc1d-precompile --config configs/precompile/mamba.json --target sm_90 --jobs 16 | tail -n1; build/tools/cc1d-bench --config configs/bench/anchors.json --filter op=bwd --json $OUT/bwd.json --markdown $OUT/bwd.md > $OUT/bwd.log 2>&1"; echo "bwd rc $? $(( $(date +%s) - t0 )) s"
