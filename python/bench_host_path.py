"""Host time of the eager fast path's Python, stage by stage, on the CPU (no GPU needed).

bench_overhead.py times the real launches on a GPU. This harness times only what the
Python of cc1d adds on top of the library call, so that it can be worked on anywhere:
the tensors are CPU tensors, and two things are replaced for the duration of the run
(in this process only, never in the package's files):

  - the library call itself: cc1d._launch._call becomes a no-op, so the argument
    struct is filled as for a launch but nothing is called (and the entry points,
    bound on a GPU host by the first launch, are stand-ins: no library is loaded);
  - the device rule: torch.Tensor.is_cuda answers with is_cpu (through a C-level
    property), so that CPU tensors count as tensors on one GPU. This makes is_cuda a
    little dearer than the real attribute read; the `is_cuda read` line shows by how much.

Everything else (the fast-path decision, the one-pass checks, the output allocation,
the struct filling, the version-counter bump) runs as on a GPU host. Times are in µs
per call: the best of many short runs of back-to-back calls, the stages taking turns
(see best_us). They are CPU-harness numbers: the allocation in particular costs more
on a GPU (torch's CUDA caching allocator) than on the CPU, and every attribute read
differs with the host's CPU.

    python python/bench_host_path.py [--iters N] [--repeats R] [--only TEXT] [--json FILE]

To compare with another version of the package (e.g. the last commit's), unpack it
and name it as the baseline; both are then timed in turns, in fresh processes:

    git archive HEAD python/cc1d | tar -x -C /tmp/base
    python python/bench_host_path.py --baseline /tmp/base/python [--rounds 3]
"""

import argparse
import contextlib
import json
import operator
import os
import subprocess
import sys
import tempfile
import timeit
import types


def _source_folder():
    """The folder holding the cc1d package to time: --source DIR (to compare two
    versions of the package in one sitting), else this script's folder."""
    for i, arg in enumerate(sys.argv):
        if arg == "--source" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return os.path.dirname(os.path.abspath(__file__))


sys.path.insert(0, _source_folder())


@contextlib.contextmanager
def cpu_counts_as_gpu():
    """The two replacements described above, undone on exit."""
    import torch

    from cc1d import _launch

    saved = _launch._call, _launch._entry_points
    torch.Tensor.is_cuda = property(operator.attrgetter("is_cpu"))
    _launch._call = lambda *args: None
    _launch._entry_points = types.SimpleNamespace(runtime=0, forward=None, backward=None, update=None)
    try:
        yield
    finally:
        _launch._call, _launch._entry_points = saved
        del torch.Tensor.is_cuda


def best_us(stages, iters, repeats):
    """{name: µs per call}: the fastest of `repeats` runs of `iters` calls of each stage.
    The stages take turns, run after run, so that a busy spell of the host (other
    processes) slows them all alike instead of one stage; short runs and the minimum
    keep the spells out of the result."""
    timers = {name: timeit.Timer(fn) for name, fn in stages.items()}
    for timer in timers.values():
        timer.timeit(max(100, iters))        # warm-up
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(repeats):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(iters) / iters * 1e6)
    return best


def tensors(torch, dtype):
    """Decoding-step and prefill arguments of a tiny shape, as bench_overhead.py uses."""
    batch, dim, seqlen, width = 2, 64, 128, 4
    return {
        "x": torch.randn(batch, dim, seqlen, dtype=dtype),
        "weight": torch.randn(dim, width, dtype=dtype),
        "bias": torch.randn(dim, dtype=dtype),
        "out": torch.empty(batch, dim, seqlen, dtype=dtype),
        "token": torch.randn(batch, dim, dtype=dtype),
        "state": torch.randn(batch, dim, width - 1, dtype=dtype),
        "token_out": torch.empty(batch, dim, dtype=dtype),
        "seqlens": torch.zeros(batch, dtype=torch.int32),
        "slots": torch.arange(batch, dtype=torch.int32),
        "initial": torch.randn(batch, dim, width - 1, dtype=dtype),
    }


