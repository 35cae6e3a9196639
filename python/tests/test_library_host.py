"""The loaded library through ctypes, on any machine: identity, status codes turned into
Cc1dError with the library's message, and the Runtime handle. Nothing here launches."""

import ctypes
import os
import subprocess
import sys

import pytest

from cc1d_test_support import requires_library, torch

import cc1d
from cc1d import _abi, _library

pytestmark = requires_library


def test_versions():
    assert cc1d.abi_version() >= _abi.ABI_VERSION
    major, minor, patch = cc1d.version().split(".")
    assert major.isdigit() and minor.isdigit() and patch.isdigit()
    assert cc1d.library_path()


def test_status_names_match_the_library():
    lib = _library.library()
    for status in _abi.Status:
        assert lib.cc1d_status_string(status).decode() == status.name.lower()


def test_stats_start_as_a_dict_of_counters():
    stats = cc1d.stats()
    assert set(stats) == {"memory_hits", "disk_hits", "compiles", "compile_failures", "compile_seconds",
                          "disk_load_seconds", "launches"}
    assert all(value >= 0 for value in stats.values())


def test_a_refused_call_raises_with_the_library_message():
    # x absent: the library's validation refuses it before any device work, GPU or not.
    args = _abi.new(_abi.ForwardArgs)
    status = _library.library().cc1d_forward(_library.runtime(), ctypes.byref(args), None)
    assert status == _abi.Status.INVALID_ARGUMENT
    with pytest.raises(cc1d.Cc1dError, match="cc1d invalid_argument: forward: .*x") as caught:
        _library.check(status, "forward")
    assert caught.value.status == _abi.Status.INVALID_ARGUMENT


def test_an_uninitialized_struct_is_refused():
    args = _abi.ForwardArgs()       # struct_size left 0
    status = _library.library().cc1d_forward(_library.runtime(), ctypes.byref(args), None)
    assert status == _abi.Status.INVALID_ARGUMENT
    assert b"struct_size" in _library.library().cc1d_last_error()


def test_address_functions_take_integers_and_leave_the_declared_ones_alone():
    # The launch path calls a second handle on each function, with integer addresses.
    args = _abi.new(_abi.ForwardArgs)
    forward = _library.address_function("cc1d_forward")
    assert forward(_library.runtime().value, ctypes.addressof(args), 0) == _abi.Status.INVALID_ARGUMENT
    assert b"x" in _library.library().cc1d_last_error()
    assert _library.library().cc1d_forward.argtypes[1] is ctypes.POINTER(_abi.ForwardArgs)


def test_a_fresh_process_can_ask_for_the_runtime_first():
    # The first launch of a process asks for the Runtime before anything has loaded the
    # library; both take the same lock on first use.
    code = "from cc1d import _library; _library.runtime(); print('ok')"
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(cc1d.__file__)))
    path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "CC1D_LIBRARY": cc1d.library_path(), "PYTHONPATH": path})
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_null_runtime_is_refused():
    args = _abi.new(_abi.ForwardArgs)
    assert _library.library().cc1d_forward(None, ctypes.byref(args), None) == _abi.Status.INVALID_ARGUMENT
    assert b"runtime handle is NULL" in _library.library().cc1d_last_error()


def test_without_a_gpu_the_backend_is_reported_unavailable():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: device_target succeeds here")
    with pytest.raises(cc1d.Cc1dError) as caught:
        cc1d.device_target()
    assert caught.value.status == _abi.Status.BACKEND_UNAVAILABLE


def test_precompile_of_a_malformed_variant():
    with pytest.raises(cc1d.Cc1dError, match="cc1d_precompile"):
        cc1d.precompile("op=no_such_op", "sm_90")


def test_cache_dir_is_text():
    assert isinstance(cc1d.cache_dir(), str)


@pytest.fixture
def host_launch(monkeypatch):
    """_launch's calls with CPU tensors: the library sees their shapes, strides and
    dtypes exactly as it would see GPU tensors, and its validation answers. Only
    refused calls are made, so a GPU (if any) never sees these host pointers. The
    current device is made the tensors' (-1 for the CPU) and the stream the null one."""
    from cc1d import _launch

    monkeypatch.setattr(_launch, "_current_device", lambda: -1)
    monkeypatch.setattr(_launch, "_current_stream", lambda device_index: 0)
    return _launch


def test_marshalled_strides_reach_the_library(host_launch):
    x = torch.randn(2, 16, 8).transpose(1, 2)                                # (2, 8, 16) channel-last
    out = torch.empty(2, 8, 16)                                              # channel-first: a mismatch
    with pytest.raises(cc1d.Cc1dError, match="out: expected the channel_last layout of x") as caught:
        host_launch.forward(x, torch.randn(8, 4), None, out, True)
    assert caught.value.status == _abi.Status.INVALID_ARGUMENT


