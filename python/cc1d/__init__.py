"""cc1d: runtime-compiled causal conv1d kernels for PyTorch.

A drop-in for the reference library's Python interface:

    from cc1d import causal_conv1d_fn, causal_conv1d_update

The kernels live in libcc1d.so, loaded with ctypes on first use (see _library.py for
where it is looked for). Without torch, only the library-level functions below work.
"""

from ._library import (  # noqa: F401
    Cc1dError,
    LibraryNotFoundError,
    abi_version,
    cache_dir,
    device_target,
    library_path,
    precompile,
    stats,
    version,
)

__version__ = "0.1.0"

try:
    import torch  # noqa: F401
except ModuleNotFoundError as error:  # only a missing torch itself is tolerated
    if error.name != "torch":
        raise
    _torch_missing = error

    def _needs_torch(*args, **kwargs):
        raise ModuleNotFoundError("cc1d's PyTorch functions need torch installed") from _torch_missing

    causal_conv1d_fn = causal_conv1d_update = causal_conv1d_varlen_fn = _needs_torch
else:
    from .interface import causal_conv1d_fn, causal_conv1d_update, causal_conv1d_varlen_fn  # noqa: F401

__all__ = [
    "causal_conv1d_fn",
    "causal_conv1d_update",
    "causal_conv1d_varlen_fn",
    "Cc1dError",
    "LibraryNotFoundError",
    "abi_version",
    "cache_dir",
    "device_target",
    "library_path",
    "precompile",
    "stats",
    "version",
]
