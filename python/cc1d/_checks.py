"""Argument checks of the public functions, made before anything reaches the library.

Each failure names the argument, what was expected and what was given. Structure
(types, ranks, shapes, dtypes) is checked before devices, so the messages are the same
on a machine without a GPU. The library validates again; these checks exist to give
Python-level messages and to fail before a tensor is copied or allocated.
"""

import torch

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


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
    if tuple(t.shape) != tuple(expected):
        raise ValueError(f"{name} must have shape {dims} = {tuple(expected)}, got {tuple(t.shape)}")


def float_dtype(t, name):
    if t.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32, float16 or bfloat16, got {t.dtype}")


def dtype(t, name, expected, reason):
    if t.dtype != expected:
        raise TypeError(f"{name} must have dtype {expected} ({reason}), got {t.dtype}")


def same_device(tensors, x):
    """Every tensor on x's device, and that device a GPU (CUDA, or ROCm through torch.cuda)."""
    if x.device.type != "cuda":
        raise ValueError(f"x must be on a GPU (device type 'cuda', ROCm included), got device {x.device}")
    for name, t in tensors:
        if t is not None and t.device != x.device:
            raise ValueError(f"{name} is on {t.device}, but x is on {x.device}")


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


def int32_vector(t, name, length, dims, meaning):
    tensor(t, name)
    shape(t, name, length, dims)
    dtype(t, name, torch.int32, meaning)
