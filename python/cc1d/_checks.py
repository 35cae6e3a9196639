"""Argument checks of the public functions, made before anything reaches the library.

Each failure names the argument, what was expected and what was given. Structure
(types, ranks, shapes, dtypes) is checked before devices, so the messages are the same
on a machine without a GPU. The library validates again; these checks exist to give
Python-level messages and to fail before a tensor is copied or allocated.

check_forward_arguments and check_update_arguments raise on the first broken rule.
forward_arguments_pass and update_arguments_pass test the same rules on plain tensors
in one pass, for the eager fast path: a function call per rule costs microseconds on a
path that launches in a few. When a predicate refuses (None), the caller runs the full
checks, which raise the error naming the argument (test_host_checks.py puts every
refused case through both). When the rules pass, the predicates return what they read
(shapes, dtypes), so that _launch describes the tensors without reading them again.
"""

import torch

from ._layout import has_unit_stride, unit_stride_in

FLOAT_DTYPES = frozenset((torch.float32, torch.float16, torch.bfloat16))    # a set: one hash per test


def activation_is_silu(activation):
    """None / "silu" / "swish", as the reference library accepts; True / False also work."""
    if activation is None or activation is False:
        return False
    if activation is True or activation in ("silu", "swish"):
        return True
    raise NotImplementedError(f"activation must be None, 'silu' or 'swish', got {activation!r}")


def tensor(t, name, *, optional=False):
    if t is None and optional:
        return
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def rank(t, name, expected, dims):
    if t.dim() not in (expected if isinstance(expected, tuple) else (expected,)):
        raise ValueError(f"{name} must have shape {dims}, got {tuple(t.shape)}")


def shape(t, name, expected, dims):
    if t.shape != tuple(expected):     # torch.Size is a tuple
        raise ValueError(f"{name} must have shape {dims} = {tuple(expected)}, got {tuple(t.shape)}")


def float_dtype(t, name):
    if t.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32, float16 or bfloat16, got {t.dtype}")


def dtype(t, name, expected, reason):
    if t.dtype != expected:
        raise TypeError(f"{name} must have dtype {expected} ({reason}), got {t.dtype}")


def same_device(tensors, x):
    """Every tensor on x's device, and that device a GPU (CUDA, or ROCm through torch.cuda)."""
    if not x.is_cuda:
        raise ValueError(f"x must be on a GPU (device type 'cuda', ROCm included), got device {x.device}")
    device = x.device
    for name, t in tensors:
        if t is not None and t.device != device:
            raise ValueError(f"{name} is on {t.device}, but x is on {device}")


def conv_inputs(x, weight, bias):
    """x (B, D, L), weight (D, W), bias (D) or None. Returns (B, D, L, W)."""
    tensor(x, "x")
    rank(x, "x", 3, "(batch, dim, seqlen)")
    float_dtype(x, "x")
    batch, dim, length = x.shape
    return batch, dim, length, weight_and_bias(weight, bias, dim)


def weight_and_bias(weight, bias, dim):
    """weight (D, W) and bias (D) or None, bias in weight's dtype. Returns W."""
    tensor(weight, "weight")
    tensor(bias, "bias", optional=True)
    rank(weight, "weight", 2, "(dim, width)")
    float_dtype(weight, "weight")
    if weight.size(0) != dim:
        raise ValueError(f"weight must have shape (dim, width) with dim = {dim} (x.shape[1]), got {tuple(weight.shape)}")
    width = weight.size(1)
    if width < 1:
        raise ValueError(f"weight must have a width of at least 1, got shape {tuple(weight.shape)}")
    if bias is not None:
        shape(bias, "bias", (dim,), "(dim,)")
        dtype(bias, "bias", weight.dtype, "the dtype of weight")
    return width


def states(t, name, batch, dim, width, x):
    """initial_states / final_states_out: (B, D, W-1) in x's dtype."""
    tensor(t, name)
    if width < 2:
        raise ValueError(f"{name} must be None for width 1 (there is no state to carry)")
    shape(t, name, (batch, dim, width - 1), "(batch, dim, width - 1)")
    dtype(t, name, x.dtype, "the dtype of x")


