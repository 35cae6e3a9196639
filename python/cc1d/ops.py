"""The torch.library custom ops: cc1d::causal_conv1d_fwd, cc1d::causal_conv1d_bwd,
cc1d::causal_conv1d_update and cc1d::causal_conv1d_varlen_fwd.

Custom ops (not autograd.Function around ctypes) so that torch.compile(fullgraph=True)
traces through them as single nodes, with fake implementations that give output
shapes and strides without running anything, and so that CUDA graphs capture the
launch. Each op accepts inputs of any strides and brings them into a layout the
library reads (inside the op, so that a compiled graph handing over other strides than
eager did still works), and allocates its outputs by the rules of _layout.py, shared
by the real and the fake implementation (is_channel_last(x) decides both).

The work of the forward and update ops lives in run_forward and run_update, which the
eager fast path (_fast_path.py) calls without the dispatcher: both paths run the same
code, and the ops keep their behaviour for tracing, autograd and everything else.
"""

from typing import Optional, Tuple

import torch

from . import _launch
from ._layout import (as_conv_input, conv_input_and_layout, empty_conv, empty_tokens, in_layout_of, is_channel_last,
                      tokens_channel_last, tokens_input_and_layout, with_unit_stride)

Tensor = torch.Tensor


# ---- forward ------------------------------------------------------------------------


def _forward_outputs(x, x_shape, channel_last, weight, return_final_states):
    """out in x's layout, and the final states in it too (None unless asked for).
    x_shape is x's shape, as the caller read it (each read costs host time)."""
    out = empty_conv(x_shape, channel_last, x)
    final_states = None
    if return_final_states:
        batch, dim, _ = x_shape
        final_states = empty_conv((batch, dim, weight.shape[1] - 1), channel_last, x)
    return out, final_states


def _op_results(x, out, final_states):
    """An op returns tensors, never None: final states not asked for are an empty tensor."""
    return out, final_states if final_states is not None else x.new_empty(0)


def run_forward(x, weight, bias, seq_idx, initial_states, return_final_states, silu, read=None):
    """The forward op's work, also run without the dispatcher by the eager fast path
    (_fast_path.py), which passes what its checks read (`read`, starting with x's
    shape; see _launch). Returns out and the final states (None unless asked for)."""
    x_shape = x.shape if read is None else read[0]     # a copy of x below keeps its shape
    x, channel_last = conv_input_and_layout(x)
    if initial_states is not None:      # tested here, not by the call: a call costs host time
        initial_states = with_unit_stride(initial_states)
    out, final_states = _forward_outputs(x, x_shape, channel_last, weight, return_final_states)
    if x_shape[2] == 0 and return_final_states:
        # No token: the final states are the initial ones (or zeros), nothing to launch.
        if initial_states is not None:
            final_states.copy_(initial_states)
        else:
            final_states.zero_()
    elif 0 not in x_shape:
        _launch.forward(x, weight, bias, out, silu, seq_idx, initial_states, final_states, read)
    return out, final_states


@torch.library.custom_op("cc1d::causal_conv1d_fwd", mutates_args=(), device_types="cuda")
def causal_conv1d_fwd(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    seq_idx: Optional[Tensor],
    initial_states: Optional[Tensor],
    return_final_states: bool,
    silu: bool,
) -> Tuple[Tensor, Tensor]:
    out, final_states = run_forward(x, weight, bias, seq_idx, initial_states, return_final_states, silu)
    return _op_results(x, out, final_states)


@causal_conv1d_fwd.register_fake
def _(x, weight, bias, seq_idx, initial_states, return_final_states, silu):
    return _op_results(x, *_forward_outputs(x, x.shape, is_channel_last(x), weight, return_final_states))


def _forward_setup_context(ctx, inputs, output):
    x, weight, bias, seq_idx, initial_states, return_final_states, silu = inputs
    ctx.save_for_backward(x, weight, bias, seq_idx, initial_states)
    ctx.return_final_states = return_final_states
    ctx.silu = silu


def _forward_backward(ctx, dout, dfinal_states):
    x, weight, bias, seq_idx, initial_states = ctx.saved_tensors
    want_dinitial = initial_states is not None and ctx.needs_input_grad[4]
    if not ctx.return_final_states:
        dfinal_states = None
    if dout is None:   # only the final states were used
        dout = torch.zeros_like(x)
    dx, dweight, dbias, dinitial = torch.ops.cc1d.causal_conv1d_bwd(
        x, weight, bias, dout, seq_idx, initial_states, dfinal_states, want_dinitial, ctx.silu
    )
    return (
        dx,
        dweight,
        dbias if bias is not None else None,
        None,
        dinitial if want_dinitial else None,
        None,
        None,
    )


causal_conv1d_fwd.register_autograd(_forward_backward, setup_context=_forward_setup_context)


# ---- backward -----------------------------------------------------------------------