def test_marshalled_shapes_and_dtypes_reach_the_library(host_launch):
    x, out = torch.randn(2, 8, 16), torch.empty(2, 8, 16)
    with pytest.raises(cc1d.Cc1dError, match=r"weight: expected 8 rows"):
        host_launch.forward(x, torch.randn(7, 4), None, out, False)
    with pytest.raises(cc1d.Cc1dError, match=r"bias: expected dtype fp16"):
        host_launch.forward(x.half(), torch.randn(8, 4).half(), torch.randn(8), out.half(), False)
    with pytest.raises(cc1d.Cc1dError, match=r"seq_idx: expected shape \(2, 16\)"):
        host_launch.forward(x, torch.randn(8, 4), None, out, False, seq_idx=torch.zeros(2, 15, dtype=torch.int32))
    with pytest.raises(cc1d.Cc1dError, match=r"conv_state: expected state_len >= max\(1, width - 1\) = 3"):
        host_launch.update(torch.randn(2, 8), torch.randn(2, 8, 2), torch.randn(8, 4), None, torch.empty(2, 8), False)
    with pytest.raises(cc1d.Cc1dError, match=r"dweight: expected shape \(8, 4\)"):
        host_launch.backward(x, torch.randn(8, 4), None, torch.randn(2, 8, 16), torch.empty(2, 8, 16),
                             torch.empty(8, 3), None, False)


def test_marshalled_varlen_arguments_reach_the_library(host_launch):
    # Every tensor, the activation and the pad slot as the library sees them: each
    # mistake is named by its validation, and a valid call gets as far as the backend.
    x, weight, starts = torch.randn(8, 40), torch.randn(8, 4), torch.tensor([0, 7, 40], dtype=torch.int32)
    slots, flags = torch.randn(3, 8, 3), torch.ones(2, dtype=torch.int32)

    def call(**change):
        args = dict(x=x, weight=weight, bias=None, out=torch.empty(8, 40), silu=True, cu_seqlens=starts,
                    conv_states=slots, cache_indices=None, has_initial_state=flags, pad_slot_id=-1)
        args.update(change)
        host_launch.varlen(**args)

    with pytest.raises(cc1d.Cc1dError, match=r"out: expected the channel_first layout of x"):
        call(out=torch.empty(40, 8).t())
    with pytest.raises(cc1d.Cc1dError, match=r"conv_states: expected \(slots, 8, >= 3\)"):
        call(conv_states=torch.randn(3, 8, 2))
    with pytest.raises(cc1d.Cc1dError, match=r"cache_indices: expected shape \(2\)"):
        call(cache_indices=torch.zeros(3, dtype=torch.int32))
    with pytest.raises(cc1d.Cc1dError, match=r"has_initial_state: expected shape \(2\)"):
        call(has_initial_state=torch.ones(1, dtype=torch.int32))
    if not torch.cuda.is_available():      # (valid host pointers must not reach a GPU)
        with pytest.raises(cc1d.Cc1dError) as caught:
            call(cache_indices=torch.tensor([2, -1], dtype=torch.int32), pad_slot_id=-1)
        assert caught.value.status == _abi.Status.BACKEND_UNAVAILABLE


def test_valid_arguments_without_a_gpu_report_the_backend(host_launch):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: valid host pointers must not reach it")
    x, out = torch.randn(2, 8, 16), torch.empty(2, 8, 16)
    with pytest.raises(cc1d.Cc1dError) as caught:
        host_launch.forward(x, torch.randn(8, 4), torch.randn(8), out, True)
    assert caught.value.status == _abi.Status.BACKEND_UNAVAILABLE


def test_the_fast_paths_checked_fill_passes_the_librarys_validation(host_launch):
    # The eager fast path fills the structs from what its checks read (one pack_into):
    # the library accepts them as it accepts the descriptors of the custom ops' path.
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: valid host pointers must not reach it")
    from cc1d import _checks

    x, weight, bias = torch.randn(2, 8, 16), torch.randn(8, 4), torch.randn(8)
    seq_idx, initial, final = torch.zeros(2, 16, dtype=torch.int32), torch.randn(2, 8, 3), torch.empty(2, 8, 3)
    read = _checks.forward_arguments_pass(x, weight, bias, seq_idx, initial, True, None)
    with pytest.raises(cc1d.Cc1dError) as caught:
        host_launch.forward(x, weight, bias, torch.empty_like(x), True, seq_idx, initial, final, read)
    assert caught.value.status == _abi.Status.BACKEND_UNAVAILABLE

    token, state = torch.randn(2, 8), torch.randn(4, 8, 3)
    seqlens, slots = torch.zeros(2, dtype=torch.int32), torch.tensor([3, -1], dtype=torch.int32)
    read = _checks.update_arguments_pass(token, state, weight, bias, seqlens, slots)
    with pytest.raises(cc1d.Cc1dError) as caught:
        host_launch.update(token, state, weight, bias, torch.empty_like(token), True, seqlens, slots, read)
    assert caught.value.status == _abi.Status.BACKEND_UNAVAILABLE
