"""torch tensors -> C ABI structs -> one library call, on the tensors' device and the
current torch stream of that device.

Callers hand over tensors that already have the shapes, dtypes and strides the
library accepts (the checks in _checks.py and the ops in ops.py see to that); the
library validates again and any failure comes back as a Cc1dError.

Every call of the public functions passes through here, so this is written for host
time: each thread keeps one argument struct per entry point and rewrites only the
tensor descriptors and the activation (every other field keeps what _abi.new set); a
descriptor is written with one struct.pack_into; the stream is read as a raw integer;
and the C functions are called with integer addresses.
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


def _descriptor_format(rank):
    """The pack_into format of a cc1d_tensor of `rank` dimensions: data, dtype, rank,
    shape[MAX_RANK], strides[MAX_RANK]. The dimensions past `rank` are pad bytes, which
    pack_into writes as zeros, so a reused struct never keeps a longer tensor's sizes."""
    unused = (_abi.MAX_RANK - rank) * _INT64_BYTES
    return struct.Struct(f"@Pii{rank}q{unused}x{rank}q{unused}x")


# Indexed by rank; an absent tensor (None) is all zeros, as the header's _init() leaves it.
DESCRIPTOR_FORMATS = tuple(_descriptor_format(rank) for rank in range(_abi.MAX_RANK + 1))
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


class _ThreadArgs(threading.local):
    """One argument struct per entry point and thread. The library reads a struct only
    during the call, and ctypes releases the GIL during it, so a struct is shared by
    the calls of one thread, never by two threads."""

    def __init__(self):
        self.forward = _abi.new(_abi.ForwardArgs)
        self.backward = _abi.new(_abi.BackwardArgs)
        self.update = _abi.new(_abi.UpdateArgs)
        self.forward_address = C.addressof(self.forward)
        self.backward_address = C.addressof(self.backward)
        self.update_address = C.addressof(self.update)


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
    runtime = _entries().runtime
    if device_index == _current_device():
        status = function(runtime, args_address, _current_stream(device_index))
    else:
        with torch.cuda.device(device_index):
            status = function(runtime, args_address, _current_stream(device_index))
    if status != 0:
        _library.check(status, what)


_SILU = int(_abi.Activation.SILU)
_NO_ACTIVATION = int(_abi.Activation.NONE)


def forward(x, weight, bias, out, silu, seq_idx=None, initial_states=None, final_states=None):
    args = _thread_args.forward
    for offset, tensor in zip(_FORWARD_TENSORS, (x, weight, bias, out, seq_idx, initial_states, final_states)):
        describe(args, offset, tensor)
    args.activation = _SILU if silu else _NO_ACTIVATION
    _call(_entries().forward, _thread_args.forward_address, x.get_device(), "causal_conv1d forward")


def backward(x, weight, bias, dout, dx, dweight, dbias, silu, seq_idx=None, initial_states=None,
             dinitial_states=None, dfinal_states=None):
    args = _thread_args.backward
    tensors = (x, weight, bias, dout, dx, dweight, dbias, seq_idx, initial_states, dinitial_states, dfinal_states)
    for offset, tensor in zip(_BACKWARD_TENSORS, tensors):
        describe(args, offset, tensor)
    args.activation = _SILU if silu else _NO_ACTIVATION
    _call(_entries().backward, _thread_args.backward_address, x.get_device(), "causal_conv1d backward")


def update(x, conv_state, weight, bias, out, silu, cache_seqlens=None, conv_state_indices=None):
    args = _thread_args.update
    for offset, tensor in zip(_UPDATE_TENSORS, (x, conv_state, weight, bias, out, cache_seqlens, conv_state_indices)):
        describe(args, offset, tensor)
    args.activation = _SILU if silu else _NO_ACTIVATION
    _call(_entries().update, _thread_args.update_address, x.get_device(), "causal_conv1d_update")
