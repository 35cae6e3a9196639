"""Argument checks, no GPU and no library needed: every bad argument is refused with a
message naming it, before anything is allocated or the library is loaded."""

import pytest

from cc1d_test_support import torch

import cc1d
from cc1d import _checks, _launch, _library


@pytest.fixture(autouse=True)
def library_never_loaded(monkeypatch):
    """Any attempt to reach the library fails the test: checks come first."""

    def refuse():
        raise AssertionError("the library was reached before the arguments were checked")

    monkeypatch.setattr(_library, "library", refuse)
    monkeypatch.setattr(_library, "runtime", refuse)
    monkeypatch.setattr(_launch, "_entry_points", None)    # bound on a launch: bound again, through the above


def conv_args(batch=2, dim=8, length=16, width=4, dtype=torch.float32):
    return torch.randn(batch, dim, length, dtype=dtype), torch.randn(dim, width, dtype=dtype)


def test_import_exposes_the_reference_interface():
    assert callable(cc1d.causal_conv1d_fn)
    assert callable(cc1d.causal_conv1d_update)
    assert hasattr(torch.ops.cc1d, "causal_conv1d_fwd")
    assert hasattr(torch.ops.cc1d, "causal_conv1d_bwd")
    assert hasattr(torch.ops.cc1d, "causal_conv1d_update")
    assert callable(cc1d.causal_conv1d_varlen_fn)
    assert hasattr(torch.ops.cc1d, "causal_conv1d_varlen_fwd")


@pytest.mark.parametrize("activation", ["relu", "gelu", 1, "SILU"])
def test_unknown_activation(activation):
    x, w = conv_args()
    with pytest.raises(NotImplementedError, match="activation must be None, 'silu' or 'swish'"):
        cc1d.causal_conv1d_fn(x, w, activation=activation)
    with pytest.raises(NotImplementedError, match="activation"):
        cc1d.causal_conv1d_update(x[:, :, 0], torch.randn(2, 8, 3), w, activation=activation)


FORWARD_ERRORS = [
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
]


@pytest.mark.parametrize("change, error, message", FORWARD_ERRORS)
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


UPDATE_ERRORS = [
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
]


@pytest.mark.parametrize("change, error, message", UPDATE_ERRORS)
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


def varlen_args(change=None):
    args = dict(x=torch.randn(8, 40), weight=torch.randn(8, 4), query_start_loc=torch.tensor([0, 7, 40], dtype=torch.int32),
                conv_states=torch.randn(3, 8, 3))
    args.update(change or {})
    return args


VARLEN_ERRORS = [
    (dict(x=torch.randn(2, 8, 40)), ValueError, r"x must have shape \(dim, total_tokens\)"),
    (dict(x=torch.randn(8, 40, dtype=torch.float64)), TypeError, "x must be float32"),
    (dict(weight=torch.randn(7, 4)), ValueError, "dim = 8"),
    (dict(query_start_loc=None), TypeError, "query_start_loc must be a torch.Tensor"),
    (dict(query_start_loc=torch.tensor([0, 40])), TypeError, "query_start_loc must have dtype torch.int32"),
    (dict(query_start_loc=torch.zeros(2, 2, dtype=torch.int32)), ValueError, "query_start_loc must have shape"),
    (dict(query_start_loc=torch.zeros(0, dtype=torch.int32)), ValueError, "num_sequences \\+ 1 offsets"),
    (dict(conv_states=torch.randn(3, 8, 2)), ValueError, "state_len >= width - 1 = 3"),
    (dict(conv_states=torch.randn(3, 7, 3)), ValueError, "dim = 8"),
    (dict(conv_states=torch.randn(3, 8, 3, dtype=torch.float16)), TypeError, "conv_states must have dtype"),
    (dict(conv_states=torch.randn(1, 8, 3)), ValueError, "at least num_sequences = 2 slots"),
    (dict(conv_states=torch.randn(3, 16, 6)[:, ::2, ::2]), ValueError, "cannot be copied to fix its strides"),
    (dict(conv_states=None, cache_indices=torch.zeros(2, dtype=torch.int32)), ValueError,
     "cache_indices is given, but conv_states is None"),
    (dict(conv_states=None, has_initial_state=torch.zeros(2, dtype=torch.bool)), ValueError,
     "has_initial_state is given, but conv_states is None"),
    (dict(cache_indices=torch.zeros(3, dtype=torch.int32)), ValueError, r"cache_indices must have shape \(num_sequences,\)"),
    (dict(cache_indices=torch.zeros(2, dtype=torch.int64)), TypeError, "cache_indices must have dtype torch.int32"),
    (dict(has_initial_state=torch.zeros(2, dtype=torch.float32)), TypeError, "has_initial_state must be bool or int32"),
    (dict(has_initial_state=torch.zeros(1, dtype=torch.bool)), ValueError, "has_initial_state must have shape"),
    (dict(weight=torch.randn(8, 1)), ValueError, "conv_states must be None for width 1"),
]