def state_cache(t, name, rows, dim, width, x):
    """A cache of states written in place (update's conv_state, the packed prefill's
    conv_states): (rows, dim, state_len >= width - 1) in x's dtype, with one stride 1,
    since a copy to fix its strides would leave the caller's tensor unwritten."""
    tensor(t, name)
    rank(t, name, 3, f"({rows}, dim, state_len)")
    dtype(t, name, x.dtype, "the dtype of x")
    if t.size(1) != dim or t.size(2) < width - 1:
        raise ValueError(
            f"{name} must have shape ({rows}, dim, state_len) with dim = {dim} and state_len >= width - 1 = "
            f"{width - 1}, got {tuple(t.shape)}"
        )
    if not has_unit_stride(t):
        raise ValueError(
            f"{name} is updated in place, so it cannot be copied to fix its strides {t.stride()}: "
            "it needs one dimension with stride 1"
        )


def slot_indices(indices, name, cache, cache_name, count, count_name, unit):
    """The slot of each of `count` rows in a state cache: int32 indices of shape (count,),
    or, without them, rows 0..count-1 of the cache, which must then hold that many."""
    if indices is not None:
        int32_vector(indices, name, (count,), f"({count_name},)", "cache slots")
    elif cache.size(0) < count:
        raise ValueError(
            f"{cache_name} must have at least {count_name} = {count} {unit} without {name}, "
            f"got shape {tuple(cache.shape)}"
        )


def int32_vector(t, name, length, dims, meaning):
    tensor(t, name)
    shape(t, name, length, dims)
    dtype(t, name, torch.int32, meaning)


# ---- the public functions' arguments, rule by rule -----------------------------------


def check_forward_arguments(x, weight, bias, seq_idx, initial_states, return_final_states, final_states_out):
    """causal_conv1d_fn's arguments; final_states_out is None unless return_final_states."""
    batch, dim, _, width = conv_inputs(x, weight, bias)
    if seq_idx is not None:
        int32_vector(seq_idx, "seq_idx", (batch, x.size(2)), "(batch, seqlen)", "sequence ids")
    if initial_states is not None:
        states(initial_states, "initial_states", batch, dim, width, x)
    if return_final_states:
        if width < 2:
            raise ValueError("return_final_states needs a width of at least 2 (width 1 keeps no state)")
        if final_states_out is not None:
            states(final_states_out, "final_states_out", batch, dim, width, x)
    same_device(
        [("weight", weight), ("bias", bias), ("seq_idx", seq_idx), ("initial_states", initial_states),
         ("final_states_out", final_states_out)],
        x,
    )


def check_update_arguments(x, conv_state, weight, bias, cache_seqlens, conv_state_indices):
    tensor(x, "x")
    rank(x, "x", (2, 3), "(batch, dim) or (batch, dim, seqlen)")
    float_dtype(x, "x")
    batch, dim = x.shape[0], x.shape[1]
    width = weight_and_bias(weight, bias, dim)
    state_cache(conv_state, "conv_state", "batch", dim, width, x)
    if cache_seqlens is not None:
        int32_vector(cache_seqlens, "cache_seqlens", (batch,), "(batch,)", "positions")
    slot_indices(conv_state_indices, "conv_state_indices", conv_state, "conv_state", batch, "batch", "rows")
    same_device(
        [("conv_state", conv_state), ("weight", weight), ("bias", bias), ("cache_seqlens", cache_seqlens),
         ("conv_state_indices", conv_state_indices)],
        x,
    )


def check_varlen_arguments(x, weight, bias, query_start_loc, cache_indices, has_initial_state, conv_states):
    tensor(x, "x")
    rank(x, "x", 2, "(dim, total_tokens)")
    float_dtype(x, "x")
    dim = x.size(0)
    width = weight_and_bias(weight, bias, dim)
    tensor(query_start_loc, "query_start_loc")
    rank(query_start_loc, "query_start_loc", 1, "(num_sequences + 1,)")
    dtype(query_start_loc, "query_start_loc", torch.int32, "token offsets")
    if query_start_loc.size(0) < 1:
        raise ValueError("query_start_loc must hold num_sequences + 1 offsets, got none")
    sequences = query_start_loc.size(0) - 1
    if conv_states is None:
        for name, t in (("cache_indices", cache_indices), ("has_initial_state", has_initial_state)):
            if t is not None:
                raise ValueError(f"{name} is given, but conv_states is None (it names or reads conv_states slots)")
    else:
        if width < 2:
            raise ValueError("conv_states must be None for width 1 (there is no state to carry)")
        state_cache(conv_states, "conv_states", "slots", dim, width, x)
        slot_indices(cache_indices, "cache_indices", conv_states, "conv_states", sequences, "num_sequences", "slots")
        if has_initial_state is not None:
            tensor(has_initial_state, "has_initial_state")
            shape(has_initial_state, "has_initial_state", (sequences,), "(num_sequences,)")
            if has_initial_state.dtype not in (torch.bool, torch.int32):
                raise TypeError(f"has_initial_state must be bool or int32, got {has_initial_state.dtype}")
    same_device(
        [("weight", weight), ("bias", bias), ("query_start_loc", query_start_loc), ("cache_indices", cache_indices),
         ("has_initial_state", has_initial_state), ("conv_states", conv_states)],
        x,
    )


