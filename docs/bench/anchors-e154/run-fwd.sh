# The forward rows of configs/bench/anchors.json on entry 154's build, right after
# run-bwd.sh on the same machine (the build and the precompiled cache are reused when
# they are still there).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps/usr -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build build -j16 --target cc1d-bench cc1d-precompile > /tmp/b1.log 2>&1; tail -n1 /tmp/b1.log
export CC1D_CACHE_DIR=/tmp/ac
left=$(( ${LIMIT:-585} - ($(date +%s) - t0) ))
timeout $left bash -c "build/tools/cc1d-precompile --config configs/precompile/mamba.json --target sm_90 --jobs 16 | tail -n1; build/tools/cc1d-bench --config configs/bench/anchors.json --filter op=fwd --json $OUT/fwd.json --markdown $OUT/fwd.md > $OUT/fwd.log 2>&1"; echo "fwd rc $? $(( $(date +%s) - t0 )) s"
tail -n 3 $OUT/fwd.log
