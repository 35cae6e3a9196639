"""Packaging hook: bundles libcc1d.so into the package when CC1D_LIB_DIR names the
folder that holds it (a CMake build folder, or an install's lib/). Without it the
package is pure Python and finds the library at run time (CC1D_LIBRARY, or the
system loader)."""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution


def _library_to_bundle():
    folder = os.environ.get("CC1D_LIB_DIR")
    if not folder:
        return None
    folder = os.path.abspath(os.path.expanduser(folder))
    # libcc1d.so is a symlink chain in a CMake build; the real file is what ships.
    for name in ["libcc1d.so"] + sorted(glob.glob(os.path.join(folder, "libcc1d.so.*")), key=len, reverse=True):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return os.path.realpath(path)
    raise SystemExit(f"CC1D_LIB_DIR={folder}: no libcc1d.so there (build the `cc1d` target first)")


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        library = _library_to_bundle()
        if library:
            target = os.path.join(self.build_lib, "cc1d", "lib")
            os.makedirs(target, exist_ok=True)
            shutil.copyfile(library, os.path.join(target, "libcc1d.so"))
            print(f"cc1d: bundled {library}")


class MaybeBinaryDistribution(Distribution):
    """A wheel that carries libcc1d.so is tied to the platform; tag it so."""

    def has_ext_modules(self):
        return bool(os.environ.get("CC1D_LIB_DIR"))


setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=MaybeBinaryDistribution)
