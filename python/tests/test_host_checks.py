"""Argument checks, no GPU and no library needed: every bad argument is refused with a
message naming it, before anything is allocated or the library is loaded."""

import pytest

from cc1d_test_support import torch

import cc1d
from cc1d import _library


@pytest.fixture(autouse=True)
def library_never_loaded(monkeypatch):
    """Any attempt to reach the library fails the test: checks come first."""

    def refuse():
        raise AssertionError("the library was reached before the arguments were checked")

    monkeypatch.setattr(_library, "library", refuse)
    monkeypatch.setattr(_library, "runtime", refuse)


def conv_args(batch=2, dim=8, length=16, width=4, dtype=torch.float32):
    return torch.randn(batch, dim, length, dtype=dtype), torch.randn(dim, width, dtype=dtype)


def test_import_exposes_the_reference_interface():
    assert callable(cc1d.causal_conv1d_fn)
    assert callable(cc1d.causal_conv1d_update)
    assert hasattr(torch.ops.cc1d, "causal_conv1d_fwd")
    assert hasattr(torch.ops.cc1d, "causal_conv1d_bwd")
    assert hasattr(torch.ops.cc1d, "causal_conv1d_update")


@pytest.mark.parametrize("activation", ["relu", "gelu", 1, "SILU"])
def test_unknown_activation(activation):
    x, w = conv_args()
    with pytest.raises(NotImplementedError, match="activation must be None, 'silu' or 'swish'"):
        cc1d.causal_conv1d_fn(x, w, activation=activation)
    with pytest.raises(NotImplementedError, match="activation"):
        cc1d.causal_conv1d_update(x[:, :, 0], torch.randn(2, 8, 3), w, activation=activation)


@pytest.mark.parametrize(
    "change, error, message",
    [
        (dict(x="not a tensor"), TypeError, "x must be a torch.Tensor"),
        (dict(x=torch.randn(2, 8)), ValueError, r"x must have shape \(batch, dim, seqlen\)"),
        (dict(x=torch.randn(2, 8, 16, dtype=torch.float64)), TypeError, "x must be float32, float16 or bfloat16"),
        (dict(x=torch.randint(0, 4, (2, 8, 16))), TypeError, "x must be float32"),
        (dict(weight=torch.randn(8)), ValueError, r"weight must have shape \(dim, width\)"),
        (dict(weight=torch.randn(7, 4)), ValueError, "dim = 8"),
        (dict(weight=torch.randn(8, 0)), ValueError, "width of at least 1"),
        (dict(bias=torch.randn(7)), ValueError, r"bias must have shape \(dim,\)"),
        (dict(bias=torch.randn(8, dtype=torch.float16)), TypeError, "bias must have dtype torch.float32"),
        (dict(seq_idx=torch.zeros(2, 16, dtype=torch.int64)), TypeError, "seq_idx must have dtype torch.int32"),
        (dict(seq_idx=torch.zeros(2, 15, dtype=torch.int32)), ValueError, r"seq_idx must have shape \(batch, seqlen\)"),
        (dict(initial_states=torch.randn(2, 8, 4)), ValueError, r"initial_states must have shape \(batch, dim, width - 1\)"),
        (dict(initial_states=torch.randn(2, 8, 3, dtype=torch.float16)), TypeError, "the dtype of x"),
        (dict(return_final_states=True, final_states_out=torch.randn(2, 3, 8)), ValueError, "final_states_out must have shape"),
    ],
)
def test_forward_argument_errors(change, error, message):
    x, w = conv_args()
    args = dict(x=x, weight=w)
    args.update(change)
    with pytest.raises(error, match=message):
        cc1d.causal_conv1d_fn(**args)


def test_width_one_keeps_no_state():
    x, w = conv_args(width=1)
    with pytest.raises(ValueError, match="width of at least 2"):
        cc1d.causal_conv1d_fn(x, w, return_final_states=True)
    with pytest.raises(ValueError, match="None for width 1"):
        cc1d.causal_conv1d_fn(x, w, initial_states=torch.randn(2, 8, 0))


def test_forward_needs_a_gpu_tensor():
    x, w = conv_args()
    with pytest.raises(ValueError, match="x must be on a GPU"):
        cc1d.causal_conv1d_fn(x, w, activation="silu")


@pytest.mark.parametrize(
    "change, error, message",
    [
        (dict(x=torch.randn(2)), ValueError, r"x must have shape \(batch, dim\) or \(batch, dim, seqlen\)"),
        (dict(x=torch.randn(2, 8, dtype=torch.float64)), TypeError, "x must be float32"),
        (dict(conv_state=torch.randn(2, 8)), ValueError, r"conv_state must have shape \(batch, dim, state_len\)"),
        (dict(conv_state=torch.randn(2, 8, 2)), ValueError, "state_len >= width - 1 = 3"),
        (dict(conv_state=torch.randn(2, 7, 3)), ValueError, "dim = 8"),
        (dict(conv_state=torch.randn(2, 8, 3, dtype=torch.float16)), TypeError, "conv_state must have dtype"),
        (dict(conv_state=torch.randn(1, 8, 3)), ValueError, "at least batch = 2 rows"),
        (dict(cache_seqlens=torch.zeros(2, dtype=torch.int64)), TypeError, "cache_seqlens must have dtype torch.int32"),
        (dict(cache_seqlens=torch.zeros(3, dtype=torch.int32)), ValueError, r"cache_seqlens must have shape \(batch,\)"),
        (dict(conv_state_indices=torch.zeros(1, dtype=torch.int32)), ValueError, "conv_state_indices must have shape"),
        (dict(weight=torch.randn(8, 4, dtype=torch.float16), bias=torch.randn(8)), TypeError, "the dtype of weight"),
    ],
)
def test_update_argument_errors(change, error, message):
    args = dict(x=torch.randn(2, 8), conv_state=torch.randn(2, 8, 3), weight=torch.randn(8, 4))
    args.update(change)
    with pytest.raises(error, match=message):
        cc1d.causal_conv1d_update(**args)


def test_update_state_without_a_unit_stride():
    # conv_state is written in place, so a copy cannot fix its strides: refused.
    state = torch.randn(2, 16, 6)[:, ::2, ::2]
    with pytest.raises(ValueError, match="cannot be copied to fix its strides"):
        cc1d.causal_conv1d_update(torch.randn(2, 8), state, torch.randn(8, 4))


def test_update_needs_a_gpu_tensor():
    with pytest.raises(ValueError, match="x must be on a GPU"):
        cc1d.causal_conv1d_update(torch.randn(2, 8), torch.randn(2, 8, 3), torch.randn(8, 4))


def test_update_with_slots_allows_a_larger_cache():
    # conv_state_indices: the cache may hold more rows than the batch; only the device
    # check is left to fail here.
    with pytest.raises(ValueError, match="x must be on a GPU"):
        cc1d.causal_conv1d_update(torch.randn(2, 8), torch.randn(5, 8, 3), torch.randn(8, 4),
                                  conv_state_indices=torch.tensor([4, 0], dtype=torch.int32))
