"""The Python plumbing on the CPU, with the library replaced by the fp64 reference.

What runs for real: the public functions, the custom ops' implementations (layouts,
allocation, empty inputs, the fp32 -> parameter dtype casts), their autograd formula,
torch.compile of them, and the in-place state updates. What is mocked: the four calls
into libcc1d.so (_launch.forward / backward / update / varlen), which here also check that every
tensor handed to the library has the layout the library's validation demands. The GPU
tests run the same paths against the real kernels.
"""

import pytest

from cc1d_test_support import assert_close, assert_equal, random, random_seq_idx, seed, spy_on_fast_path, torch  # noqa: F401

import cc1d
import cc1d_test_reference as reference
from cc1d import _checks, _launch, ops

_mock_active = False


def _cpu_kernel(implementation):
    def kernel(*args):
        if not _mock_active:
            raise NotImplementedError("cc1d's ops run on GPUs; this CPU kernel exists for the plumbing tests")
        return implementation(*args)

    return kernel


# Registered once per process: custom ops keep their kernels, so the CPU kernel refuses
# to run outside the mock below.
for _op in (ops.causal_conv1d_fwd, ops.causal_conv1d_bwd, ops.causal_conv1d_update, ops.causal_conv1d_varlen_fwd):
    torch.library.register_kernel(_op, "cpu", _cpu_kernel(_op._init_fn))


def layout(t):
    """The library's reading of a (B, D, L) tensor's strides (src/api/validate.cpp)."""
    if t.stride(2) == 1:
        return "channel_first"
    if t.stride(1) == 1:
        return "channel_last"
    if t.size(2) == 1:
        return "channel_first"
    if t.size(1) == 1:
        return "channel_last"
    raise AssertionError(f"strides {t.stride()} reach the library")


def unit_stride(t):
    assert t is None or t.numel() == 0 or any(s == 1 or n == 1 for s, n in zip(t.stride(), t.shape)), t.stride()


def mock_forward(x, weight, bias, out, silu, seq_idx=None, initial_states=None, final_states=None, read=None):
    assert layout(out) == layout(x)
    unit_stride(initial_states)
    unit_stride(final_states)
    result, final = reference.forward(x, weight, bias, seq_idx, initial_states, silu)
    out.copy_(result)
    if final_states is not None:
        final_states.copy_(final)


def mock_backward(x, weight, bias, dout, dx, dweight, dbias, silu, seq_idx=None, initial_states=None,
                  dinitial_states=None, dfinal_states=None):
    assert layout(dout) == layout(x) == layout(dx)
    assert dweight.dtype == torch.float32 and (dbias is None or dbias.dtype == torch.float32)
    for t in (initial_states, dinitial_states, dfinal_states):
        unit_stride(t)
    grads = reference.backward(x, weight, bias, dout, seq_idx, initial_states, dfinal_states, silu)
    for target, source in zip((dx, dweight, dbias, dinitial_states), grads):
        if target is not None:
            target.copy_(source)


def mock_update(x, conv_state, weight, bias, out, silu, cache_seqlens=None, conv_state_indices=None, read=None):
    unit_stride(x)
    unit_stride(conv_state)
    result, state = reference.update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices)
    out.copy_(result)
    conv_state.copy_(state)


def mock_varlen(x, weight, bias, out, silu, cu_seqlens, conv_states=None, cache_indices=None, has_initial_state=None,
                pad_slot_id=-1):
    # The library reads x and out with tokens or channels contiguous, alike; int32 flags.
    tokens_contiguous = x.stride(1) == 1
    assert tokens_contiguous or x.stride(0) == 1
    assert out.stride(1 if tokens_contiguous else 0) == 1
    assert has_initial_state is None or has_initial_state.dtype == torch.int32
    unit_stride(conv_states)
    result, states = reference.varlen(x, weight, bias, cu_seqlens, cache_indices, has_initial_state, conv_states,
                                      silu, pad_slot_id)
    out.copy_(result)
    if conv_states is not None:
        conv_states.copy_(states)


