"""torch.compile(fullgraph=True) of a Mamba-style block using causal_conv1d_fn, forward and
backward, and CUDA-graph capture and replay of decoding steps with causal_conv1d_update."""

import pytest

from cc1d_test_support import (assert_close, assert_equal, call_path, random, requires_gpu, seed,
                               torch)  # noqa: F401  (seed and call_path are fixtures)

import cc1d
import cc1d_test_reference as reference

pytestmark = requires_gpu


class MambaStyleBlock(torch.nn.Module):
    """in_proj -> causal conv (silu) on the x half -> gate with the z half -> out_proj."""

    def __init__(self, dim=64, width=4):
        super().__init__()
        self.in_proj = torch.nn.Linear(dim, 2 * dim)
        self.conv_weight = torch.nn.Parameter(torch.randn(dim, width) * 0.5)
        self.conv_bias = torch.nn.Parameter(torch.randn(dim) * 0.1)
        self.out_proj = torch.nn.Linear(dim, dim)

    def forward(self, u):                         # u (B, L, dim): x reaches the op channel-last
        x, z = self.in_proj(u).chunk(2, dim=-1)
        x = cc1d.causal_conv1d_fn(x.transpose(1, 2), self.conv_weight, self.conv_bias, activation="silu")
        return self.out_proj(x.transpose(1, 2) * torch.nn.functional.silu(z))


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiled_block_matches_eager(seed, dynamic):
    torch._dynamo.reset()
    block = MambaStyleBlock().cuda()
    compiled = torch.compile(block, fullgraph=True, dynamic=dynamic)
    for length in (33, 64):
        u = random((2, length, 64), torch.float32)
        eager_u, compiled_u = u.clone().requires_grad_(True), u.clone().requires_grad_(True)
        eager_out = block(eager_u)
        eager_out.square().sum().backward()
        eager_grads = [p.grad.clone() for p in block.parameters()] + [eager_u.grad]
        block.zero_grad()
        compiled_out = compiled(compiled_u)
        compiled_out.square().sum().backward()
        compiled_grads = [p.grad.clone() for p in block.parameters()] + [compiled_u.grad]
        block.zero_grad()
        assert_close(compiled_out, eager_out, torch.float32, seed, f"out, length {length}")
        for index, (c, e) in enumerate(zip(compiled_grads, eager_grads)):
            torch.testing.assert_close(c, e, rtol=1e-4, atol=1e-4, msg=lambda m: f"grad {index} (seed {seed}): {m}")


def test_compiled_decoding_step_updates_the_state(seed):
    torch._dynamo.reset()

    def step(x, state, weight, bias):
        return cc1d.causal_conv1d_update(x, state, weight, bias, "silu") * 2

    compiled = torch.compile(step, fullgraph=True)
    x, weight, bias = random((4, 32), torch.float16), random((32, 4), torch.float16), random((32,), torch.float16)
    state = random((4, 32, 3), torch.float16)
    expected, expected_state = reference.update(x, state.clone(), weight, bias, silu=True)
    out = compiled(x, state, weight, bias)
    assert_close(out, expected * 2, torch.float16, seed, "out")
    assert_equal(state, expected_state, seed, "conv_state")


@pytest.mark.usefixtures("call_path")
def test_cuda_graph_capture_and_replay_of_update(seed):
    batch, dim, width, state_len = 4, 64, 4, 3
    weight, bias = random((dim, width), torch.bfloat16), random((dim,), torch.bfloat16)
    static_x = random((batch, dim), torch.bfloat16)
    state = random((batch, dim, state_len), torch.bfloat16)
    seqlens = torch.zeros(batch, dtype=torch.int32, device="cuda")

    # Warm up on a side stream (compiles and loads the kernel before capture).
    scratch = state.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            cc1d.causal_conv1d_update(static_x, scratch, weight, bias, "silu", seqlens)
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = cc1d.causal_conv1d_update(static_x, state, weight, bias, "silu", seqlens)

    expected_state = state.clone()
    for step in range(5):
        x = random((batch, dim), torch.bfloat16)
        expected, expected_state = reference.update(x, expected_state, weight, bias, True, seqlens)
        static_x.copy_(x)
        graph.replay()
        seqlens += 1                      # the caller advances the circular buffer
        torch.cuda.synchronize()
        assert_close(static_out, expected, torch.bfloat16, seed, f"out, step {step}")
        assert_equal(state, expected_state, seed, f"conv_state, step {step}")
