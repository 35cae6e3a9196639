"""The eager fast path without a GPU: when the public functions skip torch's dispatcher
and when they keep the custom ops, and the argument structs that _launch fills for the
library (read back through the ctypes mirror of the C header)."""

import ctypes
import threading

import pytest

from cc1d_test_support import torch

from cc1d import _abi, _checks, _fast_path, _launch

from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

pytestmark = pytest.mark.skipif(not _fast_path.AVAILABLE, reason="this torch lacks what the fast path asks about")


@pytest.fixture(autouse=True)
def cpu_tensors_count_as_one_gpu(monkeypatch):
    """The decisions below are made on CPU tensors; the device rule has its own test
    in test_host_checks.py."""
    monkeypatch.setattr(_checks, "on_one_gpu", lambda x, *others: True)


def forward_args(weight_requires_grad=False, initial_requires_grad=False):
    """causal_conv1d_fn's arguments as _fast_path.forward_applies takes them."""
    x = torch.randn(2, 8, 16)
    weight = torch.randn(8, 4, requires_grad=weight_requires_grad)
    initial = torch.randn(2, 8, 3, requires_grad=initial_requires_grad)
    return x, weight, torch.randn(8), torch.zeros(2, 16, dtype=torch.int32), initial, False, None


def update_args(weight_requires_grad=False):
    return (torch.randn(2, 8), torch.randn(2, 8, 3), torch.randn(8, 4, requires_grad=weight_requires_grad),
            torch.randn(8), torch.zeros(2, dtype=torch.int32), torch.zeros(2, dtype=torch.int32))


# ---- the decision -------------------------------------------------------------------


def test_plain_eager_calls_skip_the_dispatcher():
    assert _fast_path.nothing_intercepts_torch()
    assert _fast_path.forward_applies(*forward_args())
    assert _fast_path.update_applies(*update_args())


def test_absent_optional_tensors_and_parameters_are_plain():
    x, weight = forward_args()[:2]
    assert _fast_path.forward_applies(x, torch.nn.Parameter(weight, requires_grad=False), None, None, None, False,
                                      None)


def test_inputs_that_require_grad_keep_the_custom_op_for_autograd():
    assert not _fast_path.forward_applies(*forward_args(weight_requires_grad=True))
    assert not _fast_path.forward_applies(*forward_args(initial_requires_grad=True))
    x, *rest = forward_args()
    assert not _fast_path.forward_applies(x.requires_grad_(True), *rest)
    # The update op has no autograd formula; through the custom op, its output refuses backward.
    assert not _fast_path.update_applies(*update_args(weight_requires_grad=True))


@pytest.mark.parametrize("no_grad", [torch.no_grad, torch.inference_mode])
def test_without_grad_mode_nothing_is_recorded_so_the_fast_path_applies(no_grad):
    with no_grad():
        assert _fast_path.forward_applies(*forward_args(weight_requires_grad=True, initial_requires_grad=True))
        assert _fast_path.update_applies(*update_args(weight_requires_grad=True))


def test_tensor_subclasses_keep_the_custom_op():
    class Wrapped(torch.Tensor):
        pass

    x, weight, bias, seq_idx, initial, _, _ = forward_args()
    assert not _fast_path.forward_applies(x.as_subclass(Wrapped), weight, bias, seq_idx, initial, False, None)
    assert not _fast_path.forward_applies(x, weight, bias, seq_idx, initial.as_subclass(Wrapped), False, None)
    assert not _fast_path.forward_applies(x, weight, bias, seq_idx, initial, True,
                                          torch.empty(2, 8, 3).as_subclass(Wrapped))
    x, state, weight, bias, seqlens, slots = update_args()
    assert not _fast_path.update_applies(x, state, weight, bias, seqlens.as_subclass(Wrapped), slots)


def test_fake_tensors_keep_the_custom_op():
    with FakeTensorMode():
        args = forward_args()
        assert not _fast_path.nothing_intercepts_torch()
        assert not _fast_path.forward_applies(*args)
    assert not _fast_path.forward_applies(*args)     # fake tensors outside their mode too


