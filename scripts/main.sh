#!/usr/bin/env bash
# The main job: build, precompile the default variant set (configs/precompile/mamba.json)
# into the cache, and on a GPU host run the quick benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .deps/usr ] || bash scripts/install-deps.sh
bash scripts/configure.sh
build=${CC1D_BUILD_DIR:-build}
# The config names the fleet's targets (sm_80, sm_90, gfx90a, gfx942); by default this
# job fills the cache for the NVIDIA ones, which NVRTC compiles on any host. Set
# CC1D_TARGETS to choose others (gfx942 needs ROCm >= 5.7's HIPRTC).
targets=()
for t in ${CC1D_TARGETS:-sm_80 sm_90}; do targets+=(--target "$t"); done
"$build"/tools/cc1d-precompile --config configs/precompile/mamba.json "${targets[@]}"
status=0
"$build"/tools/cc1d-bench --config configs/bench/quick.json --json "$build"/bench-quick.json || status=$?
if [ "$status" = 3 ]; then
  echo "no GPU on this host: benchmark skipped"
elif [ "$status" != 0 ]; then
  exit "$status"
fi