# ---- the same rules in one pass, for plain tensors -------------------------------------
# Callers make sure every argument is a torch.Tensor (or None where optional) first.
# Devices are left to on_one_gpu, so that the rules can be tested on any machine. Each
# attribute of a tensor is read once (a read costs about 0.1 µs), and what the launch
# needs again is returned: a non-empty tuple, so the result reads as True. The vector
# rules (shape (n,), a dtype) are written out where they apply: a helper's call costs
# more than its test, once per vector and call.


def _states_pass(t, batch, dim, width, x_dtype):
    return width >= 2 and t.shape == (batch, dim, width - 1) and t.dtype == x_dtype


def forward_arguments_pass(x, weight, bias, seq_idx, initial_states, return_final_states, final_states_out):
    """None unless check_forward_arguments would pass its rules (devices aside); then
    (x.shape, x.dtype, weight.shape, weight.dtype)."""
    x_shape, weight_shape = x.shape, weight.shape
    if len(x_shape) != 3 or len(weight_shape) != 2:
        return None
    batch, dim, length = x_shape
    width = weight_shape[1]
    x_dtype, weight_dtype = x.dtype, weight.dtype
    if x_dtype not in FLOAT_DTYPES or weight_dtype not in FLOAT_DTYPES or weight_shape[0] != dim or width < 1:
        return None
    if bias is not None and not (bias.shape == (dim,) and bias.dtype == weight_dtype):
        return None
    if seq_idx is not None and not (seq_idx.shape == (batch, length) and seq_idx.dtype == torch.int32):
        return None
    if initial_states is not None and not _states_pass(initial_states, batch, dim, width, x_dtype):
        return None
    if return_final_states:
        if width < 2 or final_states_out is not None and not _states_pass(final_states_out, batch, dim, width,
                                                                             x_dtype):
            return None
    return x_shape, x_dtype, weight_shape, weight_dtype


def update_arguments_pass(x, conv_state, weight, bias, cache_seqlens, conv_state_indices):
    """None unless check_update_arguments would pass its rules (devices aside); then
    (x.shape, x.dtype, conv_state.shape, conv_state.stride(), weight.shape, weight.dtype)."""
    x_shape, weight_shape, state_shape = x.shape, weight.shape, conv_state.shape
    if len(x_shape) not in (2, 3) or len(weight_shape) != 2 or len(state_shape) != 3:
        return None
    batch, dim = x_shape[0], x_shape[1]
    width = weight_shape[1]
    x_dtype, weight_dtype = x.dtype, weight.dtype
    if x_dtype not in FLOAT_DTYPES or weight_dtype not in FLOAT_DTYPES or conv_state.dtype != x_dtype:
        return None
    if weight_shape[0] != dim or width < 1 or state_shape[1] != dim or state_shape[2] < width - 1:
        return None
    if bias is not None and not (bias.shape == (dim,) and bias.dtype == weight_dtype):
        return None
    state_strides = conv_state.stride()
    if not unit_stride_in(state_shape, state_strides):
        return None
    if cache_seqlens is not None and not (cache_seqlens.shape == (batch,) and cache_seqlens.dtype == torch.int32):
        return None
    if conv_state_indices is not None:
        if not (conv_state_indices.shape == (batch,) and conv_state_indices.dtype == torch.int32):
            return None
    elif state_shape[0] < batch:
        return None
    return x_shape, x_dtype, state_shape, state_strides, weight_shape, weight_dtype


def on_one_gpu(x, a=None, b=None, c=None, d=None, e=None):
    """x on a GPU and every other tensor (None skipped) on the same one: what
    same_device checks. Unrolled for the public functions' five other tensors: a
    loop over *others costs more than the comparisons."""
    if not x.is_cuda:
        return False
    device = x.device
    return ((a is None or a.device == device) and (b is None or b.device == device)
            and (c is None or c.device == device) and (d is None or d.device == device)
            and (e is None or e.device == device))
