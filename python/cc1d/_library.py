"""Finding and loading libcc1d.so, the C function signatures, and the process's Runtime.

The library is loaded on first use, not at import: `import cc1d` works on a machine
without it (argument checks, fake tensors for tracing, the ABI layout tests).
Search order:
  1. CC1D_LIBRARY: the path of the shared library itself;
  2. cc1d/lib/ inside this package (copied there at install time from CC1D_LIB_DIR);
  3. the system loader (LD_LIBRARY_PATH, ldconfig), as libcc1d.so.
"""

import ctypes as C
import glob
import os
import threading

from . import _abi


class Cc1dError(RuntimeError):
    """A failure reported by the library: `status` is a cc1d._abi.Status."""

    def __init__(self, status, message):
        self.status = _abi.Status(status) if status in _abi.Status._value2member_map_ else status
        name = self.status.name.lower() if isinstance(self.status, _abi.Status) else f"status {status}"
        super().__init__(f"cc1d {name}: {message}")


class LibraryNotFoundError(OSError):
    """libcc1d.so could not be found or loaded."""


_lock = threading.Lock()
_library = None
_library_path = None
_runtime = None

_PACKAGE_LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def _candidates():
    explicit = os.environ.get("CC1D_LIBRARY")
    if explicit:
        return [explicit], True
    bundled = sorted(glob.glob(os.path.join(_PACKAGE_LIB_DIR, "libcc1d.so*")), key=len)
    return bundled + ["libcc1d.so"], False


def _declare(lib):
    """Argument and result types of every C function (see cc1d.h)."""
    p = C.c_void_p
    status = C.c_int
    signatures = {
        "cc1d_abi_version": (C.c_uint32, []),
        "cc1d_version": (C.c_char_p, []),
        "cc1d_status_string": (C.c_char_p, [C.c_int]),
        "cc1d_last_error": (C.c_char_p, []),
        "cc1d_runtime_create": (status, [C.POINTER(_abi.RuntimeOptions), C.POINTER(p)]),
        "cc1d_runtime_destroy": (None, [p]),
        "cc1d_forward": (status, [p, C.POINTER(_abi.ForwardArgs), p]),
        "cc1d_backward": (status, [p, C.POINTER(_abi.BackwardArgs), p]),
        "cc1d_update": (status, [p, C.POINTER(_abi.UpdateArgs), p]),
        "cc1d_varlen_forward": (status, [p, C.POINTER(_abi.VarlenForwardArgs), p]),
        "cc1d_backward_workspace_size": (status, [p, C.POINTER(_abi.BackwardArgs), C.POINTER(C.c_size_t)]),
        "cc1d_precompile": (status, [p, C.c_char_p, C.c_char_p, C.POINTER(C.c_int32)]),
        "cc1d_runtime_stats": (status, [p, C.POINTER(_abi.Stats)]),
        "cc1d_device_target": (status, [p, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)]),
        "cc1d_cache_dir": (status, [p, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def _load():
    candidates, explicit = _candidates()
    failures = []
    for path in candidates:
        try:
            lib = C.CDLL(path)
        except OSError as error:
            failures.append(f"  {path}: {error}")
            continue
        try:
            _declare(lib)
        except AttributeError as error:
            failures.append(f"  {path}: not a cc1d library ({error})")
            continue
        found = lib.cc1d_abi_version()
        if found < _abi.ABI_VERSION:
            failures.append(f"  {path}: C ABI version {found}, this package needs {_abi.ABI_VERSION} or later")
            continue
        return lib, path
    hint = (
        "CC1D_LIBRARY names a library that could not be loaded"
        if explicit
        else "set CC1D_LIBRARY to the path of libcc1d.so, or install the package with "
        "CC1D_LIB_DIR=<folder holding libcc1d.so> pip install ./python"
    )
    raise LibraryNotFoundError("cc1d: libcc1d.so not found; tried:\n" + "\n".join(failures) + f"\n{hint}")


def library():
    """The loaded library (loads it on first call)."""
    global _library, _library_path
    if _library is None:
        with _lock:
            if _library is None:
                _library, _library_path = _load()
    return _library


def library_path():
    library()
    return _library_path


def address_function(name):
    """A second ctypes handle on the launch function `name`, declared to take
    (runtime, args, stream) as plain integer addresses: the per-call path passes ints,
    which ctypes converts faster than it checks a struct pointer. The declarations
    that _declare made on library().<name> stay as they are."""
    function = library()[name]      # indexing makes a new function object; attribute access is cached
    function.restype = C.c_int
    function.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p]
    return function


def check(status, what):
    """Raises Cc1dError for a failed call, with the library's message for this thread."""
    if status != _abi.Status.OK:
        message = library().cc1d_last_error().decode("utf-8", "replace")
        raise Cc1dError(status, f"{what}: {message}" if message else what)


def runtime():
    """The process's one Runtime handle, created on first use.

    It is never destroyed: at interpreter exit the GPU context may already be gone, and
    the driver releases everything with the process anyway.
    """
    global _runtime
    if _runtime is None:
        lib = library()      # before taking _lock, which library() takes itself on first use
        with _lock:
            if _runtime is None:
                handle = C.c_void_p()
                check(lib.cc1d_runtime_create(None, C.byref(handle)), "cc1d_runtime_create")
                _runtime = handle
    return _runtime


# ---- small wrappers over the informational functions ---------------------------------


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return library().cc1d_version().decode()


def abi_version():
    return int(library().cc1d_abi_version())


def _text(function, what):
    length = C.c_size_t()
    check(function(runtime(), None, 0, C.byref(length)), what)
    buffer = C.create_string_buffer(length.value + 1)
    check(function(runtime(), buffer, len(buffer), C.byref(length)), what)
    return buffer.value.decode()


def device_target():
    """ "cuda:sm_90", "hip:gfx942:sramecc+:xnack-", ...; raises Cc1dError without a GPU."""
    return _text(library().cc1d_device_target, "cc1d_device_target")


def cache_dir():
    """The disk cache folder, or "" when the disk cache is off."""
    return _text(library().cc1d_cache_dir, "cc1d_cache_dir")


def stats():
    """The Runtime's counters as a dict (memory_hits, disk_hits, compiles, ...)."""
    value = _abi.new(_abi.Stats)
    check(library().cc1d_runtime_stats(runtime(), C.byref(value)), "cc1d_runtime_stats")
    return {name: getattr(value, name) for name, _ in _abi.Stats._fields_ if name != "struct_size"}


def precompile(variant, target):
    """Compiles a variant for a target into the disk cache; True when compiled now."""
    compiled = C.c_int32()
    status = library().cc1d_precompile(runtime(), variant.encode(), target.encode(), C.byref(compiled))
    check(status, f"cc1d_precompile({variant!r}, {target!r})")
    return bool(compiled.value)