def torch_calls_only(torch, t):
    """{name: callable}: for update.public and forward.public, the calls into torch (and
    the one struct.pack_into) that each makes, in a row with no Python logic between
    them: the floor of that call's host time while it asks what it asks. The public
    call's time over this is what cc1d's own Python costs."""
    from torch.autograd import forward_ad

    from cc1d import _fast_path, _launch

    x, weight, bias = t["x"], t["weight"], t["bias"]
    token, state = t["token"], t["state"]
    batch, dim, length = x.shape        # as the checks read them
    contiguous = torch.contiguous_format
    questions = (_fast_path._is_compiling, _fast_path._dispatch_mode_count, _fast_path._function_mode_enabled,
                 _fast_path._innermost_functorch_transform, _fast_path._jit_tracing_state,
                 _fast_path._profiler_enabled, torch.is_grad_enabled)
    bump = torch._C._increment_version
    update_args, forward_args = _launch._thread_args.update[0], _launch._thread_args.forward[0]

    def ask_questions():
        for question in questions:
            question()
        return forward_ad._current_level

    def values(fmt):
        # Zeros for every value the format takes: pack_into costs the same for any ints.
        return (0,) * len(fmt.unpack_from(bytes(fmt.size)))

    update_values, forward_values = values(_launch._UPDATE_FORMATS[2]), values(_launch._FORWARD_FORMAT)

    def update_calls():
        ask_questions()
        token.shape, weight.shape, state.shape, token.dtype, weight.dtype, state.dtype
        bias.shape, bias.dtype, state.stride()
        token.is_cuda
        device = token.device
        state.device == device, weight.device == device, bias.device == device
        out = torch.empty_like(token, memory_format=contiguous)
        token.data_ptr(), token.stride(), state.data_ptr(), weight.data_ptr(), weight.stride()
        bias.data_ptr(), bias.stride(), out.data_ptr(), out.stride()
        _launch._UPDATE_FORMATS[2].pack_into(update_args, _launch._UPDATE_START, *update_values)
        token.get_device()
        bump((state,))
        return out

    def forward_calls():
        ask_questions()
        x.shape, weight.shape, x.dtype, weight.dtype, bias.shape, bias.dtype
        x.is_cuda
        device = x.device
        weight.device == device, bias.device == device
        x.stride()
        out = x.new_empty(batch, dim, length)
        x.data_ptr(), x.stride(), weight.data_ptr(), weight.stride(), bias.data_ptr(), bias.stride()
        out.data_ptr(), out.stride()
        _launch._FORWARD_FORMAT.pack_into(forward_args, _launch._FORWARD_START, *forward_values)
        x.get_device()
        return out

    return {"update.torch calls only": update_calls, "forward.torch calls only": forward_calls,
            "intercept questions (7 + grad mode)": ask_questions}