@pytest.fixture(autouse=True)
def mock_library(monkeypatch):
    global _mock_active
    monkeypatch.setattr(_launch, "forward", mock_forward)
    monkeypatch.setattr(_launch, "backward", mock_backward)
    monkeypatch.setattr(_launch, "update", mock_update)
    monkeypatch.setattr(_launch, "varlen", mock_varlen)

    def all_on_cpu(tensors, x):
        assert x.device.type == "cpu" and all(t is None or t.device.type == "cpu" for _, t in tensors)

    monkeypatch.setattr(_checks, "same_device", all_on_cpu)
    monkeypatch.setattr(_checks, "on_one_gpu", lambda x, *others: all(t is None or t.device == x.device
                                                                       for t in others))
    _mock_active = True
    yield
    _mock_active = False


def leaf(t):
    return t.detach().clone().requires_grad_(True)


@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_forward_and_all_gradients(seed, channel_last, dtype):
    batch, dim, length, width = 2, 6, 13, 4
    x = leaf(random((batch, dim, length), dtype, "cpu", channel_last))
    weight, bias = leaf(random((dim, width), dtype, "cpu")), leaf(random((dim,), dtype, "cpu"))
    init = leaf(random((batch, dim, width - 1), dtype, "cpu"))
    seq_idx = random_seq_idx(batch, length, device="cpu")
    out, final = cc1d.causal_conv1d_fn(x, weight, bias, seq_idx, init, True, None, "silu")
    assert out.stride() == x.stride()
    dout, dfinal = random(out.shape, dtype, "cpu"), random(final.shape, dtype, "cpu")
    torch.autograd.backward([out, final], [dout, dfinal])

    leaves = [leaf(t.double()) for t in (x, weight, bias, init)]
    expected_out, expected_final = reference.forward(leaves[0], leaves[1], leaves[2], seq_idx, leaves[3], True)
    ((expected_out * dout.double()).sum() + (expected_final * dfinal.double()).sum()).backward()
    assert_close(out, expected_out, dtype, seed, "out")
    assert_equal(final, expected_final.to(dtype), seed, "final")
    for name, got, want in zip(("dx", "dweight", "dbias", "dinitial"), (x, weight, bias, init), leaves):
        assert got.grad.dtype == dtype, name
        assert_close(got.grad, want.grad, dtype, seed, name)


def test_gradient_reaches_only_what_asks_for_it(seed):
    x = leaf(random((2, 4, 9), torch.float32, "cpu"))
    weight = random((4, 3), torch.float32, "cpu")       # frozen
    init = random((2, 4, 2), torch.float32, "cpu")      # no grad: dinitial not computed
    cc1d.causal_conv1d_fn(x, weight, None, initial_states=init).sum().backward()
    assert x.grad is not None and weight.grad is None and init.grad is None


def test_odd_strides_and_expanded_gradients(seed):
    x = leaf(random((2, 4, 20), torch.float32, "cpu"))
    weight = leaf(random((4, 4), torch.float32, "cpu"))
    cc1d.causal_conv1d_fn(x[:, :, ::2], weight).sum().backward()     # a copy, then a dout of zero strides
    leaves = [leaf(x.detach()[:, :, ::2].double()), leaf(weight.double())]
    reference.forward(*leaves)[0].sum().backward()
    assert_close(x.grad[:, :, ::2], leaves[0].grad, torch.float32, seed, "dx")
    assert torch.all(x.grad[:, :, 1::2] == 0)


def test_final_states_out_receives_the_states_and_their_gradient(seed):
    x = leaf(random((2, 4, 7), torch.float32, "cpu"))
    weight = leaf(random((4, 4), torch.float32, "cpu"))
    given = torch.full((2, 3, 4), float("nan")).transpose(1, 2)
    out, final = cc1d.causal_conv1d_fn(x, weight, return_final_states=True, final_states_out=given)
    assert final is given and not torch.isnan(given).any()
    final.sum().backward()
    expected = torch.zeros(2, 4, 7)
    expected[:, :, -3:] = 1
    assert_equal(x.grad, expected, seed, "dx from the final states alone")


def test_empty_sequence(seed):
    x = leaf(random((2, 4, 0), torch.float32, "cpu"))
    weight = leaf(random((4, 4), torch.float32, "cpu"))
    init = leaf(random((2, 4, 3), torch.float32, "cpu"))
    out, final = cc1d.causal_conv1d_fn(x, weight, initial_states=init, return_final_states=True)
    assert out.shape == (2, 4, 0)
    assert_equal(final, init.detach(), seed, "final")
    final.sum().backward()
    assert_equal(init.grad, torch.ones(2, 4, 3), seed, "dinitial")
    assert_equal(weight.grad, torch.zeros(4, 4), seed, "dweight")


