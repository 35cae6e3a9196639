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


# The two helpers below take the tensor arguments of either public function as so many
# parameters and test them unrolled: *args and a loop cost more than the tests do.


def all_plain(a, b, c, d, e, f):
    """Every argument a plain torch.Tensor, an nn.Parameter or None."""
    plain = _PLAIN_TYPES
    return (type(a) in plain and type(b) in plain and type(c) in plain and type(d) in plain and type(e) in plain
            and type(f) in plain)


def autograd_records(a, b, c, d):
    """Whether autograd would record a call with these inputs (None allowed)."""
    if not _grad_enabled():
        return False
    return ((a is not None and a.requires_grad) or (b is not None and b.requires_grad)
            or (c is not None and c.requires_grad) or (d is not None and d.requires_grad))


def forward_applies(x, weight, bias, seq_idx, initial_states, return_final_states, final_states_out):
    """Whether causal_conv1d_fn can skip the dispatcher: None when it cannot, else what
    _checks.forward_arguments_pass read (a non-empty tuple), for forward() to reuse. Not
    None only when the arguments pass every rule of _checks.check_forward_arguments."""
    if not (nothing_intercepts_torch()
            and all_plain(x, weight, bias, seq_idx, initial_states, final_states_out)):
        return None
    read = _checks.forward_arguments_pass(x, weight, bias, seq_idx, initial_states, return_final_states,
                                          final_states_out)
    if (read is None or not _checks.on_one_gpu(x, weight, bias, seq_idx, initial_states, final_states_out)
            or autograd_records(x, weight, bias, initial_states)):
        return None
    return read


def update_applies(x, conv_state, weight, bias, cache_seqlens, conv_state_indices):
    """Whether causal_conv1d_update can skip the dispatcher: None when it cannot, else
    what _checks.update_arguments_pass read (a non-empty tuple), for update() to reuse.
    Not None only when the arguments pass every rule of _checks.check_update_arguments."""
    # The update op has no autograd formula: through the dispatcher, inputs that require
    # grad give an output whose backward raises. Such calls keep that behaviour.
    if not (nothing_intercepts_torch()
            and all_plain(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)):
        return None
    read = _checks.update_arguments_pass(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
    if (read is None or not _checks.on_one_gpu(x, conv_state, weight, bias, cache_seqlens, conv_state_indices)
            or autograd_records(x, conv_state, weight, bias)):
        return None
    return read


def mark_written(tensor):
    """What the update op's mutates_args does through the dispatcher: bump the tensor's
    version counter, so that autograd still notices when a tensor it saved for a
    backward is overwritten. Inference tensors have no version counter: torch skips them
    (newer versions) or refuses them outside inference mode (older ones); asking
    is_inference() only after a refusal saves a read on every call."""
    try:
        if _increment_versions is not None:
            _increment_versions((tensor,))
        else:
            _increment_version(tensor)
    except RuntimeError:
        if not tensor.is_inference():
            raise


def forward(x, weight, bias, seq_idx, initial_states, return_final_states, silu, read):
    """out and the final states (None unless asked for), as the forward op computes them;
    `read` is what forward_applies returned."""
    return ops.run_forward(x, weight, bias, seq_idx, initial_states, return_final_states, silu, read)


def update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices, read):
    """out, as the update op computes it; `read` is what update_applies returned."""
    out = ops.run_update(x, conv_state, weight, bias, silu, cache_seqlens, conv_state_indices, read)
    mark_written(conv_state)
    return out
