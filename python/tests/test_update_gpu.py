"""causal_conv1d_update on a GPU against the fp64 reference: one and several tokens,
circular buffers (cache_seqlens), cache slots with padding (conv_state_indices), every
dtype. The state must be updated exactly and only where the call owns it."""

import pytest

from cc1d_test_support import (DTYPES, assert_close, assert_equal, call_path, random, requires_gpu, seed,
                               torch)  # noqa: F401  (seed and call_path are fixtures)

import cc1d
import cc1d_test_reference as reference

# Every test runs on the eager fast path and through the custom ops (call_path).
pytestmark = [requires_gpu, pytest.mark.usefixtures("call_path")]


def run_and_check(seed, dtype, x, state, weight, bias=None, activation=None, cache_seqlens=None, indices=None):
    before = state.clone()
    expected, expected_state = reference.update(x, before, weight, bias, activation is not None, cache_seqlens,
                                                indices)
    out = cc1d.causal_conv1d_update(x, state, weight, bias, activation, cache_seqlens, indices)
    assert out.shape == x.shape and out.dtype == dtype
    assert_close(out, expected, dtype, seed, "out")
    assert_equal(state, expected_state, seed, "conv_state")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", [2, 3, 4])
@pytest.mark.parametrize("activation", [None, "silu"])
def test_single_token(seed, dtype, width, activation):
    batch, dim = 3, 64
    x = random((batch, dim), dtype)
    state = random((batch, dim, width - 1), dtype)
    run_and_check(seed, dtype, x, state, random((dim, width), dtype), random((dim,), dtype), activation)


@pytest.mark.parametrize("steps", [1, 2, 5])
@pytest.mark.parametrize("state_len", [3, 4, 8])
def test_several_tokens_and_longer_state(seed, steps, state_len):
    x = random((2, 32, steps), torch.float16)
    state = random((2, 32, state_len), torch.float16)
    run_and_check(seed, torch.float16, x, state, random((32, 4), torch.float16), random((32,), torch.float16), "silu")


@pytest.mark.parametrize("steps", [1, 3])
def test_circular_buffer(seed, steps):
    batch, dim, state_len = 4, 32, 6
    x = random((batch, dim, steps), torch.bfloat16)
    state = random((batch, dim, state_len), torch.bfloat16)
    seqlens = torch.tensor([0, 2, 5, 17], dtype=torch.int32, device="cuda")
    run_and_check(seed, torch.bfloat16, x, state, random((dim, 4), torch.bfloat16), None, "silu", cache_seqlens=seqlens)


def test_cache_slots_and_padding(seed):
    batch, dim, slots = 3, 32, 6
    x = random((batch, dim), torch.float32)
    state = random((slots, dim, 3), torch.float32)
    indices = torch.tensor([5, -1, 2], dtype=torch.int32, device="cuda")
    run_and_check(seed, torch.float32, x, state, random((dim, 4), torch.float32), random((dim,), torch.float32),
                  "silu", indices=indices)


def test_slots_with_circular_buffer(seed):
    x = random((2, 16, 2), torch.float32)
    state = random((4, 16, 5), torch.float32)
    run_and_check(seed, torch.float32, x, state, random((16, 3), torch.float32), None, None,
                  cache_seqlens=torch.tensor([3, 9], dtype=torch.int32, device="cuda"),
                  indices=torch.tensor([3, 0], dtype=torch.int32, device="cuda"))


def test_state_in_channel_last_storage(seed):
    # A cache stored as (B, S, D) and seen as (B, D, S): updated in place through the view.
    storage = random((3, 5, 32), torch.float16)
    state = storage.transpose(1, 2)
    run_and_check(seed, torch.float16, random((3, 32), torch.float16), state, random((32, 4), torch.float16))


def test_decoding_continues_a_prefill(seed):
    # The final states of a prefill are the conv_state of the decoding steps after it.
    dim, width = 32, 4
    x = random((2, dim, 40), torch.float32)
    weight, bias = random((dim, width), torch.float32), random((dim,), torch.float32)
    _, state = cc1d.causal_conv1d_fn(x[:, :, :37], weight, bias, return_final_states=True, activation="silu")
    state = state.contiguous()
    steps = [cc1d.causal_conv1d_update(x[:, :, t], state, weight, bias, "silu") for t in range(37, 40)]
    full = cc1d.causal_conv1d_fn(x, weight, bias, activation="silu")
    assert_close(torch.stack(steps, dim=2), full[:, :, 37:].double(), torch.float32, seed, "decoded tokens")
