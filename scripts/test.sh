#!/usr/bin/env bash
# The test command: installs missing build dependencies, builds, and runs every test.
# Tests that need a GPU report "Skipped" with the reason where none is present; the
# NVRTC and HIPRTC compile matrix runs everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .deps/usr ] || bash scripts/install-deps.sh
bash scripts/configure.sh
build=${CC1D_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 1500
bash scripts/test-python.sh "$build"
