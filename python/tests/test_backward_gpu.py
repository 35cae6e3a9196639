"""Gradients of causal_conv1d_fn on a GPU against torch.autograd on the fp64 reference:
dx, dweight, dbias, dinitial_states, with final states in the loss, seq_idx, both
layouts and every dtype."""

import pytest

from cc1d_test_support import (DTYPES, assert_close, assert_weight_grad_close, random, random_seq_idx,
                               requires_gpu, seed, torch)  # noqa: F401  (seed is a fixture)

import cc1d
import cc1d_test_reference as reference

pytestmark = requires_gpu


def leaf(t):
    return t.detach().clone().requires_grad_(True)


def reference_grads(x, weight, bias, init, seq_idx, silu, dout, dfinal):
    """Gradients of <out, dout> + <final, dfinal> through the fp64 reference."""
    leaves = [leaf(t.double()) if t is not None else None for t in (x, weight, bias, init)]
    out, final = reference.forward(leaves[0], leaves[1], leaves[2], seq_idx, leaves[3], silu)
    loss = (out * dout.double()).sum()
    if dfinal is not None:
        loss = loss + (final * dfinal.double()).sum()
    present = [t for t in leaves if t is not None]
    grads = iter(torch.autograd.grad(loss, present))
    return [next(grads) if t is not None else None for t in leaves]


def check_grads(seed, dtype, batch, dim, length, width, channel_last=False, with_bias=True, with_initial=False,
                with_final=False, with_seq_idx=False, silu=True, weight_dtype=None):
    weight_dtype = weight_dtype or dtype
    x = leaf(random((batch, dim, length), dtype, channel_last=channel_last))
    weight = leaf(random((dim, width), weight_dtype))
    bias = leaf(random((dim,), weight_dtype)) if with_bias else None
    init = leaf(random((batch, dim, width - 1), dtype)) if with_initial else None
    seq_idx = random_seq_idx(batch, length) if with_seq_idx else None
    dout = random((batch, dim, length), dtype, channel_last=channel_last)
    dfinal = random((batch, dim, width - 1), dtype) if with_final else None

    result = cc1d.causal_conv1d_fn(x, weight, bias, seq_idx=seq_idx, initial_states=init,
                                   return_final_states=with_final, activation="silu" if silu else None)
    outputs, grad_outputs = ([result[0], result[1]], [dout, dfinal]) if with_final else ([result], [dout])
    torch.autograd.backward(outputs, grad_outputs)

    expected = reference_grads(x, weight, bias, init, seq_idx, silu, dout, dfinal)
    assert x.grad.dtype == dtype and weight.grad.dtype == weight_dtype
    assert_close(x.grad, expected[0], dtype, seed, "dx")
    assert_weight_grad_close(weight.grad, expected[1], batch, length, seed, "dweight")
    if with_bias:
        assert bias.grad.dtype == weight_dtype
        assert_weight_grad_close(bias.grad, expected[2], batch, length, seed, "dbias")
    if with_initial:
        assert_close(init.grad, expected[3], dtype, seed, "dinitial_states")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("silu", [False, True])
def test_gradients(seed, dtype, channel_last, width, silu):
    check_grads(seed, dtype, 2, 48, 77, width, channel_last=channel_last, silu=silu)


@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("with_final", [False, True])
def test_gradients_of_states(seed, channel_last, with_final):
    check_grads(seed, torch.float32, 3, 16, 41, 4, channel_last=channel_last, with_initial=True,
                with_final=with_final)


def test_gradient_of_final_states_alone(seed):
    check_grads(seed, torch.float32, 2, 8, 20, 4, with_final=True)


@pytest.mark.parametrize("length", [1, 2, 3])
def test_gradients_of_states_for_short_sequences(seed, length):
    check_grads(seed, torch.float32, 2, 8, length, 4, with_initial=True, with_final=True)


@pytest.mark.parametrize("channel_last", [False, True])
def test_gradients_with_seq_idx(seed, channel_last):
    check_grads(seed, torch.float32, 3, 32, 90, 4, channel_last=channel_last, with_seq_idx=True)


def test_gradients_without_bias(seed):
    check_grads(seed, torch.float16, 2, 32, 64, 3, with_bias=False)


def test_gradients_with_fp32_weights_and_bf16_inputs(seed):
    check_grads(seed, torch.bfloat16, 2, 32, 64, 4, weight_dtype=torch.float32)


def test_dout_from_a_sum_is_expanded_and_still_works(seed):
    # .sum() hands backward an expanded tensor with zero strides: made contiguous first.
    x = leaf(random((2, 16, 30), torch.float32, channel_last=True))
    weight = leaf(random((16, 4), torch.float32))
    cc1d.causal_conv1d_fn(x, weight, activation="silu").sum().backward()
    expected = reference_grads(x, weight, None, None, None, True, torch.ones(2, 16, 30, device="cuda"), None)
    assert_close(x.grad, expected[0], torch.float32, seed, "dx")


def test_gradients_are_deterministic(seed):
    x = random((4, 64, 513), torch.bfloat16)
    weight = random((64, 4), torch.bfloat16)
    dout = random((4, 64, 513), torch.bfloat16)
    runs = []
    for _ in range(3):
        w = leaf(weight)
        cc1d.causal_conv1d_fn(leaf(x), w, activation="silu").backward(dout)
        runs.append(w.grad)
    assert torch.equal(runs[0], runs[1]) and torch.equal(runs[0], runs[2])
