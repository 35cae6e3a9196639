"""The custom ops under tracing, without a GPU: fake CUDA tensors stand in for real ones,
so the fake implementations, the layouts they promise, the autograd formula's plumbing
and a graph-break-free trace of a model can all be checked on any machine."""

import types

import pytest

from cc1d_test_support import torch

import cc1d
from cc1d import ops

from torch._subclasses.fake_tensor import FakeTensorMode


@pytest.fixture
def fake():
    with FakeTensorMode() as mode:
        yield mode


def cuda(*shape, dtype=torch.float32, channel_last=False):
    if channel_last:
        b, d, l = shape
        return torch.empty(b, l, d, dtype=dtype, device="cuda").transpose(1, 2)
    return torch.empty(*shape, dtype=dtype, device="cuda")


@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_forward_outputs_follow_the_layout_of_x(fake, channel_last, dtype):
    x = cuda(2, 8, 16, dtype=dtype, channel_last=channel_last)
    out, final_states = cc1d.causal_conv1d_fn(x, cuda(8, 4), return_final_states=True, activation="silu")
    assert out.shape == x.shape and out.dtype == dtype
    assert out.stride() == x.stride()
    assert final_states.shape == (2, 8, 3) and final_states.dtype == dtype
    assert (final_states.stride(1) == 1) == channel_last


def test_forward_passes_both_layouts_through_and_copies_others(fake):
    # A channel-first or channel-last view reaches the op as it is; a view with neither
    # unit stride is copied once into the channel-first layout.
    cf = cuda(2, 8, 32)[:, :, :16]
    cl = cuda(2, 8, 16, channel_last=True)
    odd = cuda(2, 8, 32)[:, :, ::2]
    from cc1d._layout import as_conv_input

    assert as_conv_input(cf) is cf
    assert as_conv_input(cl) is cl
    copied = as_conv_input(odd)
    assert copied is not odd and copied.is_contiguous()


def test_one_stride_read_gives_the_input_and_layout_the_two_rules_give(fake):
    # The forward op reads x's strides once: the input as_conv_input gives, and the
    # layout is_channel_last (which the fake implementation asks) gives for it.
    from cc1d._layout import as_conv_input, conv_input_and_layout, is_channel_last

    one_channel = cuda(2, 32, 1)[:, ::2].transpose(1, 2)    # (2, 1, 16), stride(1) == 1: copied all the same
    for x in (cuda(2, 8, 32)[:, :, :16], cuda(2, 8, 16, channel_last=True), cuda(2, 8, 32)[:, :, ::2], one_channel):
        given, channel_last = conv_input_and_layout(x)
        assert (given is x) == (as_conv_input(x) is x)
        assert channel_last == is_channel_last(given)


@pytest.mark.parametrize("channel_last", [False, True])
def test_outputs_are_allocated_as_torch_empty_with_the_dtype_and_device_of_x(channel_last):
    from cc1d._layout import empty_conv

    like = torch.randn(2, 8, 5, dtype=torch.bfloat16, requires_grad=True)
    out = empty_conv((2, 8, 5), channel_last, like)
    expected = torch.empty(2, 5, 8, dtype=like.dtype).transpose(1, 2) if channel_last else torch.empty(
        2, 8, 5, dtype=like.dtype)
    assert (type(out), out.shape, out.stride(), out.dtype, out.device) == (
        torch.Tensor, expected.shape, expected.stride(), expected.dtype, like.device)
    assert not out.requires_grad


def test_final_states_out_is_filled_and_returned(fake):
    x = cuda(2, 8, 16)
    given = cuda(2, 3, 8).transpose(1, 2)
    out, final_states = cc1d.causal_conv1d_fn(x, cuda(8, 4), return_final_states=True, final_states_out=given)
    assert final_states is given


def test_update_output_has_the_shape_of_x(fake):
    state = cuda(4, 8, 5)
    for x in (cuda(2, 8), cuda(2, 8, 3)):
        out = cc1d.causal_conv1d_update(x, state, cuda(8, 4), cuda(8), "silu",
                                        torch.empty(2, dtype=torch.int32, device="cuda"),
                                        torch.empty(2, dtype=torch.int32, device="cuda"))
        assert out.shape == x.shape and out.dtype == x.dtype


@pytest.mark.parametrize("channel_last", [False, True])
def test_backward_formula_plumbing(fake, channel_last):
    # The autograd formula registered on the forward op, called as autograd would.
    x = cuda(2, 8, 16, dtype=torch.bfloat16, channel_last=channel_last)
    weight, bias = cuda(8, 4, dtype=torch.bfloat16), cuda(8, dtype=torch.bfloat16)
    init = cuda(2, 8, 3, dtype=torch.bfloat16)
    ctx = types.SimpleNamespace(saved_tensors=(x, weight, bias, None, init),
                                needs_input_grad=(True, True, True, False, True, False, False),
                                return_final_states=True, silu=True)
    dout = cuda(2, 8, 16, dtype=torch.bfloat16)    # the other layout when x is channel-last
    grads = ops._forward_backward(ctx, dout, cuda(2, 8, 3, dtype=torch.bfloat16))
    dx, dweight, dbias, dseq, dinit, dflag, dsilu = grads
    assert dx.shape == x.shape and dx.stride() == x.stride()
    assert dweight.shape == weight.shape and dweight.dtype == torch.bfloat16
    assert dbias.shape == bias.shape and dbias.dtype == torch.bfloat16
    assert dinit.shape == init.shape
    assert dseq is None and dflag is None and dsilu is None