class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_dispatch_and_function_modes_keep_the_custom_op():
    args = forward_args()
    with PassThrough():
        assert not _fast_path.forward_applies(*args)
    with torch.device("cpu"):            # a TorchFunctionMode
        assert not _fast_path.forward_applies(*args)
    assert _fast_path.forward_applies(*args)


def test_function_transforms_keep_the_custom_op():
    seen = []

    def probe(t):
        seen.append(_fast_path.nothing_intercepts_torch())
        return t.sum()

    torch.vmap(probe)(torch.zeros(3, 2))
    torch.func.grad(probe)(torch.zeros(3))
    torch.func.functionalize(probe)(torch.zeros(3))
    assert seen == [False, False, False]


def test_forward_mode_ad_keeps_the_custom_op():
    import torch.autograd.forward_ad as forward_ad

    with forward_ad.dual_level():
        assert not _fast_path.nothing_intercepts_torch()
    assert _fast_path.nothing_intercepts_torch()


@pytest.mark.filterwarnings("ignore::FutureWarning")     # torch.jit.trace is deprecated, still used
def test_jit_tracing_keeps_the_custom_op():
    seen = []

    def probe(t):
        seen.append(_fast_path.nothing_intercepts_torch())
        return t + 1

    torch.jit.trace(probe, torch.zeros(2), check_trace=False)
    assert seen == [False]


def test_profiling_keeps_the_custom_op_so_traces_name_it():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert not _fast_path.nothing_intercepts_torch()
    assert _fast_path.nothing_intercepts_torch()


def test_torch_compile_takes_the_custom_op_branch():
    # Dynamo folds torch.compiler.is_compiling() to True, so the traced code never
    # takes the fast path, whatever the tensors.
    torch._dynamo.reset()

    def pick(t):
        return t + 1 if _fast_path.nothing_intercepts_torch() else t - 1

    compiled = torch.compile(pick, backend="eager", fullgraph=True)
    assert compiled(torch.zeros(2)).tolist() == [-1, -1]
    assert pick(torch.zeros(2)).tolist() == [1, 1]


def test_arguments_that_break_a_rule_take_the_checked_path():
    x, weight, bias, seq_idx, initial, _, _ = forward_args()
    assert not _fast_path.forward_applies(x, weight, bias, seq_idx, initial[:, :, :2], False, None)
    x, state, weight, bias, seqlens, slots = update_args()
    assert not _fast_path.update_applies(x, state, weight, bias, seqlens.long(), slots)


def test_without_the_introspection_functions_nothing_takes_the_fast_path(monkeypatch):
    monkeypatch.setattr(_fast_path, "AVAILABLE", False)
    assert not _fast_path.forward_applies(*forward_args())
    assert not _fast_path.update_applies(*update_args())


@pytest.mark.parametrize("through", ["torch._C", "public wrapper"])
def test_marking_a_state_written_bumps_its_version_as_the_custom_op_does(monkeypatch, through):
    if through == "public wrapper":
        monkeypatch.setattr(_fast_path, "_increment_versions", None)     # as on a torch whose _C takes one tensor
    state = torch.zeros(2, 8, 3)
    before = state._version
    _fast_path.mark_written(state)
    assert state._version > before
    with torch.inference_mode():
        inference_state = torch.zeros(2, 8, 3)
    _fast_path.mark_written(inference_state)       # no version counter: nothing to bump, no error


# ---- the argument structs -----------------------------------------------------------


@pytest.fixture
def launched(monkeypatch):
    """_launch's calls with the library call replaced by a recorder: returns a list of
    (struct address, device index, what) per call."""
    calls = []
    monkeypatch.setattr(_launch, "_call", lambda function, address, device, what: calls.append((address, device, what)))
    return calls


