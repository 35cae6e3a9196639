#!/usr/bin/env bash
# Configures and builds cc1d into ${CC1D_BUILD_DIR:-build}: every target, or only the
# targets named as arguments. A staged .deps/usr folder (GPU hosts without a package
# registry) is picked up when present.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CC1D_BUILD_DIR:-build}
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" ${1:+--target "$@"}
