"""The reference library's Python interface (causal_conv1d_fn, causal_conv1d_update),
served by cc1d's runtime-compiled kernels, and the packed prefill of serving engines
(causal_conv1d_varlen_fn).

Same names, arguments and results as the reference, so a model swaps one import.
Beyond it: seq_idx works in both layouts and together with initial_states, and
final states can be returned in either layout.

Both functions run eagerly without torch's dispatcher when nothing needs it and the
arguments pass every check (see _fast_path.py); otherwise they check the arguments,
raising an error that names the one at fault, and go through the torch.ops.cc1d
custom ops.
"""

import torch

from . import _checks, _fast_path, ops  # noqa: F401  (importing ops registers the custom ops)


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
    if not return_final_states:
        final_states_out = None   # as in the reference: ignored unless asked for
    # forward_applies is not None only for arguments that pass every check of the other branch.
    read = _fast_path.forward_applies(x, weight, bias, seq_idx, initial_states, return_final_states, final_states_out)
    if read is not None:
        out, final_states = _fast_path.forward(x, weight, bias, seq_idx, initial_states, bool(return_final_states),
                                               silu, read)
    else:
        _checks.check_forward_arguments(x, weight, bias, seq_idx, initial_states, return_final_states,
                                        final_states_out)
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
    # update_applies is not None only for arguments that pass every check of the other branch.
    read = _fast_path.update_applies(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
    if read is not None:
        return _fast_path.update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices, read)
    _checks.check_update_arguments(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
    return torch.ops.cc1d.causal_conv1d_update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices)


def causal_conv1d_varlen_fn(x, weight, bias=None, query_start_loc=None, cache_indices=None, has_initial_state=None,
                            conv_states=None, activation="silu", pad_slot_id=-1):
    """Causal conv1d over sequences packed back to back (prefill in serving engines),
    updating their conv-state slots in place. No autograd (an inference op).

    Arguments in the order and with the meaning of the serving engines' varlen
    causal_conv1d_fn (hence activation defaults to "silu" here):
    x: (dim, total_tokens): tokens contiguous, or a (total_tokens, dim) tensor
        transposed (channels contiguous); other strides are copied once.
    weight: (dim, width); bias: (dim,) or None, in weight's dtype.
    query_start_loc: int32 (num_sequences + 1,): where each sequence starts in x, and
        where the last ends; tokens outside [query_start_loc[0], query_start_loc[-1])
        get 0.
    conv_states: (slots, dim, state_len) with state_len >= width - 1, in x's dtype, or
        None. After the call each sequence's slot holds in its last width - 1 entries the
        last width - 1 inputs of the sequence (its history before them where the
        sequence is shorter); the earlier entries are left alone.
    cache_indices: int32 (num_sequences,): the slot of each sequence (default: slot i
        for sequence i); a slot equal to pad_slot_id marks a padding sequence, computed
        with zero history and with no slot read or written.
    has_initial_state: bool or int32 (num_sequences,): true reads the sequence's
        history (the last width - 1 entries of its slot), else zeros; default: zeros.
    activation: None, "silu" or "swish".

    Returns out (dim, total_tokens) in x's layout.
    """
    silu = _checks.activation_is_silu(activation)
    _checks.check_varlen_arguments(x, weight, bias, query_start_loc, cache_indices, has_initial_state, conv_states)
    return torch.ops.cc1d.causal_conv1d_varlen_fwd(x, weight, bias, query_start_loc, cache_indices, has_initial_state,
                                                   conv_states, silu, int(pad_slot_id))
