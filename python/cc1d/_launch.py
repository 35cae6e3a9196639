"""torch tensors -> C ABI structs -> one library call, on the tensors' device and the
current torch stream of that device.

Callers hand over tensors that already have the shapes, dtypes and strides the
library accepts (the checks in _checks.py and the ops in ops.py see to that); the
library validates again and any failure comes back as a Cc1dError.

Every call of the public functions passes through here, so this is written for host
time: each thread keeps one argument struct per entry point and rewrites only the
tensor descriptors and the activation (every other field keeps what _abi.new set, or
is written back with it); the stream is read as a raw integer; and the C functions are
called with integer addresses.

Two ways to fill a struct. The custom ops describe each tensor as it is (any rank and
dtype: the library's validation judges them), one struct.pack_into per descriptor.
The eager fast path hands over tensors that passed _checks, together with the shapes
and dtypes the checks read: the ranks are then known, so the whole struct is written
by one struct.pack_into with a precompiled format, and only the data pointers and the
strides are read from the tensors. Both write the same bytes (test_host_fast_path.py).
"""

import ctypes as C
import struct
import threading

import torch

from . import _abi, _library

_DTYPE_CODES = {
    torch.float32: int(_abi.DType.FP32),
    torch.float16: int(_abi.DType.FP16),
    torch.bfloat16: int(_abi.DType.BF16),
    torch.int32: int(_abi.DType.INT32),
}

_INT64_BYTES = 8


def _descriptor_layout(rank):
    """The pack_into format items of a cc1d_tensor of `rank` dimensions: data, dtype,
    rank, shape[MAX_RANK], strides[MAX_RANK]. The dimensions past `rank` are pad bytes,
    which pack_into writes as zeros, so a reused struct never keeps a longer tensor's
    sizes."""
    unused = (_abi.MAX_RANK - rank) * _INT64_BYTES
    return f"Pii{rank}q{unused}x{rank}q{unused}x"


# Indexed by rank; an absent tensor (None) is all zeros, as the header's _init() leaves it.
DESCRIPTOR_FORMATS = tuple(struct.Struct("@" + _descriptor_layout(rank)) for rank in range(_abi.MAX_RANK + 1))
ABSENT_FORMAT = struct.Struct(f"{C.sizeof(_abi.Tensor)}x")


def describe(args, offset, tensor):
    """Writes the cc1d_tensor at byte `offset` of the struct `args`: `tensor`'s data
    pointer, dtype, shape and strides (in elements), or an absent tensor for None."""
    if tensor is None:
        ABSENT_FORMAT.pack_into(args, offset)
        return
    shape = tensor.shape
    rank = len(shape)
    DESCRIPTOR_FORMATS[rank].pack_into(args, offset, tensor.data_ptr(), _DTYPE_CODES[tensor.dtype], rank, *shape,
                                       *tensor.stride())


def _tensor_offsets(struct_type, *names):
    return tuple(getattr(struct_type, name).offset for name in names)


_FORWARD_TENSORS = _tensor_offsets(_abi.ForwardArgs, "x", "weight", "bias", "out", "seq_idx", "initial_states",
                                   "final_states")
_BACKWARD_TENSORS = _tensor_offsets(_abi.BackwardArgs, "x", "weight", "bias", "dout", "dx", "dweight", "dbias",
                                    "seq_idx", "initial_states", "dinitial_states", "dfinal_states")
_UPDATE_TENSORS = _tensor_offsets(_abi.UpdateArgs, "x", "conv_state", "weight", "bias", "out", "cache_seqlens",
                                  "conv_state_indices")
_VARLEN_TENSORS = _tensor_offsets(_abi.VarlenForwardArgs, "x", "weight", "bias", "out", "cu_seqlens", "conv_states",
                                  "cache_indices", "has_initial_state")


class _ThreadArgs(threading.local):
    """One argument struct per entry point and thread, each as (struct, its address):
    one read of a thread-local attribute gives both. The library reads a struct only
    during the call, and ctypes releases the GIL during it, so a struct is shared by
    the calls of one thread, never by two threads."""

    def __init__(self):
        self.forward = self._new(_abi.ForwardArgs)
        self.backward = self._new(_abi.BackwardArgs)
        self.update = self._new(_abi.UpdateArgs)
        self.varlen = self._new(_abi.VarlenForwardArgs)

    @staticmethod
    def _new(struct_type):
        args = _abi.new(struct_type)
        return args, C.addressof(args)


_thread_args = _ThreadArgs()