@pytest.mark.parametrize("change, error, message", VARLEN_ERRORS)
def test_varlen_argument_errors(change, error, message):
    with pytest.raises(error, match=message):
        cc1d.causal_conv1d_varlen_fn(**varlen_args(change))


def test_varlen_needs_a_gpu_tensor():
    # Every rule passes (slots past the sequences, bool flags): only the device is left.
    with pytest.raises(ValueError, match="x must be on a GPU"):
        cc1d.causal_conv1d_varlen_fn(**varlen_args(dict(cache_indices=torch.tensor([2, -1], dtype=torch.int32),
                                                        has_initial_state=torch.tensor([True, False]))))
    with pytest.raises(ValueError, match="x must be on a GPU"):
        cc1d.causal_conv1d_varlen_fn(**varlen_args(dict(conv_states=None, weight=torch.randn(8, 1))))


# ---- the fast path's one-pass predicates against the same cases ----------------------
# The eager fast path runs only when _checks' predicates say the arguments pass, and
# skips the checks above: every case refused above must be refused there too.


def forward_call(change):
    x, w = conv_args()
    args = dict(x=x, weight=w, bias=None, seq_idx=None, initial_states=None, return_final_states=False,
                final_states_out=None)
    args.update(change)
    return args


def update_call(change):
    args = dict(x=torch.randn(2, 8), conv_state=torch.randn(2, 8, 3), weight=torch.randn(8, 4), bias=None,
                cache_seqlens=None, conv_state_indices=None)
    args.update(change)
    return args


# An x that is no tensor never reaches the predicate: _fast_path.all_plain refuses it first.
@pytest.mark.parametrize("change", [change for change, _, _ in FORWARD_ERRORS if not isinstance(change.get("x"), str)])
def test_forward_predicate_refuses_what_the_checks_refuse(change):
    assert not _checks.forward_arguments_pass(**forward_call(change))


@pytest.mark.parametrize("change", [change for change, _, _ in UPDATE_ERRORS])
def test_update_predicate_refuses_what_the_checks_refuse(change):
    assert not _checks.update_arguments_pass(**update_call(change))


def test_predicates_refuse_states_for_width_one_and_states_without_a_unit_stride():
    x, w = conv_args(width=1)
    assert not _checks.forward_arguments_pass(x, w, None, None, None, True, None)
    assert not _checks.forward_arguments_pass(x, w, None, None, torch.randn(2, 8, 0), False, None)
    state = torch.randn(2, 16, 6)[:, ::2, ::2]
    assert not _checks.update_arguments_pass(torch.randn(2, 8), state, torch.randn(8, 4), None, None, None)


@pytest.mark.parametrize(
    "change",
    [
        dict(),
        dict(bias=torch.randn(8), seq_idx=torch.zeros(2, 16, dtype=torch.int32), initial_states=torch.randn(2, 8, 3)),
        dict(return_final_states=True, final_states_out=torch.randn(2, 3, 8).transpose(1, 2)),
        dict(x=torch.randn(2, 16, 8, dtype=torch.bfloat16).transpose(1, 2), weight=torch.randn(8, 4)),
    ],
)
def test_forward_predicate_passes_what_the_checks_pass(change):
    args = forward_call(change)
    assert _checks.forward_arguments_pass(**args)
    with pytest.raises(ValueError, match="x must be on a GPU"):     # the checks' last rule, on this CPU
        _checks.check_forward_arguments(**args)


@pytest.mark.parametrize(
    "change",
    [
        dict(),
        dict(x=torch.randn(2, 8, 3), bias=torch.randn(8), cache_seqlens=torch.zeros(2, dtype=torch.int32)),
        dict(conv_state=torch.randn(5, 8, 6), conv_state_indices=torch.tensor([4, -1], dtype=torch.int32)),
        dict(conv_state=torch.randn(2, 5, 8).transpose(1, 2)),
    ],
)
def test_update_predicate_passes_what_the_checks_pass(change):
    args = update_call(change)
    assert _checks.update_arguments_pass(**args)
    with pytest.raises(ValueError, match="x must be on a GPU"):
        _checks.check_update_arguments(**args)


def test_one_gpu_means_x_on_a_gpu_and_everything_on_it():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x, weight = torch.empty(2, 8, 16, device="cuda:0"), torch.empty(8, 4, device="cuda:0")
        assert _checks.on_one_gpu(x, weight, None)
        assert not _checks.on_one_gpu(x, torch.empty(8, 4))
        assert not _checks.on_one_gpu(torch.empty(2, 8, 16), torch.empty(8, 4))
        # Fake tensors take any GPU index without a GPU; with GPUs, only the indices that exist.
        if torch.cuda.device_count() != 1:
            assert not _checks.on_one_gpu(x, torch.empty(8, 4, device="cuda:1"))
