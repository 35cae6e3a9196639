"""The eager fast path: the public functions running the ops' work without torch's
dispatcher.

A call through torch.ops.cc1d.* costs tens of microseconds of host time (the
dispatcher, the custom op's Python wrappers, autograd's bookkeeping), more than the
kernel of a decoding step runs. When nothing would see the difference, the public
functions call ops.run_forward / ops.run_update directly: the same code the ops run,
on the same tensors. They go through the custom ops, after the full argument checks,
when:
  - torch.compile or torch.export is tracing (torch.compiler.is_compiling());
  - a TorchDispatchMode (fake tensors, functionalization, make_fx, ...) or a
    TorchFunctionMode (torch.device as a context manager, ...) is active;
  - a torch.func transform (vmap, grad, functionalize), torch.jit.trace or a
    forward-mode AD level is active;
  - torch's profiler is recording (its traces then show the cc1d ops by name);
  - a tensor argument is of a subclass of torch.Tensor (nn.Parameter excepted: to
    torch's dispatch it is a plain tensor);
  - autograd has to record the call: grad mode is on and an input requires grad;
  - an argument breaks a rule of _checks (the full checks then name it) or a tensor
    is not on x's GPU.
A torch without one of the functions these questions need never takes the fast path.
"""

import torch
from torch.autograd import forward_ad as _forward_ad

from . import _checks, ops

# torch.compile constant-folds this call to True while tracing, so a traced call never
# evaluates the questions after it and always records the custom op.
_is_compiling = torch.compiler.is_compiling
_dispatch_mode_count = getattr(torch._C, "_len_torch_dispatch_stack", None)
_function_mode_enabled = getattr(torch._C, "_is_torch_function_mode_enabled", None)
_innermost_functorch_transform = getattr(getattr(torch._C, "_functorch", None), "peek_interpreter_stack", None)
_jit_tracing_state = getattr(torch._C, "_get_tracing_state", None)
_profiler_enabled = getattr(torch.autograd, "_profiler_enabled", None)
_increment_version = getattr(torch.autograd.graph, "increment_version", None)
_grad_enabled = torch.is_grad_enabled


def _sequence_taking_increment_version():
    """torch._C._increment_version, where it takes a sequence of tensors (newer torch;
    older ones take one tensor): called directly, it saves the public wrapper's frame on
    every decoding step. An empty tuple tells the two apart without touching a tensor."""
    private = getattr(torch._C, "_increment_version", None)
    try:
        private(())
    except Exception:  # noqa: BLE001  (a missing function, or one that wants a tensor)
        return None
    return private


_increment_versions = _sequence_taking_increment_version()

AVAILABLE = (
    None not in (_dispatch_mode_count, _function_mode_enabled, _innermost_functorch_transform, _jit_tracing_state,
                 _profiler_enabled, _increment_version)
    and hasattr(_forward_ad, "_current_level")
)

# Exact types: a subclass may override __torch_dispatch__ / __torch_function__.
_PLAIN_TYPES = frozenset((torch.Tensor, torch.nn.Parameter, type(None)))


def nothing_intercepts_torch():
    """True when no compiler, mode, transform, tracer or profiler would see a call of the op."""
    return (
        AVAILABLE
        and not _is_compiling()
        and _dispatch_mode_count() == 0
        and not _function_mode_enabled()
        and _innermost_functorch_transform() is None
        and _jit_tracing_state() is None
        and not _profiler_enabled()
        and _forward_ad._current_level < 0
    )


def all_plain(*tensors):
    """Every argument a plain torch.Tensor, an nn.Parameter or None."""
    for t in tensors:
        if type(t) not in _PLAIN_TYPES:
            return False
    return True


def autograd_records(*tensors):
    """Whether autograd would record a call with these inputs (None allowed)."""
    if not _grad_enabled():
        return False
    for t in tensors:
        if t is not None and t.requires_grad:
            return True
    return False


def forward_applies(x, weight, bias, seq_idx, initial_states, return_final_states, final_states_out):
    """Whether causal_conv1d_fn can skip the dispatcher: also True only when the
    arguments pass every rule of _checks.check_forward_arguments."""
    return (
        nothing_intercepts_torch()
        and all_plain(x, weight, bias, seq_idx, initial_states, final_states_out)
        and _checks.forward_arguments_pass(x, weight, bias, seq_idx, initial_states, return_final_states,
                                           final_states_out)
        and _checks.on_one_gpu(x, weight, bias, seq_idx, initial_states, final_states_out)
        and not autograd_records(x, weight, bias, initial_states)
    )


def update_applies(x, conv_state, weight, bias, cache_seqlens, conv_state_indices):
    """Whether causal_conv1d_update can skip the dispatcher: also True only when the
    arguments pass every rule of _checks.check_update_arguments."""
    # The update op has no autograd formula: through the dispatcher, inputs that require
    # grad give an output whose backward raises. Such calls keep that behaviour.
    return (
        nothing_intercepts_torch()
        and all_plain(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
        and _checks.update_arguments_pass(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
        and _checks.on_one_gpu(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
        and not autograd_records(x, conv_state, weight, bias)
    )


def mark_written(tensor):
    """What the update op's mutates_args does through the dispatcher: bump the tensor's
    version counter, so that autograd still notices when a tensor it saved for a
    backward is overwritten. Inference tensors have no version counter."""
    if tensor.is_inference():
        return
    if _increment_versions is not None:
        _increment_versions((tensor,))
    else:
        _increment_version(tensor)


def forward(x, weight, bias, seq_idx, initial_states, return_final_states, silu):
    """out and the final states (None unless asked for), as the forward op computes them."""
    return ops.run_forward(x, weight, bias, seq_idx, initial_states, return_final_states, silu)


def update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices):
    out = ops.run_update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices)
    mark_written(conv_state)
    return out