class _EntryPoints:
    """The Runtime handle as an integer and the launch functions declared to take plain
    integer addresses: ctypes converts an int for a void* faster than it checks a
    struct pointer. Bound on the first launch, when the library is loaded."""

    def __init__(self):
        self.runtime = _library.runtime().value
        self.forward = _library.address_function("cc1d_forward")
        self.backward = _library.address_function("cc1d_backward")
        self.update = _library.address_function("cc1d_update")
        self.varlen = _library.address_function("cc1d_varlen_forward")


_entry_points = None


def _entries():
    global _entry_points
    if _entry_points is None:
        _entry_points = _EntryPoints()
    return _entry_points


# The current device and its current stream as integers, without building torch.device
# or torch.cuda.Stream objects; torch builds without these fall back to the public calls.
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device

if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    _current_stream = torch._C._cuda_getCurrentRawStream
else:
    def _current_stream(device_index):
        return torch.cuda.current_stream(device_index).cuda_stream


def _call(function, args_address, device_index, what):
    """Calls `function` with the current stream of `device_index`, making that device
    current for the call when it is not (the library launches on the current device)."""
    runtime = (_entry_points or _entries()).runtime
    if device_index == _current_device():
        status = function(runtime, args_address, _current_stream(device_index))
    else:
        with torch.cuda.device(device_index):
            status = function(runtime, args_address, _current_stream(device_index))
    if status != 0:
        _library.check(status, what)


_SILU = int(_abi.Activation.SILU)
_NO_ACTIVATION = int(_abi.Activation.NONE)
_INT32 = _DTYPE_CODES[torch.int32]
_PAD_SLOT_ID = _abi.new(_abi.UpdateArgs).pad_slot_id      # the header's default, written back on every call


def _describe_all(args, offsets, tensors):
    for offset, tensor in zip(offsets, tensors):
        describe(args, offset, tensor)


# ---- the checked fill: one pack_into per struct, for the eager fast path ----------------
# A struct.pack_into call costs far more than the dozen ns per value it writes, and
# describe() reads each tensor's shape and dtype again: here the values of a whole
# struct go through one call, and what the checks read is reused.


def _members_format(*members):
    """The pack_into format of consecutive struct members: a rank for a cc1d_tensor of
    that many dimensions, "i" for an int32 field."""
    return struct.Struct("@" + "".join(_descriptor_layout(m) if isinstance(m, int) else m for m in members))


# From x to the end of the struct: x, weight, bias, out, activation, reserved0, seq_idx,
# initial_states, final_states.
_FORWARD_START = _abi.ForwardArgs.x.offset
_FORWARD_FORMAT = _members_format(3, 2, 1, 3, "i", "i", 2, 3, 3)
# From x to the end of the struct: x, conv_state, weight, bias, out, activation,
# pad_slot_id, cache_seqlens, conv_state_indices; indexed by the rank of x (and out).
_UPDATE_START = _abi.UpdateArgs.x.offset
_UPDATE_FORMATS = (None, None) + tuple(_members_format(rank, 3, 2, 1, rank, "i", "i", 1, 1) for rank in (2, 3))
# The slot values of an absent tensor: all zeros, as ABSENT_FORMAT writes.
_ABSENT_VECTOR = (0,) * 5
_ABSENT_MATRIX = (0,) * 7
_ABSENT_STATES = (0,) * 9

# The fills below build each optional tensor's slot values inline, as a tuple then
# unpacked into the one pack_into: a helper function per slot costs as much again.


def _fill_checked_forward(args, x, weight, bias, out, silu, seq_idx, initial_states, final_states, read):
    """`read`: (x.shape, x.dtype, weight.shape, weight.dtype) from the checks, which
    also fixed every other shape and dtype; out and the final states were allocated
    with x's dtype (and out with its shape)."""
    x_shape, x_dtype, weight_shape, weight_dtype = read
    batch, dim, length = x_shape
    code, weight_code = _DTYPE_CODES[x_dtype], _DTYPE_CODES[weight_dtype]
    states = (batch, dim, weight_shape[1] - 1)
    bias_slot = _ABSENT_VECTOR if bias is None else (bias.data_ptr(), weight_code, 1, dim, *bias.stride())
    seq_idx_slot = (_ABSENT_MATRIX if seq_idx is None
                    else (seq_idx.data_ptr(), _INT32, 2, batch, length, *seq_idx.stride()))
    initial_slot = (_ABSENT_STATES if initial_states is None
                    else (initial_states.data_ptr(), code, 3, *states, *initial_states.stride()))
    final_slot = (_ABSENT_STATES if final_states is None
                  else (final_states.data_ptr(), code, 3, *states, *final_states.stride()))
    _FORWARD_FORMAT.pack_into(
        args, _FORWARD_START,
        x.data_ptr(), code, 3, *x_shape, *x.stride(),
        weight.data_ptr(), weight_code, 2, *weight_shape, *weight.stride(),
        *bias_slot,
        out.data_ptr(), code, 3, *x_shape, *out.stride(),
        _SILU if silu else _NO_ACTIVATION, 0,
        *seq_idx_slot, *initial_slot, *final_slot,
    )