DTYPE_CODES = {torch.float32: _abi.DType.FP32, torch.float16: _abi.DType.FP16, torch.bfloat16: _abi.DType.BF16,
               torch.int32: _abi.DType.INT32}


def assert_describes(view, tensor, name):
    if tensor is None:
        assert (view.data, view.dtype, view.rank) == (None, 0, 0), name
        assert list(view.shape) == [0] * _abi.MAX_RANK and list(view.strides) == [0] * _abi.MAX_RANK, name
        return
    rank = tensor.dim()
    padding = [0] * (_abi.MAX_RANK - rank)
    assert view.data == tensor.data_ptr(), name
    assert view.dtype == DTYPE_CODES[tensor.dtype], name
    assert view.rank == rank, name
    assert list(view.shape) == list(tensor.shape) + padding, name
    assert list(view.strides) == list(tensor.stride()) + padding, name


def assert_struct(struct_type, address, named_tensors):
    args = struct_type.from_address(address)
    assert args.struct_size == ctypes.sizeof(struct_type)
    for name, tensor in named_tensors.items():
        assert_describes(getattr(args, name), tensor, name)
    return args


def test_update_struct_is_filled_then_reset_for_absent_tensors(launched):
    x3 = torch.randn(2, 8, 5).transpose(1, 2).contiguous().transpose(1, 2)     # (2, 8, 5), channel-last
    state = torch.randn(4, 6, 8).transpose(1, 2)                                # (4, 8, 6), stride(1) == 1
    weight, bias = torch.randn(8, 4, dtype=torch.float32), torch.randn(8)
    out = torch.empty(2, 8, 5)
    seqlens, slots = torch.zeros(2, dtype=torch.int32), torch.tensor([3, 1], dtype=torch.int32)
    _launch.update(x3, state, weight, bias, out, True, seqlens, slots)
    (address, _, what), = launched
    assert what == "causal_conv1d_update"
    args = assert_struct(_abi.UpdateArgs, address, dict(x=x3, conv_state=state, weight=weight, bias=bias, out=out,
                                                        cache_seqlens=seqlens, conv_state_indices=slots))
    assert args.activation == _abi.Activation.SILU and args.pad_slot_id == -1

    # The same thread's next call reuses the struct: a lower rank and absent tensors
    # leave nothing of the call before.
    x2 = torch.randn(2, 8, dtype=torch.float16)
    state16, weight16, out16 = torch.randn(2, 8, 3).half(), torch.randn(8, 4).half(), torch.empty(2, 8).half()
    _launch.update(x2, state16, weight16, None, out16, False)
    assert launched[1][0] == address
    args = assert_struct(_abi.UpdateArgs, address, dict(x=x2, conv_state=state16, weight=weight16, bias=None,
                                                        out=out16, cache_seqlens=None, conv_state_indices=None))
    assert args.activation == _abi.Activation.NONE and args.pad_slot_id == -1


def test_forward_struct(launched):
    x = torch.randn(2, 16, 8, dtype=torch.bfloat16).transpose(1, 2)
    weight, out = torch.randn(8, 3, dtype=torch.bfloat16), torch.empty(2, 16, 8, dtype=torch.bfloat16).transpose(1, 2)
    seq_idx, initial = torch.zeros(2, 16, dtype=torch.int32), torch.randn(2, 8, 2, dtype=torch.bfloat16)
    _launch.forward(x, weight, None, out, True, seq_idx, initial, None)
    (address, device, what), = launched
    assert device == -1 and what == "causal_conv1d forward"
    args = assert_struct(_abi.ForwardArgs, address, dict(x=x, weight=weight, bias=None, out=out, seq_idx=seq_idx,
                                                         initial_states=initial, final_states=None))
    assert args.activation == _abi.Activation.SILU