@pytest.mark.parametrize("token_dim", [2, 3])
def test_update_writes_the_state_in_place(seed, token_dim):
    x = random((3, 4) if token_dim == 2 else (3, 4, 2), torch.float16, "cpu")
    state = random((5, 4, 4), torch.float16, "cpu")
    before = state.clone()
    indices = torch.tensor([4, -1, 0], dtype=torch.int32)
    seqlens = torch.tensor([1, 2, 7], dtype=torch.int32)
    out = cc1d.causal_conv1d_update(x, state, random((4, 3), torch.float16, "cpu"), None, "silu", seqlens, indices)
    assert out.shape == x.shape
    assert not torch.equal(state, before)
    assert torch.equal(state[1], before[1]) and torch.equal(state[2], before[2]) and torch.equal(state[3], before[3])


@pytest.mark.parametrize("layout_of_x", ["tokens", "channels", "neither"])
def test_varlen_writes_its_slots_in_place(seed, layout_of_x):
    dim, width = 6, 4
    base = random((dim, 120), torch.float32, "cpu")
    x = {"tokens": base[:, :60], "channels": base.t().contiguous().t()[:, :60], "neither": base[:, ::2]}[layout_of_x]
    starts = torch.tensor([1, 30, 31, 58], dtype=torch.int32)
    slots = random((5, dim, 4), torch.float32, "cpu")
    indices, flags = torch.tensor([4, -1, 0], dtype=torch.int32), torch.tensor([True, True, False])
    weight, bias = random((dim, width), torch.float32, "cpu"), random((dim,), torch.float32, "cpu")
    expected, expected_slots = reference.varlen(x, weight, bias, starts, indices, flags, slots.clone(), True)
    out = cc1d.causal_conv1d_varlen_fn(x, weight, bias, starts, indices, flags, slots)
    assert out.shape == x.shape
    assert out.stride() == {"tokens": (60, 1), "channels": (1, dim), "neither": (60, 1)}[layout_of_x]
    assert_close(out, expected, torch.float32, seed, "out")
    assert_equal(slots, expected_slots, seed, "conv_states")


def test_compiled_packed_prefill_mutates_the_slots(seed):
    torch._dynamo.reset()

    def prefill(x, weight, starts, slots):
        return cc1d.causal_conv1d_varlen_fn(x, weight, None, starts, conv_states=slots) * 2

    x, weight = random((4, 20), torch.float32, "cpu"), random((4, 3), torch.float32, "cpu")
    starts, slots = torch.tensor([0, 5, 20], dtype=torch.int32), random((2, 4, 2), torch.float32, "cpu")
    expected, expected_slots = reference.varlen(x, weight, None, starts, conv_states=slots.clone(), silu=True)
    out = torch.compile(prefill, fullgraph=True, backend="aot_eager")(x, weight, starts, slots)
    assert_close(out, expected * 2, torch.float32, seed, "out")
    assert_equal(slots, expected_slots, seed, "conv_states")


def test_compiled_block_with_autograd(seed):
    torch._dynamo.reset()
    weight = leaf(random((8, 4), torch.float32, "cpu"))

    def block(u):
        x, z = u.chunk(2, dim=-1)
        y = cc1d.causal_conv1d_fn(x.transpose(1, 2), weight, activation="silu").transpose(1, 2)
        return (y * torch.sigmoid(z)).square().sum()

    u = random((2, 11, 16), torch.float32, "cpu")
    eager_u, compiled_u = leaf(u), leaf(u)
    block(eager_u).backward()
    eager_grads = (eager_u.grad, weight.grad.clone())
    weight.grad = None
    torch.compile(block, fullgraph=True, backend="aot_eager")(compiled_u).backward()
    torch.testing.assert_close(compiled_u.grad, eager_grads[0])
    torch.testing.assert_close(weight.grad, eager_grads[1])


