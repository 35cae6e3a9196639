"""Loads the scripts under test by path: they are command-line tools, not a package."""

import importlib.util
import pathlib

SCRIPTS = pathlib.Path(__file__).resolve().parents[1]


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