def test_backward_struct_keeps_the_header_defaults(launched):
    x, weight, dout, dx = torch.randn(2, 8, 16), torch.randn(8, 4), torch.randn(2, 8, 16), torch.empty(2, 8, 16)
    dweight, dbias = torch.empty(8, 4), torch.empty(8)
    _launch.backward(x, weight, torch.randn(8), dout, dx, dweight, dbias, False)
    (address, _, what), = launched
    assert what == "causal_conv1d backward"
    args = assert_struct(_abi.BackwardArgs, address, dict(x=x, dout=dout, dx=dx, dweight=dweight, dbias=dbias,
                                                          seq_idx=None, dinitial_states=None, dfinal_states=None))
    assert (args.deterministic, args.accumulate, args.workspace, args.workspace_bytes) == (1, 0, None, 0)


def test_each_thread_fills_its_own_struct(launched):
    tensors = (torch.randn(2, 8), torch.randn(2, 8, 3), torch.randn(8, 4), None, torch.empty(2, 8), True)
    _launch.update(*tensors)
    worker = threading.Thread(target=_launch.update, args=tensors)
    worker.start()
    worker.join()
    assert len(launched) == 2 and launched[0][0] != launched[1][0]


def test_descriptor_formats_match_the_c_tensor():
    # pack_into writes a whole cc1d_tensor, the unused dimensions as zeros.
    for rank, layout in enumerate(_launch.DESCRIPTOR_FORMATS):
        assert layout.size == ctypes.sizeof(_abi.Tensor)
        view = _abi.Tensor()
        ctypes.memset(ctypes.addressof(view), 0xFF, ctypes.sizeof(view))
        layout.pack_into(view, 0, 0x1234, 2, rank, *range(1, rank + 1), *range(10, 10 + rank))
        assert (view.data, view.dtype, view.rank) == (0x1234, 2, rank)
        assert list(view.shape) == list(range(1, rank + 1)) + [0] * (_abi.MAX_RANK - rank)
        assert list(view.strides) == list(range(10, 10 + rank)) + [0] * (_abi.MAX_RANK - rank)
    assert _launch.ABSENT_FORMAT.size == ctypes.sizeof(_abi.Tensor)


# ---- the checked fill of the eager fast path: the same bytes as describing each tensor ----


def struct_bytes(struct_type, address):
    return ctypes.string_at(address, ctypes.sizeof(struct_type))


def dirty(struct_type, address):
    """Garbage from x's descriptor to the end, so that a byte the fill leaves unwritten shows."""
    start = struct_type.x.offset
    ctypes.memset(address + start, 0xA5, ctypes.sizeof(struct_type) - start)


def described(struct_type, offsets, tensors, silu):
    """A fresh struct filled the custom ops' way: each tensor described as it is."""
    args = _abi.new(struct_type)
    for offset, tensor in zip(offsets, tensors):
        _launch.describe(args, offset, tensor)
    args.activation = _abi.Activation.SILU if silu else _abi.Activation.NONE
    return bytes(args)


def channel_last(shape, dtype=torch.float32):
    batch, dim, length = shape
    return torch.randn(batch, length, dim, dtype=dtype).transpose(1, 2)


UPDATE_FILL_CASES = {
    "token": lambda: (torch.randn(2, 8), torch.randn(2, 8, 3), torch.randn(8, 4), None, None, None),
    "token, 16-bit, bias": lambda: (torch.randn(3, 8).half(), torch.randn(3, 8, 5).half(),
                                    torch.randn(8, 4).half(), torch.randn(8).half(), None, None),
    "tokens, weight in another dtype": lambda: (torch.randn(2, 8, 3, dtype=torch.bfloat16),
                                                torch.randn(2, 8, 3, dtype=torch.bfloat16), torch.randn(8, 4),
                                                torch.randn(8), None, None),
    "channel-last tokens, transposed state": lambda: (channel_last((2, 8, 3)), torch.randn(2, 6, 8).transpose(1, 2),
                                                      torch.randn(8, 4), None, None, None),
    "circular buffer and slots": lambda: (torch.randn(2, 8), torch.randn(5, 8, 4), torch.randn(8, 4),
                                          torch.randn(8), torch.tensor([3, 9], dtype=torch.int32),
                                          torch.tensor([4, -1], dtype=torch.int32)),
    "strided vectors": lambda: (torch.randn(2, 8), torch.randn(2, 8, 3), torch.randn(4, 8).t(),
                                torch.randn(16)[::2], torch.zeros(4, dtype=torch.int32)[::2], None),
}