def test_backward_without_initial_state_gradient(fake):
    x, weight = cuda(2, 8, 16), cuda(8, 4)
    ctx = types.SimpleNamespace(saved_tensors=(x, weight, None, None, cuda(2, 8, 3)),
                                needs_input_grad=(True, True, False, False, False, False, False),
                                return_final_states=False, silu=False)
    dx, dweight, dbias, _, dinit, _, _ = ops._forward_backward(ctx, cuda(2, 8, 16), None)
    assert dbias is None and dinit is None
    assert dweight.dtype == torch.float32


class MambaStyleBlock(torch.nn.Module):
    """in_proj -> causal conv (silu) on the x half -> gate with the z half -> out_proj."""

    def __init__(self, dim=16, width=4, device="cuda"):
        super().__init__()
        self.in_proj = torch.nn.Linear(dim, 2 * dim, device=device)
        self.conv_weight = torch.nn.Parameter(torch.randn(dim, width, device=device))
        self.conv_bias = torch.nn.Parameter(torch.randn(dim, device=device))
        self.out_proj = torch.nn.Linear(dim, dim, device=device)

    def forward(self, u):                       # u (B, L, dim)
        x, z = self.in_proj(u).chunk(2, dim=-1)
        x = cc1d.causal_conv1d_fn(x.transpose(1, 2), self.conv_weight, self.conv_bias, activation="silu")
        return self.out_proj(x.transpose(1, 2) * torch.nn.functional.silu(z))


def test_strict_export_of_a_block_traces_without_graph_breaks(fake):
    # Strict export runs the same frame tracing as torch.compile(fullgraph=True): a graph
    # break would be an error here.
    block = MambaStyleBlock()
    program = torch.export.export(block, (torch.empty(2, 12, 16, device="cuda"),), strict=True)
    targets = [str(node.target) for node in program.graph.nodes if node.op == "call_function"]
    assert "cc1d.causal_conv1d_fwd.default" in targets


def test_strict_export_of_a_decoding_step(fake):
    class Step(torch.nn.Module):
        def forward(self, x, state, weight, bias, seqlens):
            return cc1d.causal_conv1d_update(x, state, weight, bias, "silu", seqlens)

    args = (cuda(2, 16), cuda(2, 16, 3), cuda(16, 4), cuda(16), torch.empty(2, dtype=torch.int32, device="cuda"))
    program = torch.export.export(Step(), args, strict=True)
    targets = [str(node.target) for node in program.graph.nodes if node.op == "call_function"]
    assert "cc1d.causal_conv1d_update.default" in targets


@pytest.mark.parametrize("channel_last", [False, True])
def test_varlen_output_follows_the_layout_of_x(fake, channel_last):
    x = cuda(40, 8).t() if channel_last else cuda(8, 40)
    starts = torch.empty(3, dtype=torch.int32, device="cuda")
    out = cc1d.causal_conv1d_varlen_fn(x, cuda(8, 4), cuda(8), starts, conv_states=cuda(4, 8, 3),
                                       has_initial_state=torch.empty(2, dtype=torch.bool, device="cuda"))
    assert out.shape == x.shape and out.dtype == x.dtype
    assert out.stride() == x.stride()
    # Neither layout: the op reads a copy with contiguous tokens, and out is laid out so.
    odd = cuda(8, 80)[:, ::2]
    assert cc1d.causal_conv1d_varlen_fn(odd, cuda(8, 4), None, starts).stride() == (40, 1)


def test_strict_export_of_a_packed_prefill(fake):
    class Prefill(torch.nn.Module):
        def forward(self, x, weight, bias, starts, slots, flags, states):
            return cc1d.causal_conv1d_varlen_fn(x, weight, bias, starts, slots, flags, states)

    args = (cuda(16, 40), cuda(16, 4), cuda(16), torch.empty(3, dtype=torch.int32, device="cuda"),
            torch.empty(2, dtype=torch.int32, device="cuda"), torch.empty(2, dtype=torch.bool, device="cuda"),
            cuda(4, 16, 3))
    program = torch.export.export(Prefill(), args, strict=True)
    targets = [str(node.target) for node in program.graph.nodes if node.op == "call_function"]
    assert "cc1d.causal_conv1d_varlen_fwd.default" in targets
