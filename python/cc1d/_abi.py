"""ctypes mirror of the C ABI in include/cc1d/cc1d.h.

Pure ctypes, no torch: the layout tests compare these structs with the C header, and
tools without torch can still read the library's version. Keep every struct here in
the same field order as the header; the ABI only ever appends fields.
"""

import ctypes as C
import enum

ABI_VERSION = 1
MAX_RANK = 3


class Status(enum.IntEnum):
    """cc1d_status: mirrors cc1d::ErrorCode, plus ok and failures without a code."""

    OK = 0
    INVALID_ARGUMENT = 1
    UNSUPPORTED = 2
    COMPILE_FAILED = 3
    DEVICE_ERROR = 4
    BACKEND_UNAVAILABLE = 5
    OUT_OF_MEMORY = 6
    INTERNAL_ERROR = 7


class DType(enum.IntEnum):
    FP32 = 0
    FP16 = 1
    BF16 = 2
    INT32 = 3


class Activation(enum.IntEnum):
    NONE = 0
    SILU = 1


class Tensor(C.Structure):
    """cc1d_tensor: a device pointer with dtype, rank, shape and strides (elements)."""

    _fields_ = [
        ("data", C.c_void_p),
        ("dtype", C.c_int32),
        ("rank", C.c_int32),
        ("shape", C.c_int64 * MAX_RANK),
        ("strides", C.c_int64 * MAX_RANK),
    ]


class ForwardArgs(C.Structure):
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("x", Tensor),
        ("weight", Tensor),
        ("bias", Tensor),
        ("out", Tensor),
        ("activation", C.c_int32),
        ("reserved0", C.c_int32),
        ("seq_idx", Tensor),
        ("initial_states", Tensor),
        ("final_states", Tensor),
    ]


class BackwardArgs(C.Structure):
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("x", Tensor),
        ("weight", Tensor),
        ("bias", Tensor),
        ("dout", Tensor),
        ("dx", Tensor),
        ("dweight", Tensor),
        ("dbias", Tensor),
        ("activation", C.c_int32),
        ("accumulate", C.c_int32),
        ("deterministic", C.c_int32),
        ("reserved0", C.c_int32),
        ("seq_idx", Tensor),
        ("initial_states", Tensor),
        ("dinitial_states", Tensor),
        ("dfinal_states", Tensor),
        ("workspace", C.c_void_p),
        ("workspace_bytes", C.c_size_t),
    ]


class UpdateArgs(C.Structure):
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("x", Tensor),
        ("conv_state", Tensor),
        ("weight", Tensor),
        ("bias", Tensor),
        ("out", Tensor),
        ("activation", C.c_int32),
        ("pad_slot_id", C.c_int32),
        ("cache_seqlens", Tensor),
        ("conv_state_indices", Tensor),
    ]


class VarlenForwardArgs(C.Structure):
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("x", Tensor),
        ("weight", Tensor),
        ("bias", Tensor),
        ("out", Tensor),
        ("activation", C.c_int32),
        ("pad_slot_id", C.c_int32),
        ("cu_seqlens", Tensor),
        ("conv_states", Tensor),
        ("cache_indices", Tensor),
        ("has_initial_state", Tensor),
    ]


class RuntimeOptions(C.Structure):
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("cache_dir", C.c_char_p),
        ("disk_cache", C.c_int32),
        ("reserved0", C.c_int32),
        ("log_level", C.c_char_p),
    ]


class Stats(C.Structure):
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("memory_hits", C.c_uint64),
        ("disk_hits", C.c_uint64),
        ("compiles", C.c_uint64),
        ("compile_failures", C.c_uint64),
        ("compile_seconds", C.c_double),
        ("disk_load_seconds", C.c_double),
        ("launches", C.c_uint64),
    ]


# The defaults the header's *_init() functions set besides struct_size.
_DEFAULTS = {
    BackwardArgs: {"deterministic": 1},
    UpdateArgs: {"pad_slot_id": -1},
    VarlenForwardArgs: {"pad_slot_id": -1},
    RuntimeOptions: {"disk_cache": 1},
}

ALL_STRUCTS = (Tensor, ForwardArgs, BackwardArgs, UpdateArgs, VarlenForwardArgs, RuntimeOptions, Stats)
C_NAMES = {
    Tensor: "cc1d_tensor",
    ForwardArgs: "cc1d_forward_args",
    BackwardArgs: "cc1d_backward_args",
    UpdateArgs: "cc1d_update_args",
    VarlenForwardArgs: "cc1d_varlen_forward_args",
    RuntimeOptions: "cc1d_runtime_options",
    Stats: "cc1d_stats",
}


def new(struct_type):
    """A zeroed struct with struct_size and defaults set, as the header's _init() does."""
    value = struct_type()
    value.struct_size = C.sizeof(struct_type)
    for name, default in _DEFAULTS.get(struct_type, {}).items():
        setattr(value, name, default)
    return value