@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("case", UPDATE_FILL_CASES)
def test_update_checked_fill_writes_what_describing_each_tensor_writes(launched, case, silu):
    x, state, weight, bias, seqlens, slots = UPDATE_FILL_CASES[case]()
    read = _checks.update_arguments_pass(x, state, weight, bias, seqlens, slots)
    assert read
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    args, address = _launch._thread_args.update
    dirty(_abi.UpdateArgs, address)
    _launch.update(x, state, weight, bias, out, silu, seqlens, slots, read)
    expected = described(_abi.UpdateArgs, _launch._UPDATE_TENSORS, (x, state, weight, bias, out, seqlens, slots), silu)
    assert struct_bytes(_abi.UpdateArgs, address) == expected
    assert launched == [(address, -1, "causal_conv1d_update")]


FORWARD_FILL_CASES = {
    "plain": lambda: (torch.randn(2, 8, 16), torch.randn(8, 4), None, None, None, False),
    "everything": lambda: (torch.randn(2, 8, 16).half(), torch.randn(8, 3).half(), torch.randn(8).half(),
                           torch.zeros(2, 16, dtype=torch.int32), torch.randn(2, 8, 2).half(), True),
    "channel-last, weight in another dtype": lambda: (channel_last((2, 8, 16), torch.bfloat16), torch.randn(8, 4),
                                                     torch.randn(8), None, channel_last((2, 8, 3), torch.bfloat16),
                                                     True),
    "strided seq_idx": lambda: (torch.randn(1, 8, 5), torch.randn(8, 2), None,
                                torch.zeros(1, 10, dtype=torch.int32)[:, ::2], None, False),
}


@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("case", FORWARD_FILL_CASES)
def test_forward_checked_fill_writes_what_describing_each_tensor_writes(launched, case, silu):
    x, weight, bias, seq_idx, initial, want_final = FORWARD_FILL_CASES[case]()
    read = _checks.forward_arguments_pass(x, weight, bias, seq_idx, initial, want_final, None)
    assert read
    out = torch.empty_like(x)
    final = channel_last((x.size(0), x.size(1), weight.size(1) - 1), x.dtype) if want_final else None
    args, address = _launch._thread_args.forward
    dirty(_abi.ForwardArgs, address)
    _launch.forward(x, weight, bias, out, silu, seq_idx, initial, final, read)
    tensors = (x, weight, bias, out, seq_idx, initial, final)
    assert struct_bytes(_abi.ForwardArgs, address) == described(_abi.ForwardArgs, _launch._FORWARD_TENSORS, tensors,
                                                                silu)
    assert launched == [(address, -1, "causal_conv1d forward")]


def test_checked_fill_formats_cover_the_structs_from_x_to_the_end():
    assert _launch._FORWARD_START + _launch._FORWARD_FORMAT.size == ctypes.sizeof(_abi.ForwardArgs)
    for rank in (2, 3):
        assert _launch._UPDATE_START + _launch._UPDATE_FORMATS[rank].size == ctypes.sizeof(_abi.UpdateArgs)


def test_a_refused_version_bump_is_an_error_unless_the_tensor_has_no_version_counter(monkeypatch):
    def refuse(tensors):
        raise RuntimeError("refused")

    # As older torch does for an inference tensor outside inference mode.
    monkeypatch.setattr(_fast_path, "_increment_versions", refuse)
    with torch.inference_mode():
        inference_state = torch.zeros(2, 8, 3)
    _fast_path.mark_written(inference_state)
    with pytest.raises(RuntimeError, match="refused"):
        _fast_path.mark_written(torch.zeros(2, 8, 3))