def test_compiled_decoding_step_mutates_the_state(seed):
    torch._dynamo.reset()

    def step(x, state, weight):
        return cc1d.causal_conv1d_update(x, state, weight, None, "silu") + 1

    x, weight = random((2, 4), torch.float32, "cpu"), random((4, 4), torch.float32, "cpu")
    state = random((2, 4, 3), torch.float32, "cpu")
    expected, expected_state = reference.update(x, state.clone(), weight, None, True)
    out = torch.compile(step, fullgraph=True, backend="aot_eager")(x, state, weight)
    assert_close(out, expected + 1, torch.float32, seed, "out")
    assert_equal(state, expected_state, seed, "state")


# ---- the eager fast path and the custom ops, side by side ----------------------------


@pytest.fixture
def fast_path_calls(monkeypatch):
    """The names of the public calls that took the eager fast path."""
    return spy_on_fast_path(monkeypatch)


def without_fast_path(monkeypatch, call):
    from cc1d import _fast_path

    with monkeypatch.context() as patch:
        patch.setattr(_fast_path, "AVAILABLE", False)
        return call()


@pytest.mark.parametrize("channel_last", [False, True])
def test_forward_paths_agree(seed, monkeypatch, fast_path_calls, channel_last):
    x = random((2, 6, 11), torch.bfloat16, "cpu", channel_last)
    weight, bias = random((6, 4), torch.bfloat16, "cpu"), random((6,), torch.bfloat16, "cpu")
    init = random((2, 6, 3), torch.bfloat16, "cpu")

    def call():
        return cc1d.causal_conv1d_fn(x, weight, bias, None, init, True, None, "silu")

    fast_out, fast_final = call()
    assert fast_path_calls == ["forward"]
    op_out, op_final = without_fast_path(monkeypatch, call)
    assert fast_path_calls == ["forward"]
    for fast, op, name in ((fast_out, op_out, "out"), (fast_final, op_final, "final")):
        assert fast.stride() == op.stride(), name
        assert_equal(fast, op, seed, name)


def test_update_paths_agree_and_both_mark_the_state_written(seed, monkeypatch, fast_path_calls):
    x, weight = random((3, 4, 2), torch.float32, "cpu"), random((4, 4), torch.float32, "cpu")
    start = random((3, 4, 5), torch.float32, "cpu")
    fast_state, op_state = start.clone(), start.clone()
    versions = fast_state._version, op_state._version
    fast_out = cc1d.causal_conv1d_update(x, fast_state, weight, None, "silu")
    op_out = without_fast_path(monkeypatch, lambda: cc1d.causal_conv1d_update(x, op_state, weight, None, "silu"))
    assert fast_path_calls == ["update"]
    assert_equal(fast_out, op_out, seed, "out")
    assert_equal(fast_state, op_state, seed, "conv_state")
    assert fast_state._version > versions[0] and op_state._version > versions[1]


def test_gradients_go_through_the_custom_op(seed, fast_path_calls):
    x = leaf(random((2, 4, 9), torch.float32, "cpu"))
    cc1d.causal_conv1d_fn(x, random((4, 3), torch.float32, "cpu")).sum().backward()
    assert x.grad is not None and fast_path_calls == []
    with torch.no_grad():
        cc1d.causal_conv1d_fn(x, random((4, 3), torch.float32, "cpu"))
    assert fast_path_calls == ["forward"]


def test_compiled_calls_record_the_custom_ops(seed, fast_path_calls):
    torch._dynamo.reset()
    graphs = []

    def keep_graph(graph_module, example_inputs):
        graphs.append(graph_module)
        return graph_module.forward

    def step(x, state, weight):
        y = cc1d.causal_conv1d_fn(x.unsqueeze(2), weight).squeeze(2)
        return cc1d.causal_conv1d_update(y, state, weight, None, "silu")

    x, weight, state = random((2, 4), torch.float32, "cpu"), random((4, 4), torch.float32, "cpu"), \
        random((2, 4, 3), torch.float32, "cpu")
    with torch.no_grad():
        torch.compile(step, backend=keep_graph, fullgraph=True)(x, state, weight)
    assert fast_path_calls == []
    targets = [str(node.target) for graph in graphs for node in graph.graph.nodes if node.op == "call_function"]
    assert any("cc1d.causal_conv1d_fwd" in target for target in targets), targets
    assert any("cc1d.causal_conv1d_update" in target for target in targets), targets
