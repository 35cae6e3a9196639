"""torch tensors -> C ABI structs -> one library call, on the tensors' device and the
current torch stream of that device.

Callers hand over tensors that already have the shapes, dtypes and strides the
library accepts (the checks in _checks.py and the ops in ops.py see to that); the
library validates again and any failure comes back as a Cc1dError.
"""

import ctypes as C

import torch

from . import _abi, _library

_DTYPES = {
    torch.float32: _abi.DType.FP32,
    torch.float16: _abi.DType.FP16,
    torch.bfloat16: _abi.DType.BF16,
    torch.int32: _abi.DType.INT32,
}


def _fill(view, tensor):
    """Describes `tensor` in the cc1d_tensor `view`; None leaves it absent."""
    if tensor is None:
        return
    rank = tensor.dim()
    view.data = tensor.data_ptr()
    view.dtype = _DTYPES[tensor.dtype]
    view.rank = rank
    view.shape[:rank] = tensor.shape
    view.strides[:rank] = tensor.stride()


def _activation(silu):
    return _abi.Activation.SILU if silu else _abi.Activation.NONE


def _run(function, args, device, what):
    """Calls `function` on `device` with the current stream of that device."""
    lib = _library.library()
    handle = _library.runtime()
    if device.index is not None and device.index != torch.cuda.current_device():
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream(device).cuda_stream
            status = function(handle, C.byref(args), C.c_void_p(stream))
    else:
        stream = torch.cuda.current_stream(device).cuda_stream
        status = function(handle, C.byref(args), C.c_void_p(stream))
    _library.check(status, what)


def forward(x, weight, bias, out, silu, seq_idx=None, initial_states=None, final_states=None):
    args = _abi.new(_abi.ForwardArgs)
    _fill(args.x, x)
    _fill(args.weight, weight)
    _fill(args.bias, bias)
    _fill(args.out, out)
    args.activation = _activation(silu)
    _fill(args.seq_idx, seq_idx)
    _fill(args.initial_states, initial_states)
    _fill(args.final_states, final_states)
    _run(_library.library().cc1d_forward, args, x.device, "causal_conv1d forward")


def backward(x, weight, bias, dout, dx, dweight, dbias, silu, seq_idx=None, initial_states=None,
             dinitial_states=None, dfinal_states=None):
    args = _abi.new(_abi.BackwardArgs)
    _fill(args.x, x)
    _fill(args.weight, weight)
    _fill(args.bias, bias)
    _fill(args.dout, dout)
    _fill(args.dx, dx)
    _fill(args.dweight, dweight)
    _fill(args.dbias, dbias)
    args.activation = _activation(silu)
    _fill(args.seq_idx, seq_idx)
    _fill(args.initial_states, initial_states)
    _fill(args.dinitial_states, dinitial_states)
    _fill(args.dfinal_states, dfinal_states)
    _run(_library.library().cc1d_backward, args, x.device, "causal_conv1d backward")


def update(x, conv_state, weight, bias, out, silu, cache_seqlens=None, conv_state_indices=None):
    args = _abi.new(_abi.UpdateArgs)
    _fill(args.x, x)
    _fill(args.conv_state, conv_state)
    _fill(args.weight, weight)
    _fill(args.bias, bias)
    _fill(args.out, out)
    args.activation = _activation(silu)
    _fill(args.cache_seqlens, cache_seqlens)
    _fill(args.conv_state_indices, conv_state_indices)
    _run(_library.library().cc1d_update, args, x.device, "causal_conv1d_update")