def _backward_outputs(x, weight, bias, return_dinitial_states):
    """dx in x's layout; dweight/dbias in fp32 (the library accumulates in fp32, and the
    cast to the parameters' dtype happens once, after the reduction)."""
    dx = empty_conv(x.shape, is_channel_last(x), x)
    dweight = torch.empty(weight.shape, dtype=torch.float32, device=weight.device)
    dbias = torch.empty((weight.size(0),), dtype=torch.float32, device=weight.device) if bias is not None else None
    dinitial = empty_conv((x.size(0), x.size(1), weight.size(1) - 1), False, x) if return_dinitial_states else None
    return dx, dweight, dbias, dinitial


def _backward_results(x, weight, bias, dx, dweight, dbias, dinitial):
    return (
        dx,
        dweight.to(weight.dtype),
        dbias.to(bias.dtype) if bias is not None else x.new_empty(0),
        dinitial if dinitial is not None else x.new_empty(0),
    )


@torch.library.custom_op("cc1d::causal_conv1d_bwd", mutates_args=(), device_types="cuda")
def causal_conv1d_bwd(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    dout: Tensor,
    seq_idx: Optional[Tensor],
    initial_states: Optional[Tensor],
    dfinal_states: Optional[Tensor],
    return_dinitial_states: bool,
    silu: bool,
) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    x = as_conv_input(x)
    dout = in_layout_of(dout, x)
    initial_states = with_unit_stride(initial_states)
    dfinal_states = with_unit_stride(dfinal_states)
    dx, dweight, dbias, dinitial = _backward_outputs(x, weight, bias, return_dinitial_states)
    if x.numel() == 0:
        # Nothing flows through the convolution. With no token the final states were
        # the initial ones, so their gradient passes straight through.
        dweight.zero_()
        if dbias is not None:
            dbias.zero_()
        if dinitial is not None:
            if dfinal_states is not None:
                dinitial.copy_(dfinal_states)
            else:
                dinitial.zero_()
    else:
        _launch.backward(x, weight, bias, dout, dx, dweight, dbias, silu, seq_idx, initial_states, dinitial,
                         dfinal_states)
    return _backward_results(x, weight, bias, dx, dweight, dbias, dinitial)


@causal_conv1d_bwd.register_fake
def _(x, weight, bias, dout, seq_idx, initial_states, dfinal_states, return_dinitial_states, silu):
    dx, dweight, dbias, dinitial = _backward_outputs(x, weight, bias, return_dinitial_states)
    return _backward_results(x, weight, bias, dx, dweight, dbias, dinitial)


# ---- update (decoding) ---------------------------------------------------------------


_CONTIGUOUS = torch.contiguous_format     # a module attribute read less per call


def _update_output(x):
    """out: contiguous, with x's shape, dtype and device."""
    return torch.empty_like(x, memory_format=_CONTIGUOUS)


def run_update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices, read=None):
    """The update op's work, also run without the dispatcher by the eager fast path
    (_fast_path.py), which passes what its checks read (`read`, starting with x's
    shape; see _launch) and then marks conv_state as written itself."""
    x_shape = x.shape if read is None else read[0]     # a copy of x below keeps its shape
    if len(x_shape) == 3:
        x = with_unit_stride(x)
    out = _update_output(x)
    if 0 not in x_shape:
        _launch.update(x, conv_state, weight, bias, out, silu, cache_seqlens, conv_state_indices, read)
    return out


@torch.library.custom_op("cc1d::causal_conv1d_update", mutates_args=("conv_state",), device_types="cuda")
def causal_conv1d_update(
    x: Tensor,
    conv_state: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    silu: bool,
    cache_seqlens: Optional[Tensor],
    conv_state_indices: Optional[Tensor],
) -> Tensor:
    return run_update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices)


@causal_conv1d_update.register_fake
def _(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices):
    return _update_output(x)


# ---- packed variable-length prefill ----------------------------------------------------


@torch.library.custom_op("cc1d::causal_conv1d_varlen_fwd", mutates_args=("conv_states",), device_types="cuda")
def causal_conv1d_varlen_fwd(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    query_start_loc: Tensor,
    cache_indices: Optional[Tensor],
    has_initial_state: Optional[Tensor],
    conv_states: Optional[Tensor],
    silu: bool,
    pad_slot_id: int,
) -> Tensor:
    x, channel_last = tokens_input_and_layout(x)
    out = empty_tokens(x.shape, channel_last, x)
    if has_initial_state is not None and has_initial_state.dtype != torch.int32:
        has_initial_state = has_initial_state.to(torch.int32)    # the library reads int32 flags
    if x.shape[0] > 0:
        _launch.varlen(x, weight, bias, out, silu, query_start_loc, conv_states, cache_indices, has_initial_state,
                       pad_slot_id)
    return out


@causal_conv1d_varlen_fwd.register_fake
def _(x, weight, bias, query_start_loc, cache_indices, has_initial_state, conv_states, silu, pad_slot_id):
    return empty_tokens(x.shape, tokens_channel_last(x), x)
