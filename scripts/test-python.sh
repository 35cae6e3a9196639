#!/usr/bin/env bash
# The Python package's tests, against the shared library just built. Tests that need
# torch or a GPU skip themselves with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${CC1D_BUILD_DIR:-build}}
[ -d python/tests ] || { echo "no Python tests"; exit 0; }
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q pytest
export CC1D_LIBRARY="$PWD/$build/libcc1d.so"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
status=0
python3 -m pytest -q -rs python/tests scripts/tests || status=$?
# pytest exits 5 when it collected nothing: that is not a failure of the library.
[ "$status" = 5 ] && status=0
exit "$status"
