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
the struct filling, the version-counter bump) runs as on a GPU host. Times are the best
of several repeats of many back-to-back calls, in µs per call. They are CPU-harness
numbers: the allocation in particular costs more on a GPU (torch's CUDA caching
allocator) than on the CPU, and every attribute read differs with the host's CPU.

    python python/bench_host_path.py [--iters N] [--repeats R] [--only TEXT] [--source DIR] [--json FILE]
"""

import argparse
import contextlib
import json
import operator
import os
import sys
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


def best_us(fn, iters, repeats):
    """The fastest of `repeats` runs of `iters` calls of fn, in µs per call."""
    timer = timeit.Timer(fn)
    timer.timeit(max(100, iters // 10))         # warm-up
    return min(timer.repeat(repeat=repeats, number=iters)) / iters * 1e6


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


def stages(torch, t):
    """{name: callable}: the public calls first, then the pieces they are made of."""
    import cc1d
    from cc1d import _checks, _fast_path, _launch, ops

    x, weight, bias, out = t["x"], t["weight"], t["bias"], t["out"]
    token, state, token_out, seqlens, slots = t["token"], t["state"], t["token_out"], t["seqlens"], t["slots"]
    initial = t["initial"]
    fn, update = cc1d.causal_conv1d_fn, cc1d.causal_conv1d_update
    contiguous = torch.contiguous_format
    return {
        # The public functions on the fast path (the numbers the work is about).
        "update.public": lambda: update(token, state, weight, bias, "silu"),
        "update.public+seqlens+slots": lambda: update(token, state, weight, bias, "silu", seqlens, slots),
        "forward.public": lambda: fn(x, weight, bias, activation="silu"),
        "forward.public+states": lambda: fn(x, weight, bias, None, initial, True, activation="silu"),
        # update: the decision, then the work.
        "update.decision": lambda: _fast_path.update_applies(token, state, weight, bias, None, None),
        "update.run": lambda: _fast_path.update(token, state, weight, bias, True, None, None),
        "update.launch": lambda: _launch.update(token, state, weight, bias, token_out, True),
        "update.mark_written": lambda: _fast_path.mark_written(state),
        # forward: the decision, then the work.
        "forward.decision": lambda: _fast_path.forward_applies(x, weight, bias, None, None, False, None),
        "forward.run": lambda: _fast_path.forward(x, weight, bias, None, None, False, True),
        "forward.launch": lambda: _launch.forward(x, weight, bias, out, True),
        # Shared pieces.
        "nothing_intercepts_torch": _fast_path.nothing_intercepts_torch,
        "update_arguments_pass": lambda: _checks.update_arguments_pass(token, state, weight, bias, None, None),
        "forward_arguments_pass": lambda: _checks.forward_arguments_pass(x, weight, bias, None, None, False, None),
        "on_one_gpu(4 tensors)": lambda: _checks.on_one_gpu(token, state, weight, bias, None, None),
        "describe(3-d tensor)": lambda: _launch.describe(_launch._thread_args.update, 0, state),
        "empty_like(token)": lambda: torch.empty_like(token, memory_format=contiguous),
        "empty_like(x)": lambda: torch.empty_like(x, memory_format=contiguous),
        # Calibration: the harness's is_cuda against a real attribute read.
        "is_cuda read": lambda: token.is_cuda,
        "is_cpu read (real attribute)": lambda: token.is_cpu,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", help="time only the stages whose name contains this")
    parser.add_argument("--source", help="the folder holding the cc1d package to time (default: this one's)")
    parser.add_argument("--json", help="also write the results to this file")
    options = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    results = {}
    with cpu_counts_as_gpu(), torch.no_grad():
        for name, fn in stages(torch, tensors(torch, torch.bfloat16)).items():
            if options.only and options.only not in name:
                continue
            results[name] = best_us(fn, options.iters, options.repeats)
            print(f"{name:<32}{results[name]:>8.2f} µs")
    if options.json:
        with open(options.json, "w") as file:
            json.dump({"torch": torch.__version__, "us_per_call": results}, file, indent=2)


if __name__ == "__main__":
    main()
