"""Test setup: import the package from this source tree, and point it at a library built
in the repository (build*/libcc1d.so*) when CC1D_LIBRARY is not set and the package
carries none of its own."""

import ctypes
import glob
import os
import sys

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)

sys.path.insert(0, PYTHON_DIR)


def _loadable_built_library():
    """The newest libcc1d.so under build*/ (or one folder deeper) that loads; a library
    still missing symbols while parts of the project are being built does not."""
    patterns = [os.path.join(REPO_ROOT, "build*", "libcc1d.so*"), os.path.join(REPO_ROOT, "build*", "*", "libcc1d.so*")]
    found = {os.path.realpath(p) for pattern in patterns for p in glob.glob(pattern) if os.path.isfile(p)}
    for path in sorted(found, key=os.path.getmtime, reverse=True):
        try:
            ctypes.CDLL(path)
        except OSError:
            continue
        return path
    return None


if not os.environ.get("CC1D_LIBRARY") and not glob.glob(os.path.join(PYTHON_DIR, "cc1d", "lib", "libcc1d.so*")):
    built = _loadable_built_library()
    if built:
        os.environ["CC1D_LIBRARY"] = built
