"""The fp64 test oracle against independent formulations (grouped F.conv1d, per-sequence
splitting, gather/scatter for the circular buffer), on the CPU: the GPU tests are only
as good as the reference they compare with."""

import pytest

from cc1d_test_support import random, random_seq_idx, torch

import cc1d_test_reference as reference
import torch.nn.functional as F


def grouped_conv(x, weight, bias, history=None):
    width = weight.shape[1]
    if history is None:
        return F.conv1d(x, weight.unsqueeze(1), bias, padding=width - 1, groups=x.shape[1])[..., : x.shape[2]]
    return F.conv1d(torch.cat([history, x], dim=2), weight.unsqueeze(1), bias, groups=x.shape[1])


@pytest.mark.parametrize("width", [1, 2, 4, 5])
@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("with_states", [False, True])
def test_forward_matches_grouped_conv(width, silu, with_states):
    x = random((3, 5, 11), torch.float64, device="cpu")
    weight, bias = random((5, width), torch.float64, "cpu"), random((5,), torch.float64, "cpu")
    init = random((3, 5, width - 1), torch.float64, "cpu") if with_states and width > 1 else None
    out, final = reference.forward(x, weight, bias, initial_states=init, silu=silu)
    expected = grouped_conv(x, weight, bias, init)
    torch.testing.assert_close(out, F.silu(expected) if silu else expected)
    padded = torch.cat([init if init is not None else x.new_zeros(3, 5, width - 1), x], dim=2)
    torch.testing.assert_close(final, padded[:, :, padded.shape[2] - (width - 1):])


def test_final_states_of_a_short_sequence_reach_into_the_initial_states():
    x = random((1, 2, 2), torch.float64, "cpu")
    init = random((1, 2, 4), torch.float64, "cpu")
    _, final = reference.forward(x, random((2, 5), torch.float64, "cpu"), initial_states=init)
    torch.testing.assert_close(final, torch.cat([init[:, :, 2:], x], dim=2))


@pytest.mark.parametrize("with_states", [False, True])
def test_seq_idx_matches_convolving_each_sequence_alone(with_states):
    batch, dim, length, width = 3, 4, 23, 4
    x = random((batch, dim, length), torch.float64, "cpu")
    weight, bias = random((dim, width), torch.float64, "cpu"), random((dim,), torch.float64, "cpu")
    init = random((batch, dim, width - 1), torch.float64, "cpu") if with_states else None
    seq_idx = random_seq_idx(batch, length, device="cpu")
    out, _ = reference.forward(x, weight, bias, seq_idx=seq_idx, initial_states=init, silu=True)

    expected = torch.zeros_like(out)
    for b in range(batch):
        start = 0
        while start < length:
            end = start
            while end < length and seq_idx[b, end] == seq_idx[b, start]:
                end += 1
            if seq_idx[b, start] >= 0:
                history = init[b:b + 1] if init is not None and start == 0 else None
                piece = grouped_conv(x[b:b + 1, :, start:end], weight, bias, history)
                expected[b, :, start:end] = F.silu(piece[0])
            start = end
    torch.testing.assert_close(out, expected)


def test_update_plain_matches_concatenation():
    x = random((3, 4, 2), torch.float64, "cpu")
    state = random((3, 4, 5), torch.float64, "cpu")
    weight, bias = random((4, 3), torch.float64, "cpu"), random((4,), torch.float64, "cpu")
    out, new_state = reference.update(x, state, weight, bias, silu=True)
    joined = torch.cat([state, x], dim=2)
    expected = F.silu(F.conv1d(joined, weight.unsqueeze(1), bias, groups=4)[:, :, -2:])
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(new_state, joined[:, :, -5:])


def test_update_circular_matches_gather_scatter():
    batch, dim, state_len, width, steps = 3, 4, 6, 4, 3
    x = random((batch, dim, steps), torch.float64, "cpu")
    state = random((batch, dim, state_len), torch.float64, "cpu")
    weight = random((dim, width), torch.float64, "cpu")
    seqlens = torch.tensor([0, 4, 11], dtype=torch.int32)
    out, new_state = reference.update(x, state, weight, cache_seqlens=seqlens)

    taps = torch.arange(-(width - 1), 0).unsqueeze(0) + seqlens.long().unsqueeze(1)
    taps = torch.remainder(taps, state_len).unsqueeze(1).expand(-1, dim, -1)
    joined = torch.cat([state.gather(2, taps), x], dim=2)
    expected = F.conv1d(joined, weight.unsqueeze(1), groups=dim)[:, :, -steps:]
    writes = torch.remainder(torch.arange(steps).unsqueeze(0) + seqlens.long().unsqueeze(1), state_len)
    scattered = state.clone().scatter_(2, writes.unsqueeze(1).expand(-1, dim, -1), x)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(new_state, scattered)


def test_update_slots_and_padding():
    x = random((3, 4), torch.float64, "cpu")
    state = random((5, 4, 3), torch.float64, "cpu")
    weight = random((4, 4), torch.float64, "cpu")
    indices = torch.tensor([4, -1, 1], dtype=torch.int32)
    out, new_state = reference.update(x, state, weight, conv_state_indices=indices)
    assert torch.equal(out[1], torch.zeros(4, dtype=torch.float64))
    for untouched in (0, 2, 3):
        assert torch.equal(new_state[untouched], state[untouched])
    solo, solo_state = reference.update(x[:1], state[4:5], weight)
    torch.testing.assert_close(out[:1], solo)
    torch.testing.assert_close(new_state[4:5], solo_state)


@pytest.mark.parametrize("with_seq_idx", [False, True])
@pytest.mark.parametrize("with_states", [False, True])
@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("length", [2, 19])
def test_backward_formulas_match_autograd(with_seq_idx, with_states, silu, length):
    batch, dim, width = 2, 3, 4
    leaves = [random(shape, torch.float64, "cpu").requires_grad_(True)
              for shape in ((batch, dim, length), (dim, width), (dim,), (batch, dim, width - 1))]
    x, weight, bias, init = leaves
    init = init if with_states else None
    seq_idx = random_seq_idx(batch, length, device="cpu") if with_seq_idx else None
    dout = random((batch, dim, length), torch.float64, "cpu")
    dfinal = random((batch, dim, width - 1), torch.float64, "cpu") if with_states else None
    out, final = reference.forward(x, weight, bias, seq_idx, init, silu)
    loss = (out * dout).sum() + ((final * dfinal).sum() if with_states else 0)
    present = [x, weight, bias] + ([init] if with_states else [])
    expected = torch.autograd.grad(loss, present)
    got = reference.backward(x.detach(), weight.detach(), bias.detach(), dout, seq_idx,
                             init.detach() if with_states else None, dfinal, silu)
    for name, g, e in zip(("dx", "dweight", "dbias", "dinitial"), got, expected):
        torch.testing.assert_close(g, e, msg=lambda m: f"{name}: {m}")
