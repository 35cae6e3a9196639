"""causal_conv1d_varlen_fn on a GPU against the fp64 reference: both layouts of x,
every dtype, widths 2-4, sequences of every length against the window (empty, shorter
than it, longer), tokens outside every sequence, conv-state slots read and written
(longer slots than the window, slot indices with padding, bool and int32 flags). The
slots must be updated exactly and only where the call owns them."""

import pytest

from cc1d_test_support import DTYPES, assert_close, assert_equal, requires_gpu, seed, torch  # noqa: F401

import cc1d
import cc1d_test_reference as reference

pytestmark = requires_gpu


def tokens(dim, total, dtype, channel_last):
    """Uniform in [-1, 1), (dim, total): tokens contiguous, or a (total, dim) tensor transposed."""
    if channel_last:
        return (torch.rand(total, dim, device="cuda") * 2 - 1).to(dtype).t()
    return (torch.rand(dim, total, device="cuda") * 2 - 1).to(dtype)


def run_and_check(seed, dtype, x, weight, bias, starts, indices=None, flags=None, states=None, activation="silu"):
    before = states.clone() if states is not None else None
    expected, expected_states = reference.varlen(x, weight, bias, starts, indices, flags, before,
                                                 activation is not None)
    out = cc1d.causal_conv1d_varlen_fn(x, weight, bias, starts, indices, flags, states, activation)
    assert out.shape == x.shape and out.dtype == dtype and out.stride() == x.stride()
    assert_close(out, expected, dtype, seed, "out")
    if states is not None:
        assert_equal(states, expected_states, seed, "conv_states")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("width", [2, 3, 4])
def test_sequences_of_every_length_with_slots(seed, dtype, channel_last, width):
    # Lengths 0, 1, width - 1 (shorter than the window), then longer ones; tokens before
    # the first and after the last sequence.
    lengths = [0, 1, width - 1, 5, 130, 1000, 37]
    starts = torch.tensor([3] + [3 + sum(lengths[:i + 1]) for i in range(len(lengths))], dtype=torch.int32,
                          device="cuda")
    total, dim = int(starts[-1]) + 4, 67
    x = tokens(dim, total, dtype, channel_last)
    weight, bias = (torch.rand(dim, width, device="cuda") * 2 - 1).to(dtype), (torch.rand(dim, device="cuda") - 0.5).to(dtype)
    slots = torch.rand(len(lengths) + 2, dim, width + 2, device="cuda").to(dtype)     # longer than the window
    flags = torch.tensor([i % 2 == 0 for i in range(len(lengths))], device="cuda")
    run_and_check(seed, dtype, x, weight, bias, starts, flags=flags, states=slots)


@pytest.mark.parametrize("channel_last", [False, True])
def test_slot_indices_with_padding_and_int32_flags(seed, channel_last):
    dtype, dim, width = torch.bfloat16, 40, 4
    starts = torch.tensor([0, 9, 9, 300, 302], dtype=torch.int32, device="cuda")
    x = tokens(dim, 302, dtype, channel_last)
    weight = (torch.rand(dim, width, device="cuda") * 2 - 1).to(dtype)
    slots = torch.rand(8, dim, width - 1, device="cuda").to(dtype)
    indices = torch.tensor([6, -1, 0, 3], dtype=torch.int32, device="cuda")     # sequence 1 is padding
    flags = torch.tensor([1, 1, 0, 1], dtype=torch.int32, device="cuda")
    run_and_check(seed, dtype, x, weight, None, starts, indices, flags, slots)


@pytest.mark.parametrize("activation", [None, "silu"])
def test_without_slots(seed, activation):
    dtype, dim, width = torch.float16, 24, 3
    starts = torch.tensor([0, 100, 101, 640], dtype=torch.int32, device="cuda")
    x = tokens(dim, 640, dtype, False)
    weight = (torch.rand(dim, width, device="cuda") * 2 - 1).to(dtype)
    run_and_check(seed, dtype, x, weight, None, starts, activation=activation)
