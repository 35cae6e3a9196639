"""Test setup: import the package from this source tree, and point it at a library built
in the repository (build*/libcc1d.so*) when CC1D_LIBRARY is not set and the package
carries none of its own."""

import glob
import os
import sys

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)

sys.path.insert(0, PYTHON_DIR)


def _newest_built_library():
    found = [p for p in glob.glob(os.path.join(REPO_ROOT, "build*", "libcc1d.so*")) if os.path.isfile(p)]
    return max(found, key=os.path.getmtime) if found else None


if not os.environ.get("CC1D_LIBRARY") and not glob.glob(os.path.join(PYTHON_DIR, "cc1d", "lib", "libcc1d.so*")):
    built = _newest_built_library()
    if built:
        os.environ["CC1D_LIBRARY"] = built