def stages(torch, t):
    """{name: callable}: the public calls first, then the pieces they are made of."""
    import cc1d
    from cc1d import _checks, _fast_path, _launch, _layout, ops

    x, weight, bias, out = t["x"], t["weight"], t["bias"], t["out"]
    token, state, token_out, seqlens, slots = t["token"], t["state"], t["token_out"], t["seqlens"], t["slots"]
    initial = t["initial"]
    fn, update = cc1d.causal_conv1d_fn, cc1d.causal_conv1d_update
    # What the fast path's decision hands to the run and the launch, as their last
    # argument; nothing where it answers True (a baseline package from before it did).
    update_read = _fast_path.update_applies(token, state, weight, bias, None, None)
    forward_read = _fast_path.forward_applies(x, weight, bias, None, None, False, None)
    if not (update_read and forward_read):
        raise SystemExit("the eager fast path does not apply to the harness's calls: nothing to time")
    update_extra = () if update_read is True else (update_read,)
    forward_extra = () if forward_read is True else (forward_read,)
    contiguous = torch.contiguous_format
    x_sizes = tuple(x.shape)
    final_shape = (x_sizes[0], x_sizes[1], weight.shape[1] - 1)
    return {
        # The public functions on the fast path (the numbers the work is about).
        "update.public": lambda: update(token, state, weight, bias, "silu"),
        "update.public+seqlens+slots": lambda: update(token, state, weight, bias, "silu", seqlens, slots),
        "forward.public": lambda: fn(x, weight, bias, activation="silu"),
        "forward.public+states": lambda: fn(x, weight, bias, None, initial, True, activation="silu"),
        # update: the decision, then the run (allocation, struct, version bump).
        "update.decision": lambda: _fast_path.update_applies(token, state, weight, bias, None, None),
        "update.run": lambda: _fast_path.update(token, state, weight, bias, True, None, None, *update_extra),
        "update.launch": lambda: _launch.update(token, state, weight, bias, token_out, True, None, None,
                                                *update_extra),
        "update.launch (custom-op fill)": lambda: _launch.update(token, state, weight, bias, token_out, True),
        "update.mark_written": lambda: _fast_path.mark_written(state),
        # forward: the decision, then the run.
        "forward.decision": lambda: _fast_path.forward_applies(x, weight, bias, None, None, False, None),
        "forward.run": lambda: _fast_path.forward(x, weight, bias, None, None, False, True, *forward_extra),
        "forward.launch": lambda: _launch.forward(x, weight, bias, out, True, None, None, None, *forward_extra),
        "forward.launch (custom-op fill)": lambda: _launch.forward(x, weight, bias, out, True),
        # The decision's pieces.
        "nothing_intercepts_torch": _fast_path.nothing_intercepts_torch,
        "update_arguments_pass": lambda: _checks.update_arguments_pass(token, state, weight, bias, None, None),
        "forward_arguments_pass": lambda: _checks.forward_arguments_pass(x, weight, bias, None, None, False, None),
        "on_one_gpu(4 tensors)": lambda: _checks.on_one_gpu(token, state, weight, bias, None, None),
        # The allocations (the floor of the run on this host): the update's out, then the
        # forward's final states as _layout allocates them, then the alternatives.
        "empty_like(token)": lambda: torch.empty_like(token, memory_format=contiguous),
        "empty_conv(states)": lambda: _layout.empty_conv(final_shape, False, x),
        "empty_like(x)": lambda: torch.empty_like(x, memory_format=contiguous),
        "x.new_empty(B, D, L)": lambda: x.new_empty(*x_sizes),
        "torch.empty(B, D, L, dtype, device)": lambda: torch.empty(*x_sizes, dtype=x.dtype, device=x.device),
        "x.new_empty(x.shape)": lambda: x.new_empty(x.shape),
        # torch's calls alone (see torch_calls_only).
        **torch_calls_only(torch, t),
        # Calibration: the harness's is_cuda against a real attribute read.
        "is_cuda read": lambda: token.is_cuda,
        "is_cpu read (real attribute)": lambda: token.is_cpu,
    }


def compare(options):
    """Times this package and the one under options.baseline in turns, options.rounds
    times each (each run a fresh process), and prints the best of each side by side."""
    sources = {"baseline": options.baseline, "this": os.path.dirname(os.path.abspath(__file__))}
    best = {side: {} for side in sources}
    passed = ["--iters", str(options.iters), "--repeats", str(options.repeats)]
    if options.only:
        passed += ["--only", options.only]
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(options.rounds):
            for side, source in sources.items():
                path = os.path.join(folder, side + ".json")
                subprocess.run([sys.executable, os.path.abspath(__file__), "--source", source, "--json", path,
                                *passed], check=True, stdout=subprocess.DEVNULL)
                with open(path) as file:
                    for name, us in json.load(file)["us_per_call"].items():
                        best[side][name] = min(best[side].get(name, us), us)
    names = list(best["this"]) + [name for name in best["baseline"] if name not in best["this"]]
    print(f"{'':<34}{'baseline':>10}{'this':>10}")
    for name in names:
        cells = "".join(f"{best[side][name]:>10.2f}" if name in best[side] else f"{'n/a':>10}" for side in sources)
        print(f"{name:<34}{cells}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--only", help="time only the stages whose name contains this")
    parser.add_argument("--source", help="the folder holding the cc1d package to time (default: this one's)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--baseline", help="a folder holding another cc1d package: time both, in turns")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: runs of each package")
    options = parser.parse_args()
    if options.baseline:
        compare(options)
        return

    import torch

    torch.set_num_threads(1)
    with cpu_counts_as_gpu(), torch.no_grad():
        chosen = {}
        for name, fn in stages(torch, tensors(torch, torch.bfloat16)).items():
            if options.only and options.only not in name:
                continue
            try:
                fn()
            except TypeError as error:      # a piece that another version of the package lacks
                print(f"{name:<34}     n/a ({error})")
                continue
            chosen[name] = fn
        results = best_us(chosen, options.iters, options.repeats)
    for name, us in results.items():
        print(f"{name:<34}{us:>8.2f} µs")
    if options.json:
        with open(options.json, "w") as file:
            json.dump({"torch": torch.__version__, "us_per_call": results}, file, indent=2)


if __name__ == "__main__":
    main()
