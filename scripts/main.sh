#!/usr/bin/env bash
# The main job: build, precompile the default variant set (configs/precompile/mamba.json)
# into the cache, and on a GPU host run the quick benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .deps/usr ] || bash scripts/install-deps.sh
bash scripts/configure.sh
build=${CC1D_BUILD_DIR:-build}
"$build"/tools/cc1d-precompile --config configs/precompile/mamba.json
status=0
"$build"/tools/cc1d-bench --config configs/bench/quick.json --json "$build"/bench-quick.json || status=$?
if [ "$status" = 3 ]; then
  echo "no GPU on this host: benchmark skipped"
elif [ "$status" != 0 ]; then
  exit "$status"
fi