def _fill_checked_update(args, x, conv_state, weight, bias, out, silu, cache_seqlens, conv_state_indices, read):
    """`read`: (x.shape, x.dtype, conv_state.shape, conv_state.stride(), weight.shape,
    weight.dtype) from the checks, which also fixed every other shape and dtype; out
    was allocated with x's shape and dtype."""
    x_shape, x_dtype, state_shape, state_strides, weight_shape, weight_dtype = read
    rank = len(x_shape)
    batch, dim = x_shape[0], x_shape[1]
    code, weight_code = _DTYPE_CODES[x_dtype], _DTYPE_CODES[weight_dtype]
    bias_slot = _ABSENT_VECTOR if bias is None else (bias.data_ptr(), weight_code, 1, dim, *bias.stride())
    seqlens_slot = (_ABSENT_VECTOR if cache_seqlens is None
                    else (cache_seqlens.data_ptr(), _INT32, 1, batch, *cache_seqlens.stride()))
    slots_slot = (_ABSENT_VECTOR if conv_state_indices is None
                  else (conv_state_indices.data_ptr(), _INT32, 1, batch, *conv_state_indices.stride()))
    _UPDATE_FORMATS[rank].pack_into(
        args, _UPDATE_START,
        x.data_ptr(), code, rank, *x_shape, *x.stride(),
        conv_state.data_ptr(), code, 3, *state_shape, *state_strides,
        weight.data_ptr(), weight_code, 2, *weight_shape, *weight.stride(),
        *bias_slot,
        out.data_ptr(), code, rank, *x_shape, *out.stride(),
        _SILU if silu else _NO_ACTIVATION, _PAD_SLOT_ID,
        *seqlens_slot, *slots_slot,
    )


# ---- the entry points -------------------------------------------------------------------


# `read` (forward and update): what _checks' one-pass predicate returned for these
# arguments, on the eager fast path; None from the custom ops.


def forward(x, weight, bias, out, silu, seq_idx=None, initial_states=None, final_states=None, read=None):
    args, address = _thread_args.forward
    if read is None:
        _describe_all(args, _FORWARD_TENSORS, (x, weight, bias, out, seq_idx, initial_states, final_states))
        args.activation = _SILU if silu else _NO_ACTIVATION
    else:
        _fill_checked_forward(args, x, weight, bias, out, silu, seq_idx, initial_states, final_states, read)
    _call((_entry_points or _entries()).forward, address, x.get_device(), "causal_conv1d forward")


def backward(x, weight, bias, dout, dx, dweight, dbias, silu, seq_idx=None, initial_states=None,
             dinitial_states=None, dfinal_states=None):
    args, address = _thread_args.backward
    _describe_all(args, _BACKWARD_TENSORS, (x, weight, bias, dout, dx, dweight, dbias, seq_idx, initial_states,
                                            dinitial_states, dfinal_states))
    args.activation = _SILU if silu else _NO_ACTIVATION
    _call(_entries().backward, address, x.get_device(), "causal_conv1d backward")


def update(x, conv_state, weight, bias, out, silu, cache_seqlens=None, conv_state_indices=None, read=None):
    args, address = _thread_args.update
    if read is None:
        _describe_all(args, _UPDATE_TENSORS, (x, conv_state, weight, bias, out, cache_seqlens, conv_state_indices))
        args.activation = _SILU if silu else _NO_ACTIVATION
    else:
        _fill_checked_update(args, x, conv_state, weight, bias, out, silu, cache_seqlens, conv_state_indices, read)
    _call((_entry_points or _entries()).update, address, x.get_device(), "causal_conv1d_update")


def varlen(x, weight, bias, out, silu, cu_seqlens, conv_states=None, cache_indices=None, has_initial_state=None,
           pad_slot_id=-1):
    args, address = _thread_args.varlen
    _describe_all(args, _VARLEN_TENSORS, (x, weight, bias, out, cu_seqlens, conv_states, cache_indices,
                                          has_initial_state))
    args.activation = _SILU if silu else _NO_ACTIVATION
    args.pad_slot_id = pad_slot_id
    _call(_entries().varlen, address, x.get_device(), "causal_conv1d_varlen_fn")
