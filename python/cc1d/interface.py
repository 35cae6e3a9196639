"""The reference library's Python interface (causal_conv1d_fn, causal_conv1d_update),
served by cc1d's runtime-compiled kernels.

Same names, arguments and results as the reference, so a model swaps one import.
Beyond it: seq_idx works in both layouts and together with initial_states, and
final states can be returned in either layout.
"""

import torch

from . import _checks, ops  # noqa: F401  (importing ops registers the custom ops)
from ._layout import has_unit_stride


def causal_conv1d_fn(
    x,
    weight,
    bias=None,
    seq_idx=None,
    initial_states=None,
    return_final_states=False,
    final_states_out=None,
    activation=None,
):
    """Causal depthwise conv1d over the sequence dimension, with autograd.

    x: (batch, dim, seqlen), channel-first (contiguous) or a channel-last view
        (stride(1) == 1); other strides are copied once.
    weight: (dim, width); bias: (dim,) or None, in weight's dtype.
    seq_idx: int32 (batch, seqlen) or None: ids of packed sequences; terms never
        cross a change of id, and positions with a negative id give 0.
    initial_states: (batch, dim, width - 1) in x's dtype, or None.
    return_final_states: also return the last width - 1 inputs, (batch, dim, width - 1),
        written into final_states_out when given.
    activation: None, "silu" or "swish".

    Returns out (batch, dim, seqlen) in x's layout, or (out, final_states).
    """
    silu = _checks.activation_is_silu(activation)
    batch, dim, _, width = _checks.conv_inputs(x, weight, bias)
    if seq_idx is not None:
        _checks.int32_vector(seq_idx, "seq_idx", (batch, x.size(2)), "(batch, seqlen)", "sequence ids")
    if initial_states is not None:
        _checks.states(initial_states, "initial_states", batch, dim, width, x)
    if return_final_states:
        if width < 2:
            raise ValueError("return_final_states needs a width of at least 2 (width 1 keeps no state)")
        if final_states_out is not None:
            _checks.states(final_states_out, "final_states_out", batch, dim, width, x)
    else:
        final_states_out = None   # as in the reference: ignored unless asked for
    _checks.same_device(
        [("weight", weight), ("bias", bias), ("seq_idx", seq_idx), ("initial_states", initial_states),
         ("final_states_out", final_states_out)],
        x,
    )

    out, final_states = torch.ops.cc1d.causal_conv1d_fwd(
        x, weight, bias, seq_idx, initial_states, bool(return_final_states), silu
    )
    if not return_final_states:
        return out
    if final_states_out is not None:
        final_states_out.copy_(final_states)
        final_states = final_states_out
    return out, final_states


def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None, cache_seqlens=None,
                         conv_state_indices=None):
    """One decoding step, updating conv_state in place.

    x: (batch, dim) or (batch, dim, seqlen) new tokens.
    conv_state: (batch, dim, state_len) with state_len >= width - 1, in x's dtype; with
        conv_state_indices, (cache_batch, dim, state_len) and row b uses slot
        conv_state_indices[b] (a slot of -1 is padding: out is 0, no state is touched).
    weight: (dim, width); bias: (dim,) or None.
    cache_seqlens: int32 (batch,) or None: conv_state is then a circular buffer whose
        next write position is cache_seqlens % state_len.
    activation: None, "silu" or "swish".

    Returns out with x's shape.
    """
    silu = _checks.activation_is_silu(activation)
    _checks.tensor(x, "x")
    _checks.rank(x, "x", (2, 3), "(batch, dim) or (batch, dim, seqlen)")
    _checks.float_dtype(x, "x")
    batch, dim = x.shape[0], x.shape[1]
    width = _checks.weight_and_bias(weight, bias, dim)
    _checks.tensor(conv_state, "conv_state")
    _checks.rank(conv_state, "conv_state", 3, "(batch, dim, state_len)")
    _checks.dtype(conv_state, "conv_state", x.dtype, "the dtype of x")
    if conv_state.size(1) != dim or conv_state.size(2) < width - 1:
        raise ValueError(
            f"conv_state must have shape (batch, dim, state_len) with dim = {dim} and state_len >= width - 1 = "
            f"{width - 1}, got {tuple(conv_state.shape)}"
        )
    if not has_unit_stride(conv_state):
        raise ValueError(
            f"conv_state is updated in place, so it cannot be copied to fix its strides {conv_state.stride()}: "
            "it needs one dimension with stride 1"
        )
    if cache_seqlens is not None:
        _checks.int32_vector(cache_seqlens, "cache_seqlens", (batch,), "(batch,)", "positions")
    if conv_state_indices is not None:
        _checks.int32_vector(conv_state_indices, "conv_state_indices", (batch,), "(batch,)", "cache slots")
    elif conv_state.size(0) < batch:
        raise ValueError(
            f"conv_state must have at least batch = {batch} rows without conv_state_indices, "
            f"got shape {tuple(conv_state.shape)}"
        )
    _checks.same_device(
        [("conv_state", conv_state), ("weight", weight), ("bias", bias), ("cache_seqlens", cache_seqlens),
         ("conv_state_indices", conv_state_indices)],
        x,
    )
    return torch.ops.cc1d.causal_conv1d_update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices)
