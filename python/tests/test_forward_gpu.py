"""causal_conv1d_fn on a GPU against the fp64 reference: dtypes, layouts, widths,
activation, bias, seq_idx, initial and final states, odd lengths, strided views."""

import pytest

from cc1d_test_support import (DTYPES, assert_close, assert_equal, call_path, random, random_seq_idx, requires_gpu,
                               seed, torch)  # noqa: F401  (seed and call_path are fixtures)

import cc1d
import cc1d_test_reference as reference

# Every test runs on the eager fast path and through the custom ops (call_path).
pytestmark = [requires_gpu, pytest.mark.usefixtures("call_path")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("width", [2, 3, 4])
@pytest.mark.parametrize("activation", [None, "silu", "swish"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_forward(seed, dtype, channel_last, width, activation, with_bias):
    batch, dim, length = 2, 40, 67
    x = random((batch, dim, length), dtype, channel_last=channel_last)
    weight = random((dim, width), dtype)
    bias = random((dim,), dtype) if with_bias else None
    out = cc1d.causal_conv1d_fn(x, weight, bias, activation=activation)
    expected, _ = reference.forward(x, weight, bias, silu=activation is not None)
    assert out.shape == x.shape and out.dtype == dtype
    assert (out.stride(1) == 1) == channel_last, "out keeps the layout of x"
    assert_close(out, expected, dtype, seed, "out")


@pytest.mark.parametrize("length", [1, 2, 3, 5, 129, 1000])
@pytest.mark.parametrize("channel_last", [False, True])
def test_odd_lengths(seed, length, channel_last):
    x = random((3, 24, length), torch.float32, channel_last=channel_last)
    weight, bias = random((24, 4), torch.float32), random((24,), torch.float32)
    out = cc1d.causal_conv1d_fn(x, weight, bias, activation="silu")
    expected, _ = reference.forward(x, weight, bias, silu=True)
    assert_close(out, expected, torch.float32, seed, "out")


def test_weight_in_fp32_with_half_inputs(seed):
    x = random((2, 32, 50), torch.bfloat16)
    weight, bias = random((32, 4), torch.float32), random((32,), torch.float32)
    out = cc1d.causal_conv1d_fn(x, weight, bias, activation="silu")
    assert out.dtype == torch.bfloat16
    expected, _ = reference.forward(x, weight, bias, silu=True)
    assert_close(out, expected, torch.bfloat16, seed, "out")


@pytest.mark.parametrize("view", ["sliced_length", "sliced_batch", "no_unit_stride", "misaligned"])
def test_strided_views(seed, view):
    base = random((4, 32, 90), torch.float16)
    x = {
        "sliced_length": base[:, :, 5:70],          # channel-first, row stride > length
        "sliced_batch": base[::2],                  # batch stride doubled
        "no_unit_stride": base[:, :, ::2],          # copied once to channel-first
        "misaligned": base.reshape(-1)[1:1 + 4 * 32 * 60].view(4, 32, 60),   # start not 16-byte aligned
    }[view]
    weight = random((32, 4), torch.float16)
    out = cc1d.causal_conv1d_fn(x, weight, activation="silu")
    expected, _ = reference.forward(x, weight, silu=True)
    assert_close(out, expected, torch.float16, seed, "out")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("with_initial", [False, True])
def test_states(seed, dtype, channel_last, with_initial):
    batch, dim, length, width = 3, 16, 37, 4
    x = random((batch, dim, length), dtype, channel_last=channel_last)
    weight, bias = random((dim, width), dtype), random((dim,), dtype)
    init = random((batch, dim, width - 1), dtype, channel_last=channel_last) if with_initial else None
    out, final = cc1d.causal_conv1d_fn(x, weight, bias, initial_states=init, return_final_states=True,
                                       activation="silu")
    expected, expected_final = reference.forward(x, weight, bias, initial_states=init, silu=True)
    assert_close(out, expected, dtype, seed, "out")
    assert_equal(final, expected_final.to(dtype), seed, "final_states")


@pytest.mark.parametrize("channel_last", [False, True])
def test_final_states_out_is_written_in_place(seed, channel_last):
    x = random((2, 16, 9), torch.float16, channel_last=channel_last)
    weight = random((16, 4), torch.float16)
    given = torch.full((2, 3, 16), float("nan"), dtype=torch.float16, device="cuda").transpose(1, 2)
    out, final = cc1d.causal_conv1d_fn(x, weight, return_final_states=True, final_states_out=given)
    assert final is given
    _, expected_final = reference.forward(x, weight)
    assert_equal(given, expected_final.to(torch.float16), seed, "final_states_out")


def test_short_sequence_final_states_come_from_initial_states(seed):
    x = random((2, 8, 2), torch.float32)
    weight = random((8, 5), torch.float32)
    init = random((2, 8, 4), torch.float32)
    _, final = cc1d.causal_conv1d_fn(x, weight, initial_states=init, return_final_states=True)
    assert_equal(final, torch.cat([init[:, :, 2:], x], dim=2), seed, "final_states")


@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("with_initial", [False, True])
def test_seq_idx(seed, channel_last, with_initial):
    batch, dim, length, width = 3, 32, 100, 4
    x = random((batch, dim, length), torch.float32, channel_last=channel_last)
    weight, bias = random((dim, width), torch.float32), random((dim,), torch.float32)
    init = random((batch, dim, width - 1), torch.float32) if with_initial else None
    seq_idx = random_seq_idx(batch, length)
    out = cc1d.causal_conv1d_fn(x, weight, bias, seq_idx=seq_idx, initial_states=init, activation="silu")
    expected, _ = reference.forward(x, weight, bias, seq_idx=seq_idx, initial_states=init, silu=True)
    assert_close(out, expected, torch.float32, seed, "out")
    padding = seq_idx < 0
    assert torch.all(out.transpose(1, 2)[padding] == 0), "padding positions are exactly 0"


def test_empty_length_returns_the_initial_states(seed):
    x = random((2, 8, 0), torch.float32)
    init = random((2, 8, 3), torch.float32)
    out, final = cc1d.causal_conv1d_fn(x, random((8, 4), torch.float32), initial_states=init,
                                       return_final_states=True)
    assert out.shape == (2, 8, 0)
    assert_equal(final, init, seed, "final_states")


def test_on_a_side_stream(seed):
    x = random((2, 64, 300), torch.bfloat16)
    weight = random((64, 4), torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        out = cc1d.causal_conv1d_fn(x, weight, activation="silu")
    torch.cuda.current_stream().wait_stream(stream)
    expected, _ = reference.forward(x, weight, silu=True)
    assert_close(out, expected, torch.bfloat16, seed, "out")


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_on_the_second_device(seed):
    x = random((2, 16, 40), torch.float32, device="cuda:1")
    weight = random((16, 4), torch.float32, device="cuda:1")
    out = cc1d.causal_conv1d_fn(x, weight)
    assert out.device == x.device
    expected, _ = reference.forward(x, weight)
    assert_close(out, expected, torch.float32, seed, "out")
